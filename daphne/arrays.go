package daphne

import (
	"encoding/binary"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// MatrixName is the name Arrays gives a matrix's one record.
const MatrixName = "matrix"

// Arrays describes the file's logical arrays for tools such as mmapkit ls
// (whose "layout" field is Kind().String(): "dense", "csr" or "frame"):
// one record for a matrix (Offset and Size of a dense matrix's values, or
// of a CSR matrix's sparse block from its nnz field to its end; Offset -1
// when a matrix is spread over several blocks), one per frame column
// (Offset -1: a frame's values are interleaved row by row).
func (f *File) Arrays() []layout.Array {
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

// Detect reports whether b, the first bytes of a file of the given size,
// looks like a .dbdf file. DAPHNE files have no magic number, so tools
// should trust the .dbdf extension first and try Detect last: it needs
// byte 0 = 1, byte 1 ∈ {1, 2, 3} and a file size that fits the layout of
// §4–§6 exactly (DAPHNE's single-block dense and CSR layouts, or a frame
// whose labels lie within b). Pass at least the first 64 bytes, more for
// frames with many columns.
func Detect(b []byte, size int64) bool {
	if len(b) < headerSize || b[0] != 1 {
		return false
	}
	rows := binary.LittleEndian.Uint64(b[2:])
	cols := binary.LittleEndian.Uint64(b[10:])
	switch b[1] {
	case 1, 2:
		if len(b) < DenseDataOffset || rows > maxU32 || cols > maxU32 {
			return false
		}
		vt := ValueType(b[18])
		if !vt.Numeric() || b[44] != b[18] || b[43] != b[1] ||
			uint64(binary.LittleEndian.Uint32(b[35:])) != rows || uint64(binary.LittleEndian.Uint32(b[39:])) != cols {
			return false
		}
		s := int64(vt.Size())
		if b[1] == 1 {
			end, ok := sizeAt(DenseDataOffset, rows*cols, s)
			return ok && end == size
		}
		if len(b) < CSRDataOffset {
			return false
		}
		blk := Block{Rows: uint32(rows), DataOffset: CSRDataOffset, NNZ: binary.LittleEndian.Uint64(b[45:])}
		for _, l := range []Layout{LayoutCurrent, LayoutRelease01, LayoutDoc} {
			if e, ok := sparseEnd(&blk, l, s); ok && e == size {
				return true
			}
		}
		return false
	case 3:
		p := int64(headerSize)
		if cols > uint64(len(b)-headerSize) {
			return false
		}
		var rowSize int64
		for i := uint64(0); i < cols; i++ {
			vt := ValueType(b[p])
			if !vt.Numeric() {
				return false
			}
			rowSize += int64(vt.Size())
			p++
		}
		for i := uint64(0); i < cols; i++ {
			if p+2 > int64(len(b)) {
				return false
			}
			p += 2 + int64(binary.LittleEndian.Uint16(b[p:]))
		}
		end, ok := sizeAt(p+bodySize, rows, rowSize)
		return ok && end == size
	}
	return false
}

// HasExtension reports whether name ends in .dbdf, the extension DAPHNE
// dispatches on.
func HasExtension(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".dbdf") }
