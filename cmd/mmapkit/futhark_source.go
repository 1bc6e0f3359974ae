package main

import (
	"bufio"
	"fmt"
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
// 0, 1, …, read through package futhark's one mapping of the file (which
// drops pages behind a sequential reader).
func openFuthark(e *env, path string, o *openOptions) (*source, error) {
	f, err := futhark.Open(path, nil)
	if err != nil {
		return nil, err
	}
	s := &source{file: path, format: "futhark", version: "2", close: f.Close}
	for i, rec := range f.Records() {
		r := &record{name: rec.Name, kind: kindArray, typeName: rec.Type.String(), elem: rec.Type, shape: rec.Shape,
			order: layout.RowMajor, offset: rec.Offset, nbytes: rec.Size, extra: rec.Extra}
		r.read = func(dst []byte, first int64) error { return f.ReadArray(i, dst, first, layout.RowMajor, hostOrder) }
		s.records = append(s.records, r)
	}
	s.setter = func(r *record, col int, idx []int64, value string) error { return setFuthark(path, r, idx, value) }
	return s, nil
}

// setFuthark changes one element of a binary value in place.
func setFuthark(path string, r *record, idx []int64, value string) error {
	i, err := strconv.Atoi(r.name)
	if err != nil {
		return fmt.Errorf("%w %q", errNoRecord, r.name)
	}
	f, err := futhark.OpenFile(path, mmapfile.ReadWrite, nil)
	if err != nil {
		return err
	}
	if err := f.SetText(i, idx, value); err != nil {
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
// text with --text, aligned with --aligned, through a temporary file that
// replaces path only when complete.
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
	wo := &futhark.Options{}
	if o.aligned != 0 && !o.text {
		wo.Align = int(o.aligned)
	}
	return futhark.WriteFile(path, wo, func(enc *futhark.Encoder) error {
		for _, a := range arrays {
			var err error
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
				return fmt.Errorf("record %q: %w", a.name, err)
			}
		}
		return nil
	})
}
