package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/scidb"
)

func init() {
	openers["scidb"] = openSciDB
	writers["scidb"] = writeSciDB
}

// parseSciDBFormat parses --scidb-format and --scidb-names; errors are
// usage errors (exit 2).
func parseSciDBFormat(path, s string, names []string) (*scidb.Format, error) {
	f, err := scidb.ParseFormat(s)
	if err != nil {
		return nil, fileUsageErr(path, err)
	}
	if names != nil {
		if err := f.SetNames(names...); err != nil {
			return nil, fileUsageErr(path, fmt.Errorf("--scidb-names: %w", err))
		}
	}
	return f, nil
}

// openSciDB opens a SciDB binary file described by --scidb-format as one
// table. One streaming pass counts the cells (and validates them).
func openSciDB(e *env, path string, o *openOptions) (*source, error) {
	sf, err := parseSciDBFormat(path, o.scidbFormat, o.scidbNames)
	if err != nil {
		return nil, err
	}
	nattr := sf.NumAttrs()
	nbytes := make([]int64, nattr)
	var rows int64
	err = scanSciDB(path, sf, func(row scidb.Row) error {
		for i, v := range row {
			if !v.Null {
				nbytes[i] += int64(len(v.Raw))
			}
		}
		rows++
		return nil
	})
	if err != nil {
		return nil, err
	}
	cols := make([]column, nattr)
	for i := 0; i < nattr; i++ {
		c := sf.Attr(i)
		lt, _ := scidb.LayoutType(c.Type)
		cols[i] = column{name: sf.Names[i], typeName: c.String(), elem: lt, nullable: c.Nullable, offset: -1, nbytes: nbytes[i]}
		if c.Nullable {
			cols[i].typeName = strings.TrimSuffix(cols[i].typeName, " null")
		}
	}
	t := &table{columns: cols, rows: rows, formatString: sf.String()}
	t.scan = func(fn func(row []cell) error) error {
		out := make([]cell, nattr)
		return scanSciDB(path, sf, func(row scidb.Row) error {
			for i, v := range row {
				out[i] = cell{null: v.Null}
				if !v.Null {
					out[i].text = v.Text(sf.Attr(i))
				}
			}
			return fn(out)
		})
	}
	t.load = func() ([]columnData, error) { return loadSciDB(path, sf, cols) }
	s := &source{file: path, format: "scidb", records: []*record{{name: "", kind: kindTable, typeName: "table",
		shape: []int64{rows}, offset: -1, nbytes: -1, table: t}}}
	s.setter = func(r *record, col int, idx []int64, value string) error { return setSciDB(path, sf, col, idx, value) }
	return s, nil
}

// scanSciDB streams the cells of a file.
func scanSciDB(path string, sf *scidb.Format, fn func(row scidb.Row) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := scidb.NewDecoder(bufio.NewReaderSize(f, 256<<10), &scidb.Options{Format: sf, Lenient: true})
	row := make(scidb.Row, sf.NumAttrs())
	for {
		if err := r.Read(row); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}

// loadSciDB decodes the whole file into columns.
func loadSciDB(path string, sf *scidb.Format, cols []column) ([]columnData, error) {
	t, err := scidb.DecodeFile(path, &scidb.Options{Format: sf, Lenient: true})
	if err != nil {
		return nil, err
	}
	out := make([]columnData, len(t.Cols))
	for i, c := range t.Cols {
		d := columnData{column: cols[i], scidbType: c.Column.Type.String(), values: c.Data, reason: c.Reason}
		switch v := c.Data.(type) {
		case []scidb.Datetime:
			s := make([]int64, len(v))
			for k, x := range v {
				s[k] = int64(x)
			}
			d.values = s
		case []scidb.DatetimeTZ:
			s := make([][2]int64, len(v))
			for k, x := range v {
				s[k] = [2]int64{x.Local, x.Offset}
			}
			d.values = s
		}
		out[i] = d
	}
	return out, nil
}

// setSciDB changes attribute col of cell idx[0] in place (fixed-size
// formats only).
func setSciDB(path string, sf *scidb.Format, col int, idx []int64, value string) error {
	if len(idx) != 1 {
		return fmt.Errorf("a SciDB attribute is 1-D: the index is [cell], got %d components", len(idx))
	}
	v, err := scidb.ParseText(sf.Attr(col), value)
	if err != nil {
		return fmt.Errorf("attribute %q: %w", sf.Names[col], err)
	}
	m, err := scidb.OpenFile(path, mmapfile.ReadWrite, &scidb.Options{Format: sf, Lenient: true})
	if err != nil {
		return err
	}
	if idx[0] >= m.Len() {
		m.Close()
		return fmt.Errorf("attribute %q: cell %d outside [0, %d)", sf.Names[col], idx[0], m.Len())
	}
	if err := m.SetValue(idx[0], col, v); err != nil {
		m.Close()
		return err
	}
	if err := m.Sync(); err != nil {
		m.Close()
		return err
	}
	return m.Close()
}

// scidbTypeOf names the SciDB type of a column that did not come from
// SciDB.
func scidbTypeOf(c *columnData) (string, error) {
	if c.scidbType != "" {
		return c.scidbType, nil
	}
	switch c.elem {
	case layout.Bool:
		return "bool", nil
	case layout.I8, layout.I16, layout.I32, layout.I64:
		return fmt.Sprintf("int%d", c.elem.Size()*8), nil
	case layout.U8, layout.U16, layout.U32, layout.U64:
		return fmt.Sprintf("uint%d", c.elem.Size()*8), nil
	case layout.F32:
		return "float", nil
	case layout.F64:
		return "double", nil
	}
	if _, ok := c.values.([]string); ok {
		return "string", nil
	}
	return "", fmt.Errorf("column %q: SciDB has no type for %s", c.name, c.typeName)
}

// writeSciDB writes a table (or equal-length 1-D arrays) as a SciDB binary
// file, with --out-scidb-format, else the input's format string, else one
// derived from the column types.
func writeSciDB(e *env, path string, ds *dataset, o *convertOptions) error {
	cols, err := ds.asTable()
	if err != nil {
		return err
	}
	spec := o.outScidbFmt
	if spec == "" {
		spec = ds.scidbFormat
	}
	if spec == "" {
		parts := make([]string, len(cols))
		for i := range cols {
			t, err := scidbTypeOf(&cols[i])
			if err != nil {
				return err
			}
			if cols[i].reason != nil {
				t += " null"
			}
			parts[i] = t
		}
		spec = "(" + strings.Join(parts, ", ") + ")"
	}
	sf, err := scidb.ParseFormat(spec)
	if err != nil {
		return err
	}
	if sf.NumAttrs() != len(cols) {
		return fmt.Errorf("the SciDB format %s has %d attributes, the input %d columns", sf, sf.NumAttrs(), len(cols))
	}
	names := make([]string, len(cols))
	t := &scidb.Table{Format: sf, Cols: make([]scidb.Col, len(cols))}
	for i := range cols {
		c := &cols[i]
		names[i] = c.name
		entry := sf.Attr(i)
		data, err := scidbData(c, entry)
		if err != nil {
			return err
		}
		n := lenOf(c.values)
		t.Len = n
		col := scidb.Col{Name: c.name, Column: entry, Data: data}
		if entry.Nullable {
			col.Null = make([]bool, n)
			col.Reason = make([]int8, n)
			for k := range col.Reason {
				col.Reason[k] = -1
				if c.reason != nil && c.reason[k] >= 0 {
					col.Null[k], col.Reason[k] = true, c.reason[k]
				}
			}
		} else if c.reason != nil {
			for k, r := range c.reason {
				if r >= 0 {
					return fmt.Errorf("column %q: row %d is null, but the SciDB entry %q is not nullable", c.name, k, entry)
				}
			}
		}
		t.Cols[i] = col
	}
	if err := sf.SetNames(names...); err != nil {
		return err
	}
	return scidb.EncodeFile(path, t)
}

// scidbData returns a column's values as the Go type the entry's SciDB type
// needs.
func scidbData(c *columnData, entry scidb.Column) (any, error) {
	want := scidb.GoType(entry.Type)
	switch v := c.values.(type) {
	case []int64:
		if entry.Type == scidb.TypeDatetime && (c.scidbType == "datetime" || c.scidbType == "") {
			s := make([]scidb.Datetime, len(v))
			for k, x := range v {
				s[k] = scidb.Datetime(x)
			}
			return s, nil
		}
	case [][2]int64:
		if entry.Type == scidb.TypeDatetimeTZ {
			s := make([]scidb.DatetimeTZ, len(v))
			for k, x := range v {
				s[k] = scidb.DatetimeTZ{Local: x[0], Offset: x[1]}
			}
			return s, nil
		}
	}
	if c.scidbType == "" {
		// CSV columns are inferred as i64 or f64: narrow them to the entry's
		// type when every value fits.
		if v, ok, err := narrow(c, entry); ok || err != nil {
			return v, err
		}
	}
	if got := fmt.Sprintf("%T", c.values); got == want || (got == "[]uint8" && want == "[]byte") {
		if entry.Type == scidb.TypeChar && c.scidbType != "char" || entry.Type == scidb.TypeUint8 && c.scidbType == "char" {
			return nil, typeMismatch(c, entry)
		}
		return c.values, nil
	}
	return nil, typeMismatch(c, entry)
}

func typeMismatch(c *columnData, entry scidb.Column) error {
	t := c.scidbType
	if t == "" {
		t = c.typeName
	}
	return fmt.Errorf("column %q is %s; the SciDB entry %q needs %s", c.name, t, entry, scidb.GoType(entry.Type))
}

// narrow converts an i64 or f64 column to the numeric type of entry,
// failing on the first value that does not fit; ok is false when no
// conversion applies.
func narrow(c *columnData, entry scidb.Column) (any, bool, error) {
	lt, ok := scidb.LayoutType(entry.Type)
	if !ok || entry.Type == scidb.TypeChar || entry.Type == scidb.TypeDatetime || lt == c.elem {
		return nil, false, nil
	}
	var vals []float64
	var ints []int64
	switch v := c.values.(type) {
	case []int64:
		ints = v
	case []float64:
		if !lt.IsFloat() {
			return nil, false, nil
		}
		vals = v
	default:
		return nil, false, nil
	}
	n := max(len(ints), len(vals))
	out := alignedBytes(int64(n * lt.Size()))
	for k := 0; k < n; k++ {
		if c.reason != nil && c.reason[k] >= 0 {
			continue
		}
		var text string
		if ints != nil {
			text = strconv.FormatInt(ints[k], 10)
		} else {
			text = strconv.FormatFloat(vals[k], 'g', -1, 64)
		}
		b, err := encodeValue(lt, text, hostOrder)
		if err != nil {
			return nil, true, fmt.Errorf("column %q, row %d: %w", c.name, k, err)
		}
		copy(out[k*lt.Size():], b)
	}
	return typedSlice(lt, out), true, nil
}
