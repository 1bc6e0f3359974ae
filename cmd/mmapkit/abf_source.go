package main

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	openers["abf"] = openABF
	writers["abf"] = writeABF
}

// openABF opens an ABF file. Package abf parses the headers; payloads are
// read through a separate read-only mapping that drops pages behind the
// reader, so cat of a huge array stays in bounded memory.
func openABF(e *env, path string, o *openOptions) (*source, error) {
	f, err := abf.Open(path, nil)
	if err != nil {
		return nil, err
	}
	mf, err := openPayloadFile(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &source{file: path, format: "abf", version: f.Format().String()}
	var bits format.File // package abf's reader of BitArrays, opened on first need
	s.close = func() error {
		err1 := mf.Close()
		if bits != nil {
			bits.Close()
		}
		if err := f.Close(); err != nil {
			return err
		}
		return err1
	}
	for i, rec := range f.Records() {
		r := &record{name: rec.Key, typeName: rec.TypeName(), elem: rec.Elem, shape: rec.Dims,
			order: rec.Order(), offset: rec.DataOffset, nbytes: rec.DataLen}
		if r.shape == nil {
			r.shape = []int64{}
		}
		switch rec.Kind {
		case abf.KindArray:
			r.kind = kindArray
			p := &payload{mf: mf, off: rec.DataOffset, size: rec.DataLen, elemSize: int64(rec.Elem.Size()), bigEndian: rec.BigEndian}
			shape := rec.Dims
			r.read = func(dst []byte, first int64) error { return p.readColMajor(dst, first, shape) }
		case abf.KindBitArray:
			r.kind = kindArray
			r.elem = layout.Bool
			if bits == nil {
				if bits, err = format.Open(path, &format.Options{Format: "abf"}); err != nil {
					s.Close()
					return nil, err
				}
			}
			r.read = func(dst []byte, first int64) error { return bits.ReadArray(i, dst, first, layout.RowMajor, leOrder) }
		case abf.KindString:
			r.kind = kindString
			if r.text, err = f.ReadString(rec.Key); err != nil {
				s.Close()
				return nil, err
			}
		default:
			r.kind = kindSerialized
			r.shape = []int64{}
		}
		s.records = append(s.records, r)
	}
	s.setter = func(r *record, col int, idx []int64, value string) error { return setABF(path, r, idx, value) }
	return s, nil
}

// setABF changes one element of an array or BitArray in place; idx is the
// logical (row-major) index, Julia's x[idx[0]+1, idx[1]+1, …].
func setABF(path string, r *record, idx []int64, value string) error {
	if r.kind != kindArray {
		return fmt.Errorf("%w: record %q is a %s record, not an array", errors.ErrUnsupported, r.name, r.typeName)
	}
	f, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "r+"})
	if err != nil {
		return err
	}
	rec, ok := f.Lookup(r.name)
	if !ok {
		f.Close()
		return fmt.Errorf("%w %q", errNoRecord, r.name)
	}
	if len(idx) != len(rec.Dims) {
		f.Close()
		return fmt.Errorf("record %q: index has %d components, the record has rank %d (shape %s)", r.name, len(idx), len(rec.Dims), layout.ShapeString(rec.Dims))
	}
	linear, err := rec.Index(idx...)
	if err != nil {
		f.Close()
		return err
	}
	b, err := encodeValue(r.elem, value, leOrder)
	if err != nil {
		f.Close()
		return fmt.Errorf("record %q: %w", r.name, err)
	}
	if err := f.SetElement(r.name, linear, b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeABF writes every array as an ABF record (column-major, Julia's
// dims), strings as String records, bool arrays as Array{Bool} or, with
// --abf-bits, BitArrays.
func writeABF(e *env, path string, ds *dataset, o *convertOptions) error {
	arrays, err := ds.asArrays()
	if err != nil {
		return err
	}
	opt := &abf.Options{Mode: "w", Format: abf.FormatC}
	if o.abfVersion == "A" {
		opt.Format = abf.FormatA
	}
	f, err := abf.OpenFile(path, mmapfile.ReadWrite, opt)
	if err != nil {
		return err
	}
	for i, a := range arrays {
		key := a.name
		if !a.named && key == "" {
			key = fmt.Sprint(i)
		}
		if err := writeABFRecord(f, key, a, o.abfBits); err != nil {
			f.Close()
			return fmt.Errorf("record %q: %w", key, err)
		}
	}
	return f.Close()
}

func writeABFRecord(f *abf.File, key string, a *arrayData, bits bool) error {
	if a.isString {
		return f.WriteString(key, a.text)
	}
	col, err := toColMajor(a.data, a.shape, a.elem.Size())
	if err != nil {
		return err
	}
	dims := a.shape
	switch a.elem {
	case layout.Bool:
		v := castBytes[bool](col)
		if bits {
			b, err := abf.PackBits(dims, v)
			if err != nil {
				return err
			}
			return f.WriteBits(key, b)
		}
		return abf.Write(f, key, dims, v)
	case layout.I8:
		return abf.Write(f, key, dims, castBytes[int8](col))
	case layout.I16:
		return abf.Write(f, key, dims, castBytes[int16](col))
	case layout.I32:
		return abf.Write(f, key, dims, castBytes[int32](col))
	case layout.I64:
		return abf.Write(f, key, dims, castBytes[int64](col))
	case layout.U8:
		return abf.Write(f, key, dims, castBytes[uint8](col))
	case layout.U16:
		return abf.Write(f, key, dims, castBytes[uint16](col))
	case layout.U32:
		return abf.Write(f, key, dims, castBytes[uint32](col))
	case layout.U64:
		return abf.Write(f, key, dims, castBytes[uint64](col))
	case layout.F16:
		return abf.Write(f, key, dims, castBytes[layout.Float16](col))
	case layout.F32:
		return abf.Write(f, key, dims, castBytes[float32](col))
	case layout.F64:
		return abf.Write(f, key, dims, castBytes[float64](col))
	case layout.I128:
		return abf.Write(f, key, dims, castBytes[layout.Int128](col))
	case layout.U128:
		return abf.Write(f, key, dims, castBytes[layout.Uint128](col))
	case layout.JuliaChar:
		return abf.Write(f, key, dims, castBytes[layout.Char](col))
	}
	return fmt.Errorf("ABF has no element type %s", a.elem)
}

// toColMajor returns row-major host-order bytes of the given shape in
// column-major order (the same bytes when the orders agree).
func toColMajor(data []byte, shape []int64, size int) ([]byte, error) {
	if colMajorIsRowMajor(shape) {
		return data, nil
	}
	out := alignedBytes(int64(len(data)))
	return out, reorderBytes(out, data, shape, size, layout.RowMajor)
}
