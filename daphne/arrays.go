package daphne

import (
	"github.com/mmapkit/mmapkit/layout"
)

// MatrixName is the name of a matrix's one record.
const MatrixName = "matrix"

// arrays describes the file's logical arrays, which Records lists: one
// record for a matrix (Offset and Size of a dense matrix's values, or
// of a CSR matrix's sparse block from its nnz field to its end; Offset -1
// when a matrix is spread over several blocks), one per frame column
// (Offset -1: a frame's values are interleaved row by row).
func (f *File) arrays() []layout.Array {
	h := &f.hdr
	if h.Kind == KindFrame {
		out := make([]layout.Array, len(h.ColumnTypes))
		shape := []int64{int64(h.Rows)} // shared: a frame may have millions of columns
		for i, vt := range h.ColumnTypes {
			out[i] = layout.Array{Name: f.label(i), Type: vt.Layout(), Shape: shape, Order: layout.RowMajor,
				Offset: -1, Size: int64(h.Rows) * int64(vt.Size())}
		}
		return out
	}
	a := layout.Array{Name: MatrixName, Type: h.ValueType.Layout(), Shape: []int64{int64(h.Rows), int64(h.Cols)}, Order: layout.RowMajor, Offset: -1}
	if len(f.blocks) == 1 && f.blocks[0].Type != BodyEmpty {
		b := f.blocks[0]
		a.Offset, a.Size = b.DataOffset, b.End-b.DataOffset
		if b.Type == BodySparse {
			a.Offset -= 8 // the nnz field starts the sparse block's data
			a.Size += 8
		}
		if b.Type == BodyCOO {
			a.Offset -= 4
			a.Size += 4
		}
	}
	if h.Kind == KindDense && a.Offset < 0 {
		hi, lo := mul64(h.Rows, h.Cols)
		if hi == 0 && lo <= uint64(maxInt)/uint64(h.ValueType.Size()) {
			a.Size = int64(lo) * int64(h.ValueType.Size())
		}
	}
	return []layout.Array{a}
}
