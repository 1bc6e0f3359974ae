package abf

import (
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"unicode/utf8"

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
	if t.Size() > 1 && mmapfile.HostOrder() != binary.LittleEndian {
		payload = slices.Clone(payload)
		layout.SwapBytes(payload, t.Size())
	}
	return f.write(record{key: key, kind: KindArray, elem: t, dims: dims, n: int64(len(data)), payload: payload})
}

// WriteBits appends the BitArray b as key. Its Chunks must hold exactly
// ⌈prod(Dims)/64⌉ words with the unused bits of the last one zero.
// Upstream AlignedBinaryFormat.jl cannot read empty BitArrays.
func (f *File) WriteBits(key string, b BitArray) error {
	payload := unsafeslice.Bytes(b.Chunks)
	if mmapfile.HostOrder() != binary.LittleEndian {
		payload = slices.Clone(payload)
		layout.SwapBytes(payload, 8)
	}
	return f.write(record{key: key, kind: KindBitArray, dims: b.Dims, n: int64(len(b.Chunks)), chunks: b.Chunks, payload: payload})
}

// WriteString appends a String record. Format A files refuse it
// (ErrUnsupported): v0.1 and v0.2 cannot read Strings and v0.3 misparses
// what follows them.
func (f *File) WriteString(key, value string) error {
	return f.write(record{key: key, kind: KindString, value: value, payload: []byte(value)})
}

// record is what a write appends.
type record struct {
	key     string
	kind    Kind
	elem    layout.Type
	dims    []int64
	n       int64 // elements given (arrays) or words given (BitArrays)
	chunks  []uint64
	value   string
	payload []byte
}

func (f *File) write(rec record) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	closed := f.closed
	existing, exists := f.index[rec.key]
	var existingStart int64
	if exists {
		existingStart = f.entries[existing].Start
	}
	f.mu.RUnlock()

	// 1. Validate everything before the first byte.
	switch {
	case closed:
		return f.errf(-1, os.ErrClosed, "file is closed")
	case !f.writable:
		return f.errf(-1, ErrNotWritable, "mode %q cannot write", f.mode)
	case f.format == FormatA && f.trailing > 0:
		return f.errf(f.end, ErrNotWritable, "appending would overwrite %d unknown trailing bytes (a writing open with Options.Salvage cuts them)", f.trailing)
	case f.format == FormatA && rec.kind == KindString:
		return f.errf(-1, ErrUnsupported, "record %q: Format A cannot hold String records", rec.key)
	case !utf8.ValidString(rec.key):
		return f.errf(-1, nil, "key %q is not valid UTF-8", rec.key)
	case exists:
		return f.errf(existingStart, ErrKeyExists, "record %q already exists at offset %d", rec.key, existingStart)
	}
	var align, nbytes int64 = 1, int64(len(rec.payload))
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
		if rec.kind == KindArray && rec.n != count {
			return f.errf(-1, nil, "record %q: %d values for dims %v (%d elements)", rec.key, rec.n, rec.dims, count)
		}
		if rec.kind == KindBitArray {
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
	pl, err := layout.ElementPolicy.Place(start, layout.Record{Header: int64(len(hdr)), ElemAlign: align, Payload: nbytes})
	if err != nil {
		return f.errf(start, err, "record %q: placement", rec.key)
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
		if _, err := f.wr.WriteAt(rec.payload, pl.Offset); err != nil {
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
	e := &entry{Record: Record{
		Key: rec.key, Kind: rec.kind, Elem: rec.elem, Dims: slices.Clone(rec.dims),
		Start: start, DataOffset: pl.Offset, DataLen: nbytes, End: pl.End,
	}, hdrEnd: pl.HeaderEnd}
	e.TypeString = canonicalType(rec.kind, rec.elem, len(rec.dims))
	if rec.kind == KindString {
		e.hdrEnd = pl.Offset
	}
	if rec.dims == nil && rec.kind != KindString {
		e.Dims = []int64{}
	}
	f.mu.Lock()
	f.index[rec.key] = len(f.entries)
	f.entries = append(f.entries, e)
	f.mu.Unlock()
	f.end = pl.End
	f.size = max(f.size, pl.End)
	return nil
}

// rollback returns the file to oldSize bytes (and Format A's count to
// oldCount) after a failed write, and reports the cause.
func (f *File) rollback(key string, start, oldSize, oldCount int64, countWritten bool, cause error) error {
	errs := []error{cause}
	if f.regular {
		if err := f.mf.Truncate(oldSize); err != nil {
			errs = append(errs, err)
		}
	}
	if countWritten {
		if err := f.putCount(oldCount); err != nil {
			errs = append(errs, err)
		}
	}
	f.size = oldSize
	return f.errf(start, errors.Join(errs...), "record %q: write failed; file restored", key)
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
// column-major index. The change is durable after Sync or Close.
func (f *File) SetElement(key string, linear int64, le []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if !f.writable && !f.closed {
		return f.errf(-1, ErrNotWritable, "mode %q cannot write", f.mode)
	}
	e, err := f.viewEntry(key)
	if err != nil {
		return err
	}
	n, err := f.intLen(e)
	if err != nil {
		return err
	}
	if linear < 0 || linear >= int64(n) {
		return f.errf(e.Start, nil, "record %q: index %d outside [0, %d)", key, linear, n)
	}
	size := 1
	if e.Kind == KindArray {
		size = e.Elem.Size()
	}
	if len(le) != size {
		return f.errf(e.Start, ErrTypeMismatch, "record %q: %d bytes given for a %d-byte element", key, len(le), size)
	}
	if (e.Kind == KindBitArray || e.Elem == layout.Bool) && le[0] > 1 {
		return f.errf(e.Start, mmapfile.ErrInvalidBool, "record %q: Bool byte 0x%02x is neither 0 nor 1", key, le[0])
	}
	r, err := f.region(e)
	if err != nil {
		return err
	}
	base := e.DataOffset - r.Offset()
	if e.Kind == KindArray {
		if _, err := r.WriteAt(le, base+linear*int64(size)); err != nil {
			return f.errf(e.DataOffset+linear*int64(size), err, "record %q: write failed", key)
		}
		return nil
	}
	var w [8]byte
	at := base + 8*(linear/64)
	if _, err := r.ReadAt(w[:], at); err != nil {
		return f.errf(e.DataOffset+8*(linear/64), err, "record %q: read failed", key)
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
		return f.errf(e.DataOffset+8*(linear/64), err, "record %q: write failed", key)
	}
	return nil
}
