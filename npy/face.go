package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// face is what a File keeps for package format: its records (arrays,
// fields, columns, other members), what each is, and their payload
// readers. It is built when the headers are read and again after an
// append; f.mu guards it.
type face struct {
	recs  []format.Record
	refs  []recRef
	index map[recKey]int // the record of each array and field
	table bool           // a .npy whose array is 1-D structured or 1-D text: its records are columns

	pays     format.Payloads
	inflMu   sync.Mutex
	inflated map[int]*format.Payload // deflated members read in another order, whole in memory
}

// recKey names an array or one of its fields.
type recKey struct {
	a     *array
	field *Field
}

// recRef is what a record is: a target (array or field), and for a
// nullable column the field holding its mask.
type recRef struct {
	t    target
	mask *Field
}

func (f *File) buildFace() {
	n := len(f.others)
	for _, a := range f.arrays {
		n += max(1, len(a.h.DType.Fields))
	}
	f.face = face{index: make(map[recKey]int, n), inflated: map[int]*format.Payload{}}
	f.recs = make([]format.Record, 0, n)
	f.refs = make([]recRef, 0, n)
	// Records of one type share their Facts (a record's are never
	// changed): an archive may hold a hundred thousand arrays of a few
	// types.
	facts := map[string]*format.Facts{}
	for _, a := range f.arrays {
		f.addArray(a, facts)
	}
	for _, m := range f.others {
		rec := format.Record{Array: layout.Array{Name: m.name, Shape: []int64{m.usize}, Offset: -1, Size: m.usize}, Kind: format.KindOpaque, TypeName: "bytes",
			Extra: map[string]any{"member": m.name}}
		if m.stored() {
			rec.Offset = m.data
		}
		f.recs = append(f.recs, rec)
		f.refs = append(f.refs, recRef{})
	}
}

func (f *File) addArray(a *array, facts map[string]*format.Facts) {
	h := a.h
	dt := h.DType
	oneD := !f.isZip && len(h.Shape) == 1
	// Room for every key at once: a map grown by its inserts would leave
	// the smaller one behind, for each member of a large archive.
	base := format.Record{Array: layout.Array{Order: h.Order(), Offset: -1}, Extra: make(map[string]any, 5)}
	if f.isZip {
		base.Extra["version"] = h.version()
		base.Extra["member"] = a.m.name
		if a.deflated() {
			base.Extra["compressed"] = "deflate"
			base.Extra["storage"] = "deflated"
		}
	}
	add := func(r format.Record, ref recRef) {
		f.index[recKey{ref.t.a, ref.t.field}] = len(f.recs)
		f.recs = append(f.recs, r)
		f.refs = append(f.refs, ref)
	}
	factsOf := func(descr string) *format.Facts {
		fa := facts[descr]
		if fa == nil {
			fa = &format.Facts{NativeType: descr}
			facts[descr] = fa
		}
		return fa
	}
	// Fields of one type share their Extra too: a structured type may
	// have a hundred thousand fields of a few types.
	var extras map[string]map[string]any
	describe := func(r *format.Record, d DType, shape []int64) {
		r.Type, r.TypeName = d.Type(), d.TypeName()
		r.BigEndian = d.BigEndian
		r.Shape = shape
		r.Size = h.count * int64(d.ItemSize)
		for _, n := range shape[len(h.Shape):] {
			r.Size *= n
		}
		switch {
		case d.Structured():
			r.Extra = maps.Clone(base.Extra)
		case !dt.Structured():
			r.Facts = factsOf(d.simpleDescr())
			r.Extra["descr"] = r.Facts.NativeType
		default:
			r.Facts = factsOf(d.simpleDescr())
			descr := r.Facts.NativeType
			if r.Extra = extras[descr]; r.Extra == nil {
				r.Extra = maps.Clone(base.Extra)
				r.Extra["descr"] = descr
				if extras == nil {
					extras = map[string]map[string]any{}
				}
				extras[descr] = r.Extra
			}
		}
		switch {
		case d.Structured():
			r.Kind = format.KindOpaque
		case !r.Type.Valid() && oneD && len(shape) == 1:
			r.Kind = format.KindColumn
		case !r.Type.Valid():
			r.Kind = format.KindOpaque
		case oneD && len(shape) == 1 && dt.Structured():
			r.Kind = format.KindColumn
		default:
			r.Kind = format.KindArray
		}
	}
	if !dt.Structured() {
		r := base
		r.Name = a.key
		describe(&r, dt, append([]int64{}, h.Shape...))
		if !a.deflated() {
			r.Offset = a.data
		}
		if r.Kind == format.KindColumn {
			f.table = true
		}
		add(r, recRef{t: target{name: a.key, a: a}})
		return
	}
	if oneD {
		f.table = true
	}
	fields := dt.Fields
	scalarShape := slices.Clone(h.Shape) // the shape of every scalar field
	for i := 0; i < len(fields); i++ {
		fl := &fields[i]
		r := base
		r.Name = fl.Name
		if f.isZip {
			r.Name = a.key + "/" + fl.Name
		}
		shape := scalarShape
		if len(fl.Shape) > 0 {
			shape = append(slices.Clone(h.Shape), fl.Shape...)
		}
		describe(&r, fl.DType, shape)
		ref := recRef{t: target{name: r.Name, a: a, field: fl}}
		if r.Kind == format.KindColumn && i+1 < len(fields) {
			if m := &fields[i+1]; m.Name == fl.Name+MaskSuffix && m.DType.Kind == 'b' && m.Shape == nil {
				r.Nullable = true
				ref.mask = m
				i++
			}
		}
		add(r, ref)
	}
}

// Records lists the file's arrays as records: an array, or each field of
// a structured array ("key/field" in an .npz), and the .npz members that
// are not arrays, as opaque bytes. A .npy of one 1-D structured or text
// array is a table: its fields are columns, and a bool field "x.mask"
// after "x" holds that column's nulls. The slice must not be changed; an
// append builds a new one.
func (f *File) Records() []format.Record {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.recs
}

// Format returns "npy".
func (f *File) Format() string { return "npy" }

func (f *File) bad(i int, err error, format string, args ...any) error {
	return recordErr(f.name, f.recs[i].Name, f.recs[i].Offset, err, format, args...)
}

// ReadArray copies elements [first, first+len(dst)/size) of record i, in
// order and byte order bo.
func (f *File) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.readable(i); err != nil {
		return err
	}
	if f.refs[i].t.field != nil {
		return f.readField(i, dst, first, order, bo)
	}
	rec := &f.recs[i]
	p, err := f.payload(i)
	if err == nil && f.refs[i].t.a.deflated() && order != rec.Order && !layout.Trivial(rec.Shape) {
		p, err = f.inflatedPayload(i, p, order)
	}
	if err != nil {
		return err
	}
	return p.ReadArray(dst, first, order, bo)
}

// readable checks that record i holds values ReadArray can copy; f.mu is
// held.
func (f *File) readable(i int) error {
	if i < 0 || i >= len(f.recs) {
		return f.errf(-1, mmapfile.ErrOutOfRange, "record %d of %d", i, len(f.recs))
	}
	if rec := &f.recs[i]; rec.Kind == format.KindOpaque || !rec.Type.Valid() {
		return f.bad(i, errors.ErrUnsupported, "%s values cannot be read as an array", rec.TypeString())
	}
	if f.closed {
		return f.bad(i, mmapfile.ErrClosed, "read")
	}
	return nil
}

// Payload returns the reader of record i, a whole array (format.Payloader):
// its bytes in the mapping, or a deflated member inflated as a stream,
// which cannot be viewed. Fields of structured arrays are strided and
// have none.
func (f *File) Payload(i int) (*format.Payload, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.readable(i); err != nil {
		return nil, err
	}
	if f.refs[i].t.field != nil {
		return nil, f.bad(i, errors.ErrUnsupported, "a field of a structured array, whose values are strided; use Read")
	}
	return f.payload(i)
}

// payload is Payload for a whole array; f.mu is held.
func (f *File) payload(i int) (*format.Payload, error) {
	return f.pays.Get(i, func() (*format.Payload, error) {
		a := f.refs[i].t.a
		rec := &f.recs[i]
		p := &format.Payload{Array: rec.Array, Lenient: f.opts.Lenient}
		p.Array.Offset = a.data
		p.Wrap = func(off int64, err error) error { return mapRecordErr(f.name, rec.Name, off, err, "") }
		if !a.deflated() {
			// A stored member's CRC-32 is checked before the first copy;
			// views skip it (Verify checks on demand).
			p.Data, p.Off = f.ra, a.data
			p.Check = func() error { return f.checkStored(a) }
			if reg := f.reg.Load(); reg != nil && int64(reg.Len()) >= a.data+a.h.dataSize {
				p.Data = reg
			}
			if f.mf != nil {
				// A mapping that reaches the data's end: appends grow it.
				reg, err := f.regionFor(a.data + a.h.dataSize)
				if err != nil {
					return nil, err
				}
				p.Data = reg
			}
			if m := a.m; m != nil && f.writable {
				p.Writing = func() error { return f.viewing(m) }
			}
			return p, nil
		}
		// Reads in the member's own order inflate it as a stream.
		p.Data, p.Off = inflated{a}, a.h.dataOff()
		p.NoView = f.errf(a.m.data, errors.ErrUnsupported, "%q is a deflated member; use Read, which inflates it", rec.Name)
		return p, nil
	})
}

// viewing marks member m as handed out in a writable view: its CRC-32 is
// rewritten at Close.
func (f *File) viewing(m *member) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.mark(m); err != nil {
		return err
	}
	m.viewed = true
	return nil
}

// inflatedPayload returns the reader of deflated record i, whose streaming
// reader is p, for a read in another order, which needs the whole member
// in memory; f.mu is held.
func (f *File) inflatedPayload(i int, p *format.Payload, order layout.Order) (*format.Payload, error) {
	f.inflMu.Lock()
	defer f.inflMu.Unlock()
	if q := f.inflated[i]; q != nil {
		return q, nil
	}
	a := f.refs[i].t.a
	if a.h.dataSize > f.opts.maxInflate() {
		return nil, f.bad(i, ErrInflateLimit, "a read in %s order inflates all %d bytes of the member, more than %d", order, a.h.dataSize, f.opts.maxInflate())
	}
	b := make([]byte, a.h.dataSize)
	if err := readFull(a.inf, b, a.h.dataOff()); err != nil {
		return nil, err
	}
	q := &format.Payload{Array: p.Array, Lenient: p.Lenient, Wrap: p.Wrap, NoView: p.NoView, Data: bytes.NewReader(b)}
	f.inflated[i] = q
	return q, nil
}

// inflated reads a deflated member's inflated bytes and, where a read
// reaches the end of its array data, checks the rest of the stream.
type inflated struct{ a *array }

func (r inflated) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.a.inf.ReadAt(p, off)
	if err == nil {
		err = r.a.checkEnd(off + int64(n))
	}
	return n, err
}

// readField copies elements of a field of a structured array in order.
func (f *File) readField(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	t := &f.refs[i].t
	rec := &f.recs[i]
	size := int64(rec.Type.Size())
	n := int64(len(dst)) / size
	if end, ok := layout.Add(first, n); first < 0 || !ok || end > t.count() || int64(len(dst))%size != 0 {
		return f.bad(i, mmapfile.ErrOutOfRange, "elements [%d, %d+%d) outside [0, %d)", first, first, n, t.count())
	}
	storage := order == rec.Order && (len(t.field.Shape) == 0 || order == layout.RowMajor)
	if err := f.gather(t, dst, first, order, storage || layout.Trivial(t.shape())); err != nil {
		return err
	}
	layout.SwapOrder(dst, rec.Type, rec.ByteOrder(), bo)
	if bad := layout.CheckBools(dst, rec.Type, f.opts.Lenient); bad >= 0 {
		return f.bad(i, mmapfile.ErrInvalidBool, "element %d (%s order): byte 0x%02x", first+int64(bad), order, dst[bad])
	}
	return nil
}
