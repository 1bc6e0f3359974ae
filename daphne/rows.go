package daphne

import (
	"fmt"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
)

// ReadRowsDense returns rows [r0, r1) of a dense or CSR matrix as a dense
// row-major slice of (r1−r0)·Cols values: for printing or converting a
// matrix of any size in row chunks within bounded memory. For a CSR file
// in the current layout it reads only the chunk's row offsets and entries
// (checked as a strict ReadCSR checks them); other sparse layouts are
// assembled whole first. The result is bounded by Options.MaxAlloc.
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
		return nil, &FormatError{File: f.name, Offset: -1, Msg: fmt.Sprintf("rows [%d,%d) outside the matrix's %d", r0, r1, h.Rows)}
	}
	hi, n := mul64(r1-r0, h.Cols)
	s := uint64(h.ValueType.Size())
	if hi != 0 || n > uint64(f.opts.maxAlloc())/s {
		return nil, f.errf(2, ErrTooLarge, "%d rows of %d cols exceed Options.MaxAlloc %d", r1-r0, h.Cols, f.opts.maxAlloc())
	}
	out := make([]T, n)
	if n == 0 {
		return out, nil
	}
	if !(len(f.blocks) == 1 && f.blocks[0].Type == BodySparse && f.blocks[0].Layout == LayoutCurrent) {
		m, err := ReadCSR[T](f)
		if err != nil {
			return nil, err
		}
		if err := m.check(false); err != nil {
			return nil, err
		}
		for i := r0; i < r1; i++ {
			row := out[(i-r0)*h.Cols:]
			for k := m.RowOffsets[i]; k < m.RowOffsets[i+1]; k++ {
				row[m.ColIdxs[k]] = m.Values[k]
			}
		}
		return out, nil
	}
	b := f.blocks[0]
	rowAt := b.DataOffset
	colAt := rowAt + 8*(int64(b.Rows)+1)
	valAt := colAt + 8*int64(b.NNZ)
	strict := !f.opts.Lenient
	// Row offsets r0 … r1, plus rowOffsets[0] for the strict check.
	ro := make([]uint64, r1-r0+1)
	if err := f.copyBytes(unsafeslice.Bytes(ro), rowAt+8*int64(r0)); err != nil {
		return nil, err
	}
	toHost(unsafeslice.Bytes(ro), 8)
	if strict && r0 > 0 {
		first, err := f.u64(rowAt, "rowOffsets[0]")
		if err != nil {
			return nil, err
		}
		if first != 0 {
			return nil, f.errf(rowAt, nil, "rowOffsets[0] = %d, want 0", first)
		}
	}
	if strict && r0 == 0 && ro[0] != 0 {
		return nil, f.errf(rowAt, nil, "rowOffsets[0] = %d, want 0", ro[0])
	}
	for i := range ro {
		if ro[i] > b.NNZ || i > 0 && ro[i] < ro[i-1] {
			return nil, f.errf(rowAt+8*int64(r0+uint64(i)), nil, "rowOffsets[%d] = %d out of order or beyond nnz %d", r0+uint64(i), ro[i], b.NNZ)
		}
	}
	if strict && r1 == h.Rows && ro[len(ro)-1] != b.NNZ {
		return nil, f.errf(rowAt+8*int64(r1), nil, "rowOffsets[%d] = %d, want nnz %d", r1, ro[len(ro)-1], b.NNZ)
	}
	lo, cnt := ro[0], ro[len(ro)-1]-ro[0]
	cols := make([]uint64, cnt)
	if err := f.copyBytes(unsafeslice.Bytes(cols), colAt+8*int64(lo)); err != nil {
		return nil, err
	}
	toHost(unsafeslice.Bytes(cols), 8)
	vals := make([]byte, cnt*s)
	if err := f.copyBytes(vals, valAt+int64(lo*s)); err != nil {
		return nil, err
	}
	for i := r0; i < r1; i++ {
		row := unsafeslice.Bytes(out[(i-r0)*h.Cols : (i-r0+1)*h.Cols])
		for k := ro[i-r0] - lo; k < ro[i-r0+1]-lo; k++ {
			j := cols[k]
			if j >= h.Cols {
				return nil, f.errf(colAt+8*int64(lo+k), nil, "row %d: column index %d ≥ %d cols", i, j, h.Cols)
			}
			if strict && k > ro[i-r0]-lo && j <= cols[k-1] {
				return nil, f.errf(colAt+8*int64(lo+k), nil, "row %d: column index %d not above the previous %d", i, j, cols[k-1])
			}
			copy(row[j*s:(j+1)*s], vals[k*s:(k+1)*s])
		}
	}
	toHost(unsafeslice.Bytes(out), int(s))
	return out, nil
}
