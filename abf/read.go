package abf

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"

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
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.viewEntry(key)
	if err != nil {
		return nil, err
	}
	t := layout.TypeOf[T]()
	if e.Kind != KindArray || e.Elem != t {
		return nil, f.mismatch(e, t)
	}
	n, err := f.intLen(e)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return []T{}, nil
	}
	r, err := f.region(e)
	if err != nil {
		return nil, err
	}
	v, err := mmapfile.View[T](r, e.DataOffset-r.Offset(), n, binary.LittleEndian)
	if err != nil {
		return nil, f.wrapMapErr(e, err)
	}
	return v, nil
}

// Read returns a copy of the array key in column-major order, byte-swapped
// if the record is big-endian. Read[bool] also unpacks a BitArray. It is
// guarded: a file truncated under the mapping by another process gives an
// error wrapping mmapfile.ErrFault, not a crash.
func Read[T Elem](f *File, key string) ([]T, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.readEntry(key)
	if err != nil {
		return nil, err
	}
	n, err := f.intLen(e)
	if err != nil {
		return nil, err
	}
	dst := make([]T, n)
	if err := readAt(f, e, 0, dst); err != nil {
		return nil, err
	}
	return dst, nil
}

// ReadAt copies len(dst) elements of the array key, starting at the
// column-major linear index start, into dst: a way to read part of a large
// array in bounded memory. It fills dst or returns an error (a range
// outside the array wraps mmapfile.ErrOutOfRange). ReadAt[bool] also reads
// BitArrays.
func ReadAt[T Elem](f *File, key string, start int64, dst []T) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.readEntry(key)
	if err != nil {
		return err
	}
	return readAt(f, e, start, dst)
}

// ReadRowMajor returns a row-major copy of the array key with the same
// logical shape (Dims): Julia's 1-based x[i,j] is y[(i-1)*Dims[1]+(j-1)],
// that is y[i-1][j-1] read as nested arrays.
func ReadRowMajor[T Elem](f *File, key string) ([]T, error) {
	col, err := Read[T](f, key)
	if err != nil {
		return nil, err
	}
	rec, _ := f.Lookup(key)
	if len(rec.Dims) < 2 {
		return col, nil
	}
	row := make([]T, len(col))
	if err := layout.Reorder(row, col, rec.Dims, layout.ColMajor); err != nil {
		return nil, f.errf(rec.Start, err, "record %q: reordering", key)
	}
	return row, nil
}

func readAt[T Elem](f *File, e *entry, start int64, dst []T) error {
	t := layout.TypeOf[T]()
	n, err := f.intLen(e)
	if err != nil {
		return err
	}
	if start < 0 || start > int64(n) || int64(len(dst)) > int64(n)-start {
		return f.errf(e.Start, mmapfile.ErrOutOfRange, "record %q: elements [%d, +%d) outside [0, %d)", e.Key, start, len(dst), n)
	}
	if e.Kind == KindBitArray && t == layout.Bool {
		return f.readBitsAt(e, start, any(dst).([]bool))
	}
	if e.Kind != KindArray || e.Elem != t {
		return f.mismatch(e, t)
	}
	size := int64(t.Size())
	raw := unsafeslice.Bytes(dst)
	if err := f.readRaw(e, raw, e.DataOffset+start*size); err != nil {
		return err
	}
	mmapfile.SwapOrder(raw, t, byteOrder(e), mmapfile.HostOrder())
	if bad := mmapfile.CheckBools(raw, t, f.lenient); bad >= 0 {
		return f.errf(e.DataOffset+start+int64(bad), mmapfile.ErrInvalidBool, "record %q: Bool byte 0x%02x is neither 0 nor 1", e.Key, raw[bad])
	}
	return nil
}

// byteOrder is the byte order of e's payload.
func byteOrder(e *entry) binary.ByteOrder {
	if e.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// readBitsAt unpacks bits [start, start+len(dst)) of a BitArray.
func (f *File) readBitsAt(e *entry, start int64, dst []bool) error {
	if len(dst) == 0 {
		return nil
	}
	w0, w1 := start/64, (start+int64(len(dst))-1)/64
	words := make([]uint64, w1-w0+1)
	if err := f.readWords(e, w0, words); err != nil {
		return err
	}
	for i := range dst {
		j := start + int64(i) - 64*w0
		dst[i] = words[j>>6]>>(j&63)&1 != 0
	}
	return nil
}

// readWords copies BitArray words from word index w0, swapping BE records.
func (f *File) readWords(e *entry, w0 int64, words []uint64) error {
	raw := unsafeslice.Bytes(words)
	if err := f.readRaw(e, raw, e.DataOffset+8*w0); err != nil {
		return err
	}
	mmapfile.SwapOrder(raw, layout.U64, byteOrder(e), mmapfile.HostOrder())
	return nil
}

// ViewBits returns the BitArray key with Chunks aliasing the mapping.
// Unused bits set in the last word are an error at that word.
func (f *File) ViewBits(key string) (BitArray, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.viewEntry(key)
	if err != nil {
		return BitArray{}, err
	}
	if e.Kind != KindBitArray {
		return BitArray{}, f.errf(e.Start, mmapfile.ErrTypeMismatch, "record %q is %s, not a BitArray", e.Key, e.TypeString)
	}
	b := BitArray{Dims: slices.Clone(e.Dims), Chunks: []uint64{}}
	if e.DataLen == 0 {
		return b, nil
	}
	r, err := f.region(e)
	if err != nil {
		return BitArray{}, err
	}
	if b.Chunks, err = mmapfile.View[uint64](r, e.DataOffset-r.Offset(), int(e.DataLen/8), binary.LittleEndian); err != nil {
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
	e, err := f.readEntry(key)
	if err != nil {
		return BitArray{}, err
	}
	if e.Kind != KindBitArray {
		return BitArray{}, f.errf(e.Start, mmapfile.ErrTypeMismatch, "record %q is %s, not a BitArray", e.Key, e.TypeString)
	}
	if e.DataLen/8 > math.MaxInt {
		return BitArray{}, f.errf(e.Start, errors.ErrUnsupported, "record %q: too large for this platform", e.Key)
	}
	b := BitArray{Dims: slices.Clone(e.Dims), Chunks: make([]uint64, e.DataLen/8)}
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
	e, err := f.viewEntry(key)
	if err != nil {
		return nil, err
	}
	if e.DataLen == 0 {
		return []byte{}, nil
	}
	r, err := f.region(e)
	if err != nil {
		return nil, err
	}
	b := r.Bytes()
	lo := e.DataOffset - r.Offset()
	if b == nil || lo < 0 || lo+e.DataLen > int64(len(b)) {
		return nil, f.errf(e.DataOffset, mmapfile.ErrClosed, "record %q: mapping is gone", e.Key)
	}
	return b[lo : lo+e.DataLen : lo+e.DataLen], nil
}

// ReadBytes returns a copy of the raw payload of any record.
func (f *File) ReadBytes(key string) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.readEntry(key)
	if err != nil {
		return nil, err
	}
	if e.DataLen > math.MaxInt {
		return nil, f.errf(e.Start, errors.ErrUnsupported, "record %q: too large for this platform", e.Key)
	}
	b := make([]byte, e.DataLen)
	if err := f.readRaw(e, b, e.DataOffset); err != nil {
		return nil, err
	}
	return b, nil
}

// ReadString returns the value of the String record key.
func (f *File) ReadString(key string) (string, error) {
	f.mu.RLock()
	e, err := f.readEntry(key)
	f.mu.RUnlock()
	if err != nil {
		return "", err
	}
	if e.Kind != KindString {
		return "", f.errf(e.Start, mmapfile.ErrTypeMismatch, "record %q is %s, not a String", e.Key, e.TypeString)
	}
	b, err := f.ReadBytes(key)
	return string(b), err
}

// viewEntry finds key for a view: a mapped, readable file.
func (f *File) viewEntry(key string) (*entry, error) {
	e, err := f.readEntry(key)
	if err != nil {
		return nil, err
	}
	if f.mf == nil {
		return nil, f.errf(-1, errors.ErrUnsupported, "record %q: a NewReader file has no mapping to view; use abf.Read or abf.ReadAt", key)
	}
	if e.BigEndian {
		return nil, f.errf(e.Start, mmapfile.ErrByteOrder, "record %q at offset %d is big-endian; use abf.Read or abf.ReadAt", e.Key, e.Start)
	}
	return e, nil
}

func (f *File) mismatch(e *entry, t layout.Type) error {
	return f.errf(e.Start, mmapfile.ErrTypeMismatch, "record %q is %s, not an array of %v", e.Key, e.TypeString, t)
}

func (f *File) unusedErr(e *entry) error {
	return f.errf(e.DataOffset+e.DataLen-8, nil, "record %q: unused bits of the last BitArray word are set (ReadBits with Options.Lenient masks them off)", e.Key)
}

// intLen returns the element count of an array or BitArray as an int.
func (f *File) intLen(e *entry) (int, error) {
	if e.Kind != KindArray && e.Kind != KindBitArray {
		return 0, f.errf(e.Start, mmapfile.ErrTypeMismatch, "record %q is %s, not an array", e.Key, e.TypeString)
	}
	n := e.Len()
	if n > math.MaxInt {
		return 0, f.errf(e.Start, errors.ErrUnsupported, "record %q: %d elements do not fit in int", e.Key, n)
	}
	return int(n), nil
}

// wrapMapErr turns an mmapfile error of a view into a FormatError at the
// offending file offset.
func (f *File) wrapMapErr(e *entry, err error) error {
	off := e.DataOffset
	var me *mmapfile.Error
	if errors.As(err, &me) && me.Offset >= 0 {
		off = me.Offset
	}
	switch {
	case errors.Is(err, mmapfile.ErrInvalidBool):
		return f.errf(off, err, "record %q: Bool byte is neither 0 nor 1; use abf.Read or abf.ReadAt with Options.Lenient", e.Key)
	case errors.Is(err, mmapfile.ErrMisaligned), errors.Is(err, mmapfile.ErrByteOrder):
		return f.errf(off, err, "record %q: cannot be viewed; use abf.Read or abf.ReadAt", e.Key)
	}
	return f.errf(off, err, "record %q: view failed", e.Key)
}
