package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// face is what a File keeps for package format: what each record is
// (an array, a field, a member that is not an array), from which the
// record is described on demand (RecordLister), and the payload readers.
// A structured array of a hundred thousand fields would take far more
// than its header as a list of Records: the list is made only for
// Records. It is built when the headers are read and again after an
// append; f.mu guards it.
type face struct {
	slots      []recSlot
	arraySlots int  // the slots of arrays and fields, before the other members'
	table      bool // a .npy whose array is 1-D structured or 1-D text: its records are columns

	listOnce *sync.Once
	list     []format.Record // Records', made on its first call

	pays     format.Payloads
	inflMu   sync.Mutex
	inflated map[int]*format.Payload // deflated members read in another order, whole in memory
}

// recSlot is what one record is: field field (-1: the whole array) of
// array arr, or (arr -1) the member f.others[field]; and for a nullable
// column, the field holding its nulls (mask, else -1).
type recSlot struct {
	arr, field, mask int32
}

// recRef is what a record is: a target (array or field), and for a
// nullable column the field holding its mask.
type recRef struct {
	t    target
	mask *Field
}

// arrayFace is what the records of one array share.
type arrayFace struct {
	facts  []*format.Facts  // of the array's type, or of each type of its fields (by fieldTable type)
	extras []map[string]any // the Extra of the fields of each type
	scalar []int64          // the shape of the array's scalar fields
}

func (f *File) buildFace() {
	n := len(f.others)
	for _, a := range f.arrays {
		n++
		if a.h.fields != nil {
			n += a.h.fields.len() - 1
		}
	}
	f.face = face{slots: make([]recSlot, 0, n), inflated: map[int]*format.Payload{}, listOnce: new(sync.Once)}
	// Records of one type share their Facts (a record's are never
	// changed), and arrays of one type what their records share: an
	// archive may hold a hundred thousand arrays of a few types.
	facts := map[string]*format.Facts{}
	simple := map[string]*arrayFace{}
	for i, a := range f.arrays {
		f.addArray(int32(i), a, facts, simple)
	}
	f.arraySlots = len(f.slots)
	for j := range f.others {
		f.slots = append(f.slots, recSlot{arr: -1, field: int32(j), mask: -1})
	}
}
func (f *File) addArray(ai int32, a *array, facts map[string]*format.Facts, simple map[string]*arrayFace) {
	h := a.h
	factsOf := func(d DType) *format.Facts {
		descr := d.simpleDescr()
		fa := facts[descr]
		if fa == nil {
			fa = &format.Facts{NativeType: descr}
			facts[descr] = fa
		}
		return fa
	}
	oneD := !f.isZip && len(h.Shape) == 1
	t := h.fields
	if t == nil {
		fa := factsOf(h.DType)
		if a.face = simple[fa.NativeType]; a.face == nil {
			a.face = &arrayFace{facts: []*format.Facts{fa}}
			simple[fa.NativeType] = a.face
		}
		if recordKind(h.DType, len(h.Shape), false, oneD) == format.KindColumn {
			f.table = true
		}
		f.slots = append(f.slots, recSlot{arr: ai, field: -1, mask: -1})
		return
	}
	if oneD {
		f.table = true
	}
	// Fields of one type share their Facts and Extra: a structured type
	// may have a hundred thousand fields of a few types.
	a.face = &arrayFace{facts: make([]*format.Facts, len(t.types)), extras: make([]map[string]any, len(t.types)), scalar: slices.Clone(h.Shape)}
	for k, d := range t.types {
		if !d.Structured() {
			a.face.facts[k] = factsOf(d)
			a.face.extras[k] = f.baseExtra(a, 1)
			a.face.extras[k]["descr"] = a.face.facts[k].NativeType
		}
	}
	for j := 0; j < t.len(); j++ {
		slot := recSlot{arr: ai, field: int32(j), mask: -1}
		if e := &t.ents[j]; e.shape == 0 && oneD && !t.types[e.typ].Structured() && j+1 < t.len() {
			// A column, followed by the bool field of its nulls.
			if m := &t.ents[j+1]; m.shape == 0 && t.types[m.typ].Kind == 'b' {
				name, mask := t.name(j), t.name(j+1)
				if len(mask) == len(name)+len(MaskSuffix) && strings.HasPrefix(mask, name) && strings.HasSuffix(mask, MaskSuffix) {
					slot.mask = int32(j + 1)
					j++
				}
			}
		}
		f.slots = append(f.slots, slot)
	}
}

// baseExtra is a new Extra of a's records with room for more keys: an
// .npz member's version, name and compression.
func (f *File) baseExtra(a *array, more int) map[string]any {
	if !f.isZip {
		return make(map[string]any, more)
	}
	e := make(map[string]any, 4+more)
	e["version"] = a.h.version()
	e["member"] = a.m.name
	if a.deflated() {
		e["compressed"] = "deflate"
		e["storage"] = "deflated"
	}
	return e
}

// recordKind is the kind of a record of dtype d and rank rank, a field
// of a structured array or not, in a .npy of one 1-D array or not.
func recordKind(d DType, rank int, field, oneD bool) format.Kind {
	switch {
	case d.Structured():
		return format.KindOpaque
	case !d.Type().Valid() && oneD && rank == 1:
		return format.KindColumn
	case !d.Type().Valid():
		return format.KindOpaque
	case oneD && rank == 1 && field:
		return format.KindColumn
	}
	return format.KindArray
}

// record describes record i; f.mu is held.
func (f *File) record(i int) format.Record {
	s := f.slots[i]
	if s.arr < 0 {
		m := f.others[s.field]
		rec := format.Record{Array: layout.Array{Name: m.name, Shape: []int64{m.usize}, Offset: -1, Size: m.usize}, Kind: format.KindOpaque, TypeName: "bytes",
			Extra: map[string]any{"member": m.name}}
		if m.stored() {
			rec.Offset = m.data
		}
		return rec
	}
	a := f.arrays[s.arr]
	h := a.h
	oneD := !f.isZip && len(h.Shape) == 1
	r := format.Record{Array: layout.Array{Order: h.Order(), Offset: -1}}
	if s.field < 0 {
		d := h.DType
		r.Name = a.key
		r.Type, r.TypeName, r.BigEndian = d.Type(), d.TypeName(), d.BigEndian
		r.Shape = slices.Clone(h.Shape)
		r.Size = h.count * int64(d.ItemSize)
		r.Kind = recordKind(d, len(h.Shape), false, oneD)
		r.Facts = a.face.facts[0]
		r.Extra = f.baseExtra(a, 1)
		r.Extra["descr"] = r.Facts.NativeType
		if !a.deflated() {
			r.Offset = a.data
		}
		return r
	}
	e := &h.fields.ents[s.field]
	d := &h.fields.types[e.typ]
	r.Name = h.fields.name(int(s.field))
	if f.isZip {
		r.Name = a.key + "/" + r.Name
	}
	r.Type, r.TypeName, r.BigEndian = d.Type(), d.TypeName(), d.BigEndian
	r.Shape = a.face.scalar
	r.Size = h.count * int64(d.ItemSize)
	if e.shape > 0 {
		sub := h.fields.shapes[e.shape-1]
		r.Shape = append(slices.Clone(h.Shape), sub...)
		for _, n := range sub {
			r.Size *= n
		}
	}
	r.Kind = recordKind(*d, len(r.Shape), true, oneD)
	r.Nullable = s.mask >= 0
	if d.Structured() {
		r.Extra = f.baseExtra(a, 0)
	} else {
		r.Facts, r.Extra = a.face.facts[e.typ], a.face.extras[e.typ]
	}
	return r
}

// ref says what record i is; f.mu is held.
func (f *File) ref(i int) recRef {
	s := f.slots[i]
	if s.arr < 0 {
		return recRef{}
	}
	a := f.arrays[s.arr]
	if s.field < 0 {
		return recRef{t: target{name: a.key, a: a}}
	}
	t := target{a: a, fi: int(s.field)}
	fl := a.h.fields.field(t.fi)
	t.field, t.name = &fl, fl.Name
	if f.isZip {
		t.name = a.key + "/" + fl.Name
	}
	ref := recRef{t: t}
	if s.mask >= 0 {
		m := a.h.fields.field(int(s.mask))
		ref.mask = &m
	}
	return ref
}

// recordFor returns the record of target t, or -1 for a nullable column's
// mask, which has none; f.mu is held.
func (f *File) recordFor(t *target) int {
	arr, field := int32(t.a.idx), int32(-1)
	if t.field != nil {
		field = int32(t.fi)
	}
	slots := f.slots[:f.arraySlots]
	i, found := slices.BinarySearchFunc(slots, recSlot{arr: arr, field: field}, func(s, k recSlot) int {
		if s.arr != k.arr {
			return int(s.arr - k.arr)
		}
		return int(s.field - k.field)
	})
	if !found {
		return -1
	}
	return i
}

// NumRecords returns the number of records (format.RecordLister).
func (f *File) NumRecords() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.slots)
}

// Record describes record i (format.RecordLister): Records()[i], made
// afresh.
func (f *File) Record(i int) format.Record {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.record(i)
}

// Records lists the file's arrays as records: an array, or each field of
// a structured array ("key/field" in an .npz), and the .npz members that
// are not arrays, as opaque bytes. A .npy of one 1-D structured or text
// array is a table: its fields are columns, and a bool field "x.mask"
// after "x" holds that column's nulls. The list is made on the first
// call (a file of many fields is better listed by NumRecords and
// Record); the slice must not be changed; an append makes a new one.
func (f *File) Records() []format.Record {
	f.mu.RLock()
	defer f.mu.RUnlock()
	f.listOnce.Do(func() {
		f.list = make([]format.Record, len(f.slots))
		for i := range f.list {
			f.list[i] = f.record(i)
		}
	})
	return f.list
}

// Format returns "npy".
func (f *File) Format() string { return "npy" }

// bad is an error about record i; f.mu is held.
func (f *File) bad(i int, err error, format string, args ...any) error {
	r := f.record(i)
	return recordErr(f.name, r.Name, r.Offset, err, format, args...)
}

// ReadArray copies elements [first, first+len(dst)/size) of record i, in
// order and byte order bo.
func (f *File) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.readable(i); err != nil {
		return err
	}
	ref := f.ref(i)
	if ref.t.field != nil {
		return f.readField(i, &ref.t, dst, first, order, bo)
	}
	p, err := f.payload(i)
	if err == nil && ref.t.a.deflated() && order != p.Array.Order && !layout.Trivial(p.Array.Shape) {
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
	if i < 0 || i >= len(f.slots) {
		return f.errf(-1, mmapfile.ErrOutOfRange, "record %d of %d", i, len(f.slots))
	}
	if rec := f.record(i); rec.Kind == format.KindOpaque || !rec.Type.Valid() {
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
	if f.slots[i].field >= 0 {
		return nil, f.bad(i, errors.ErrUnsupported, "a field of a structured array, whose values are strided; use Read")
	}
	return f.payload(i)
}

// payload is Payload for a whole array; f.mu is held.
func (f *File) payload(i int) (*format.Payload, error) {
	return f.pays.Get(i, func() (*format.Payload, error) {
		a := f.arrays[f.slots[i].arr]
		rec := f.record(i)
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
	a := f.arrays[f.slots[i].arr]
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

// readField copies elements of field t, record i, in order.
func (f *File) readField(i int, t *target, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	rec := f.record(i)
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
