package daphne

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// fieldReader reads consecutive little-endian fields of one file region,
// tracking the offset for error messages.
type fieldReader struct {
	f   *File
	r   *bufio.Reader
	off int64
	buf [8]byte
}

func (f *File) fields(off int64) *fieldReader {
	return &fieldReader{f: f, r: bufio.NewReaderSize(io.NewSectionReader(f.ra, off, f.size-off), 64<<10), off: off}
}

func (fr *fieldReader) next(n int, what string) ([]byte, error) {
	if _, err := io.ReadFull(fr.r, fr.buf[:n]); err != nil {
		return nil, fr.f.errf(fr.off, mmapfile.ErrTruncated, "%s: file ends", what)
	}
	fr.off += int64(n)
	return fr.buf[:n], nil
}

func (fr *fieldReader) uint(n int, what string) (uint64, error) {
	b, err := fr.next(n, what)
	if err != nil {
		return 0, err
	}
	if n == 4 {
		return uint64(binary.LittleEndian.Uint32(b)), nil
	}
	return binary.LittleEndian.Uint64(b), nil
}

// entryFunc receives one stored cell: global row and column, the offset of
// its index field, and its value's little-endian bytes (valid only during
// the call).
type entryFunc func(row, col uint64, off int64, v []byte) error

// eachEntry walks the stored cells of a block in file order, checking
// every index against the block's dims (always) and the order of column
// indexes within a row (strict mode). Dense blocks yield every cell.
func (f *File) eachEntry(b Block, fn entryFunc) error {
	s := f.blockType(&b).Size()
	if from, to := f.blockType(&b), f.hdr.ValueType; from != to {
		// The document's blocks have value types of their own.
		var buf [8]byte
		inner := fn
		fn = func(row, col uint64, off int64, v []byte) error {
			out := buf[:to.Size()]
			convertValue(out, v, from, to)
			return inner(row, col, off, out)
		}
	}
	strict := !f.opts.Lenient
	switch b.Type {
	case BodyEmpty:
		return nil
	case BodyDense:
		fr := f.fields(b.DataOffset)
		for i := uint64(0); i < uint64(b.Rows); i++ {
			for j := uint64(0); j < uint64(b.Cols); j++ {
				off := fr.off
				v, err := fr.next(s, "value")
				if err != nil {
					return err
				}
				if err := fn(b.RX+i, b.CX+j, off, v); err != nil {
					return err
				}
			}
		}
		return nil
	case BodyCOO:
		fr := f.fields(b.DataOffset)
		for k := uint64(0); k < b.NNZ; k++ {
			off := fr.off
			i, err := fr.uint(4, "COO row")
			if err != nil {
				return err
			}
			if i >= uint64(b.Rows) {
				return f.errf(off, nil, "COO entry %d: row %d ≥ the block's %d rows", k, i, b.Rows)
			}
			var j uint64
			if b.Cols != 1 {
				if j, err = fr.uint(4, "COO col"); err != nil {
					return err
				}
				if j >= uint64(b.Cols) {
					return f.errf(off+4, nil, "COO entry %d: col %d ≥ the block's %d cols", k, j, b.Cols)
				}
			}
			v, err := fr.next(s, "COO value")
			if err != nil {
				return err
			}
			if err := fn(b.RX+i, b.CX+j, off, v); err != nil {
				return err
			}
		}
		return nil
	}
	// Sparse.
	if b.Layout == LayoutCurrent {
		return f.eachCurrent(b, s, strict, fn)
	}
	width := 4
	if b.Layout == LayoutRelease01 {
		width = 8
	}
	fr := f.fields(b.DataOffset)
	var total uint64
	for i := uint64(0); i < uint64(b.Rows); i++ {
		off := fr.off
		n, err := fr.uint(width, "row count")
		if err != nil {
			return err
		}
		if n > b.NNZ-total {
			return f.errf(off, nil, "row %d: %d entries, more than nnz %d leaves", i, n, b.NNZ-total)
		}
		total += n
		var prev uint64
		for k := uint64(0); k < n; k++ {
			off := fr.off
			j, err := fr.uint(width, "column index")
			if err != nil {
				return err
			}
			if j >= uint64(b.Cols) {
				return f.errf(off, nil, "row %d: column index %d ≥ %d cols", i, j, b.Cols)
			}
			if strict && k > 0 && j <= prev {
				return f.errf(off, nil, "row %d: column index %d not above the previous %d", i, j, prev)
			}
			prev = j
			v, err := fr.next(s, "value")
			if err != nil {
				return err
			}
			if err := fn(b.RX+i, b.CX+j, off, v); err != nil {
				return err
			}
		}
	}
	if total != b.NNZ && strict {
		return f.errf(b.DataOffset-8, nil, "nnz %d, rows hold %d", b.NNZ, total)
	}
	return nil
}

// eachCurrent walks a block in the ≥ 0.2 layout with three readers, one
// per array.
func (f *File) eachCurrent(b Block, s int, strict bool, fn entryFunc) error {
	rowAt := b.DataOffset
	colAt := rowAt + 8*(int64(b.Rows)+1)
	valAt := colAt + 8*int64(b.NNZ)
	ro := f.fields(rowAt)
	ci := f.fields(colAt)
	va := f.fields(valAt)
	start, err := ro.uint(8, "row offset")
	if err != nil {
		return err
	}
	if start != 0 && strict {
		return f.errf(rowAt, nil, "rowOffsets[0] = %d, want 0", start)
	}
	if start > b.NNZ {
		return f.errf(rowAt, nil, "rowOffsets[0] = %d > nnz %d", start, b.NNZ)
	}
	// Skip to the first entry the offsets point at.
	if _, err := ci.r.Discard(int(start) * 8); err != nil {
		return f.errf(colAt, mmapfile.ErrTruncated, "column indexes cut short")
	}
	ci.off += int64(start) * 8
	if _, err := va.r.Discard(int(start) * s); err != nil {
		return f.errf(valAt, mmapfile.ErrTruncated, "values cut short")
	}
	va.off += int64(start) * int64(s)
	prevOff := start
	for i := uint64(0); i < uint64(b.Rows); i++ {
		off := ro.off
		end, err := ro.uint(8, "row offset")
		if err != nil {
			return err
		}
		if end < prevOff || end > b.NNZ {
			return f.errf(off, nil, "rowOffsets[%d] = %d outside [%d, nnz %d]", i+1, end, prevOff, b.NNZ)
		}
		var prev uint64
		for k := prevOff; k < end; k++ {
			coff := ci.off
			j, err := ci.uint(8, "column index")
			if err != nil {
				return err
			}
			if j >= uint64(b.Cols) {
				return f.errf(coff, nil, "row %d: column index %d ≥ %d cols", i, j, b.Cols)
			}
			if strict && k > prevOff && j <= prev {
				return f.errf(coff, nil, "row %d: column index %d not above the previous %d", i, j, prev)
			}
			prev = j
			v, err := va.next(s, "value")
			if err != nil {
				return err
			}
			if err := fn(b.RX+i, b.CX+j, coff, v); err != nil {
				return err
			}
		}
		prevOff = end
	}
	if strict && prevOff != b.NNZ {
		return f.errf(ro.off-8, nil, "rowOffsets[%d] = %d, want nnz %d", b.Rows, prevOff, b.NNZ)
	}
	return nil
}

// convertValue writes the little-endian value src of type from into dst
// as type to, with Go's conversions (the document lets a block store its
// values in a narrower type than the matrix's).
func convertValue(dst, src []byte, from, to ValueType) {
	if from == to {
		copy(dst, src)
		return
	}
	le := binary.LittleEndian
	var i int64
	var u uint64
	var x float64
	ft := from.Layout()
	switch ft {
	case layout.F32:
		x = float64(math.Float32frombits(le.Uint32(src)))
	case layout.F64:
		x = math.Float64frombits(le.Uint64(src))
	default:
		u = layout.Uint(src, le)
		s := 64 - 8*uint(len(src))
		i = int64(u<<s) >> s // sign-extended
		if ft.IsSigned() {
			u, x = uint64(i), float64(i)
		} else {
			i, x = int64(u), float64(u)
		}
	}
	if ft.IsFloat() {
		i, u = int64(x), uint64(x)
		if x < 0 {
			u = uint64(i)
		}
	}
	switch tt := to.Layout(); {
	case tt.IsFloat():
		layout.PutFloat(dst, le, tt, x)
	case tt.IsSigned():
		layout.PutUint(dst, le, uint64(i))
	default:
		layout.PutUint(dst, le, u)
	}
}
