package hdf5

import (
	"bytes"
	"encoding/binary"
	"math"
	"path"

	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/layout"
)

// attrValue decodes an attribute's value for a listing: numbers, bools,
// strings, arrays as nested lists (a scalar dataspace gives one value, a
// simple one a list even of one element); NaN and infinities as "nan",
// "inf", "-inf"; nil for what has no such form (references, compounds,
// opaque bytes) or does not fit its bytes.
func (f *File) attrValue(a *attribute) any {
	if a.typ == nil || a.space == nil || a.space.null {
		return nil
	}
	count, err := layout.Count(u64s(a.space.dims))
	size := int64(a.typ.size)
	if err != nil || size == 0 || count > int64(len(a.data))/size {
		return nil
	}
	vals := make([]any, count)
	for i := range vals {
		vals[i] = f.value(a.typ, a.data[int64(i)*size:int64(i+1)*size])
	}
	if len(a.space.dims) == 0 {
		return vals[0]
	}
	return nest(vals, u64s(a.space.dims))
}

// nest shapes a flat row-major list into nested lists of shape.
func nest(vals []any, shape []int64) any {
	if len(shape) <= 1 || len(vals) == 0 {
		// No values: a dimension of 0 somewhere, whatever the others
		// claim.
		return vals
	}
	n := int64(len(vals)) / max(1, shape[0])
	out := make([]any, shape[0])
	for i := range out {
		out[i] = nest(vals[int64(i)*n:int64(i+1)*n], shape[1:])
	}
	return out
}

func u64s(dims []uint64) []int64 {
	out := make([]int64, len(dims))
	for i, d := range dims {
		out[i] = int64(d)
	}
	return out
}

func (d *dtype) order() binary.ByteOrder {
	if d.bigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// value decodes one element of type d.
func (f *File) value(d *dtype, b []byte) any {
	switch d.class {
	case classFixed, classEnum:
		if d.isBool {
			switch b[0] {
			case 0:
				return false
			case 1:
				return true
			}
			return nil
		}
		if !d.elem.Valid() {
			return nil
		}
		return intValue(d.elem, b, d.order())
	case classFloat:
		if !d.elem.Valid() {
			return nil
		}
		return floatValue(layout.Float(b, d.order(), d.elem))
	case classString:
		return stripPadding(b, d.pad)
	case classVlen:
		if !d.vstring {
			return nil
		}
		s, err := f.vlenString(b)
		if err != nil {
			return nil
		}
		return stripPadding(s, d.pad)
	case classArray:
		n := int64(1)
		for _, k := range d.dims {
			n *= k
		}
		bs := int64(d.base.size)
		out := make([]any, n)
		for i := range out {
			out[i] = f.value(d.base, b[int64(i)*bs:int64(i+1)*bs])
		}
		return nest(out, d.dims)
	}
	return nil
}

// intValue is the integer of type t in b.
func intValue(t layout.Type, b []byte, o binary.ByteOrder) any {
	if !t.IsSigned() {
		return layout.Uint(b, o)
	}
	return layout.Int(b, o)
}

// floatValue is v for JSON: NaN and infinities as text.
func floatValue(v float64) any {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return v
}

// stripPadding is a fixed string's value: up to the first NUL
// (null-terminated), without trailing NULs (null-padded) or trailing
// spaces (space-padded).
func stripPadding(b []byte, pad int) string {
	switch pad {
	case 0:
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
	case 2:
		b = bytes.TrimRight(b, " ")
	default:
		b = bytes.TrimRight(b, "\x00")
	}
	return string(b)
}

// vlenString reads a variable-length string element: its length in
// bytes, then the global heap collection and object index that hold them.
func (f *File) vlenString(b []byte) ([]byte, error) { return f.vlenData(b, 1) }

// vlenData reads a variable-length element of units of unit bytes.
func (f *File) vlenData(b []byte, unit int) ([]byte, error) {
	c := f.m.cursor(b, -1, "variable-length string")
	n := c.u32()
	addr := c.addr()
	index := c.u32()
	if c.err != nil {
		return nil, c.err
	}
	if n == 0 {
		return nil, nil
	}
	heap, err := f.globalHeap(addr)
	var obj []byte
	if err == nil {
		obj, err = heap.Object(index)
	}
	if err != nil {
		return nil, wrapErr(f.name, -1, err, "variable-length string")
	}
	if uint64(n)*uint64(unit) > uint64(len(obj)) {
		return nil, f.m.errf(-1, nil, "a variable-length value of %d × %d bytes in a heap object of %d", n, unit, len(obj))
	}
	return obj[:int(n)*unit], nil
}

// maxHeaps bounds the global heap collections a File keeps indexed.
const maxHeaps = 64

// globalHeap returns the global heap collection at addr, read once and
// kept (a few of them: a dataset's strings are mostly in one or two).
func (f *File) globalHeap(addr uint64) (*h5.GlobalHeap, error) {
	f.heapMu.Lock()
	defer f.heapMu.Unlock()
	if h, ok := f.heaps[addr]; ok {
		return h, nil
	}
	h, err := f.m.r.ReadGlobalHeap(addr)
	if err != nil {
		return nil, err
	}
	if f.heaps == nil || len(f.heaps) >= maxHeaps {
		f.heaps = map[uint64]*h5.GlobalHeap{}
	}
	f.heaps[addr] = h
	return h, nil
}

// netCDFDims names the dimensions of each dataset as netCDF does: a 1-D
// dimension scale's own name, else the scales its DIMENSION_LIST
// attribute refers to.
func (f *File) netCDFDims() {
	for _, d := range f.datasets {
		for _, a := range d.attrs {
			switch a.name {
			case "CLASS":
				if s, ok := f.attrValue(a).(string); ok && s == "DIMENSION_SCALE" && len(d.space.dims) == 1 && d.dims == nil {
					d.dims = []string{path.Base(d.path)}
				}
			case "DIMENSION_LIST":
				if names := f.dimensionList(a); len(names) == len(d.space.dims) {
					d.dims = names
				}
			}
		}
	}
}

// dimensionList reads a DIMENSION_LIST attribute: per axis, a
// variable-length sequence of object references; the first of each names
// the axis by the scale's name.
func (f *File) dimensionList(a *attribute) []string {
	t := a.typ
	if t == nil || a.space == nil || t.class != classVlen || t.vstring || t.base == nil || t.base.class != classRef || len(a.space.dims) != 1 {
		return nil
	}
	elem := int(t.size)
	var names []string
	for i := 0; i < int(a.space.dims[0]); i++ {
		if (i+1)*elem > len(a.data) {
			return nil
		}
		refs, err := f.vlenData(a.data[i*elem:(i+1)*elem], int(t.base.size))
		if err != nil || len(refs) < f.m.so {
			return nil
		}
		c := f.m.cursor(refs, -1, "object reference")
		p, ok := f.objects[c.addr()]
		if !ok {
			return nil
		}
		names = append(names, path.Base(p))
	}
	return names
}
