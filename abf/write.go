package abf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Write appends the array key with Julia's dims (size(x)) and data in
// column-major order, in the file's format. Everything is validated before
// the first byte is written; if writing fails the file is truncated back
// to what it was. Write[bool] writes an Array{Bool}; see WriteBits for
// BitArrays.
func Write[T Elem](f *File, key string, dims []int64, data []T) error {
	t := layout.TypeOf[T]()
	payload := unsafeslice.Bytes(data)
	if t.Size() > 1 && layout.HostOrder() != binary.LittleEndian {
		payload = slices.Clone(payload)
		layout.SwapOrder(payload, t, layout.HostOrder(), binary.LittleEndian)
	}
	return f.write(record{key: key, kind: KindArray, elem: t, dims: dims, n: int64(len(data)), fill: writeAll(payload)})
}

// WriteStream appends the array key of element type t with Julia's dims,
// whose payload fn writes to w: prod(dims) elements in column-major order,
// little-endian, in as many Write calls as it likes. The bytes go to the
// file as they come, so an array larger than memory can be written from
// any source in bounded memory. Everything is validated before the first
// byte is written; if fn fails, or writes more or fewer bytes than the
// payload holds, the file is truncated back to what it was and the error
// returned. Writes to f are serialised, so fn must not write to f itself.
func (f *File) WriteStream(key string, t layout.Type, dims []int64, fn func(w io.Writer) error) error {
	return f.write(record{key: key, kind: KindArray, elem: t, dims: dims, n: -1, fill: fn})
}

// WriteBits appends the BitArray b as key. Its Chunks must hold exactly
// ⌈prod(Dims)/64⌉ words with the unused bits of the last one zero.
// Upstream AlignedBinaryFormat.jl cannot read empty BitArrays.
func (f *File) WriteBits(key string, b BitArray) error {
	payload := unsafeslice.Bytes(b.Chunks)
	if layout.HostOrder() != binary.LittleEndian {
		payload = slices.Clone(payload)
		layout.SwapBytes(payload, 8)
	}
	return f.write(record{key: key, kind: KindBitArray, dims: b.Dims, n: int64(len(b.Chunks)), chunks: b.Chunks, fill: writeAll(payload)})
}

// WriteBitsStream appends the BitArray key with Julia's dims, whose
// elements fn writes to w as bytes 0 (false) and 1 (true), column-major:
// prod(dims) bytes in all, packed into 64-bit words as they come. A byte
// other than 0 and 1 is an error wrapping mmapfile.ErrInvalidBool. As with
// WriteStream, a failure leaves the file as it was.
func (f *File) WriteBitsStream(key string, dims []int64, fn func(w io.Writer) error) error {
	return f.write(record{key: key, kind: KindBitArray, dims: dims, n: -1, fill: func(w io.Writer) error {
		count, _ := layout.Count(dims) // checked before fill runs
		p := &bitPacker{w: w, want: count, buf: make([]byte, 0, min(bitBuf, 8*((count+63)/64)))}
		if err := fn(p); err != nil {
			return err
		}
		return p.finish()
	}})
}

// WriteString appends a String record. Format A files refuse it (an error
// wrapping errors.ErrUnsupported): v0.1 and v0.2 cannot read Strings and
// v0.3 misparses what follows them.
func (f *File) WriteString(key, value string) error {
	return f.write(record{key: key, kind: KindString, value: value, fill: writeAll([]byte(value))})
}

// Create appends the array key of element type T with Julia's dims, its
// elements zero, and returns it as a view that aliases the file: fill it
// in place, as NumPy's open_memmap(mode="w+") is filled, and Sync or
// Close makes it durable. The file must be open in "r+" or "w+". The
// space is reserved on disk at once where the OS can (fallocate), so a
// full disk is an error here rather than a fault when the view is
// written. The file is byte for byte what Write of the same values makes.
// The view dies at Close, as every view does.
func Create[T Elem](f *File, key string, dims []int64) ([]T, error) {
	if err := f.write(record{key: key, kind: KindArray, elem: layout.TypeOf[T](), dims: dims, n: -1, view: true}); err != nil {
		return nil, err
	}
	return View[T](f, key)
}

// record is what a write appends.
type record struct {
	key    string
	kind   Kind
	elem   layout.Type
	dims   []int64
	n      int64 // elements (arrays) or words (BitArrays) given; -1 when streamed
	chunks []uint64
	value  string
	fill   func(w io.Writer) error // writes the payload
	view   bool                    // Create: no fill; the payload is reserved as zeros
}

func writeAll(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

// payloadWriter writes a payload sequentially at its file offset, and
// refuses bytes beyond its size.
type payloadWriter struct {
	w    writerAt
	off  int64
	left int64
}

func (p *payloadWriter) Write(b []byte) (int, error) {
	if int64(len(b)) > p.left {
		return 0, fmt.Errorf("%d bytes written where the payload has %d left: %w", len(b), p.left, mmapfile.ErrOutOfRange)
	}
	n, err := p.w.WriteAt(b, p.off)
	p.off += int64(n)
	p.left -= int64(n)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return n, err
}

// combiner gathers a writer's sequential small writes into large ones: a
// record's header, padding and small payload, and the records after it,
// go to the file in one write(2) per combineBytes, where each would be a
// write of its own. A write at least half that size goes straight
// through, after what was gathered. Writes elsewhere than at the end of
// what was gathered (Format A's count) patch it if they fall inside it
// and are kept until flush (the latest per offset) if they fall before
// it. It suits only a file that nothing reads until flush: the temporary
// file of the registered writer.
type combiner struct {
	w       writerAt
	buf     []byte
	off     int64 // file offset of buf[0]
	pending []patch
}

type patch struct {
	off int64
	b   []byte
}

// combineBytes is how much a combiner gathers before it writes.
const combineBytes = 1 << 20

func (c *combiner) WriteAt(p []byte, off int64) (int, error) {
	end := c.off + int64(len(c.buf))
	switch {
	case off >= c.off && off+int64(len(p)) <= end:
		copy(c.buf[off-c.off:], p)
		return len(p), nil
	case off+int64(len(p)) <= c.off && len(p) <= 64:
		for i := range c.pending {
			if q := &c.pending[i]; q.off == off && len(q.b) == len(p) {
				copy(q.b, p)
				return len(p), nil
			}
		}
		c.pending = append(c.pending, patch{off, append([]byte(nil), p...)})
		return len(p), nil
	case off != end || len(c.buf)+len(p) > combineBytes:
		if err := c.flush(); err != nil {
			return 0, err
		}
		if len(p) >= combineBytes/2 {
			return c.w.WriteAt(p, off)
		}
		c.off = off
	}
	if c.buf == nil {
		c.buf = make([]byte, 0, combineBytes)
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// flush writes what was gathered, then the patches.
func (c *combiner) flush() error {
	if len(c.buf) > 0 {
		n, err := c.w.WriteAt(c.buf, c.off)
		if err == nil && n < len(c.buf) {
			err = io.ErrShortWrite
		}
		if err != nil {
			return err
		}
		c.off += int64(len(c.buf))
		c.buf = c.buf[:0]
	}
	for _, q := range c.pending {
		if _, err := c.w.WriteAt(q.b, q.off); err != nil {
			return err
		}
	}
	c.pending = c.pending[:0]
	return nil
}

// bitBuf is how many bytes of packed words a bitPacker gathers before it
// writes them.
const bitBuf = 1 << 20

// bitPacker packs bytes 0/1 into BitArray words, little-endian.
type bitPacker struct {
	w     io.Writer
	want  int64 // bits expected
	n     int64 // bits taken
	cur   uint64
	nbits uint
	buf   []byte
}

func (p *bitPacker) Write(b []byte) (int, error) {
	if int64(len(b)) > p.want-p.n {
		return 0, fmt.Errorf("%d elements written where the BitArray has %d left: %w", len(b), p.want-p.n, mmapfile.ErrOutOfRange)
	}
	i := 0
	for i < len(b) {
		if p.nbits == 0 && len(b)-i >= 64 {
			// A whole word at once.
			var w uint64
			var or byte
			for j, c := range b[i : i+64] {
				w |= uint64(c&1) << j
				or |= c
			}
			if or > 1 {
				return i, p.badBool(b[i:])
			}
			if err := p.put(w); err != nil {
				return i, err
			}
			i += 64
			p.n += 64
			continue
		}
		c := b[i]
		if c > 1 {
			return i, p.badBool(b[i:])
		}
		p.cur |= uint64(c) << p.nbits
		p.nbits++
		i++
		p.n++
		if p.nbits == 64 {
			if err := p.put(p.cur); err != nil {
				return i, err
			}
			p.cur, p.nbits = 0, 0
		}
	}
	return len(b), nil
}

// badBool reports the first byte of b, the bytes from element p.n on,
// that is neither 0 nor 1.
func (p *bitPacker) badBool(b []byte) error {
	j := 0
	for b[j] <= 1 {
		j++
	}
	return fmt.Errorf("element %d: byte 0x%02x: %w", p.n+int64(j), b[j], mmapfile.ErrInvalidBool)
}

func (p *bitPacker) put(w uint64) error {
	p.buf = binary.LittleEndian.AppendUint64(p.buf, w)
	if len(p.buf) >= bitBuf {
		return p.flush()
	}
	return nil
}

func (p *bitPacker) flush() error {
	_, err := p.w.Write(p.buf)
	p.buf = p.buf[:0]
	return err
}

// finish writes the last, partial word and checks the count.
func (p *bitPacker) finish() error {
	if p.n != p.want {
		return fmt.Errorf("%d of %d elements written", p.n, p.want)
	}
	if p.nbits > 0 {
		p.buf = binary.LittleEndian.AppendUint64(p.buf, p.cur)
	}
	if len(p.buf) == 0 {
		return nil
	}
	return p.flush()
}

func (f *File) write(rec record) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	closed := f.closed
	existing := f.tab.find(rec.key)
	exists := existing >= 0
	var existingStart int64
	if exists {
		existingStart = f.tab.at(existing).start
	}
	full := !f.tab.canAdd()
	f.mu.RUnlock()

	// 1. Validate everything before the first byte.
	switch {
	case closed:
		return f.errf(-1, mmapfile.ErrClosed, "")
	case !f.writable:
		return f.errf(-1, mmapfile.ErrNotWritable, "mode %q cannot write", f.mode)
	case f.trailing > 0:
		return f.errf(f.end, mmapfile.ErrNotWritable, "appending would overwrite %d unknown trailing bytes (a writing open with Options.Repair cuts them)", f.trailing)
	case f.format == FormatA && rec.kind == KindString:
		return f.errf(-1, errors.ErrUnsupported, "record %q: Format A cannot hold String records", rec.key)
	case !utf8.ValidString(rec.key):
		return f.errf(-1, nil, "key %q is not valid UTF-8", rec.key)
	case exists:
		return f.errf(existingStart, ErrKeyExists, "record %q already exists at offset %d", rec.key, existingStart)
	case full:
		return f.errf(-1, errors.ErrUnsupported, "record %q: more records than this package can index", rec.key)
	case rec.kind == KindArray && juliaNames[rec.elem] == "":
		return f.errf(-1, errors.ErrUnsupported, "record %q: AlignedBinaryFormat.jl has no element type %v", rec.key, rec.elem)
	case rec.view && (!f.readable || f.mf == nil):
		return f.errf(-1, ErrNotReadable, "record %q: mode %q cannot view what it creates; open with \"r+\" or \"w+\"", rec.key, f.mode)
	case rec.view && rec.elem.Size() > 1 && layout.HostOrder() != binary.LittleEndian:
		return f.errf(-1, mmapfile.ErrByteOrder, "record %q: ABF payloads are little-endian and this host is not; use WriteStream", rec.key)
	}
	var align, nbytes int64 = 1, int64(len(rec.value))
	if rec.kind == KindString {
		if !utf8.ValidString(rec.value) {
			return f.errf(-1, nil, "record %q: value is not valid UTF-8", rec.key)
		}
		rec.dims = []int64{juliaChars(rec.value)}
	} else {
		if len(rec.dims) > MaxDims {
			return f.errf(-1, nil, "record %q: %d dimensions, more than %d", rec.key, len(rec.dims), MaxDims)
		}
		count, err := layout.Count(rec.dims)
		if err != nil {
			return f.errf(-1, err, "record %q: dims %v", rec.key, rec.dims)
		}
		var ok bool
		if nbytes, align, ok = payloadSize(rec.kind, rec.elem, count); !ok {
			return f.errf(-1, layout.ErrOverflow, "record %q: dims %v: payload size", rec.key, rec.dims)
		}
		if rec.kind == KindArray && rec.n >= 0 && rec.n != count {
			return f.errf(-1, nil, "record %q: %d values for dims %v (%d elements)", rec.key, rec.n, rec.dims, count)
		}
		if rec.kind == KindBitArray && rec.n >= 0 {
			if rec.n*8 != nbytes {
				return f.errf(-1, nil, "record %q: %d chunks for %d bits (%d needed)", rec.key, rec.n, count, nbytes/8)
			}
			if rec.n > 0 && rec.chunks[rec.n-1]&unusedMask(count) != 0 {
				return f.errf(-1, nil, "record %q: unused bits of the last chunk are set", rec.key)
			}
		}
	}
	hdr := f.encodeHeader(rec)
	start := f.end
	pl, err := layout.ElementPolicy.Place(start, layout.Slot{Header: int64(len(hdr)), ElemAlign: align, Payload: nbytes})
	if err != nil {
		return f.errf(start, err, "record %q cannot be placed", rec.key)
	}

	// 2. Header and explicit padding (after zero-filling an upstream
	// empty-array tail), then the payload, then Format A's count.
	oldSize, oldCount := f.size, f.count
	from := min(oldSize, start)
	buf := make([]byte, pl.Offset-from)
	copy(buf[start-from:], hdr)
	if _, err := f.wr.WriteAt(buf, from); err != nil {
		return f.rollback(rec.key, start, oldSize, oldCount, false, err)
	}
	if nbytes > 0 {
		var err error
		if rec.view {
			err = f.mf.Grow(pl.End)
		} else {
			pw := &payloadWriter{w: f.wr, off: pl.Offset, left: nbytes}
			err = rec.fill(pw)
			if err == nil && pw.left != 0 {
				err = fmt.Errorf("%d of %d payload bytes written", nbytes-pw.left, nbytes)
			}
		}
		if err != nil {
			return f.rollback(rec.key, start, oldSize, oldCount, false, err)
		}
	}
	if f.format == FormatA {
		if err := f.putCount(oldCount + 1); err != nil {
			return f.rollback(rec.key, start, oldSize, oldCount, true, err)
		}
		f.count = oldCount + 1
	}

	// 3. Only now does the record join the index.
	e := entry{start: start, data: pl.Offset, dataLen: nbytes, kind: rec.kind, elem: rec.elem}
	if rec.kind != KindString {
		e.pad = uint8(pl.Offset - pl.HeaderEnd)
	}
	f.mu.Lock()
	f.tab.add(&e, []byte(rec.key), rec.dims, "")
	f.tab.indexLast() // the key is new: checked above
	f.mu.Unlock()
	f.end = pl.End
	f.size = max(f.size, pl.End)
	return nil
}

// rollback returns the file to oldSize bytes (and Format A's count to
// oldCount) after a failed write, and reports the cause and what became
// of the file.
func (f *File) rollback(key string, start, oldSize, oldCount int64, countWritten bool, cause error) error {
	var undo []error
	if f.regular {
		if err := f.mf.Truncate(oldSize); err != nil {
			undo = append(undo, err)
		}
	}
	if countWritten {
		if err := f.putCount(oldCount); err != nil {
			undo = append(undo, err)
		}
	}
	f.size = oldSize
	state := fmt.Sprintf("the file is back to the %d bytes it had before", oldSize)
	switch {
	case f.discarded != "":
		state = f.discarded
	case len(undo) > 0:
		state = fmt.Sprintf("putting the file back to the %d bytes it had before failed too, so it may end in part of the record", oldSize)
		cause = errors.Join(append([]error{cause}, undo...)...)
	}
	return f.errf(start, cause, "record %q not written; %s", key, state)
}

// encodeHeader returns a record's bytes up to its padding: up to the
// payload for arrays, up to the value's bytes for Strings.
func (f *File) encodeHeader(rec record) []byte {
	b := make([]byte, 0, 64+len(rec.key)+8*len(rec.dims))
	mult := int64(1)
	if f.format == FormatC {
		mult = 4
		b = append(b, 0) // little-endian
	}
	putInt := func(v int64) { b = binary.LittleEndian.AppendUint64(b, uint64(v)) }
	putStr := func(s string) { putInt(mult * juliaChars(s)); b = append(b, s...) }
	putStr(rec.key)
	if f.format == FormatC {
		putStr(canonicalType(rec.kind, rec.elem, len(rec.dims)))
	} else {
		switch rec.kind {
		case KindArray:
			putStr("Array")
			putStr(juliaNames[rec.elem])
		case KindBitArray:
			putStr("BitArray")
		}
		putInt(int64(len(rec.dims)))
	}
	if rec.kind == KindString {
		putInt(mult * rec.dims[0])
		return b
	}
	for _, d := range rec.dims {
		putInt(d)
	}
	return b
}

// SetElement writes one element of the array key in place, through the
// read-write mapping ("r+" and "w+"): le is the element's little-endian
// bytes (one byte 0 or 1 for Bool and for BitArray bits) and linear its
// column-major index. The change is durable after Sync or Close. Set is
// the typed form.
func (f *File) SetElement(key string, linear int64, le []byte) error {
	return f.set(key, layout.Invalid, nil, linear, le)
}

// Set changes the element of the array key at the 0-based index idx to v,
// in place, through the read-write mapping ("r+" and "w+"): Julia's
// x[i,j] is idx {i-1, j-1}. T must be the record's element type
// (mmapfile.ErrTypeMismatch otherwise); Set[bool] also sets a bit of a
// BitArray. An index outside the array wraps mmapfile.ErrOutOfRange. The
// change is visible to every reader of the file at once and durable after
// Sync or Close.
func Set[T Elem](f *File, key string, idx []int64, v T) error {
	f.mu.RLock()
	err := f.notWritable()
	f.mu.RUnlock()
	if err != nil {
		return err
	}
	i, err := f.arrayOf(key, layout.TypeOf[T](), false)
	if err != nil {
		return err
	}
	return format.Set(f, i, idx, v)
}

// notWritable fails for an open file whose mode cannot write; f.mu is
// held.
func (f *File) notWritable() error {
	if !f.writable && !f.closed {
		return f.errf(-1, mmapfile.ErrNotWritable, "mode %q cannot write", f.mode)
	}
	return nil
}

// SetBytes changes element idx of record i, one that is not one mapped
// run of bytes (a BitArray, a big-endian array), to b; see
// format.BytesSetter.
func (f *File) SetBytes(i int, idx []int64, b []byte) error {
	if n := f.Len(); i < 0 || i >= n {
		return f.errf(-1, mmapfile.ErrOutOfRange, "record %d of %d", i, n)
	}
	f.mu.RLock()
	e := f.tab.at(i)
	f.mu.RUnlock()
	t, err := f.elemType(&e)
	if err != nil {
		return err
	}
	if idx == nil {
		idx = []int64{}
	}
	return f.set(string(e.key), t, idx, 0, b)
}

// elemType is the type of e's elements, which can be set one by one: an
// array's, bool for a BitArray's bits.
func (f *File) elemType(e *entry) (layout.Type, error) {
	switch e.kind {
	case KindArray:
		return e.elem, nil
	case KindBitArray:
		return layout.Bool, nil
	}
	return layout.Invalid, f.errf(e.start, errors.ErrUnsupported, "record %s is a %s record; only array elements can be set", keyOf(e), e.kind)
}

// set is SetElement and Set: t is the Go type's element type (Invalid for
// raw bytes), idx the index (nil: use linear).
func (f *File) set(key string, t layout.Type, idx []int64, linear int64, le []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.notWritable(); err != nil {
		return err
	}
	var ent entry
	err := f.viewEntry(key, &ent)
	e := &ent
	if err != nil {
		return err
	}
	n, err := f.intLen(e)
	if err != nil {
		return err
	}
	if t != layout.Invalid && !(e.kind == KindArray && e.elem == t) && !(e.kind == KindBitArray && t == layout.Bool) {
		return f.mismatch(e, t)
	}
	if idx != nil {
		if linear, err = layout.Index(e.dimsSlice(), layout.ColMajor, idx...); err != nil {
			return f.errf(e.start, format.IndexError(err), "record %q", key)
		}
	}
	if linear < 0 || linear >= int64(n) {
		return f.errf(e.start, mmapfile.ErrOutOfRange, "record %q: index %d outside [0, %d)", key, linear, n)
	}
	size := 1
	if e.kind == KindArray {
		size = e.elem.Size()
	}
	if len(le) != size {
		return f.errf(e.start, mmapfile.ErrTypeMismatch, "record %q: %d bytes given for a %d-byte element", key, len(le), size)
	}
	if (e.kind == KindBitArray || e.elem == layout.Bool) && le[0] > 1 {
		return f.errf(e.start, mmapfile.ErrInvalidBool, "record %q: Bool byte 0x%02x", key, le[0])
	}
	r, err := f.region(e)
	if err != nil {
		return err
	}
	base := e.data - r.Offset()
	if e.kind == KindArray {
		if _, err := r.WriteAt(le, base+linear*int64(size)); err != nil {
			return f.errf(e.data+linear*int64(size), err, "record %q: write failed", key)
		}
		return nil
	}
	var w [8]byte
	at := base + 8*(linear/64)
	if _, err := r.ReadAt(w[:], at); err != nil {
		return f.errf(e.data+8*(linear/64), err, "record %q: read failed", key)
	}
	word := binary.LittleEndian.Uint64(w[:])
	bit := uint64(1) << (linear % 64)
	if le[0] == 1 {
		word |= bit
	} else {
		word &^= bit
	}
	binary.LittleEndian.PutUint64(w[:], word)
	if _, err := r.WriteAt(w[:], at); err != nil {
		return f.errf(e.data+8*(linear/64), err, "record %q: write failed", key)
	}
	return nil
}
