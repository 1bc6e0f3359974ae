package main

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	openers["daphne"] = openDaphne
	writers["daphne"] = writeDaphne
}

// frameChunkRows is how many frame rows cat reads at a time.
const frameChunkRows = 1 << 14

// openDaphne opens a .dbdf file (and its .meta): a dense or CSR matrix is
// one array record, a frame one table.
func openDaphne(e *env, path string, o *openOptions) (*source, error) {
	f, err := daphne.Open(path, nil)
	if err != nil {
		return nil, err
	}
	h := f.Header()
	s := &source{file: path, format: "daphne", version: fmt.Sprint(h.Version), close: f.Close}
	arrays := f.Arrays()
	switch f.Kind() {
	case daphne.KindDense, daphne.KindCSR:
		if len(arrays) != 1 {
			f.Close()
			return nil, fmt.Errorf("matrix has %d array descriptors, want 1", len(arrays))
		}
		a := arrays[0]
		r := &record{name: a.Name, kind: kindArray, typeName: a.Type.String(), elem: a.Type, shape: a.Shape,
			order: layout.RowMajor, offset: a.Offset, nbytes: a.Size, extra: map[string]any{"layout": f.Kind().String()}}
		rows, cols := h.Rows, h.Cols
		size := int64(a.Type.Size())
		if f.Kind() == daphne.KindDense {
			r.read = func(dst []byte, first int64) error { return daphneDenseChunk(f, a.Type, rows, cols, dst, first) }
		} else {
			r.read = func(dst []byte, first int64) error { return daphneCSRChunk(f, cols, size, dst, first) }
			r.csrLoad = func() (*csrData, error) { return readDaphneCSR(f, a.Type) }
		}
		s.records = []*record{r}
		s.setter = func(r *record, col int, idx []int64, value string) error {
			return setDaphne(path, f.Kind(), r, idx, value)
		}
	case daphne.KindFrame:
		cols := make([]column, len(arrays))
		for i, a := range arrays {
			cols[i] = column{name: a.Name, typeName: a.Type.String(), elem: a.Type, offset: a.Offset, nbytes: a.Size}
		}
		t := &table{columns: cols, rows: int64(h.Rows)}
		t.scan = func(fn func(row []cell) error) error {
			row := make([]cell, len(cols))
			for r0 := uint64(0); r0 < h.Rows; r0 += frameChunkRows {
				r1 := min(r0+frameChunkRows, h.Rows)
				fr, err := daphne.ReadFrameRange(f, r0, r1)
				if err != nil {
					return err
				}
				for k := 0; k < int(r1-r0); k++ {
					for i := range cols {
						row[i] = cell{text: formatValue("", fr.Columns[i], k)}
					}
					if err := fn(row); err != nil {
						return err
					}
				}
			}
			return nil
		}
		t.load = func() ([]columnData, error) {
			fr, err := daphne.ReadFrame(f)
			if err != nil {
				return nil, err
			}
			out := make([]columnData, len(cols))
			for i := range cols {
				out[i] = columnData{column: cols[i], values: fr.Columns[i]}
				out[i].name = fr.Labels[i]
			}
			return out, nil
		}
		s.records = []*record{{name: "", kind: kindTable, typeName: "frame", shape: []int64{int64(h.Rows)}, offset: -1, nbytes: -1, table: t}}
	default:
		f.Close()
		return nil, fmt.Errorf("unknown DAPHNE data type %v", f.Kind())
	}
	return s, nil
}

// daphneDenseChunk reads elements [first, first+n) of a rows×cols dense
// matrix in row-major order, as ReadDenseRange pieces: a partial first row,
// whole rows, a partial last row.
func daphneDenseChunk(f *daphne.File, t layout.Type, rows, cols uint64, dst []byte, first int64) error {
	size := int64(t.Size())
	n := int64(len(dst)) / size
	pos := uint64(first)
	end := uint64(first + n)
	for pos < end {
		r, c := pos/cols, pos%cols
		var r1, c0, c1 uint64
		if c != 0 || end-pos < cols {
			r1, c0, c1 = r+1, c, min(cols, c+(end-pos))
		} else {
			r1, c0, c1 = r+(end-pos)/cols, 0, cols
		}
		b, err := daphneDenseRange(f, t, r, r1, c0, c1)
		if err != nil {
			return err
		}
		copy(dst[int64(pos-uint64(first))*size:], b)
		pos += uint64(len(b)) / uint64(size)
		if len(b) == 0 {
			return errors.New("empty read from a dense matrix")
		}
	}
	return nil
}

func daphneDenseRange(f *daphne.File, t layout.Type, r0, r1, c0, c1 uint64) ([]byte, error) {
	switch t {
	case layout.I8:
		v, err := daphne.ReadDenseRange[int8](f, r0, r1, c0, c1)
		return bytesOf(v), err
	case layout.I32:
		v, err := daphne.ReadDenseRange[int32](f, r0, r1, c0, c1)
		return bytesOf(v), err
	case layout.I64:
		v, err := daphne.ReadDenseRange[int64](f, r0, r1, c0, c1)
		return bytesOf(v), err
	case layout.U8:
		v, err := daphne.ReadDenseRange[uint8](f, r0, r1, c0, c1)
		return bytesOf(v), err
	case layout.U32:
		v, err := daphne.ReadDenseRange[uint32](f, r0, r1, c0, c1)
		return bytesOf(v), err
	case layout.U64:
		v, err := daphne.ReadDenseRange[uint64](f, r0, r1, c0, c1)
		return bytesOf(v), err
	case layout.F32:
		v, err := daphne.ReadDenseRange[float32](f, r0, r1, c0, c1)
		return bytesOf(v), err
	case layout.F64:
		v, err := daphne.ReadDenseRange[float64](f, r0, r1, c0, c1)
		return bytesOf(v), err
	}
	return nil, fmt.Errorf("DAPHNE has no value type %s", t)
}

func readDaphneCSR(f *daphne.File, t layout.Type) (*csrData, error) {
	switch t {
	case layout.I8:
		return csrOf(daphne.ReadCSR[int8](f))
	case layout.I32:
		return csrOf(daphne.ReadCSR[int32](f))
	case layout.I64:
		return csrOf(daphne.ReadCSR[int64](f))
	case layout.U8:
		return csrOf(daphne.ReadCSR[uint8](f))
	case layout.U32:
		return csrOf(daphne.ReadCSR[uint32](f))
	case layout.U64:
		return csrOf(daphne.ReadCSR[uint64](f))
	case layout.F32:
		return csrOf(daphne.ReadCSR[float32](f))
	case layout.F64:
		return csrOf(daphne.ReadCSR[float64](f))
	}
	return nil, fmt.Errorf("DAPHNE has no value type %s", t)
}

func csrOf[T layout.Elem](m *daphne.CSR[T], err error) (*csrData, error) {
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	base := m.RowOffsets[0]
	offs := make([]uint64, len(m.RowOffsets))
	for i, o := range m.RowOffsets {
		offs[i] = o - base
	}
	nnz := m.NNZ()
	return &csrData{rows: int64(m.Rows), cols: int64(m.Cols), rowOffsets: offs,
		colIdxs: m.ColIdxs[base : base+nnz], values: bytesOf(m.Values[base : base+nnz])}, nil
}

// daphneCSRChunk fills dst with elements [first, first+n) of a CSR
// matrix's dense form, from the rows that hold them (ReadRowsDense reads
// only those rows' entries).
func daphneCSRChunk(f *daphne.File, cols uint64, size int64, dst []byte, first int64) error {
	n := int64(len(dst)) / size
	c := int64(cols)
	r0, r1 := first/c, (first+n-1)/c+1
	v, err := daphne.ReadRowsDenseAny(f, uint64(r0), uint64(r1))
	if err != nil {
		return err
	}
	b, err := anyBytes(v)
	if err != nil {
		return err
	}
	off := (first - r0*c) * size
	copy(dst, b[off:off+n*size])
	return nil
}

// anyBytes returns the memory of a numeric slice.
func anyBytes(v any) ([]byte, error) {
	switch v := v.(type) {
	case []int8:
		return bytesOf(v), nil
	case []int32:
		return bytesOf(v), nil
	case []int64:
		return bytesOf(v), nil
	case []uint8:
		return bytesOf(v), nil
	case []uint32:
		return bytesOf(v), nil
	case []uint64:
		return bytesOf(v), nil
	case []float32:
		return bytesOf(v), nil
	case []float64:
		return bytesOf(v), nil
	}
	return nil, fmt.Errorf("unexpected DAPHNE values %T", v)
}

// setDaphne changes one element of a dense matrix in place.
func setDaphne(path string, k daphne.Kind, r *record, idx []int64, value string) error {
	if k != daphne.KindDense {
		return fmt.Errorf("%w: set changes dense matrices only; %q is a %s matrix", errors.ErrUnsupported, r.name, k)
	}
	if _, err := rowMajorIndex(r.shape, idx); err != nil {
		return fmt.Errorf("record %q: %w", r.name, err)
	}
	b, err := encodeValue(r.elem, value, leOrder)
	if err != nil {
		return fmt.Errorf("record %q: %w", r.name, err)
	}
	f, err := daphne.OpenFile(path, mmapfile.ReadWrite, nil)
	if err != nil {
		return err
	}
	if err := f.SetElement(uint64(idx[0]), uint64(idx[1]), b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeDaphne writes a dataset as DAPHNE: one 2-D array as a dense matrix
// (a CSR input as CSR), 1-D arrays or a table as a frame.
func writeDaphne(e *env, path string, ds *dataset, o *convertOptions) error {
	if ds.table == nil && len(ds.arrays) == 1 && len(ds.arrays[0].shape) == 2 {
		a := ds.arrays[0]
		if _, ok := daphne.ValueTypeFor(a.elem); !ok {
			return fmt.Errorf("record %q: DAPHNE has no value type for %s", a.name, a.elem)
		}
		if a.csr != nil {
			return writeDaphneCSR(path, a)
		}
		return writeDaphneDense(path, a)
	}
	if ds.table == nil {
		for _, a := range ds.arrays {
			if len(a.shape) != 1 {
				return fmt.Errorf("record %q: shape %s: DAPHNE holds one 2-D matrix or a frame of 1-D columns", a.name, layout.ShapeString(a.shape))
			}
		}
	}
	cols, err := ds.asTable()
	if err != nil {
		return err
	}
	fr := &daphne.Frame{}
	for i := range cols {
		c := &cols[i]
		for k, r := range c.reason {
			if r >= 0 {
				return fmt.Errorf("column %q: row %d is null; DAPHNE frames cannot hold nulls", c.name, k)
			}
		}
		vt, ok := daphne.ValueTypeFor(c.elem)
		if !ok || c.scidbType == "char" || c.scidbType == "datetime" {
			return fmt.Errorf("column %q: DAPHNE has no value type for %s", c.name, c.typeName)
		}
		fr.Labels = append(fr.Labels, c.name)
		fr.Types = append(fr.Types, vt)
		fr.Columns = append(fr.Columns, c.values)
		fr.Rows = uint64(lenOf(c.values))
	}
	return daphne.WriteFrame(path, fr, nil)
}

func writeDaphneDense(path string, a *arrayData) error {
	r, c := uint64(a.shape[0]), uint64(a.shape[1])
	switch a.elem {
	case layout.I8:
		return daphne.WriteDense(path, r, c, castBytes[int8](a.data), nil)
	case layout.I32:
		return daphne.WriteDense(path, r, c, castBytes[int32](a.data), nil)
	case layout.I64:
		return daphne.WriteDense(path, r, c, castBytes[int64](a.data), nil)
	case layout.U8:
		return daphne.WriteDense(path, r, c, castBytes[uint8](a.data), nil)
	case layout.U32:
		return daphne.WriteDense(path, r, c, castBytes[uint32](a.data), nil)
	case layout.U64:
		return daphne.WriteDense(path, r, c, castBytes[uint64](a.data), nil)
	case layout.F32:
		return daphne.WriteDense(path, r, c, castBytes[float32](a.data), nil)
	case layout.F64:
		return daphne.WriteDense(path, r, c, castBytes[float64](a.data), nil)
	}
	return fmt.Errorf("record %q: DAPHNE has no value type for %s", a.name, a.elem)
}

func writeDaphneCSR(path string, a *arrayData) error {
	c := a.csr
	switch a.elem {
	case layout.I8:
		return writeCSRAs[int8](path, c)
	case layout.I32:
		return writeCSRAs[int32](path, c)
	case layout.I64:
		return writeCSRAs[int64](path, c)
	case layout.U8:
		return writeCSRAs[uint8](path, c)
	case layout.U32:
		return writeCSRAs[uint32](path, c)
	case layout.U64:
		return writeCSRAs[uint64](path, c)
	case layout.F32:
		return writeCSRAs[float32](path, c)
	case layout.F64:
		return writeCSRAs[float64](path, c)
	}
	return fmt.Errorf("record %q: DAPHNE has no value type for %s", a.name, a.elem)
}

func writeCSRAs[T layout.Elem](path string, c *csrData) error {
	vals := make([]T, len(c.colIdxs))
	copy(bytesOf(vals), c.values)
	return daphne.WriteCSR(path, &daphne.CSR[T]{Rows: uint64(c.rows), Cols: uint64(c.cols), RowOffsets: c.rowOffsets, ColIdxs: c.colIdxs, Values: vals}, nil)
}
