package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/mmapkit/mmapkit/layout"
)

// DType is a NumPy data type as a .npy header describes it: a simple type
// (Kind and ItemSize, as in dtype.str "<f8") or a structured one (Fields).
type DType struct {
	// Kind is NumPy's kind character: 'b' bool, 'i' signed and 'u'
	// unsigned integers, 'f' floats, 'c' complex numbers, 'M' datetime64,
	// 'm' timedelta64, 'S' fixed bytes, 'U' fixed UCS-4 text, 'V' raw
	// bytes; 0 for a structured type.
	Kind byte
	// ItemSize is the size of one element in bytes (for 'U', four per
	// character).
	ItemSize int
	// BigEndian: the elements (each part of a complex number, each UCS-4
	// character) are stored big-endian.
	BigEndian bool
	// Unit is the unit of datetime64 and timedelta64 ("s", "10ms"); ""
	// for NumPy's generic unit.
	Unit string
	// Fields are the named fields of a structured type, in offset order;
	// padding is not listed but counted in the offsets and ItemSize.
	Fields []Field
}

// Field is one named field of a structured type.
type Field struct {
	Name  string
	Title string // NumPy's optional title; "" if none
	// Offset is the field's byte offset in an element.
	Offset int
	DType  DType
	// Shape is the shape of a subarray field ((name, '<f8', (2, 3))), nil
	// for a scalar field.
	Shape []int64
}

// Size returns the bytes the field takes in an element.
func (f *Field) Size() int {
	n := f.DType.ItemSize
	for _, d := range f.Shape {
		n *= int(d)
	}
	return n
}

// Structured reports whether d has fields.
func (d DType) Structured() bool { return d.Kind == 0 }

// Type returns the layout element type of a simple numeric, bool or
// datetime dtype (i64 for datetime64 and timedelta64), or layout.Invalid
// for text, raw bytes and structured types.
func (d DType) Type() layout.Type {
	switch d.Kind {
	case 'b':
		return layout.Bool
	case 'i':
		return [...]layout.Type{1: layout.I8, 2: layout.I16, 4: layout.I32, 8: layout.I64}[d.ItemSize]
	case 'u':
		return [...]layout.Type{1: layout.U8, 2: layout.U16, 4: layout.U32, 8: layout.U64}[d.ItemSize]
	case 'f':
		return [...]layout.Type{2: layout.F16, 4: layout.F32, 8: layout.F64}[d.ItemSize]
	case 'c':
		return [...]layout.Type{8: layout.C64, 16: layout.C128}[d.ItemSize]
	case 'M', 'm':
		return layout.I64
	}
	return layout.Invalid
}

// TypeName names the type where layout's name says less: "datetime64[s]",
// "timedelta64[ms]", "bytes5" (|S5), "str5" (<U5), "void8" (|V8),
// "struct" for structured types, and "" for the others.
func (d DType) TypeName() string {
	switch d.Kind {
	case 'M', 'm':
		s := "datetime64"
		if d.Kind == 'm' {
			s = "timedelta64"
		}
		if d.Unit != "" {
			s += "[" + d.Unit + "]"
		}
		return s
	case 'S':
		return "bytes" + strconv.Itoa(d.ItemSize)
	case 'U':
		return "str" + strconv.Itoa(d.ItemSize/4)
	case 'V':
		return "void" + strconv.Itoa(d.ItemSize)
	case 0:
		return "struct"
	}
	return ""
}

// String returns dtype.str for a simple type ("<f8", "|b1", "<M8[s]"),
// and for a structured one the repr of dtype.descr that a header holds
// ("[('a', '<i4'), (”, '|V4'), ('b', '<f8')]").
func (d DType) String() string {
	if d.Structured() {
		return d.descr()
	}
	return d.simpleDescr()
}

// DTypeOf returns the little-endian dtype of a layout element type: i8 →
// |i1, f64 → <f8, c64 → <c8, bool → |b1. Types NumPy lacks (i128, u128,
// Julia's char) give an error.
func DTypeOf(t layout.Type) (DType, error) {
	switch {
	case t == layout.Bool:
		return DType{Kind: 'b', ItemSize: 1}, nil
	case t.IsSigned() && t.Size() <= 8:
		return DType{Kind: 'i', ItemSize: t.Size()}, nil
	case t.IsUnsigned() && t.Size() <= 8:
		return DType{Kind: 'u', ItemSize: t.Size()}, nil
	case t.IsFloat():
		return DType{Kind: 'f', ItemSize: t.Size()}, nil
	case t.IsComplex():
		return DType{Kind: 'c', ItemSize: t.Size()}, nil
	}
	return DType{}, fmt.Errorf("NumPy has no type for %s", t)
}

// swapSize is the unit a change of byte order reverses: the item size,
// each part of a complex number, each UCS-4 character; 1 where byte order
// does not apply.
func (d DType) swapSize() int {
	switch d.Kind {
	case 'i', 'u', 'f', 'M', 'm':
		return d.ItemSize
	case 'c':
		return d.ItemSize / 2
	case 'U':
		return 4
	}
	return 1
}

// orderChar is the byte-order character NumPy writes for d.
func (d DType) orderChar() byte {
	if d.swapSize() <= 1 {
		return '|'
	}
	if d.BigEndian {
		return '>'
	}
	return '<'
}

// simpleDescr is dtype.str of a simple type.
func (d DType) simpleDescr() string {
	size := d.ItemSize
	if d.Kind == 'U' {
		size /= 4
	}
	s := string(d.orderChar()) + string(d.Kind) + strconv.Itoa(size)
	if (d.Kind == 'M' || d.Kind == 'm') && d.Unit != "" {
		s += "[" + d.Unit + "]"
	}
	return s
}

// descr is the Python repr of what NumPy writes as 'descr'.
func (d DType) descr() string { return string(d.appendDescr(nil)) }

// appendDescr appends descr to b, without a string of its own for each
// field: a header may list a hundred thousand.
func (d DType) appendDescr(b []byte) []byte {
	if !d.Structured() {
		return appendRepr(b, d.simpleDescr())
	}
	return appendFieldsDescr(b, len(d.Fields), func(j int) Field { return d.Fields[j] }, d.ItemSize)
}

// appendFieldsDescr appends the descr list of the n fields that field
// gives, in an element of itemSize bytes: padding as unnamed voids.
func appendFieldsDescr(b []byte, n int, field func(j int) Field, itemSize int) []byte {
	b = append(b, '[')
	at := 0
	items := 0
	sep := func() {
		if items > 0 {
			b = append(b, ", "...)
		}
		items++
	}
	pad := func(size int) {
		sep()
		b = append(b, "('', '|V"...)
		b = strconv.AppendInt(b, int64(size), 10)
		b = append(b, "')"...)
	}
	for j := range n {
		f := field(j)
		if f.Offset > at {
			pad(f.Offset - at)
		}
		sep()
		b = append(b, '(')
		if f.Title != "" {
			b = append(b, '(')
			b = appendRepr(b, f.Title)
			b = append(b, ", "...)
			b = appendRepr(b, f.Name)
			b = append(b, ')')
		} else {
			b = appendRepr(b, f.Name)
		}
		b = append(b, ", "...)
		b = f.DType.appendDescr(b)
		if f.Shape != nil {
			b = append(b, ", "...)
			b = append(b, shapeRepr(f.Shape)...)
		}
		b = append(b, ')')
		at = f.Offset + f.Size()
	}
	if itemSize > at {
		pad(itemSize - at)
	}
	return append(b, ']')
}

// appendRepr appends pyRepr(s) to b; printable ASCII without quotes or
// backslashes (nearly every name) needs no escapes.
func appendRepr(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' || c == '\'' || c == '"' {
			return append(b, pyRepr(s)...)
		}
	}
	b = append(b, '\'')
	b = append(b, s...)
	return append(b, '\'')
}

// shapeRepr is Python's repr of a shape tuple: (), (5,), (3, 4).
func shapeRepr(shape []int64) string {
	switch len(shape) {
	case 0:
		return "()"
	case 1:
		return "(" + strconv.FormatInt(shape[0], 10) + ",)"
	}
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// check verifies a dtype given to a writer: sizes that agree with the
// kind, fields in order without overlap, within ItemSize.
func (d DType) check() error {
	if d.Structured() {
		if len(d.Fields) == 0 {
			return errors.New("a structured dtype needs at least one field")
		}
		at := 0
		seen := make(map[string]bool, len(d.Fields))
		for i := range d.Fields {
			f := &d.Fields[i]
			if err := f.DType.check(); err != nil {
				return fmt.Errorf("field %q: %w", f.Name, err)
			}
			if seen[f.Name] {
				return fmt.Errorf("field name %q is given twice", f.Name)
			}
			seen[f.Name] = true
			for _, n := range f.Shape {
				if n < 0 {
					return fmt.Errorf("field %q: negative subarray dimension", f.Name)
				}
			}
			if f.Offset < at {
				return fmt.Errorf("field %q at offset %d overlaps the field before it (which ends at %d)", f.Name, f.Offset, at)
			}
			at = f.Offset + f.Size()
		}
		if d.ItemSize < at || d.ItemSize > math.MaxInt32 {
			return fmt.Errorf("item size %d, fields end at %d", d.ItemSize, at)
		}
		return nil
	}
	ok := false
	switch d.Kind {
	case 'b':
		ok = d.ItemSize == 1
	case 'i', 'u':
		ok = d.ItemSize == 1 || d.ItemSize == 2 || d.ItemSize == 4 || d.ItemSize == 8
	case 'f':
		ok = d.ItemSize == 2 || d.ItemSize == 4 || d.ItemSize == 8
	case 'c':
		ok = d.ItemSize == 8 || d.ItemSize == 16
	case 'M', 'm':
		ok = d.ItemSize == 8 && validUnit(d.Unit)
	case 'S', 'V':
		ok = d.ItemSize > 0 && d.ItemSize <= math.MaxInt32
	case 'U':
		ok = d.ItemSize > 0 && d.ItemSize%4 == 0 && d.ItemSize <= math.MaxInt32
	}
	if !ok {
		return fmt.Errorf("kind %q with item size %d is not a dtype this package handles", d.Kind, d.ItemSize)
	}
	return nil
}

// Datetime units NumPy knows.
var dateUnits = map[string]bool{"Y": true, "M": true, "W": true, "D": true, "h": true, "m": true,
	"s": true, "ms": true, "us": true, "μs": true, "ns": true, "ps": true, "fs": true, "as": true}

// validUnit reports whether u is a datetime unit, optionally with a
// multiplier ("10ms"), or "" (generic).
func validUnit(u string) bool {
	if u == "" {
		return true
	}
	i := 0
	for i < len(u) && isDigit(u[i]) {
		i++
	}
	if i > 0 {
		n, err := strconv.Atoi(u[:i])
		if err != nil || n <= 0 {
			return false
		}
	}
	return dateUnits[u[i:]]
}

// Type names NumPy's dtype() takes without a byte-order character, with
// the descr they stand for on a little-endian host.
var dtypeNames = map[string]string{
	"bool": "b1", "bool_": "b1", "bool8": "b1", "?": "b1",
	"int8": "i1", "byte": "i1", "b": "i1",
	"uint8": "u1", "ubyte": "u1", "B": "u1",
	"int16": "i2", "short": "i2", "h": "i2",
	"uint16": "u2", "ushort": "u2", "H": "u2",
	"int32": "i4", "intc": "i4", "i": "i4",
	"uint32": "u4", "uintc": "u4", "I": "u4",
	"int64": "i8", "long": "i8", "longlong": "i8", "int": "i8", "int_": "i8", "intp": "i8", "int0": "i8", "l": "i8", "q": "i8", "p": "i8",
	"uint64": "u8", "ulong": "u8", "ulonglong": "u8", "uint": "u8", "uintp": "u8", "uint0": "u8", "L": "u8", "Q": "u8", "P": "u8",
	"float16": "f2", "half": "f2", "e": "f2",
	"float32": "f4", "single": "f4", "f": "f4",
	"float64": "f8", "double": "f8", "float": "f8", "float_": "f8", "d": "f8",
	"complex64": "c8", "csingle": "c8", "singlecomplex": "c8", "F": "c8",
	"complex128": "c16", "cdouble": "c16", "complex": "c16", "complex_": "c16", "cfloat": "c16", "D": "c16",
	"datetime64": "M8", "timedelta64": "m8", "M": "M8", "m": "m8",
	"c": "S1",
	// Flexible types without a size, and types this package refuses, so
	// that the error says why.
	"S": "S0", "a": "S0", "U": "U0", "V": "V0", "str": "U0", "bytes": "S0", "unicode": "U0", "void": "V0",
	"string_": "S0", "bytes_": "S0", "str_": "U0", "unicode_": "U0",
	"O": "O8", "object": "O8", "object_": "O8",
	"g": "f16", "longdouble": "f16", "float128": "f16", "G": "c32", "clongdouble": "c32", "complex256": "c32",
}

// ParseDType reads a dtype as NumPy's dtype() reads a string: "<f8",
// "float64", ">i4", "datetime64[s]", "S5", "<U3", or "i4,f8" (fields f0,
// f1). Object and long double types are refused.
func ParseDType(s string) (DType, error) {
	if strings.IndexByte(s, ',') >= 0 {
		return parseCommaDescr(pyValue{kind: pyStr, s: s})
	}
	return parseDTypeString(s)
}

// parseDTypeString parses a simple descr the way numpy.dtype reads a
// string: an optional byte-order character (< > | =) and a type code
// (f8, S5, M8[s]), or a type name (float64, datetime64[s], bool).
func parseDTypeString(s string) (DType, error) {
	bad := func() error { return fmt.Errorf("%w: data type %s not understood", ErrHeader, pyRepr(s)) }
	rest := s
	order := byte(0)
	if rest != "" && strings.IndexByte("<>|=", rest[0]) >= 0 {
		order, rest = rest[0], rest[1:]
	}
	unit := ""
	hasUnit := false
	if i := strings.IndexByte(rest, '['); i >= 0 {
		if !strings.HasSuffix(rest, "]") {
			return DType{}, bad()
		}
		unit, rest, hasUnit = rest[i+1:len(rest)-1], rest[:i], true
		if unit == "generic" {
			unit = ""
		}
	}
	if code, ok := dtypeNames[rest]; ok && (order == 0 || len(rest) == 1) {
		rest = code
	} else if rest == "" || strings.IndexByte("biufcSaUVOMm", rest[0]) < 0 {
		return DType{}, bad()
	}
	kind := rest[0]
	num := rest[1:]
	if kind == 'M' || kind == 'm' {
		if num == "" {
			num = "8"
		}
	} else if hasUnit {
		return DType{}, bad()
	}
	num = strings.TrimPrefix(num, "+")
	if num == "" {
		return DType{}, bad()
	}
	n := 0
	for _, c := range []byte(num) {
		if !isDigit(c) {
			return DType{}, bad()
		}
		if n = n*10 + int(c-'0'); n > math.MaxInt32 {
			return DType{}, fmt.Errorf("%w: data type %s: item size too large", ErrHeader, pyRepr(s))
		}
	}
	if kind == 'a' {
		kind = 'S'
	}
	d := DType{Kind: kind, ItemSize: n, Unit: unit, BigEndian: order == '>' || (order != '<' && layout.HostOrder() == binary.BigEndian)}
	switch {
	case kind == 'O':
		return DType{}, fmt.Errorf("descr %s: %w", pyRepr(s), ErrObject)
	case kind == 'U':
		if n > math.MaxInt32/4 {
			return DType{}, fmt.Errorf("%w: data type %s: item size too large", ErrHeader, pyRepr(s))
		}
		d.ItemSize = 4 * n
	case kind == 'f' && n == 16, kind == 'c' && n == 32:
		return DType{}, fmt.Errorf("descr %s: long double, whose layout depends on the platform that wrote it: %w", pyRepr(s), errors.ErrUnsupported)
	case (kind == 'S' || kind == 'V') && n == 0:
		return DType{}, fmt.Errorf("descr %s: zero-size items: %w", pyRepr(s), errors.ErrUnsupported)
	}
	if kind == 'U' && n == 0 {
		return DType{}, fmt.Errorf("descr %s: zero-size items: %w", pyRepr(s), errors.ErrUnsupported)
	}
	if d.swapSize() <= 1 {
		d.BigEndian = false
	}
	if err := d.check(); err != nil {
		if (kind == 'M' || kind == 'm') && n == 8 {
			return DType{}, fmt.Errorf("%w: data type %s: unknown datetime unit %q", ErrHeader, pyRepr(s), unit)
		}
		return DType{}, bad()
	}
	return d, nil
}

// parseDescr turns the header's 'descr' value into a DType.
func parseDescr(v pyValue) (DType, error) {
	return parseDescrAt(v, 0)
}

// descrError is an error about part of a descr, at its position in the
// header.
type descrError struct {
	pos int
	err error
}

func (e *descrError) Error() string { return e.err.Error() }
func (e *descrError) Unwrap() error { return e.err }

func parseDescrAt(v pyValue, depth int) (DType, error) {
	at := func(v pyValue, err error) error { return &descrError{pos: v.pos, err: err} }
	switch v.kind {
	case pyStr:
		if strings.IndexByte(v.s, ',') >= 0 && depth == 0 {
			return parseCommaDescr(v)
		}
		d, err := parseDTypeString(v.s)
		if err != nil {
			return DType{}, at(v, err)
		}
		return d, nil
	case pyList:
		if depth > 0 && depth >= maxDepth {
			return DType{}, at(v, fmt.Errorf("%w: structured dtypes nested too deep", ErrHeader))
		}
		d := DType{Fields: make([]Field, 0, len(v.items))}
		seen := make(map[string]bool, len(v.items))
		off := 0
		for _, fv := range v.items {
			f, next, pad, err := fieldOf(fv, off, depth)
			if err != nil {
				return DType{}, err
			}
			off = next
			if pad {
				continue
			}
			if err := checkUnique(seen, &f, fv.items[0].pos); err != nil {
				return DType{}, err
			}
			d.Fields = append(d.Fields, f)
		}
		d.ItemSize = off
		if len(d.Fields) == 0 && off == 0 {
			return DType{}, at(v, fmt.Errorf("%w: a structured dtype with no fields", ErrHeader))
		}
		if len(d.Fields) == 0 {
			// Only padding: NumPy makes it a void of that size.
			return DType{Kind: 'V', ItemSize: off}, nil
		}
		return d, nil
	case pyTuple:
		return DType{}, at(v, fmt.Errorf("descr %s: a subarray dtype as the whole array's type: %w", "(…)", errors.ErrUnsupported))
	}
	return DType{}, at(v, fmt.Errorf("%w: descr is a %s, not a dtype descriptor", ErrHeader, v.kind))
}

// fieldOf reads fv, one field of a structured descr at nesting depth
// depth: (name, descr) or (name, descr, shape), at byte offset off of an
// element. next is the offset after it; pad: it is padding (a void field
// without a name), which takes room and is no field.
func fieldOf(fv pyValue, off, depth int) (f Field, next int, pad bool, err error) {
	at := func(v pyValue, err error) error { return &descrError{pos: v.pos, err: err} }
	if fv.kind != pyTuple && fv.kind != pyList || len(fv.items) < 2 || len(fv.items) > 3 {
		return f, 0, false, at(fv, fmt.Errorf("%w: a field must be (name, descr) or (name, descr, shape)", ErrHeader))
	}
	nv := fv.items[0]
	switch {
	case nv.kind == pyStr:
		f.Name = nv.s
	case nv.kind == pyTuple && len(nv.items) == 2 && nv.items[0].kind == pyStr && nv.items[1].kind == pyStr:
		f.Title, f.Name = nv.items[0].s, nv.items[1].s
	default:
		return f, 0, false, at(nv, fmt.Errorf("%w: a field name must be a str or a (title, name) tuple", ErrHeader))
	}
	fd, err := parseDescrAt(fv.items[1], depth+1)
	if err != nil {
		return f, 0, false, err
	}
	f.DType = fd
	size := int64(fd.ItemSize)
	if len(fv.items) == 3 {
		sv := fv.items[2]
		var dims []pyValue
		switch sv.kind {
		case pyInt:
			dims = []pyValue{sv}
		case pyTuple, pyList:
			dims = sv.items
		default:
			return f, 0, false, at(sv, fmt.Errorf("%w: a field's shape must be an int or a tuple of ints", ErrHeader))
		}
		if len(dims) > MaxRank {
			return f, 0, false, at(sv, fmt.Errorf("%w: a field's shape has %d dimensions; NumPy arrays have at most %d", ErrHeader, len(dims), MaxRank))
		}
		if len(dims) > 0 { // (name, descr, ()) is a scalar field
			f.Shape = make([]int64, 0, len(dims))
		}
		for _, dv := range dims {
			if dv.kind != pyInt || dv.overflow || dv.i < 0 {
				return f, 0, false, at(dv, fmt.Errorf("%w: invalid subarray dimension", ErrHeader))
			}
			f.Shape = append(f.Shape, dv.i)
			var ok bool
			if size, ok = layout.Mul(size, dv.i); !ok || size > math.MaxInt32 {
				return f, 0, false, at(dv, fmt.Errorf("field %q: subarray size %w", f.Name, layout.ErrOverflow))
			}
		}
	}
	f.Offset = off
	if next = off + int(size); next > math.MaxInt32 {
		return f, 0, false, at(fv, fmt.Errorf("structured item size %w", layout.ErrOverflow))
	}
	return f, next, f.Name == "" && fd.Kind == 'V', nil
}

// checkUnique refuses a field whose name or title an earlier field of
// seen has taken (its name's literal at pos), and adds its own.
func checkUnique(seen map[string]bool, f *Field, pos int) error {
	if seen[f.Name] || (f.Title != "" && seen[f.Title]) {
		return &descrError{pos: pos, err: fmt.Errorf("%w: field name %s is used twice", ErrHeader, pyRepr(f.Name))}
	}
	seen[f.Name] = true
	if f.Title != "" {
		seen[f.Title] = true
	}
	return nil
}

// parseCommaDescr reads NumPy's comma-separated dtype strings ('i4,f8'):
// a structured type whose fields are named f0, f1, … (fields with shapes,
// '(2,)i4', are not read).
func parseCommaDescr(v pyValue) (DType, error) {
	var d DType
	for i, part := range strings.Split(v.s, ",") {
		part = strings.TrimSpace(part)
		if part == "" && i > 0 {
			continue // a trailing comma
		}
		fd, err := parseDTypeString(part)
		if err != nil {
			return DType{}, &descrError{pos: v.pos, err: err}
		}
		d.Fields = append(d.Fields, Field{Name: "f" + strconv.Itoa(len(d.Fields)), Offset: d.ItemSize, DType: fd})
		if d.ItemSize += fd.ItemSize; d.ItemSize > math.MaxInt32 {
			return DType{}, &descrError{pos: v.pos, err: fmt.Errorf("structured item size %w", layout.ErrOverflow)}
		}
	}
	return d, nil
}

// pyRepr is Python 3's repr of a str: single quotes unless the text holds
// a single quote and no double quote; \\, the quote, \t \n \r and other
// non-printable characters escaped.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f || isPrintable(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// isPrintable is Python's str.isprintable for one character: letters,
// marks, numbers, punctuation, symbols and the ASCII space.
func isPrintable(r rune) bool { return unicode.IsPrint(r) }
