package npy

import (
	"fmt"
	"math"
	"slices"
)

// fieldTable lists the fields of a structured array's dtype compactly, as
// its header gives them: for each field, where its name lies in the
// header's text, its offset, and indexes into the few types and shapes
// the fields share. A header may list a hundred thousand fields: as
// Fields (over a hundred bytes each, a type and a shape of its own) they
// would take many times the header's bytes; here they take about one and
// a half. Fields are made from it on demand. It is never changed once
// built, so it is shared without a lock.
type fieldTable struct {
	text   string // the header's text, which plain names are a part of
	ents   []fieldEnt
	types  []DType
	shapes [][]int64
	strs   []string // names that are not a part of text, and titles
}

// fieldEnt is one field of a fieldTable.
type fieldEnt struct {
	name    uint32 // the name's offset in text, or its index in strs when nameLen is inStrs
	nameLen uint32
	pos     uint32 // the offset of the name's literal in text, for errors
	offset  int32  // within an element
	typ     int32  // index in types
	shape   int32  // one more than its index in shapes; 0 for a scalar field
	title   int32  // one more than its index in strs; 0 for none
}

const inStrs = math.MaxUint32

func (t *fieldTable) len() int { return len(t.ents) }

// name returns field j's name.
func (t *fieldTable) name(j int) string {
	e := &t.ents[j]
	if e.nameLen == inStrs {
		return t.strs[e.name]
	}
	return t.text[e.name : e.name+e.nameLen]
}

// field returns field j. Its DType's fields and its Shape are shared
// with the table and must not be changed.
func (t *fieldTable) field(j int) Field {
	e := &t.ents[j]
	f := Field{Name: t.name(j), Offset: int(e.offset), DType: t.types[e.typ]}
	if e.title > 0 {
		f.Title = t.strs[e.title-1]
	}
	if e.shape > 0 {
		f.Shape = t.shapes[e.shape-1]
	}
	return f
}

// fields returns every field, each with a Shape of its own.
func (t *fieldTable) fields() []Field {
	out := make([]Field, t.len())
	for j := range out {
		out[j] = t.field(j)
		out[j].Shape = slices.Clone(out[j].Shape)
	}
	return out
}

// lookup returns the index of the field named name, or -1.
func (t *fieldTable) lookup(name string) int {
	for j := range t.ents {
		if t.name(j) == name {
			return j
		}
	}
	return -1
}

// simpleType is what tells simple dtypes apart.
type simpleType struct {
	kind byte
	size int
	big  bool
	unit string
}

// fieldScan builds a fieldTable from a descr list's fields, one at a time,
// as the parser reads them. The first error stops it; finish reports it
// after any field name used twice before it, as a reading of the fields
// in order would.
type fieldScan struct {
	t     fieldTable
	off   int   // the offset of the next field
	err   error // the first field that cannot be read
	types map[simpleType]int32
}

// newFieldScan starts a table whose plain names are parts of text ("" if
// none are).
func newFieldScan(text string) *fieldScan {
	return &fieldScan{t: fieldTable{text: text}, types: map[simpleType]int32{}}
}

// add reads one field; its items need to be valid only during the call.
func (s *fieldScan) add(fv pyValue) {
	if s.err != nil {
		return
	}
	f, next, pad, err := fieldOf(fv, s.off, 0)
	if err != nil {
		s.err = err
		return
	}
	s.off = next
	if pad {
		return
	}
	nv := fv.items[0]
	if nv.kind == pyTuple {
		nv = nv.items[1]
	}
	nameAt := -1
	if inner := nv.end - 1; nv.pos+1 <= inner && inner <= len(s.t.text) && s.t.text[nv.pos+1:inner] == f.Name {
		nameAt = nv.pos + 1
	}
	s.put(&f, nameAt, nv.pos)
}

// put adds field f, whose name is a part of the text at nameAt (or, -1,
// is not) and whose name's literal is at pos.
func (s *fieldScan) put(f *Field, nameAt, pos int) {
	e := fieldEnt{pos: uint32(pos), offset: int32(f.Offset), typ: s.typeIndex(f.DType)}
	if nameAt >= 0 {
		e.name, e.nameLen = uint32(nameAt), uint32(len(f.Name))
	} else {
		e.name, e.nameLen = uint32(len(s.t.strs)), inStrs
		s.t.strs = append(s.t.strs, f.Name)
	}
	if f.Title != "" {
		s.t.strs = append(s.t.strs, f.Title)
		e.title = int32(len(s.t.strs))
	}
	if f.Shape != nil {
		s.t.shapes = append(s.t.shapes, f.Shape)
		e.shape = int32(len(s.t.shapes))
	}
	if len(s.t.ents) == cap(s.t.ents) {
		s.t.ents = slices.Grow(s.t.ents, max(16, len(s.t.ents))) // doubling, not append's smaller steps
	}
	s.t.ents = append(s.t.ents, e)
}

// typeIndex returns d's index in the table's types, adding it if new.
func (s *fieldScan) typeIndex(d DType) int32 {
	if d.Structured() {
		s.t.types = append(s.t.types, d)
		return int32(len(s.t.types) - 1)
	}
	k := simpleType{d.Kind, d.ItemSize, d.BigEndian, d.Unit}
	i, ok := s.types[k]
	if !ok {
		i = int32(len(s.t.types))
		s.t.types = append(s.t.types, d)
		s.types[k] = i
	}
	return i
}

// finish checks the fields read (no name used twice, at least one field)
// and returns the dtype of the list v and its table: a structured dtype
// (whose Fields are in the table), or a void one for a list of padding
// alone.
func (s *fieldScan) finish(v pyValue) (DType, *fieldTable, error) {
	t := &s.t
	seen := make(map[string]bool, t.len())
	for j := range t.ents {
		f := Field{Name: t.name(j)}
		if e := &t.ents[j]; e.title > 0 {
			f.Title = t.strs[e.title-1]
		}
		if err := checkUnique(seen, &f, int(t.ents[j].pos)); err != nil {
			return DType{}, nil, err
		}
	}
	if s.err != nil {
		return DType{}, nil, s.err
	}
	switch {
	case t.len() == 0 && s.off == 0:
		return DType{}, nil, &descrError{pos: v.pos, err: fmt.Errorf("%w: a structured dtype with no fields", ErrHeader)}
	case t.len() == 0:
		// Only padding: NumPy makes it a void of that size.
		return DType{Kind: 'V', ItemSize: s.off}, nil, nil
	}
	t.ents = slices.Clip(t.ents)
	s.types = nil
	return DType{ItemSize: s.off}, t, nil
}

// tableOf makes the table of a structured dtype's fields (a comma
// string's, or a list's the parser did not scan), and returns the dtype
// without them.
func tableOf(d DType) (DType, *fieldTable) {
	s := newFieldScan("")
	for i := range d.Fields {
		s.put(&d.Fields[i], -1, 0)
	}
	d.Fields = nil
	return d, &s.t
}
