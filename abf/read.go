package abf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// View returns the array key as a slice that aliases the file's mapping:
// no copy is made. In "r+" and "w+" writing to it changes the file
// (durable after Sync or Close); in "r" writing to it crashes the process.
// The slice is valid until Close. T must be the record's element type
// (mmapfile.ErrTypeMismatch otherwise). Where the bytes cannot be aliased
// — a big-endian record (mmapfile.ErrByteOrder), a file opened with
// NewReader, a Bool array holding a byte other than 0 and 1
// (mmapfile.ErrInvalidBool) — the error says to copy with Read or ReadAt
// instead. An empty array gives an empty, non-nil slice.
func View[T Elem](f *File, key string) ([]T, error) {
	i, err := f.arrayOf(key, layout.TypeOf[T](), true)
	if err != nil {
		return nil, err
	}
	v, err := format.View[T](f, i)
	if errors.Is(err, mmapfile.ErrInvalidBool) {
		// Julia reads such bytes as true: say how to read them so.
		off := int64(-1)
		if fe := (*FormatError)(nil); errors.As(err, &fe) {
			off = fe.Offset
		}
		return nil, f.errf(off, mmapfile.ErrInvalidBool, "record %s: Bool byte is neither 0 nor 1; use abf.Read or abf.ReadAt with Options.Lenient", quote64(key))
	}
	return v, err
}

// arrayOf returns the record number of the array key after checking
// that t is its element type. A BitArray is a bool array, except for a
// view (view), which also needs the record mapped and little-endian.
func (f *File) arrayOf(key string, t layout.Type, view bool) (int, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var e entry
	var err error
	if view {
		err = f.viewEntry(key, &e)
	} else {
		err = f.readEntry(key, &e)
	}
	if err != nil {
		return 0, err
	}
	if !(e.kind == KindArray && e.elem == t) && !(e.kind == KindBitArray && t == layout.Bool && !view) {
		return 0, f.mismatch(&e, t)
	}
	return e.i, nil
}

// Read returns a copy of the array key in column-major order, byte-swapped
// if the record is big-endian. Read[bool] also unpacks a BitArray. It is
// guarded: a file truncated under the mapping by another process gives an
// error wrapping mmapfile.ErrFault, not a crash.
func Read[T Elem](f *File, key string) ([]T, error) {
	i, err := f.arrayOf(key, layout.TypeOf[T](), false)
	if err != nil {
		return nil, err
	}
	return format.Read[T](f, i)
}

// ReadAt copies len(dst) elements of the array key, starting at the
// column-major linear index start, into dst: a way to read part of a large
// array in bounded memory. It fills dst or returns an error (a range
// outside the array wraps mmapfile.ErrOutOfRange). ReadAt[bool] also reads
// BitArrays.
func ReadAt[T Elem](f *File, key string, start int64, dst []T) error {
	i, err := f.arrayOf(key, layout.TypeOf[T](), false)
	if err != nil {
		return err
	}
	return format.ReadAt(f, i, start, dst)
}

// ReadRowMajor returns a row-major copy of the array key with the same
// logical shape (Shape): Julia's 1-based x[i,j] is y[(i-1)*Shape[1]+(j-1)],
// that is y[i-1][j-1] read as nested arrays.
func ReadRowMajor[T Elem](f *File, key string) ([]T, error) {
	col, err := Read[T](f, key)
	if err != nil {
		return nil, err
	}
	rec, _ := f.Lookup(key)
	if len(rec.Shape) < 2 {
		return col, nil
	}
	row := make([]T, len(col))
	if err := layout.Reorder(row, col, rec.Shape, layout.ColMajor); err != nil {
		return nil, f.errf(rec.Start, err, "record %q: reordering", key)
	}
	return row, nil
}

// byteOrder is the byte order of e's payload.
func byteOrder(e *entry) binary.ByteOrder {
	if e.bigEndian() {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// readWords copies BitArray words from word index w0, swapping BE records.
func (f *File) readWords(e *entry, w0 int64, words []uint64) error {
	raw := unsafeslice.Bytes(words)
	if err := f.readRaw(e, raw, e.data+8*w0); err != nil {
		return err
	}
	layout.SwapOrder(raw, layout.U64, byteOrder(e), layout.HostOrder())
	return nil
}

// ViewBits returns the BitArray key with Chunks aliasing the mapping.
// Unused bits set in the last word are an error at that word.
func (f *File) ViewBits(key string) (BitArray, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var ent entry
	err := f.viewEntry(key, &ent)
	e := &ent
	if err != nil {
		return BitArray{}, err
	}
	if e.kind != KindBitArray {
		return BitArray{}, f.errf(e.start, mmapfile.ErrTypeMismatch, "record %s is %s, not a BitArray", keyOf(e), e.typeString())
	}
	b := BitArray{Dims: slices.Clone(e.dimsSlice()), Chunks: []uint64{}}
	if e.dataLen == 0 {
		return b, nil
	}
	r, err := f.region(e)
	if err != nil {
		return BitArray{}, err
	}
	if b.Chunks, err = mmapfile.View[uint64](r, e.data-r.Offset(), int(e.dataLen/8), binary.LittleEndian); err != nil {
		return BitArray{}, f.wrapMapErr(e, err)
	}
	var last uint64
	if err := r.Guard(func() { last = b.Chunks[len(b.Chunks)-1] }); err != nil {
		return BitArray{}, err
	}
	if last&unusedMask(b.Len()) != 0 {
		return BitArray{}, f.unusedErr(e)
	}
	return b, nil
}

// ReadBits returns a copy of the BitArray key, swapped if big-endian.
func (f *File) ReadBits(key string) (BitArray, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var ent entry
	err := f.readEntry(key, &ent)
	e := &ent
	if err != nil {
		return BitArray{}, err
	}
	if e.kind != KindBitArray {
		return BitArray{}, f.errf(e.start, mmapfile.ErrTypeMismatch, "record %s is %s, not a BitArray", keyOf(e), e.typeString())
	}
	if e.dataLen/8 > math.MaxInt {
		return BitArray{}, f.errf(e.start, errors.ErrUnsupported, "record %s: too large for this platform", keyOf(e))
	}
	b := BitArray{Dims: slices.Clone(e.dimsSlice()), Chunks: make([]uint64, e.dataLen/8)}
	if err := f.readWords(e, 0, b.Chunks); err != nil {
		return BitArray{}, err
	}
	if len(b.Chunks) > 0 {
		if m := unusedMask(b.Len()); b.Chunks[len(b.Chunks)-1]&m != 0 {
			if !f.lenient {
				return BitArray{}, f.unusedErr(e)
			}
			b.Chunks[len(b.Chunks)-1] &^= m
		}
	}
	return b, nil
}

// ViewBytes returns the raw payload of any record, aliasing the mapping:
// array and BitArray payloads, a String's UTF-8 bytes, a serialized
// record's bytes.
func (f *File) ViewBytes(key string) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var ent entry
	err := f.viewEntry(key, &ent)
	e := &ent
	if err != nil {
		return nil, err
	}
	if e.dataLen == 0 {
		return []byte{}, nil
	}
	r, err := f.region(e)
	if err != nil {
		return nil, err
	}
	b := r.Bytes()
	lo := e.data - r.Offset()
	if b == nil || lo < 0 || lo+e.dataLen > int64(len(b)) {
		return nil, f.errf(e.data, mmapfile.ErrClosed, "record %s: closed meanwhile", keyOf(e))
	}
	return b[lo : lo+e.dataLen : lo+e.dataLen], nil
}

// ReadBytes returns a copy of the raw payload of any record.
func (f *File) ReadBytes(key string) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var ent entry
	err := f.readEntry(key, &ent)
	e := &ent
	if err != nil {
		return nil, err
	}
	if e.dataLen > math.MaxInt {
		return nil, f.errf(e.start, errors.ErrUnsupported, "record %s: too large for this platform", keyOf(e))
	}
	b := make([]byte, e.dataLen)
	if err := f.readRaw(e, b, e.data); err != nil {
		return nil, err
	}
	return b, nil
}

// ReadString returns the value of the String record key.
func (f *File) ReadString(key string) (string, error) {
	f.mu.RLock()
	var ent entry
	err := f.readEntry(key, &ent)
	e := &ent
	var typ string
	if err == nil {
		typ = e.typeString()
	}
	f.mu.RUnlock()
	if err != nil {
		return "", err
	}
	if e.kind != KindString {
		return "", f.errf(e.start, mmapfile.ErrTypeMismatch, "record %q is %s, not a String", key, typ)
	}
	b, err := f.ReadBytes(key)
	return string(b), err
}

// viewEntry finds key for a view: a mapped, readable file.
func (f *File) viewEntry(key string, e *entry) error {
	if err := f.readEntry(key, e); err != nil {
		return err
	}
	if f.mf == nil {
		return f.errf(-1, errors.ErrUnsupported, "record %q: a NewReader file has no mapping to view; use abf.Read or abf.ReadAt", key)
	}
	if e.bigEndian() {
		return f.bigEndianErr(e)
	}
	return nil
}

// bigEndianErr is the error of a view of e, a big-endian record.
func (f *File) bigEndianErr(e *entry) error {
	return f.errf(e.start, mmapfile.ErrByteOrder, "record %s at offset %d is big-endian; use abf.Read or abf.ReadAt", keyOf(e), e.start)
}

func (f *File) mismatch(e *entry, t layout.Type) error {
	return f.errf(e.start, mmapfile.ErrTypeMismatch, "record %s is %s, not an array of %v", keyOf(e), e.typeString(), t)
}

func (f *File) unusedErr(e *entry) error {
	return f.errf(e.data+e.dataLen-8, nil, "record %s: unused bits of the last BitArray word are set (ReadBits with Options.Lenient masks them off)", keyOf(e))
}

// intLen returns the element count of an array or BitArray as an int.
func (f *File) intLen(e *entry) (int, error) {
	if e.kind != KindArray && e.kind != KindBitArray {
		return 0, f.errf(e.start, mmapfile.ErrTypeMismatch, "record %s is %s, not an array", keyOf(e), e.typeString())
	}
	n := e.count()
	if n > math.MaxInt {
		return 0, f.errf(e.start, errors.ErrUnsupported, "record %s: %d elements do not fit in int", keyOf(e), n)
	}
	return int(n), nil
}

// wrapMapErr turns an mmapfile error of a view into a FormatError at the
// offending file offset.
func (f *File) wrapMapErr(e *entry, err error) error {
	off := e.data
	var me *mmapfile.Error
	if errors.As(err, &me) && me.Offset >= 0 {
		off = me.Offset
	}
	switch {
	case errors.Is(err, mmapfile.ErrInvalidBool):
		return f.errf(off, err, "record %s: Bool byte is neither 0 nor 1; use abf.Read or abf.ReadAt with Options.Lenient", keyOf(e))
	case errors.Is(err, mmapfile.ErrMisaligned), errors.Is(err, mmapfile.ErrByteOrder):
		return f.errf(off, err, "record %s: cannot be viewed; use abf.Read or abf.ReadAt", keyOf(e))
	}
	return f.errf(off, err, "record %s: view failed", keyOf(e))
}

// readErr turns the error of a copy of the payload [data, data+n) of
// record key (quoted) from file offset off into a FormatError at the
// offset it is about.
func (f *File) readErr(key string, data, n, off int64, err error) error {
	if fe := (*FormatError)(nil); errors.As(err, &fe) {
		return err
	}
	var me *mmapfile.Error
	if errors.As(err, &me) && me.Offset >= 0 {
		off = me.Offset
	}
	if errors.Is(err, mmapfile.ErrFault) || errors.Is(err, mmapfile.ErrTruncated) {
		return f.cutShort(key, data, n, off, err)
	}
	return f.errf(off, err, "record %s", key)
}

// cutShort is the error of a read of the payload [data, data+n) of
// record key (quoted) that found the file shorter than when it was opened,
// at file offset off: another program truncated it. The error is at the
// first byte of the payload that is gone, where the file's size says.
func (f *File) cutShort(key string, data, n, off int64, err error) error {
	now := ""
	if f.mf != nil {
		if size, serr := f.mf.Size(); serr == nil {
			now = fmt.Sprintf("; it now ends at offset %d", size)
			if size < off {
				off = min(max(size, data), off)
			}
		}
	}
	if !errors.Is(err, mmapfile.ErrTruncated) {
		err = fmt.Errorf("%w: %w", mmapfile.ErrTruncated, err)
	}
	return errAt(f.name, off, err, fmt.Sprintf("record %s: the file was cut short while open: the payload [%d, %d) is no longer all there%s", key, data, data+n, now))
}
