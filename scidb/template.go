package scidb

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// Type is the type of one format-string entry: a SciDB built-in type, or
// Skip for padding that is not an attribute.
type Type uint8

// The types mmapkit reads and writes. The zero value is not a type.
const (
	TypeBool Type = iota + 1
	TypeChar
	TypeInt8
	TypeInt16
	TypeInt32
	TypeInt64
	TypeUint8
	TypeUint16
	TypeUint32
	TypeUint64
	TypeFloat
	TypeDouble
	TypeDatetime
	TypeDatetimeTZ
	TypeString
	TypeBinary
	TypeSkip
)

var typeInfo = [...]struct {
	name string
	size int // bytes of a value; 0 = variable (uint32 length word first)
}{
	TypeBool:       {"bool", 1},
	TypeChar:       {"char", 1},
	TypeInt8:       {"int8", 1},
	TypeInt16:      {"int16", 2},
	TypeInt32:      {"int32", 4},
	TypeInt64:      {"int64", 8},
	TypeUint8:      {"uint8", 1},
	TypeUint16:     {"uint16", 2},
	TypeUint32:     {"uint32", 4},
	TypeUint64:     {"uint64", 8},
	TypeFloat:      {"float", 4},
	TypeDouble:     {"double", 8},
	TypeDatetime:   {"datetime", 8},
	TypeDatetimeTZ: {"datetimetz", 16},
	TypeString:     {"string", 0},
	TypeBinary:     {"binary", 0},
	TypeSkip:       {"skip", 0},
}

// typeByName is SciDB's type registry lookup: exact, case-sensitive names.
// "skip" is not here: it is matched case-insensitively before the lookup.
var typeByName = map[string]Type{}

func init() {
	for t := TypeBool; t < TypeSkip; t++ {
		typeByName[typeInfo[t].name] = t
	}
}

// String returns SciDB's name of the type ("int64", "datetimetz", "skip").
func (t Type) String() string {
	if t >= TypeBool && t <= TypeSkip {
		return typeInfo[t].name
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// Size returns the byte size of a value of a fixed-size type, and 0 for
// string, binary and skip, whose size is given by a width or a length word.
func (t Type) Size() int {
	if t >= TypeBool && t <= TypeSkip {
		return typeInfo[t].size
	}
	return 0
}

// Column is one entry of a format string.
type Column struct {
	Type     Type
	Width    uint32 // N of string(N), binary(N), skip(N); 0 = none
	Nullable bool   // the entry ends in "null": a prefix byte precedes the value
	Pos      int    // byte offset of the entry's name in the format string
}

// Fixed reports whether the entry occupies the same number of bytes in
// every cell.
func (c Column) Fixed() bool { return c.Width > 0 || c.Type.Size() > 0 }

// Size returns the entry's byte size in a cell, prefix included, and true;
// or 0 and false for a variable-size entry (string, binary, skip, with or
// without null).
func (c Column) Size() (int, bool) {
	n := c.Type.Size()
	if c.Width > 0 {
		n = int(c.Width)
	}
	if n == 0 {
		return 0, false
	}
	if c.Nullable {
		n++
	}
	return n, true
}

// valueSize is the size of the value slot after the prefix; 0 if variable.
func (c Column) valueSize() int {
	if c.Width > 0 {
		return int(c.Width)
	}
	return c.Type.Size()
}

// String returns the entry as the canonical format string writes it:
// "int16 null", "string(10)", "skip(8) null".
func (c Column) String() string {
	s := c.Type.String()
	if c.Width > 0 {
		s += "(" + strconv.FormatUint(uint64(c.Width), 10) + ")"
	}
	if c.Nullable {
		s += " null"
	}
	return s
}

// Schema is a parsed format string: the entries of every cell in order.
type Schema struct {
	Columns []Column // every entry, skips included
	Attrs   []int    // indexes into Columns of the non-skip entries, one per attribute
	Names   []string // attribute names, one per attribute; a0, a1, … by default

	offsets []int // byte offset of each entry in a cell, if every entry is fixed-size
	stride  int   // cell size, 0 unless every entry is fixed-size
}

// NewFormat builds a Schema from entries, as ParseFormat would from their
// canonical text. It checks each entry the way the parser does.
func NewFormat(cols ...Column) (*Schema, error) {
	parts := make([]string, len(cols))
	for i, c := range cols {
		if c.Type < TypeBool || c.Type > TypeSkip {
			return nil, fmt.Errorf("scidb: entry %d: invalid type %v", i+1, c.Type)
		}
		parts[i] = c.String()
	}
	return ParseFormat("(" + strings.Join(parts, ", ") + ")")
}

// String returns the canonical format string, e.g.
// "(int8, int16 null, string(10), skip(8) null)". ParseFormat of it gives
// the same entries.
func (f *Schema) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range f.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.String())
	}
	b.WriteByte(')')
	return b.String()
}

// Stride returns the size of a cell in bytes and true if every entry is
// fixed-size (fixed types, (N) forms and skip(N), with or without null).
func (f *Schema) Stride() (int, bool) {
	off := 0
	for _, c := range f.Columns {
		n, ok := c.Size()
		if !ok || off+n > maxStride {
			return 0, false
		}
		off += n
	}
	return off, off > 0
}

// Attr returns the entry of attribute i (0-based, skips not counted).
func (f *Schema) Attr(i int) Column { return f.Columns[f.Attrs[i]] }

// NumAttrs returns the number of attributes (non-skip entries).
func (f *Schema) NumAttrs() int { return len(f.Attrs) }

// SetNames replaces the attribute names: one per attribute, each
// non-empty and given once (a name finds one attribute).
func (f *Schema) SetNames(names ...string) error {
	if len(names) != len(f.Attrs) {
		return fmt.Errorf("scidb: %d names for %d attributes of %s", len(names), len(f.Attrs), f)
	}
	seen := make(map[string]int, len(names))
	for a, name := range names {
		if name == "" {
			return fmt.Errorf("scidb: attribute %d: the name is empty", a)
		}
		if b, ok := seen[name]; ok {
			return fmt.Errorf("scidb: the name %q is given twice (attributes %d and %d)", name, b, a)
		}
		seen[name] = a
	}
	f.Names = append([]string(nil), names...)
	return nil
}

// name returns the name of attribute a, or a default.
func (f *Schema) name(a int) string {
	if a >= 0 && a < len(f.Names) {
		return f.Names[a]
	}
	return "a" + strconv.Itoa(a)
}

// attrOf returns the attribute index of entry i, or -1 for a skip.
func (f *Schema) attrOf(col int) int {
	for a, c := range f.Attrs {
		if c == col {
			return a
		}
	}
	return -1
}

// finish computes attribute indexes, default names and, when every entry
// is fixed-size, the entries' offsets in a cell: the layout planner places
// each entry (its prefix as a header, its value as the payload) with
// alignment 1, packed as SciDB writes them.
func (f *Schema) finish() {
	f.Attrs = f.Attrs[:0]
	recs := make([]layout.Slot, 0, len(f.Columns))
	fixed := true
	for i, c := range f.Columns {
		if c.Type != TypeSkip {
			f.Attrs = append(f.Attrs, i)
		}
		vs := c.valueSize()
		if vs == 0 {
			fixed = false
		}
		prefix := int64(0)
		if c.Nullable {
			prefix = 1
		}
		recs = append(recs, layout.Slot{Header: prefix, ElemAlign: 1, Payload: int64(vs)})
	}
	f.offsets, f.stride = nil, 0
	if fixed {
		if pl, err := layout.Plan(0, layout.Policy{Align: 1}, recs); err == nil && pl[len(pl)-1].End <= maxStride {
			f.offsets = make([]int, len(pl))
			for i, p := range pl {
				f.offsets[i] = int(p.Start)
			}
			f.stride = int(pl[len(pl)-1].End)
		}
	}
	f.Names = make([]string, len(f.Attrs))
	for a := range f.Attrs {
		f.Names[a] = "a" + strconv.Itoa(a)
	}
}

// maxStride bounds a fixed cell so that offsets stay far from overflow;
// formats with larger cells are read as variable-size ones.
const maxStride = 1 << 40

// prepare checks a Schema before use and returns one whose derived fields
// (Attrs, cell offsets, stride) match its Columns: f itself when they do,
// as after ParseFormat, or a rebuilt copy (keeping Names when their count
// fits) for a Schema built or changed by hand.
func (f *Schema) prepare() (*Schema, error) {
	if f == nil {
		return nil, fmt.Errorf("scidb: nil format")
	}
	if len(f.Columns) == 0 {
		return nil, fmt.Errorf("scidb: format has no entries")
	}
	a, off, fixed := 0, 0, true
	consistent := true
	for i, c := range f.Columns {
		if c.Type < TypeBool || c.Type > TypeSkip {
			return nil, fmt.Errorf("scidb: entry %d: invalid type %v", i+1, c.Type)
		}
		if c.Width > 0 && c.Type.Size() > 0 {
			return nil, fmt.Errorf("scidb: entry %d: fixed-size type %s takes no width: %w", i+1, c.Type, ErrFixedSizeWidth)
		}
		if c.Width > maxWidth {
			return nil, fmt.Errorf("scidb: entry %d: width %d exceeds 2147483647", i+1, c.Width)
		}
		if c.Type != TypeSkip {
			if a >= len(f.Attrs) || f.Attrs[a] != i {
				consistent = false
			}
			a++
		}
		if fixed {
			if i < len(f.offsets) && f.offsets[i] != off {
				consistent = false
			}
			if n, ok := c.Size(); ok && off+n <= maxStride {
				off += n
			} else {
				fixed = false
			}
		}
	}
	if a != len(f.Attrs) {
		consistent = false
	}
	if fixed && (f.stride != off || len(f.offsets) != len(f.Columns)) || !fixed && (f.stride != 0 || f.offsets != nil) {
		consistent = false
	}
	if consistent {
		return f, nil
	}
	g := &Schema{Columns: append([]Column(nil), f.Columns...)}
	g.finish()
	if len(f.Names) == len(g.Names) {
		copy(g.Names, f.Names)
	}
	return g, nil
}
