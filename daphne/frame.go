package daphne

import (
	"encoding/binary"
	"fmt"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Frame is a table of typed columns, DAPHNE's Frame. Columns[i] is a
// []int8, []int32, []int64, []uint8, []uint32, []uint64, []float32 or
// []float64 of Rows values, matching Types[i].
type Frame struct {
	Rows    uint64
	Labels  []string
	Types   []ValueType
	Columns []any
}

// frameChunk bounds the file bytes mapped at once while de-interleaving.
const frameChunk = 4 << 20

// ReadFrame reads a whole frame, one slice per column. Labels come from
// the .meta schema when it matches the file, else col_0, col_1, …; the
// label bytes in the file are skipped unread (DAPHNE writes garbage there).
func ReadFrame(f *File) (*Frame, error) {
	return ReadFrameRange(f, 0, f.hdr.Rows)
}

// ReadFrameRange reads rows [r0, r1) of a frame. It maps the rows' bytes a
// few MiB at a time, so reading a huge frame in row chunks stays within
// bounded memory.
func ReadFrameRange(f *File, r0, r1 uint64) (*Frame, error) {
	h := &f.hdr
	if h.Kind != KindFrame {
		return nil, f.errf(1, ErrKind, "Frame read of a %v file", h.Kind)
	}
	if r0 > r1 || r1 > h.Rows {
		return nil, errAt(f.name, -1, nil, fmt.Sprintf("rows [%d,%d) outside the frame's %d", r0, r1, h.Rows))
	}
	n := r1 - r0
	if hi, lo := mul64(n, uint64(f.rowSize)); hi != 0 || lo > uint64(maxInt) {
		return nil, f.errf(h.DataOffset, mmapfile.ErrTooLarge, "%d rows do not fit in memory", n)
	}
	fr := &Frame{Rows: n, Labels: f.Labels(), Types: append([]ValueType(nil), h.ColumnTypes...)}
	fr.Columns = make([]any, len(h.ColumnTypes))
	dsts := make([][]byte, len(h.ColumnTypes))
	for c, vt := range h.ColumnTypes {
		fr.Columns[c], dsts[c] = makeColumn(vt, int(n))
	}
	if f.rowSize == 0 || n == 0 {
		return fr, nil
	}
	if f.doc {
		for c, vt := range h.ColumnTypes {
			if err := f.readColumnBlocks(c, dsts[c], int64(r0)); err != nil {
				return nil, err
			}
			layout.SwapOrder(dsts[c], vt.Layout(), binary.LittleEndian, layout.HostOrder())
		}
		return fr, nil
	}
	step := uint64(max(1, frameChunk/f.rowSize))
	for r := r0; r < r1; r += step {
		k := min(step, r1-r)
		off := h.DataOffset + int64(r)*f.rowSize
		err := f.withRange(off, int64(k)*f.rowSize, func(src []byte) {
			at := int(r - r0)
			for c, vt := range h.ColumnTypes {
				gather(dsts[c], at, src, int(k), int(f.rowSize), int(f.colOff[c]), vt.Size())
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return fr, nil
}

// makeColumn allocates a frame column of n values of vt (f64 for a type
// without values) and its memory.
func makeColumn(vt ValueType, n int) (any, []byte) {
	t := vt.Layout()
	if !t.Valid() {
		t = layout.F64
	}
	return layout.MakeSlice(t, n)
}

// gather de-interleaves one column: element i of src's rows (rowSize bytes
// each, the column at byte off) goes to element at+i of dst. Loads decode
// little endian, so the result is in host order.
func gather(dst []byte, at int, src []byte, rows, rowSize, off, size int) {
	switch size {
	case 1:
		for i := range rows {
			dst[at+i] = src[i*rowSize+off]
		}
	case 4:
		d := unsafeslice.Cast[uint32](dst)[at : at+rows]
		for i := range d {
			d[i] = binary.LittleEndian.Uint32(src[i*rowSize+off:])
		}
	case 8:
		d := unsafeslice.Cast[uint64](dst)[at : at+rows]
		for i := range d {
			d[i] = binary.LittleEndian.Uint64(src[i*rowSize+off:])
		}
	}
}

// columnBytes returns a frame column's type, length and memory, or false
// for a slice that is not of a DAPHNE value type.
func columnBytes(col any) (ValueType, int, []byte, bool) {
	t, b, ok := layout.BytesOf(col)
	if !ok {
		return INVALID, 0, nil, false
	}
	vt := anyValueTypeFor(t)
	if vt == INVALID {
		return INVALID, 0, nil, false
	}
	return vt, len(b) / t.Size(), b, true
}
