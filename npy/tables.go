package npy

import (
	"encoding/hex"
	"errors"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// scanCol is what ScanTable needs of a column: its record, type, and
// offsets in a row (the mask's -1 for none), without a target of its own
// (a table may have a hundred thousand columns).
type scanCol struct {
	rec       int
	typ       layout.Type
	dt        *DType
	off, mask int64
}

// ScanTable reads the table's columns in batches of rows.
func (f *File) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	f.mu.RLock()
	cols := make([]scanCol, 0, len(f.slots))
	for i, s := range f.slots {
		r := f.record(i)
		if r.Kind != format.KindColumn {
			continue
		}
		a := f.arrays[s.arr]
		c := scanCol{rec: i, typ: r.Type, dt: &a.h.DType, mask: -1}
		if t := a.h.fields; s.field >= 0 {
			e := &t.ents[s.field]
			c.off, c.dt = int64(e.offset), &t.types[e.typ]
			if s.mask >= 0 {
				c.mask = int64(t.ents[s.mask].offset)
			}
		}
		cols = append(cols, c)
	}
	if batch <= 0 {
		batch = 1 << 16
	}
	a := f.arrays[f.slots[cols[0].rec].arr]
	rows := a.h.Shape[0]
	item := int64(a.h.DType.ItemSize)
	f.mu.RUnlock()
	batch = format.BatchRows(batch, item)
	raw := make([]byte, int64(batch)*item)
	out := make([]format.Column, len(cols))
	bufs := make([][]byte, len(cols))
	reasons := make([][]int8, len(cols))
	whole := target{name: a.key, a: a}
	for first := int64(0); first < rows || first == 0; first += int64(batch) {
		k := min(int64(batch), rows-first)
		chunk := raw[:k*item]
		f.mu.RLock()
		err := error(nil)
		if f.closed {
			err = f.errf(-1, mmapfile.ErrClosed, "scan")
		} else if k > 0 {
			err = f.readRaw(&whole, first, chunk)
		}
		f.mu.RUnlock()
		if err != nil {
			return err
		}
		for j := range cols {
			c := &cols[j]
			var v any
			var err error
			v, bufs[j], err = f.column(c, chunk, k, item, bufs[j])
			if err != nil {
				return err
			}
			out[j] = format.Column{Values: v}
			if c.mask >= 0 {
				if int64(cap(reasons[j])) < k {
					reasons[j] = make([]int8, k)
				}
				r := reasons[j][:k]
				for row := int64(0); row < k; row++ {
					r[row] = -1
					if chunk[row*item+c.mask] != 0 {
						r[row] = 0
					}
				}
				out[j].Reason = r
			}
		}
		if err := fn(first, out); err != nil {
			return err
		}
		if rows == 0 {
			break
		}
	}
	return nil
}

// column takes column c's values out of k whole records in chunk.
func (f *File) column(c *scanCol, chunk []byte, k, item int64, buf []byte) (any, []byte, error) {
	off, dt := c.off, *c.dt
	size := int64(dt.ItemSize)
	if !c.typ.Valid() {
		vals := make([]string, k)
		for row := int64(0); row < k; row++ {
			p := row*item + off
			if dt.Kind == 'V' {
				// Raw bytes as text, as SetText reads them back.
				vals[row] = "0x" + hex.EncodeToString(chunk[p:p+size])
			} else {
				vals[row] = decodeText(dt, chunk[p:p+size])
			}
		}
		return vals, buf, nil
	}
	if int64(cap(buf)) < k*size {
		buf = unsafeslice.AlignedBytes(k * size)
	}
	b := buf[:k*size]
	// The field out of k records: units of u bytes, where the field's
	// offset or the record's size is no multiple of its size.
	u := gcd(gcd(item, size), off)
	layout.NewStridedCopy([]int64{k, size / u}, []int64{item / u, 1}, []int64{size / u, 1}, int(u)).Copy(b, 0, chunk, off/u)
	layout.SwapOrder(b, c.typ, dt.byteOrder(), layout.HostOrder())
	if bad := layout.CheckBools(b, c.typ, f.opts.Lenient); bad >= 0 {
		return nil, buf, f.bad(c.rec, mmapfile.ErrInvalidBool, "row %d: byte 0x%02x", bad, b[bad])
	}
	return layout.SliceOf(c.typ, b), buf, nil
}

// ReadText calls fn with the elements of record i, an array or field of
// bytes, str or void elements, in logical (C) order; see
// format.TextReader.
func (f *File) ReadText(i int, fn func(batch []string) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if i < 0 || i >= len(f.slots) {
		return f.errf(-1, mmapfile.ErrOutOfRange, "record %d of %d", i, len(f.slots))
	}
	ref := f.ref(i)
	if !ref.isText() {
		rec := f.record(i)
		return f.bad(i, errors.ErrUnsupported, "%s is not text", rec.TypeString())
	}
	t := ref.t
	dt := t.dtype()
	if f.closed {
		return f.bad(i, mmapfile.ErrClosed, "read")
	}
	text := func(b []byte) string {
		if dt.Kind == 'V' {
			return "0x" + hex.EncodeToString(b)
		}
		return decodeText(dt, b)
	}
	n, size := t.count(), int64(dt.ItemSize)
	fortran := t.a.h.Order() == layout.ColMajor
	const batch = 4096
	out := make([]string, 0, min(n, batch))
	buf := make([]byte, min(n, batch)*size)
	for k := int64(0); k < n; {
		m := min(n-k, batch)
		out = out[:0]
		var err error
		if fortran {
			err = f.gather(&t, buf[:m*size], k, layout.RowMajor, false)
		} else {
			err = f.readRaw(&t, k, buf[:m*size])
		}
		if err != nil {
			return err
		}
		for j := range m {
			out = append(out, text(buf[j*size:(j+1)*size]))
		}
		if err := fn(out); err != nil {
			return err
		}
		k += m
	}
	return nil
}

// isText reports whether the record is an array or field of bytes, str
// or void elements.
func (r *recRef) isText() bool {
	if r.t.a == nil {
		return false
	}
	dt := r.t.dtype()
	return !dt.Structured() && (dt.Kind == 'S' || dt.Kind == 'U' || dt.Kind == 'V')
}
