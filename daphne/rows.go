package daphne

import (
	"encoding/binary"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// ReadRowsDense returns rows [r0, r1) of a dense or CSR matrix as a dense
// row-major slice of (r1−r0)·Cols values: for printing or converting a
// matrix of any size in row chunks within bounded memory. For a CSR file
// in the current layout it reads only the chunk's row offsets and entries
// (checked as a strict ReadCSR checks them); other sparse layouts are
// walked whole. The result is bounded by Options.MaxAlloc.
func ReadRowsDense[T layout.Elem](f *File, r0, r1 uint64) ([]T, error) {
	h := &f.hdr
	if h.Kind == KindDense {
		return ReadDenseRange[T](f, r0, r1, 0, h.Cols)
	}
	if h.Kind != KindCSR {
		return nil, f.errf(1, ErrKind, "matrix rows of a %v file", h.Kind)
	}
	if err := checkValueType[T](f); err != nil {
		return nil, err
	}
	if r0 > r1 || r1 > h.Rows {
		return nil, f.errf(-1, mmapfile.ErrOutOfRange, "rows [%d,%d) outside the matrix's %d", r0, r1, h.Rows)
	}
	hi, n := mul64(r1-r0, h.Cols)
	s := uint64(h.ValueType.Size())
	if hi != 0 || n > uint64(f.opts.maxAlloc())/s {
		return nil, f.errf(2, mmapfile.ErrTooLarge, "%d rows of %d cols exceed Options.MaxAlloc %d", r1-r0, h.Cols, f.opts.maxAlloc())
	}
	out := make([]T, n)
	if n == 0 {
		return out, nil
	}
	dst := unsafeslice.Bytes(out)
	if err := f.denseWindow(dst, r0, r1, 0, h.Cols); err != nil {
		return nil, err
	}
	layout.SwapOrder(dst, h.ValueType.Layout(), binary.LittleEndian, layout.HostOrder())
	return out, nil
}

// currentRows calls fn for the stored entries of rows [r0, r1) (relative
// to the block) of a sparse block in the current layout, reading only
// those rows' offsets and entries. It checks what indexing needs always
// (offsets in order and within nnz, column indexes below the block's
// columns) and, unless Lenient, what a strict read checks (rowOffsets[0]
// = 0, rowOffsets[Rows] = nnz when the last row is read, column indexes
// increasing within a row).
func (f *File) currentRows(b Block, r0, r1 uint64, fn entryFunc) error {
	if r0 >= r1 {
		return nil
	}
	s := int64(f.hdr.ValueType.Size())
	rowAt := b.DataOffset
	colAt := rowAt + 8*(int64(b.Rows)+1)
	valAt := colAt + 8*int64(b.NNZ)
	strict := !f.opts.Lenient
	ro := make([]uint64, r1-r0+1)
	if err := f.copyBytes(unsafeslice.Bytes(ro), rowAt+8*int64(r0)); err != nil {
		return err
	}
	layout.SwapOrder(unsafeslice.Bytes(ro), layout.U64, binary.LittleEndian, layout.HostOrder())
	if strict {
		first := ro[0]
		if r0 > 0 {
			var err error
			if first, err = f.u64(rowAt, "rowOffsets[0]"); err != nil {
				return err
			}
		}
		if first != 0 {
			return f.errf(rowAt, nil, "rowOffsets[0] = %d, want 0", first)
		}
	}
	for i := range ro {
		if ro[i] > b.NNZ || i > 0 && ro[i] < ro[i-1] {
			return f.errf(rowAt+8*int64(r0+uint64(i)), nil, "rowOffsets[%d] = %d out of order or beyond nnz %d", r0+uint64(i), ro[i], b.NNZ)
		}
	}
	if strict && r1 == uint64(b.Rows) && ro[len(ro)-1] != b.NNZ {
		return f.errf(rowAt+8*int64(r1), nil, "rowOffsets[%d] = %d, want nnz %d", r1, ro[len(ro)-1], b.NNZ)
	}
	lo := ro[0]
	ci := f.fields(colAt + 8*int64(lo))
	va := f.fields(valAt + int64(lo)*s)
	for i := r0; i < r1; i++ {
		var prev uint64
		for k := ro[i-r0]; k < ro[i-r0+1]; k++ {
			off := ci.off
			j, err := ci.uint(8, "column index")
			if err != nil {
				return err
			}
			if j >= uint64(b.Cols) {
				return f.errf(off, nil, "row %d: column index %d ≥ %d cols", i, j, b.Cols)
			}
			if strict && k > ro[i-r0] && j <= prev {
				return f.errf(off, nil, "row %d: column index %d not above the previous %d", i, j, prev)
			}
			prev = j
			v, err := va.next(int(s), "value")
			if err != nil {
				return err
			}
			if err := fn(b.RX+i, b.CX+j, off, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// readMatrix copies elements [first, first+len(dst)/size) of a matrix
// that is not one dense run (CSR, empty, COO or several blocks) into dst,
// in order, as little-endian values: windows of whole rows (columns for
// a column-major order) and partial ones at the ends, touching only the
// blocks and rows they cover. Cells that are not stored are zeros.
func (f *File) readMatrix(dst []byte, first int64, order layout.Order) error {
	h := &f.hdr
	s := int64(h.ValueType.Size())
	n := int64(len(dst)) / s
	clear(dst)
	rows, cols := int64(h.Rows), int64(h.Cols)
	colMajor := order == layout.ColMajor && !layout.Trivial([]int64{rows, cols})
	// Along the target order's slow axis (rows for row-major), lines of
	// `line` elements.
	line := cols
	if colMajor {
		line = rows
	}
	window := func(out []byte, l0, l1, e0, e1 int64) error {
		if !colMajor {
			return f.denseWindow(out, uint64(l0), uint64(l1), uint64(e0), uint64(e1))
		}
		if l1-l0 == 1 {
			// Part of one column: row-major and column-major agree.
			return f.denseWindow(out, uint64(e0), uint64(e1), uint64(l0), uint64(l1))
		}
		tmp := make([]byte, len(out))
		if err := f.denseWindow(tmp, uint64(e0), uint64(e1), uint64(l0), uint64(l1)); err != nil {
			return err
		}
		layout.Transpose(out, e1-e0, tmp, l1-l0, e1-e0, l1-l0, int(s))
		return nil
	}
	l, e := first/line, first%line
	var pos int64
	if e != 0 || n < line {
		k := min(line-e, n)
		if err := window(dst[:k*s], l, l+1, e, e+k); err != nil {
			return err
		}
		pos, l = k, l+1
	}
	if full := (n - pos) / line; full > 0 {
		if err := window(dst[pos*s:(pos+full*line)*s], l, l+full, 0, line); err != nil {
			return err
		}
		pos, l = pos+full*line, l+full
	}
	if pos < n {
		return window(dst[pos*s:], l, l+1, 0, n-pos)
	}
	return nil
}
