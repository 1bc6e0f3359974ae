package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"

	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	openers["futhark"] = openFuthark
	writers["futhark"] = writeFuthark
	textPrinter = futharkText
}

// openFuthark opens a file of Futhark values: one record per value, named
// 0, 1, …. Binary payloads are read through a mapping that drops pages
// behind the reader; text values are decoded by package futhark.
func openFuthark(e *env, path string, o *openOptions) (*source, error) {
	f, err := futhark.Open(path, nil)
	if err != nil {
		return nil, err
	}
	mf, err := openPayloadFile(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &source{file: path, format: "futhark", version: "2"}
	s.close = func() error {
		err1 := mf.Close()
		if err := f.Close(); err != nil {
			return err
		}
		return err1
	}
	arrays := f.Arrays()
	for i, ent := range f.Entries() {
		i, ent := i, ent
		a := arrays[i]
		enc := "text"
		if ent.Binary {
			enc = "binary"
		}
		r := &record{name: a.Name, kind: kindArray, typeName: ent.Type.String(), elem: ent.Type, shape: ent.Shape,
			order: layout.RowMajor, offset: a.Offset, nbytes: a.Size, extra: map[string]any{"encoding": enc}}
		if r.shape == nil {
			r.shape = []int64{}
		}
		if ent.Binary {
			p := &payload{mf: mf, off: ent.Data, size: ent.PayloadSize(), elemSize: int64(ent.Type.Size())}
			r.read = p.readContiguous
		} else {
			r.read = func(dst []byte, first int64) error { return futharkReadAt(f, i, ent.Type, dst, first) }
		}
		s.records = append(s.records, r)
	}
	s.setter = func(r *record, col int, idx []int64, value string) error { return setFuthark(path, r, idx, value) }
	return s, nil
}

// futharkReadAt copies elements of value i from first on into dst (host
// order) with futhark.ReadAt.
func futharkReadAt(f *futhark.File, i int, t layout.Type, dst []byte, first int64) error {
	var n int
	var err error
	switch t {
	case layout.I8:
		n, err = futhark.ReadAt(f, i, first, castBytes[int8](dst))
	case layout.I16:
		n, err = futhark.ReadAt(f, i, first, castBytes[int16](dst))
	case layout.I32:
		n, err = futhark.ReadAt(f, i, first, castBytes[int32](dst))
	case layout.I64:
		n, err = futhark.ReadAt(f, i, first, castBytes[int64](dst))
	case layout.U8:
		n, err = futhark.ReadAt(f, i, first, castBytes[uint8](dst))
	case layout.U16:
		n, err = futhark.ReadAt(f, i, first, castBytes[uint16](dst))
	case layout.U32:
		n, err = futhark.ReadAt(f, i, first, castBytes[uint32](dst))
	case layout.U64:
		n, err = futhark.ReadAt(f, i, first, castBytes[uint64](dst))
	case layout.F16:
		n, err = futhark.ReadAt(f, i, first, castBytes[layout.Float16](dst))
	case layout.F32:
		n, err = futhark.ReadAt(f, i, first, castBytes[float32](dst))
	case layout.F64:
		n, err = futhark.ReadAt(f, i, first, castBytes[float64](dst))
	case layout.Bool:
		n, err = futhark.ReadAt(f, i, first, castBytes[bool](dst))
	default:
		return fmt.Errorf("futhark has no type %s", t)
	}
	if err != nil {
		return err
	}
	if n*t.Size() != len(dst) {
		return fmt.Errorf("value %d: short read (%d of %d elements)", i, n, len(dst)/t.Size())
	}
	return nil
}

// setFuthark changes one element of a binary value in place.
func setFuthark(path string, r *record, idx []int64, value string) error {
	i, err := strconv.Atoi(r.name)
	if err != nil {
		return fmt.Errorf("%w %q", errNoRecord, r.name)
	}
	linear, err := rowMajorIndex(r.shape, idx)
	if err != nil {
		return fmt.Errorf("record %q: %w", r.name, err)
	}
	b, err := encodeValue(r.elem, value, leOrder)
	if err != nil {
		return fmt.Errorf("record %q: %w", r.name, err)
	}
	f, err := futhark.OpenFile(path, mmapfile.ReadWrite, nil)
	if err != nil {
		return err
	}
	if err := f.SetElement(i, linear, b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// futharkText prints an array record with futhark's streaming canonical
// text encoder. BitArrays are bool arrays and Julia Chars u32 code points;
// it reports false for types Futhark lacks (i128, u128).
func futharkText(e *env, w *bufio.Writer, r *record) (bool, error) {
	t := r.elem
	conv := func(b []byte) []byte { return b }
	switch {
	case t == layout.JuliaChar:
		t = layout.U32
		conv = func(b []byte) []byte {
			for k := 0; k+4 <= len(b); k += 4 {
				c := layout.Char(hostOrder.Uint32(b[k:]))
				v := uint32(c)
				if cp, err := c.Rune(); err == nil {
					v = uint32(cp)
				}
				leOrder.PutUint32(b[k:], v)
			}
			return b
		}
	case !futhark.IsPrimType(t):
		return false, nil
	default:
		conv = toLE(t.Size())
	}
	n, err := r.count()
	if err != nil {
		return true, fmt.Errorf("record %q: %w", r.name, err)
	}
	enc := futhark.NewEncoder(w)
	if err := enc.BeginText(t, r.shape); err != nil {
		return true, err
	}
	size := int64(r.elem.Size())
	per := max(1, int64(catChunkBytes)/size)
	buf := alignedBytes(min(per, n) * size)
	bar := newProgress(e, n*size, "cat "+r.name)
	defer bar.Done()
	for first := int64(0); first < n; first += per {
		k := min(per, n-first)
		chunk := buf[:k*size]
		if err := r.read(chunk, first); err != nil {
			return true, fmt.Errorf("record %q: %w", r.name, err)
		}
		if err := enc.WriteElems(conv(chunk)); err != nil {
			return true, err
		}
		bar.Add(k * size)
	}
	return true, enc.Flush()
}

// toLE returns a function that turns host-order elements into
// little-endian ones in place (nothing to do on little-endian hosts).
func toLE(size int) func([]byte) []byte {
	if mmapfile.IsHostOrder(leOrder) {
		return func(b []byte) []byte { return b }
	}
	return func(b []byte) []byte {
		layout.SwapBytes(b, size)
		return b
	}
}

// writeFuthark writes every array as a Futhark value, binary by default,
// text with --text, aligned with --aligned.
func writeFuthark(e *env, path string, ds *dataset, o *convertOptions) error {
	arrays, err := ds.asArrays()
	if err != nil {
		return err
	}
	for _, a := range arrays {
		if !futhark.IsPrimType(a.elem) {
			return fmt.Errorf("record %q: Futhark has no element type %s", a.name, a.elem)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	wo := &futhark.WriteOptions{}
	if o.aligned != 0 && !o.text {
		wo.Align = int(o.aligned)
	}
	enc := futhark.NewWriter(bw, 0, wo)
	for _, a := range arrays {
		if o.text {
			err = enc.BeginText(a.elem, a.shape)
		} else {
			err = enc.BeginBinary(a.elem, a.shape)
		}
		if err == nil && len(a.data) > 0 {
			le := a.data
			if !mmapfile.IsHostOrder(leOrder) {
				le = append([]byte(nil), a.data...)
				layout.SwapBytes(le, a.elem.Size())
			}
			err = enc.WriteElems(le)
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("record %q: %w", a.name, err)
		}
	}
	if err := enc.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
