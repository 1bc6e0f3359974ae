package daphne

import (
	"encoding/binary"
	"errors"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func checkDense[T layout.Elem](f *File) error {
	if f.hdr.Kind != KindDense {
		return f.errf(1, ErrKind, "DenseMatrix read of a %v file (DAPHNE's \"DT mismatch\")", f.hdr.Kind)
	}
	return checkValueType[T](f)
}

// checkValueType fails unless T is the Go type of the file's value type
// (DAPHNE's "VT mismatch").
func checkValueType[T layout.Elem](f *File) error {
	if vt := valueTypeOf[T](); vt != f.hdr.ValueType {
		var z T
		return f.errf(headerSize, mmapfile.ErrTypeMismatch, "%T access to a %v matrix (DAPHNE's \"VT mismatch\")", z, f.hdr.ValueType)
	}
	return nil
}

// contiguous reports whether the matrix is one dense block whose values
// are one run at hdr.DataOffset.
func (f *File) contiguous() bool {
	return len(f.blocks) == 1 && f.blocks[0].Type == BodyDense && f.blockType(&f.blocks[0]) == f.hdr.ValueType
}

// elems returns rows·cols as an int, or an error if it cannot be
// allocated on this platform.
func (f *File) elems(rows, cols uint64) (int, error) {
	hi, lo := mul64(rows, cols)
	if hi != 0 || lo > uint64(maxInt/8) {
		return 0, f.errf(2, mmapfile.ErrTooLarge, "%d×%d elements do not fit in memory", rows, cols)
	}
	return int(lo), nil
}

func (f *File) payloadRegion() (*mmapfile.Region, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, f.errf(-1, mmapfile.ErrClosed, "")
	}
	if f.payload != nil {
		return f.payload, nil
	}
	b := f.blocks[0]
	r, err := f.mf.Map(b.DataOffset, b.End-b.DataOffset)
	if err != nil {
		return nil, f.errf(b.DataOffset, err, "map")
	}
	f.payload = r
	return r, nil
}

// DenseValues returns the matrix's values: aliasing the mapping when the
// type and alignment allow it (aliased is true; the slice dies at Close),
// a copy otherwise. It is the default way to read a dense matrix.
func DenseValues[T layout.Elem](f *File) (v []T, aliased bool, err error) {
	if err := checkDense[T](f); err != nil {
		return nil, false, err
	}
	if f.mf != nil && f.contiguous() {
		if v, err := format.View[T](f, 0); err == nil {
			return v, true, nil
		} else if !errors.Is(err, mmapfile.ErrMisaligned) {
			return nil, false, err
		}
	}
	v, err = readDense[T](f)
	return v, false, err
}

// readDense copies the values of a dense matrix: one bulk memmove for a
// DAPHNE file, block by block for a file of several blocks.
func readDense[T layout.Elem](f *File) ([]T, error) {
	return ReadDenseRange[T](f, 0, f.hdr.Rows, 0, f.hdr.Cols)
}

// ReadDenseRange copies rows [r0, r1) and columns [c0, c1) into a new
// row-major slice of (r1−r0)·(c1−c0) values. It reads (and, for files from
// Open, maps) only the bytes from the first to the last value of the
// range; an empty range does no I/O. Streaming a huge matrix in row
// chunks keeps memory bounded; CopyDenseRange reuses a buffer.
func ReadDenseRange[T layout.Elem](f *File, r0, r1, c0, c1 uint64) ([]T, error) {
	n, err := denseRange[T](f, r0, r1, c0, c1)
	if err != nil {
		return nil, err
	}
	v := make([]T, n)
	if err := copyDenseRange(f, v, r0, r1, c0, c1, false); err != nil {
		return nil, err
	}
	return v, nil
}

// CopyDenseRange is ReadDenseRange into dst, which must hold exactly
// (r1−r0)·(c1−c0) values: for streaming with one reused buffer.
func CopyDenseRange[T layout.Elem](f *File, dst []T, r0, r1, c0, c1 uint64) error {
	n, err := denseRange[T](f, r0, r1, c0, c1)
	if err != nil {
		return err
	}
	if len(dst) != n {
		return f.errf(-1, mmapfile.ErrOutOfRange, "destination holds %d values, range has %d", len(dst), n)
	}
	return copyDenseRange(f, dst, r0, r1, c0, c1, true)
}

// denseRange checks a range and returns its element count.
func denseRange[T layout.Elem](f *File, r0, r1, c0, c1 uint64) (int, error) {
	if err := checkDense[T](f); err != nil {
		return 0, err
	}
	h := &f.hdr
	if r0 > r1 || r1 > h.Rows || c0 > c1 || c1 > h.Cols {
		return 0, f.errf(-1, mmapfile.ErrOutOfRange, "range [%d,%d)×[%d,%d) outside the %d×%d matrix", r0, r1, c0, c1, h.Rows, h.Cols)
	}
	n, err := f.elems(r1-r0, c1-c0)
	if err != nil {
		return 0, err
	}
	if !f.contiguous() {
		if nb := int64(n) * int64(h.ValueType.Size()); nb > f.opts.maxAlloc() {
			return 0, f.errf(2, mmapfile.ErrTooLarge, "%d×%d %v cells need %d bytes, Options.MaxAlloc is %d", r1-r0, c1-c0, h.ValueType, nb, f.opts.maxAlloc())
		}
	}
	return n, nil
}

func copyDenseRange[T layout.Elem](f *File, v []T, r0, r1, c0, c1 uint64, reused bool) error {
	if len(v) == 0 {
		return nil
	}
	dst := unsafeslice.Bytes(v)
	if reused && !f.contiguous() {
		clear(dst) // cells of empty and sparse blocks are zeros
	}
	if err := f.denseWindow(dst, r0, r1, c0, c1); err != nil {
		return err
	}
	layout.SwapOrder(dst, f.hdr.ValueType.Layout(), binary.LittleEndian, layout.HostOrder())
	return nil
}

// denseWindow fills dst (zeroed) with the window [r0,r1)×[c0,c1), touching
// only the blocks that intersect it.
func (f *File) denseWindow(dst []byte, r0, r1, c0, c1 uint64) error {
	s := int64(f.hdr.ValueType.Size())
	w := int64(c1 - c0)
	put := func(i, j uint64, _ int64, v []byte) error {
		if i >= r0 && i < r1 && j >= c0 && j < c1 {
			copy(dst[(int64(i-r0)*w+int64(j-c0))*s:], v)
		}
		return nil
	}
	for _, b := range f.blocks {
		ir0, ir1 := max(r0, b.RX), min(r1, b.RX+uint64(b.Rows))
		ic0, ic1 := max(c0, b.CX), min(c1, b.CX+uint64(b.Cols))
		if ir0 >= ir1 || ic0 >= ic1 {
			continue
		}
		var err error
		switch {
		case b.Type == BodyEmpty:
		case b.Type == BodyDense && f.blockType(&b) == f.hdr.ValueType:
			bc := int64(b.Cols)
			src := b.DataOffset + (int64(ir0-b.RX)*bc+int64(ic0-b.CX))*s
			at := (int64(ir0-r0)*w + int64(ic0-c0)) * s
			err = f.copyRows(dst[at:], src, int64(ir1-ir0), bc*s, int64(ic1-ic0)*s, w*s)
		case b.Type == BodySparse && b.Layout == LayoutCurrent:
			err = f.currentRows(b, ir0-b.RX, ir1-b.RX, put)
		default:
			// COO, the other sparse layouts, and the document's blocks
			// of another value type (converted).
			err = f.eachEntry(b, put)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// SetElement writes one element of a dense matrix in place, through a
// read-write mapping (OpenFile with mmapfile.ReadWrite). le holds the
// value's little-endian bytes, as many as the value type's size. The change
// reaches the file at once through the page cache and is synced at Close.
// Set is the typed form, by record name and index.
func (f *File) SetElement(row, col uint64, le []byte) error {
	if f.hdr.Kind != KindDense {
		return f.errf(1, ErrKind, "SetElement on a %v file", f.hdr.Kind)
	}
	if f.mf == nil || !f.mf.Writable() {
		return f.errf(-1, mmapfile.ErrNotWritable, "SetElement needs a file opened with OpenFile(path, mmapfile.ReadWrite, …)")
	}
	if !f.contiguous() {
		return f.errf(-1, errors.ErrUnsupported, "SetElement on a multi-block or non-dense file")
	}
	h := &f.hdr
	if row >= h.Rows || col >= h.Cols {
		return f.errf(-1, mmapfile.ErrOutOfRange, "index (%d, %d) outside the %d×%d matrix", row, col, h.Rows, h.Cols)
	}
	s := h.ValueType.Size()
	if len(le) != s {
		return f.errf(-1, mmapfile.ErrTypeMismatch, "%d value bytes for a %v element of %d bytes", len(le), h.ValueType, s)
	}
	r, err := f.payloadRegion()
	if err != nil {
		return err
	}
	off := (int64(row)*int64(h.Cols) + int64(col)) * int64(s)
	if _, err := r.WriteAt(le, off); err != nil {
		return f.errf(f.hdr.DataOffset+off, err, "")
	}
	return nil
}

// Sync flushes changes made with SetElement to the file.
func (f *File) Sync() error {
	if f.mf == nil {
		return nil
	}
	return f.mf.Sync()
}
