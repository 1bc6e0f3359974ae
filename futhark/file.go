package futhark

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// File is an indexed input of Futhark values: a file mapped once (Open,
// OpenFile, Create) or any io.ReaderAt (NewReader). Its methods are safe
// for concurrent use by any number of goroutines, Close and the appends
// included: those wait for the reads under way, and reads after Close fail
// with mmapfile.ErrClosed. A slice from View or Payload aliases the
// mapping and dies at Close or at an append (see the package
// documentation). Set and SetElement writers must not race with readers of
// the same element.
type File struct {
	name string
	opts Options

	mu     sync.RWMutex // shared by reads, exclusive for Close and appends
	closed bool
	mf     *mmapfile.File   // nil for NewReader
	region *mmapfile.Region // the whole file, mapped once; nil for NewReader
	src    io.ReaderAt      // where payloads are read from: region, or NewReader's reader
	size   int64
	idx    index
	damage error
	tail   int64 // bytes after the last good value, kept by a salvaging open

	cacheMu  sync.Mutex // the last text value decoded after indexing
	cacheIdx int
	cache    []byte

	fmtState // what the format-neutral interface keeps (format.go)
}

// Open maps the file at path read-only, once, and indexes every value in
// it without decoding binary payloads. Text values must be parsed to be
// validated, so their decoded payloads are kept for later reads, up to
// 64 MiB per File; larger ones are decoded again when read. Bad input gives
// a *FormatError and no File, unless Options.Salvage keeps the values
// before it.
func Open(path string, o *Options) (*File, error) {
	return OpenFile(path, mmapfile.ReadOnly, o)
}

// OpenFile is Open with a mode. mmapfile.ReadWrite maps the file writable
// and takes mmapfile's exclusive lock, so that Set and SetElement change
// binary elements in place and Append, AppendFunc and AppendArray add
// values; with Options.Create a missing file is created empty (no values).
// A writing open cuts nothing unless asked: input that does not parse
// (a last value the file ends inside, what a crash during an append
// leaves, but also a corrupted dimension or type) makes it fail with an
// error wrapping mmapfile.ErrNeedsRepair that says what a repair would
// cut, and the file is left as it was. With Options.Repair the file is
// cut after the last good value and Damage says what was removed. A file
// of which not one value parses may hold no Futhark values at all: it is
// cut only where it ends as an interrupted first append leaves it (inside
// text, or inside a binary payload after a whole header, with no whole
// value where that payload could end). With Options.Salvage alone the
// values before the damage are opened, nothing is cut, and appends fail.
func OpenFile(path string, mode mmapfile.Mode, o *Options) (*File, error) {
	opts := o.get()
	mf, err := mmapfile.OpenFile(path, mode, &opts.Options)
	if err != nil {
		return nil, err
	}
	f := &File{name: path, opts: opts, mf: mf, cacheIdx: -1}
	if opts.Repair && mode != mmapfile.ReadWrite {
		mf.Close()
		return nil, f.err(-1, mmapfile.ErrNotWritable, "Options.Repair needs a read-write open")
	}
	if err := f.load(mode == mmapfile.ReadWrite); err != nil {
		mf.Close()
		return nil, err
	}
	return f, nil
}

// load maps the whole file and indexes it. A writable file with damage
// is refused, cut (Options.Repair) or kept as it is (Options.Salvage).
func (f *File) load(writable bool) error {
	r, err := f.mf.MapAll()
	if err != nil {
		return err
	}
	var ierr error
	if gerr := r.Guard(func() { ierr = f.idx.scanBytes(r.Bytes(), 0, f.opts) }); gerr != nil {
		r.Unmap()
		return f.ioErr(-1, "indexing the file", gerr)
	}
	f.region, f.src, f.size = r, r, int64(r.Len())
	if ierr == nil {
		return nil
	}
	ierr = withFile(ierr, f.name)
	var good int64 // where the last good value ends
	if f.idx.n > 0 {
		good = f.idx.at(f.idx.n - 1).end
	}
	// A cut that keeps no value wipes the file: only a torn first append
	// may have it, never what merely ends like one.
	wipeable, ambiguous := f.idx.n > 0, ""
	if !wipeable && errors.Is(ierr, mmapfile.ErrTruncated) {
		if gerr := r.Guard(func() { ambiguous = notTorn(r.Bytes()) }); gerr != nil {
			r.Unmap()
			return f.ioErr(-1, "indexing the file", gerr)
		}
		wipeable = ambiguous == ""
	}
	switch {
	case writable && f.opts.Repair && wipeable:
		old := f.size
		f.region, f.src = nil, nil
		if err := r.Unmap(); err != nil {
			return err
		}
		if err := f.mf.Truncate(good); err != nil {
			return err
		}
		if r, err = f.mf.Map(0, good); err != nil {
			return err
		}
		f.region, f.src, f.size = r, r, good
		why, cause := ierr.Error(), ierr
		var fe *FormatError
		if errors.As(ierr, &fe) {
			why, cause = fmt.Sprintf("offset %d: %s", fe.Offset, fe.Msg), fe.Err
		}
		f.damage = errAt(f.name, good, cause, fmt.Sprintf("cut the last %d bytes, which did not hold a value (%s); the file now ends after %s", old-good, why, valuesKept(f.idx.n)))
		return nil
	case f.opts.Salvage:
		f.damage = ierr
		f.tail = f.size - good
		return nil
	}
	f.region, f.src = nil, nil
	r.Unmap()
	if writable {
		return f.needsRepair(ierr, good, wipeable, ambiguous)
	}
	return ierr
}

// notTorn says why input whose first value ends short was not left so by
// an interrupted append, or "" if it may have been: an append writes a
// value's header whole, so a binary header cut short is other damage, and
// so is a binary value whose payload holds the whole of another value
// where it could end (a corrupted dimension, not a tear). Text ending
// inside its first value is a torn append of text.
func notTorn(d []byte) string {
	i := dropSpaces(d, 0)
	if i >= len(d) || d[i] != 'b' {
		return ""
	}
	h, _, err := parseBinHeader(d[i:], int64(i))
	if err != nil {
		return "the first value's header is cut short, which no interrupted append leaves"
	}
	data, esize := i+h.hlen, max(h.typ.Size(), 1)
	for q := data; q < len(d); q++ {
		k := bytes.Index(d[q:], []byte{'b', 2})
		if k < 0 {
			break
		}
		q += k
		v, _, err := parseBinHeader(d[q:], int64(q))
		if err != nil || int64(len(d)-q-v.hlen) < v.size {
			continue
		}
		// Where the first payload could end: before q, past spaces only.
		for s := q; s >= data; s-- {
			if (s-data)%esize == 0 {
				return fmt.Sprintf("a whole value parses at offset %d, inside the payload the first value's header claims, which a corrupted dimension makes and an interrupted append does not", q)
			}
			if s == data || !isSpace[d[s-1]] {
				break
			}
		}
	}
	return ""
}

// needsRepair is the error of a writing open that found damage: what is
// damaged, and what a repair would cut.
func (f *File) needsRepair(damage error, good int64, wipeable bool, ambiguous string) error {
	e := *errAt(f.name, good, nil, damage.Error())
	var fe *FormatError
	if errors.As(damage, &fe) {
		e = *fe
		if e.Msg == "" && e.Err != nil {
			e.Msg = e.Err.Error()
		}
	}
	if !wipeable {
		// Nothing parses, and not as a torn first value does: this may
		// be no Futhark file at all, which a repair would wipe.
		if ambiguous != "" {
			e.Msg += "; " + ambiguous
		}
		e.Msg += "; not one value parses, so this may not be a file of Futhark values: a writing open refuses it, and no repair cuts it"
		return &e
	}
	e.Err = mmapfile.ErrNeedsRepair
	if fe != nil && fe.Err != nil {
		e.Err = fmt.Errorf("%w: %w", mmapfile.ErrNeedsRepair, fe.Err)
	}
	e.Msg += fmt.Sprintf("; a writing open refuses the damaged file: a repair (Options.Repair) would cut its last %d bytes, from offset %d, and keep %s",
		f.size-good, good, valuesKept(f.idx.n))
	return &e
}

// valuesKept says which values a cut keeps.
func valuesKept(n int) string {
	switch n {
	case 0:
		return "no value"
	case 1:
		return "value 0"
	}
	return fmt.Sprintf("values 0 to %d", n-1)
}

// NewReader indexes the values in the size bytes of r, which the File then
// reads from: binary payloads are skipped while indexing (seeking over
// them) and copied with ReadAt when read; text values are decoded as Open
// decodes them. Nothing is mapped, so View and Payload are not available.
// Errors name the input if r has a Name method (an *os.File does).
func NewReader(r io.ReaderAt, size int64, o *Options) (*File, error) {
	f := &File{opts: o.get(), src: r, size: size, cacheIdx: -1}
	if n, ok := r.(interface{ Name() string }); ok {
		f.name = n.Name()
	}
	if size < 0 {
		return nil, f.err(-1, mmapfile.ErrOutOfRange, "negative input size %d", size)
	}
	err := f.idx.scanReader(r, size, f.opts)
	if err == nil {
		return f, nil
	}
	var fe *FormatError
	if !errors.As(err, &fe) {
		return nil, f.ioErr(-1, "indexing the input", err)
	}
	if fe.Line > 0 {
		// The Decoder counts lines only in what it read; count them all.
		if lc, lerr := lineCols(r, []int64{fe.Offset}); lerr == nil {
			fe.Line, fe.Col = lc[0][0], lc[0][1]
		}
	}
	err = withFile(err, f.name)
	if f.opts.Salvage {
		f.damage = err
		return f, nil
	}
	return nil, err
}

// Damage returns what was wrong with the input where Options.Salvage kept
// the values before it, or what a writing open with Options.Repair cut
// away (see OpenFile), or nil.
func (f *File) Damage() error { return f.damage }

// Close unmaps and closes the file; a writable one is synced first. Views
// die here. Closing twice returns an error wrapping mmapfile.ErrClosed.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.err(-1, mmapfile.ErrClosed, "")
	}
	f.closed = true
	f.region, f.src = nil, nil
	f.resetFormat()
	f.cacheMu.Lock()
	f.cacheIdx, f.cache = -1, nil
	f.cacheMu.Unlock()
	if f.mf == nil {
		return nil
	}
	mf := f.mf
	f.mf = nil
	if err := mf.Close(); err != nil {
		return f.ioErr(-1, "closing", err)
	}
	return nil
}

// Name returns the file's path, or the name of NewReader's input if it has
// one.
func (f *File) Name() string { return f.name }

// Size returns the input's size in bytes.
func (f *File) Size() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.size
}

// Entries returns one Entry per value, in input order. It builds the list
// on every call; the lines and columns of text values take one pass over
// the bytes before the last of them.
func (f *File) Entries() []Entry {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]Entry, f.idx.n)
	var text []int
	var offs []int64
	for i := range out {
		e := f.idx.at(i)
		out[i] = Entry{Binary: e.bin, Type: e.typ, Shape: f.idx.shape(e), Start: e.start, End: e.end, Data: e.data()}
		if !e.bin {
			text = append(text, i)
			offs = append(offs, e.start)
		}
	}
	if len(offs) > 0 && !f.closed {
		if lc, err := lineCols(f.src, offs); err == nil {
			for k, i := range text {
				out[i].Line, out[i].Col = lc[k][0], lc[k][1]
			}
		}
	}
	return out
}

// err returns a *FormatError about this file.
func (f *File) err(off int64, sen error, msg string, args ...any) error {
	return errAt(f.name, off, sen, fmt.Sprintf(msg, args...))
}

// ioErr wraps an error of reading or mapping the file, at the file offset
// it names if it names one.
func (f *File) ioErr(off int64, what string, err error) error {
	var me *mmapfile.Error
	if errors.As(err, &me) && me.Offset >= 0 {
		off = me.Offset
	}
	return errAt(f.name, off, err, what)
}

// entry returns value i; f.mu must be held.
func (f *File) entry(i int) (*entry, error) {
	if f.closed {
		return nil, f.err(-1, mmapfile.ErrClosed, "value %d", i)
	}
	if i < 0 || i >= f.idx.n {
		return nil, f.err(-1, errNoValue, "value %d of [0,%d)", i, f.idx.n)
	}
	return f.idx.at(i), nil
}

// count is the number of elements of e.
func (f *File) count(e *entry) int64 {
	n, _ := layout.Count(f.idx.shape(e))
	return n
}

// readBytes copies file bytes [off, off+len(dst)) into dst: from the
// mapping (whose ReadAt is guarded against faults and reports a file
// truncated under it, even inside the page its end falls in), or with
// NewReader's ReadAt. f.mu must be held.
func (f *File) readBytes(dst []byte, off int64) error {
	if len(dst) == 0 {
		return nil
	}
	n, err := f.src.ReadAt(dst, off)
	if err == nil && n < len(dst) {
		err = io.ErrUnexpectedEOF
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return f.err(off+int64(n), mmapfile.ErrTruncated, "the input ends inside a payload")
	}
	if err != nil {
		return f.ioErr(off, "reading a payload", err)
	}
	return nil
}

// textPayload returns the decoded payload of text value i, shared: kept
// from indexing, or decoded now (the last one is cached). f.mu must be
// held.
func (f *File) textPayload(i int, e *entry) ([]byte, error) {
	if k := f.idx.keptOf(e); k != nil {
		return k, nil
	}
	f.cacheMu.Lock()
	defer f.cacheMu.Unlock()
	if f.cacheIdx == i {
		return f.cache, nil
	}
	hint, _ := layout.ByteSize(e.typ, f.idx.shape(e))
	var v Value
	var err error
	if f.region != nil {
		d := f.region.Bytes()
		if gerr := f.region.Guard(func() { v, err = decodeText(d, int(e.start), int(e.end), f.opts, hint) }); gerr != nil {
			return nil, f.ioErr(e.start, fmt.Sprintf("decoding value %d", i), gerr)
		}
	} else {
		// The text and the few bytes of lookahead after it.
		buf := make([]byte, min(f.size, e.end+16)-e.start)
		if err := f.readBytes(buf, e.start); err != nil {
			return nil, err
		}
		v, err = decodeText(buf, 0, int(e.end-e.start), f.opts, hint)
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Offset += e.start
		}
	}
	if err != nil {
		return nil, withFile(err, f.name)
	}
	f.cacheIdx, f.cache = i, v.Data
	return v.Data, nil
}

// Value decodes value i into memory (a copy).
func (f *File) Value(i int) (Value, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.entry(i)
	if err != nil {
		return Value{}, err
	}
	v := Value{Type: e.typ, Shape: append([]int64{}, f.idx.shape(e)...)}
	if !e.bin {
		p, err := f.textPayload(i, e)
		if err != nil {
			return Value{}, err
		}
		v.Data = bytes.Clone(p)
		if v.Data == nil {
			v.Data = []byte{}
		}
		return v, nil
	}
	n, _ := layout.ByteSize(e.typ, v.Shape)
	v.Data = make([]byte, n)
	if err := f.readBytes(v.Data, e.data()); err != nil {
		return Value{}, err
	}
	if e.typ == layout.Bool {
		layout.CheckBools(v.Data, layout.Bool, true)
	}
	return v, nil
}

// typed returns value i, checking that T may stand for its elements;
// f.mu is held.
func typed[T layout.Elem](f *File, i int, allowBool bool) (*entry, error) {
	e, err := f.entry(i)
	if err != nil {
		return nil, err
	}
	return e, checkElem[T](f, i, e, allowBool)
}

// checkElem checks that T may stand for the elements of value i.
func checkElem[T layout.Elem](f *File, i int, e *entry, allowBool bool) error {
	t := layout.TypeOf[T]()
	if e.typ == layout.Bool && t == layout.Bool && !allowBool {
		return f.err(e.start, mmapfile.ErrTypeMismatch, "value %d is bool: a view gives its bytes as []uint8", i)
	}
	if t == e.typ || e.typ == layout.Bool && t == layout.U8 {
		return nil
	}
	return f.err(e.start, mmapfile.ErrTypeMismatch, "value %d is %s, not %v", i, TypeString(e.typ, f.idx.shape(e)), t)
}

// View returns the payload of binary value i as a []T aliasing the
// mapping: no copy. T must be the value's type (layout.Float16 for f16,
// uint8 for bool, whose bytes are returned raw). It fails, naming the
// offset, for text values (ErrTextValue), for payloads not aligned for T
// (mmapfile.ErrMisaligned) and on big-endian machines
// (mmapfile.ErrByteOrder): use Read or ReadAt then. A File made by
// NewReader has no mapping to view. The slice dies at Close and at an
// append; see the package documentation.
func View[T layout.Elem](f *File, i int) ([]T, error) {
	if err := checkTyped[T](f, i, false); err != nil {
		return nil, err
	}
	return format.View[T](f, i)
}

// checkTyped checks that value i exists and that T may stand for its
// elements.
func checkTyped[T layout.Elem](f *File, i int, allowBool bool) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	_, err := typed[T](f, i, allowBool)
	return err
}

// Read returns a copy of value i's elements as a []T: one bulk copy of a
// binary payload, or the decoded text. T must be the value's type
// (layout.Float16 for f16; bool or uint8 for bool, where []bool maps
// nonzero bytes to true).
func Read[T layout.Elem](f *File, i int) ([]T, error) {
	if err := checkTyped[T](f, i, true); err != nil {
		return nil, err
	}
	return format.Read[T](f, i)
}

// ReadAt copies elements [start, start+len(dst)) of value i, in row-major
// order, into dst: it fills dst or returns an error (mmapfile.ErrOutOfRange
// for a range outside the value). Binary payloads are copied straight from
// the mapping, so a huge value can be read piece by piece in bounded
// memory; text values are decoded once and cached.
func ReadAt[T layout.Elem](f *File, i int, start int64, dst []T) error {
	if err := checkTyped[T](f, i, true); err != nil {
		return err
	}
	return format.ReadAt(f, i, start, dst)
}

// Set changes the element of binary value i at the row-major index idx
// (one index per dimension; none for a scalar) to v, in place, through the
// read-write mapping (OpenFile with mmapfile.ReadWrite). T must be the
// value's type, or bool or uint8 (0 or 1) for bool. The change is visible
// to every reader of the file at once and durable after Sync or Close.
func Set[T layout.Elem](f *File, i int, idx []int64, v T) error {
	f.mu.RLock()
	e, err := typed[T](f, i, true)
	if err == nil && !e.bin {
		err = f.err(e.start, errTextInPlace, "value %d is text: it cannot be changed in place", i)
	}
	f.mu.RUnlock()
	if err != nil {
		return err
	}
	return format.Set(f, i, idx, v)
}

// SetElement overwrites element linear (row-major) of binary value i with
// the little-endian bytes le, through the read-write mapping (OpenFile
// with mmapfile.ReadWrite). Aligned or not, the write is a guarded copy.
// The change reaches the file at Sync or Close.
func (f *File) SetElement(i int, linear int64, le []byte) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.entry(i)
	if err != nil {
		return err
	}
	return f.setElement(i, e, linear, le)
}

func (f *File) setElement(i int, e *entry, linear int64, le []byte) error {
	if !e.bin {
		return f.err(e.start, errTextInPlace, "value %d is text: it cannot be changed in place", i)
	}
	if f.region == nil || !f.region.Writable() {
		return f.err(e.start, mmapfile.ErrNotWritable, "value %d cannot be changed: open the file with mmapfile.ReadWrite", i)
	}
	size := e.typ.Size()
	if len(le) != size {
		return f.err(e.start, mmapfile.ErrTypeMismatch, "value %d: a %s element has %d bytes, not %d", i, e.typ, size, len(le))
	}
	if e.typ == layout.Bool && le[0] > 1 {
		return f.err(e.start, mmapfile.ErrInvalidBool, "value %d: bool byte 0x%02x", i, le[0])
	}
	if n := f.count(e); linear < 0 || linear >= n {
		return f.err(e.start, mmapfile.ErrOutOfRange, "value %d: element %d out of range [0,%d)", i, linear, n)
	}
	off := e.data() + linear*int64(size)
	if _, err := f.region.WriteAt(le, off); err != nil {
		return f.ioErr(off, fmt.Sprintf("writing value %d", i), err)
	}
	return nil
}

// Sync makes in-place changes and appends durable (fsync).
func (f *File) Sync() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return f.err(-1, mmapfile.ErrClosed, "sync of a closed file")
	}
	if f.mf == nil {
		return nil
	}
	if err := f.mf.Sync(); err != nil {
		return f.ioErr(-1, "syncing", err)
	}
	return nil
}

// PayloadBytes returns the raw payload bytes of binary value i (little-endian
// elements, bool bytes as stored), aliasing the mapping with no alignment
// requirement. Like a View it dies at Close or an append. Text values have
// no payload (ErrTextValue), nor do Files made by NewReader.
func (f *File) PayloadBytes(i int) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.entry(i)
	if err != nil {
		return nil, err
	}
	if !e.bin {
		return nil, f.err(e.start, ErrTextValue, "value %d is text: decode it with Value", i)
	}
	if f.region == nil {
		return nil, f.err(e.start, errors.ErrUnsupported, "value %d: only a mapped file (Open) has payloads to alias: copy it with Value", i)
	}
	return f.region.Bytes()[e.data():e.end:e.end], nil
}

// encodeChunk is how much of a binary payload Encode copies at a time.
const encodeChunk = 1 << 20

// Encode writes value i to e, as binary or as text, copying a binary
// payload from the file in chunks (no copy of the whole value in memory).
// A file truncated meanwhile gives an error wrapping mmapfile.ErrFault,
// not a crash.
func (f *File) Encode(e *Encoder, i int, binaryOut bool) error {
	f.mu.RLock()
	ent, err := f.entry(i)
	var typ layout.Type
	var shape []int64
	var data, size int64
	if err == nil {
		typ, shape, data = ent.typ, append([]int64{}, f.idx.shape(ent)...), ent.data()
		size, _ = layout.ByteSize(typ, shape)
		if !ent.bin {
			data = -1
		}
	}
	f.mu.RUnlock()
	if err != nil {
		return err
	}
	if data < 0 {
		v, err := f.Value(i)
		if err != nil {
			return err
		}
		if binaryOut {
			return e.EncodeBinary(v)
		}
		return e.EncodeText(v)
	}
	if binaryOut {
		err = e.BeginBinary(typ, shape)
	} else {
		err = e.BeginText(typ, shape)
	}
	if err != nil {
		return err
	}
	buf := make([]byte, min(size, encodeChunk/int64(typ.Size())*int64(typ.Size())))
	for off := int64(0); off < size; {
		chunk := buf[:min(int64(len(buf)), size-off)]
		f.mu.RLock()
		if f.closed {
			err = f.err(-1, mmapfile.ErrClosed, "value %d: the file was closed while it was encoded", i)
		} else {
			err = f.readBytes(chunk, data+off)
		}
		f.mu.RUnlock()
		if err != nil {
			return err
		}
		if err := e.WriteElems(chunk); err != nil {
			return err
		}
		off += int64(len(chunk))
	}
	return nil
}
