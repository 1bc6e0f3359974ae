package scidb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	format.Register(format.Format{
		Name:        "scidb",
		Description: "SciDB binary load/save files: cells laid out by a format string such as '(int64, double null, string)'",
		Extensions:  []string{".scidb"},
		// Never sniffed: the files have no header.
		Open: func(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
			so, err := optionsFrom(path, o)
			if err != nil {
				return nil, err
			}
			return OpenFile(path, mode, so)
		},
		Write:       Write,
		Encode:      EncodeSource,
		ParseParams: parseParams,
		Params: []format.Param{
			{Name: "scidb-format", Implies: true, Required: true,
				Usage: "the format string of the file's cells, e.g. '(int64, double null, string)' (SciDB files have no header; giving it says the file is SciDB's)"},
			{Name: "scidb-names", Usage: "the attributes' names, comma-separated (default a0, a1, …)"},
			{Name: "out-scidb-format", Write: true,
				Usage: "the format string to write (default: the input's SciDB types, else one derived from the column types)"},
		},
	})
}

// parseParams parses the format string of reading (scidb-format) or of
// writing (out-scidb-format): a *Schema, nil where it is not given.
// Names (scidb-names) are the file's to check, when it is opened.
func parseParams(p map[string]string, write bool) (any, error) {
	name := "scidb-format"
	if write {
		name = "out-scidb-format"
	}
	if s := p[name]; s != "" {
		return ParseFormat(s)
	}
	return nil, nil
}

// schemaParam returns a copy of the format string the options of reading
// or of writing (write) give, parsed, or nil: a copy, which a File or a
// writer may change.
func schemaParam(o *format.Options, write bool) (*Schema, error) {
	f, err := format.ParsedParams[*Schema](o, "scidb", write)
	if f == nil || err != nil {
		return nil, err
	}
	c := *f
	return &c, nil
}

// optionsFrom maps the format-neutral options (params scidb-format and
// scidb-names) onto this package's.
func optionsFrom(path string, o *format.Options) (*Options, error) {
	f, err := schemaParam(o, false)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, fileError(path, -1, ErrNoFormat, "the scidb-format parameter is missing")
	}
	if names := o.Param("scidb-names"); names != "" {
		if err := f.SetNames(strings.Split(names, ",")...); err != nil {
			return nil, fmt.Errorf("scidb-names: %w", err)
		}
	}
	so := &Options{Format: f, Lenient: o.Lenient, Salvage: o.Salvage}
	so.Options = o.Options
	return so, nil
}

// recordType is the layout type of an attribute's values as records carry
// it: bool, the integers and floats; Invalid for char, datetime,
// datetimetz, string and binary, whose values are read as text.
func recordType(c Column) layout.Type {
	if c.Width > 0 || c.Type == TypeChar || c.Type == TypeDatetime {
		return layout.Invalid
	}
	lt, _ := LayoutType(c.Type)
	return lt
}

// typeName is an entry's type as SciDB names it, without " null".
func typeName(c Column) string {
	c.Nullable = false
	return c.String()
}

// The methods below make a *File a format.File and a format.TableScanner:
// each attribute is a column record.

// Format returns "scidb".
func (m *File) Format() string { return "scidb" }

// Version returns "": SciDB files have no version.
func (m *File) Version() string { return "" }

// Records lists the attributes as columns: Type the layout type of bool,
// integer and floating attributes (Invalid for the others, read as text
// with ScanTable), TypeName the SciDB type ("int64", "string(10)",
// "datetime"), Nullable for "null" entries, Offset -1 (values are strided
// through the cells), Size the bytes of the values.
func (m *File) Records() []format.Record {
	m.recsOnce.Do(func() {
		arrays := m.arrays()
		m.recs = make([]format.Record, len(arrays))
		for a := range arrays {
			c := m.f.Attr(a)
			arrays[a].Type = recordType(c)
			m.recs[a] = format.Record{Array: arrays[a], Kind: format.KindColumn, TypeName: typeName(c), Nullable: c.Nullable}
		}
	})
	return m.recs
}

// Payload returns the reader of attribute i's values (format.Payloader):
// only a file whose cells are one non-nullable attribute of a layout type
// (int64 for datetime) holds them as one run; any other attribute is strided through its
// cells (errors.ErrUnsupported). A File from NewReader is not mapped: its
// values can be read, not viewed.
func (m *File) Payload(i int) (*format.Payload, error) {
	if err := m.use(); err != nil {
		return nil, err
	}
	recs := m.Records()
	if i < 0 || i >= len(recs) {
		return nil, fileError(m.path, -1, format.ErrNoRecord, "record %d of %d", i, len(recs))
	}
	c := m.f.Columns[m.f.Attrs[i]]
	lt, ok := LayoutType(c.Type)
	if len(m.f.Columns) != 1 || c.Nullable || !ok || c.Width > 0 {
		return nil, fileError(m.path, -1, errors.ErrUnsupported, "attribute %d (%s) is strided through cells of format %s, not one run of values; copy with Read", i, m.f.name(i), m.f)
	}
	return m.pays.Get(i, func() (*format.Payload, error) { return m.payload(&recs[i], lt), nil })
}

// payload builds the reader of the values of the file's one attribute,
// described by rec, whose values are of layout type lt.
func (m *File) payload(rec *format.Record, lt layout.Type) *format.Payload {
	p := &format.Payload{Array: rec.Array, Data: bytes.NewReader(m.data),
		Wrap: func(off int64, err error) error {
			e := fileError(m.path, off, err, "")
			e.Record = rec.Name
			return e
		}}
	// The values as their layout type (int64 for datetime seconds), from
	// the file's first byte.
	p.Array.Type, p.Array.Offset = lt, 0
	if m.region == nil {
		p.NoView = fileError(m.path, -1, errors.ErrUnsupported, "a File from NewReader is not mapped; copy with Read")
	} else {
		p.Data = m.region
	}
	return p
}

// formatState is the File's format-neutral state, built on first use.
type formatState struct {
	recsOnce sync.Once
	recs     []format.Record
	pays     format.Payloads
}

// ReadArray copies values [first, first+len(dst)/size) of attribute i, in
// byte order bo, into dst; nulls read as zeros (ScanTable gives them).
// Only attributes of layout types (bool, integers, floats) can be read so.
func (m *File) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if err := m.use(); err != nil {
		return err
	}
	recs := m.Records()
	if i < 0 || i >= len(recs) {
		return fileError(m.path, -1, format.ErrNoRecord, "record %d of %d", i, len(recs))
	}
	rec := &recs[i]
	if !rec.Type.Valid() {
		return fileError(m.path, -1, errors.ErrUnsupported, "attribute %q is %s: read it as text with ScanTable", rec.Name, rec.TypeName)
	}
	size := rec.Type.Size()
	n := int64(len(dst)) / int64(size)
	if end, ok := layout.Add(first, n); len(dst)%size != 0 || first < 0 || !ok || end > m.n {
		return fileError(m.path, -1, mmapfile.ErrOutOfRange, "attribute %q: %d bytes from value %d: outside [0, %d) or not whole %s values", rec.Name, len(dst), first, m.n, rec.Type)
	}
	if err := m.copyValues(m.f.Attrs[i], first, dst); err != nil {
		return err
	}
	layout.SwapOrder(dst, rec.Type, binary.LittleEndian, bo)
	return nil
}

// ScanTable calls fn with batches of at most batch cells: each attribute's
// values as []T of its layout type, or []string of the values as SciDB
// prints them (datetime "2019-01-31 13:45:00", datetimetz with its offset,
// char and string as their bytes, binary as 0x… hex), and for nullable
// attributes the missing reason of each null (-1 where present; nulls are
// zero values and "").
func (m *File) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	if err := m.use(); err != nil {
		return err
	}
	if batch <= 0 {
		batch = 1 << 16
	}
	batch = int(min(int64(batch), max(m.n, 1)))
	out := make([]format.Column, len(m.f.Attrs))
	texts := make([][]string, len(m.f.Attrs))
	var t *Table
	if m.stride > 0 {
		var err error
		if t, err = NewTable(m.f, batch); err != nil {
			return err
		}
	}
	spans := make([]span, len(m.f.Columns))
	pos := 0
	for first := int64(0); first < m.n; first += int64(batch) {
		k := int(min(int64(batch), m.n-first))
		if m.stride > 0 {
			if _, err := m.DecodeInto(t, first); err != nil {
				return err
			}
		} else {
			var derr error
			err := m.guard(func() {
				end := pos
				for c := 0; c < k; c++ {
					end, _ = m.f.scanCell(m.data, end, first+int64(c), 0, false, spans)
				}
				t, derr = decodeVar(m.data[pos:end], m.f, false, first)
				pos = end
			})
			if err == nil {
				err = derr
			}
			if err != nil {
				return withFile(err, m.path)
			}
		}
		for a := range out {
			col := &t.Cols[a]
			out[a] = format.Column{Values: col.Data, Reason: col.Reason}
			if recordType(col.Column).Valid() {
				continue
			}
			if cap(texts[a]) < k {
				texts[a] = make([]string, k)
			}
			s := texts[a][:k]
			for r := range s {
				s[r] = t.Value(r, a).Text(col.Column)
			}
			out[a].Values = s
		}
		if err := fn(first, out); err != nil {
			return err
		}
	}
	return nil
}

// SetText changes attribute i of cell idx[0] in place to value: a Futhark
// literal for bool, integer and floating attributes ("42", "0x1f",
// "-1.5e3", "inf", "true"), SciDB's text for the others (ParseText), and
// for a nullable attribute "null", `\N` or "?N" (reason N) for a null. The
// format must be fixed-size and the file opened read-write.
func (m *File) SetText(i int, idx []int64, value string) error {
	if err := m.use(); err != nil {
		return err
	}
	if i < 0 || i >= len(m.f.Attrs) {
		return fileError(m.path, -1, format.ErrNoRecord, "record %d of %d", i, len(m.f.Attrs))
	}
	if err := m.checkCell(i, idx); err != nil {
		return err
	}
	c := m.f.Attr(i)
	v, err := parseCell(c, value)
	if err != nil {
		return fileError(m.path, -1, err, "attribute %q", m.f.name(i))
	}
	return m.SetValue(idx[0], i, v)
}

// parseCell parses value for entry c: a null's text, a Futhark literal of
// the layout type, or SciDB's text.
func parseCell(c Column, value string) (Value, error) {
	if c.Nullable {
		if r, ok, err := parseNull(value, c.Type == TypeString); err != nil {
			return Value{}, err
		} else if ok {
			return NullValue(r), nil
		}
	}
	if lt := recordType(c); lt.Valid() {
		b, err := format.ParseLiteral(lt, value, binary.LittleEndian)
		if err != nil {
			return Value{}, err
		}
		return copiedValue(b), nil
	}
	return ParseText(c, value)
}

// Write writes the table of src (columns, or equal-length 1-D arrays) to
// path as SciDB cells, through a temporary file renamed into place (a
// failed write leaves the file as it was). See EncodeSource for the format
// string.
func Write(path string, src format.Source, o *format.Options) error {
	if err := checkSource(src); err != nil {
		return err
	}
	return atomicfile.Write(path, 0, func(f *os.File) error {
		return withFile(EncodeSource(f, src, o), path)
	})
}

func checkSource(src format.Source) error {
	recs := src.Records()
	if len(recs) == 0 {
		return fmt.Errorf("scidb: no records to write: %w", format.ErrNotRepresentable)
	}
	if _, ok := src.(format.TableScanner); ok || format.IsTable(src) {
		return nil
	}
	for i := range recs {
		if len(recs[i].Shape) != 1 {
			return format.Unrepresentable(&recs[i], "a SciDB file holds 1-D attributes of one length")
		}
	}
	return format.Unrepresentable(&recs[0], "a SciDB file holds attributes of one length")
}

// EncodeSource writes the table of src as SciDB cells to w, in the format
// the parameter "out-scidb-format" gives; else, for a SciDB File, its own
// format; else each column's SciDB type where it has one (a column read
// from a SciDB file keeps its type), else
// one derived from its layout type (int64, double, …; text columns are
// string; a nullable column's entry is nullable). 64-bit integer and
// floating columns (what a CSV file gives) are narrowed to the entry's
// type when every value fits; a column stored as text (CSV) whose
// inferred type the entry cannot take is parsed from its text as the
// entry's type ("007" for a string entry, 9223372036854775808 for
// uint64). Nulls go to "null" entries with their
// reasons; a column the format cannot hold is an error naming it.
func EncodeSource(w io.Writer, src format.Source, o *format.Options) error {
	if err := checkSource(src); err != nil {
		return err
	}
	cols := format.TableColumns(src)
	f, err := schemaParam(o, true)
	if err != nil {
		return err
	}
	if f == nil {
		var spec string
		if sf, ok := src.(*File); ok {
			spec = sf.f.String() // skips included
		} else {
			parts := make([]string, len(cols))
			for i := range cols {
				t, err := entryFor(&cols[i])
				if err != nil {
					return err
				}
				parts[i] = t
			}
			spec = "(" + strings.Join(parts, ", ") + ")"
		}
		if f, err = ParseFormat(spec); err != nil {
			return err
		}
		o.Choose("out-scidb-format", f.String())
	}
	if f.NumAttrs() != len(cols) {
		return fmt.Errorf("scidb: the format %s has %d attributes, the table %d columns: %w", f, f.NumAttrs(), len(cols), format.ErrNotRepresentable)
	}
	names := make([]string, len(cols))
	conv := make([]converter, len(cols))
	text := make([]bool, len(cols))
	hasText := format.HasText(src)
	for a := range cols {
		names[a] = cols[a].Name
		conv[a], err = converterFor(&cols[a], f.Attr(a))
		if err != nil && hasText && errors.Is(err, format.ErrNotRepresentable) {
			// A column stored as text (CSV) whose inferred type is not
			// the entry's ("007" inferred i64 for a string entry,
			// 2^63 inferred f64 for uint64): its text, parsed as the
			// entry's type.
			conv[a], text[a], err = textConverter(f.Attr(a)), true, nil
		}
		if err != nil {
			return err
		}
	}
	// The source's names, for messages only: a SciDB file stores none,
	// so a source whose names repeat (a frame's labels) still converts.
	f.Names = names
	enc := NewEncoder(w, f)
	if m, ok := src.(*File); ok && sameValues(m.f, f) {
		// Cell by cell, the stored bytes: exact whatever the values.
		if err := m.encodeTo(enc); err != nil {
			return err
		}
		return enc.Flush()
	}
	row := make(Row, len(cols))
	err = format.ScanTableText(src, 4096, text, func(first int64, cs []format.Column) error {
		n := reflect.ValueOf(cs[0].Values).Len()
		for k := 0; k < n; k++ {
			for a := range row {
				c := &cs[a]
				if c.Reason != nil && c.Reason[k] >= 0 {
					row[a] = NullValue(c.Reason[k])
					continue
				}
				v, err := conv[a](c.Values, k)
				if err != nil {
					return fmt.Errorf("scidb: column %q, row %d: %w", names[a], first+int64(k), err)
				}
				row[a] = v
			}
			if err := enc.Write(row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return enc.Flush()
}

// sameValues reports whether every attribute of g holds the values of f's
// as they are stored: the same type and width, nullable if f's is.
func sameValues(f, g *Schema) bool {
	if f.NumAttrs() != g.NumAttrs() {
		return false
	}
	for a := range f.Attrs {
		c, d := f.Attr(a), g.Attr(a)
		if c.Type != d.Type || c.Width != d.Width || c.Nullable && !d.Nullable {
			return false
		}
	}
	return true
}

// encodeTo writes every cell of m to enc.
func (m *File) encodeTo(enc *Encoder) error {
	if err := m.use(); err != nil {
		return err
	}
	var werr error
	err := m.guard(func() {
		spans := make([]span, len(m.f.Columns))
		row := make(Row, len(m.f.Attrs))
		pos := 0
		for i := int64(0); i < m.n; i++ {
			pos, _ = m.f.scanCell(m.data, pos, i, 0, false, spans) // checked at open
			for a, ci := range m.f.Attrs {
				if sp := spans[ci]; sp.prefix >= 0 {
					row[a] = NullValue(sp.prefix)
				} else {
					row[a] = RawValue(stored(&m.f.Columns[ci], m.data[sp.start:sp.end]))
				}
			}
			if werr = enc.Write(row); werr != nil {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return werr
}

// entryFor names the SciDB entry for a column without out-scidb-format.
func entryFor(c *format.Record) (string, error) {
	t := ""
	if e, err := ParseFormat("(" + c.TypeName + ")"); c.TypeName != "" && err == nil && len(e.Columns) == 1 && e.Columns[0].Type != TypeSkip && !e.Columns[0].Nullable {
		t = c.TypeName
	} else {
		switch typ := c.Type; {
		case typ == layout.Bool:
			t = "bool"
		case typ.IsSigned() && typ.Size() <= 8:
			t = fmt.Sprintf("int%d", typ.Size()*8)
		case typ.IsUnsigned() && typ.Size() <= 8:
			t = fmt.Sprintf("uint%d", typ.Size()*8)
		case typ == layout.F32:
			t = "float"
		case typ == layout.F64:
			t = "double"
		case typ == layout.Invalid:
			t = "string"
		default:
			return "", format.Unrepresentable(c, "SciDB has no type for "+c.TypeString())
		}
	}
	if c.Nullable {
		t += " null"
	}
	return t, nil
}

// converter turns value k of a batch's column into a Value of an entry.
type converter func(values any, k int) (Value, error)

// converterFor returns the converter from column c's values to entry e.
func converterFor(c *format.Record, e Column) (converter, error) {
	mismatch := func() error {
		return format.Unrepresentable(c, fmt.Sprintf("the SciDB entry %q needs %s values", e, e.Type))
	}
	if !c.Type.Valid() {
		return textConverter(e), nil
	}
	lt, ok := LayoutType(e.Type)
	if !ok || e.Width > 0 {
		return nil, mismatch()
	}
	size := c.Type.Size()
	if c.Type == lt {
		// The same bytes: char takes u8, datetime i64 seconds.
		return func(values any, k int) (Value, error) {
			_, b, _ := layout.BytesOf(values)
			v := b[k*size : (k+1)*size]
			if !layout.IsHostOrder(binary.LittleEndian) {
				var le [16]byte
				copy(le[:], v)
				layout.SwapOrder(le[:size], c.Type, layout.HostOrder(), binary.LittleEndian)
				v = le[:size]
			}
			return copiedValue(v), nil
		}, nil
	}
	if e.Type == TypeChar || e.Type == TypeDatetime || e.Type == TypeBool {
		return nil, mismatch()
	}
	// CSV-like columns: i64 to any integer or floating entry, f64 to a
	// floating one, value by value, failing on the first that does not
	// fit.
	switch {
	case c.Type == layout.I64:
		return func(values any, k int) (Value, error) {
			x := values.([]int64)[k]
			return narrowInt(x, lt)
		}, nil
	case c.Type == layout.F64 && lt == layout.F32:
		return func(values any, k int) (Value, error) {
			return Float32Value(float32(values.([]float64)[k])), nil
		}, nil
	}
	return nil, mismatch()
}

// textConverter parses a text column's values as SciDB's text of entry e.
func textConverter(e Column) converter {
	return func(values any, k int) (Value, error) {
		s, ok := values.([]string)
		if !ok {
			return Value{}, fmt.Errorf("values %T, not text", values)
		}
		return ParseText(e, s[k])
	}
}

// narrowInt returns x as a value of layout type t, or an error when it
// does not fit.
func narrowInt(x int64, t layout.Type) (Value, error) {
	bits := t.Size() * 8
	switch {
	case t.IsSigned():
		if bits < 64 && (x < -1<<(bits-1) || x >= 1<<(bits-1)) {
			return Value{}, fmt.Errorf("%d does not fit %s: %w", x, t, ErrWidth)
		}
		return fixedValue(t.Size(), uint64(x)), nil
	case t.IsUnsigned():
		if x < 0 || bits < 64 && x >= 1<<bits {
			return Value{}, fmt.Errorf("%d does not fit %s: %w", x, t, ErrWidth)
		}
		return fixedValue(t.Size(), uint64(x)), nil
	case t == layout.F32:
		return Float32Value(float32(x)), nil
	case t == layout.F64:
		return Float64Value(float64(x)), nil
	}
	return Value{}, fmt.Errorf("no %s from an integer: %w", t, mmapfile.ErrTypeMismatch)
}

var (
	_ format.File         = (*File)(nil)
	_ format.TableScanner = (*File)(nil)
	_ format.Setter       = (*File)(nil)
)
