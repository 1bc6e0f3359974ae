package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// csvWriter writes RFC 4180 CSV: fields quoted when they hold a comma, a
// quote, CR or LF (quotes doubled), or when they are an empty string, so
// that an empty field always means null. Lines end in LF, as encoding/csv
// writes them by default.
type csvWriter struct {
	w   *bufio.Writer
	buf []byte
}

func newCSVWriter(w io.Writer) *csvWriter {
	return &csvWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// writeRow writes one line.
func (c *csvWriter) writeRow(cells []cell) error {
	b := c.buf[:0]
	for i, f := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		if f.null {
			continue
		}
		b = appendCSVField(b, f.text)
	}
	b = append(b, '\n')
	c.buf = b
	_, err := c.w.Write(b)
	return err
}

// writeHeader writes the header line of column names.
func (c *csvWriter) writeHeader(names []string) error {
	cells := make([]cell, len(names))
	for i, n := range names {
		cells[i] = cell{text: n}
	}
	return c.writeRow(cells)
}

func (c *csvWriter) flush() error { return c.w.Flush() }

// appendCSVField appends s, quoted if RFC 4180 needs it or s is empty.
func appendCSVField(b []byte, s string) []byte {
	if s != "" && !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// formatCSVValue formats one element of a layout type as a CSV field:
// integers in decimal, floats in Go's shortest round-trip form, bools as
// true/false. b holds the element in host byte order.
func formatCSVValue(t layout.Type, b []byte) string {
	switch t {
	case layout.I8:
		return strconv.FormatInt(int64(int8(b[0])), 10)
	case layout.U8:
		return strconv.FormatUint(uint64(b[0]), 10)
	case layout.Bool:
		return strconv.FormatBool(b[0] != 0)
	case layout.I16:
		return strconv.FormatInt(int64(int16(hostOrder.Uint16(b))), 10)
	case layout.U16:
		return strconv.FormatUint(uint64(hostOrder.Uint16(b)), 10)
	case layout.I32:
		return strconv.FormatInt(int64(int32(hostOrder.Uint32(b))), 10)
	case layout.U32:
		return strconv.FormatUint(uint64(hostOrder.Uint32(b)), 10)
	case layout.I64:
		return strconv.FormatInt(int64(hostOrder.Uint64(b)), 10)
	case layout.U64:
		return strconv.FormatUint(hostOrder.Uint64(b), 10)
	case layout.F16:
		return strconv.FormatFloat(float64(layout.Float16(hostOrder.Uint16(b)).Float32()), 'g', -1, 32)
	case layout.F32:
		return strconv.FormatFloat(float64(math.Float32frombits(hostOrder.Uint32(b))), 'g', -1, 32)
	case layout.F64:
		return strconv.FormatFloat(math.Float64frombits(hostOrder.Uint64(b)), 'g', -1, 64)
	case layout.I128:
		return layout.Int128{Lo: hostOrder.Uint64(b), Hi: int64(hostOrder.Uint64(b[8:]))}.String()
	case layout.U128:
		return layout.Uint128{Lo: hostOrder.Uint64(b), Hi: hostOrder.Uint64(b[8:])}.String()
	case layout.JuliaChar:
		return formatChar(layout.Char(hostOrder.Uint32(b)))
	}
	return ""
}

// formatChar gives a Julia Char's code point in decimal, or its raw bits
// (as Julia's reinterpret would show them) for an invalid Char.
func formatChar(c layout.Char) string {
	if r, err := c.Rune(); err == nil {
		return strconv.FormatUint(uint64(r), 10)
	}
	return strconv.FormatUint(uint64(c), 10)
}

// ---- CSV as an input format ----

// csvInfer infers a column type from its non-null fields: i64 if all are
// integers, else f64 if all are numbers, else bool if all are true/false,
// else string.
type csvInfer struct {
	isInt, isFloat, isBool, any bool
	nullable                    bool
}

func (c *csvInfer) add(f csvField) {
	s := f.text
	if f.null {
		c.nullable = true
		return
	}
	if !c.any {
		c.any = true
		c.isInt, c.isFloat, c.isBool = true, true, true
	}
	if c.isInt {
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			c.isInt = false
		}
	}
	if c.isFloat && !c.isInt {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			c.isFloat = false
		}
	}
	if c.isBool && s != "true" && s != "false" {
		c.isBool = false
	}
}

func (c *csvInfer) typ() (layout.Type, string) {
	switch {
	case !c.any:
		// No values at all (no rows, or only nulls): any type holds them;
		// f64 converts everywhere.
		return layout.F64, "f64"
	case c.isInt:
		return layout.I64, "i64"
	case c.isFloat:
		return layout.F64, "f64"
	case c.isBool:
		return layout.Bool, "bool"
	}
	return layout.Invalid, "string"
}

func init() { openers["csv"] = openCSV }

// openCSV opens a CSV file with a header line as a table. One streaming
// pass infers the column types.
func openCSV(e *env, path string, o *openOptions) (*source, error) {
	var header []string
	var infer []csvInfer
	var rows int64
	err := readCSV(path, func(line int, rec []csvField) error {
		if header == nil {
			for _, f := range rec {
				header = append(header, f.text)
			}
			infer = make([]csvInfer, len(rec))
			return nil
		}
		for i, f := range rec {
			infer[i].add(f)
		}
		rows++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if header == nil {
		return nil, errors.New("CSV file has no header line")
	}
	cols := make([]column, len(header))
	for i, name := range header {
		t, tn := infer[i].typ()
		cols[i] = column{name: name, typeName: tn, elem: t, nullable: infer[i].nullable, offset: -1, nbytes: -1}
	}
	t := &table{columns: cols, rows: rows}
	t.scan = func(fn func(row []cell) error) error {
		row := make([]cell, len(cols))
		first := true
		return readCSV(path, func(line int, rec []csvField) error {
			if first {
				first = false
				return nil
			}
			for i, fl := range rec {
				f := fl.text
				row[i] = cell{null: fl.null}
				if fl.null {
					continue
				}
				switch cols[i].elem {
				case layout.I64:
					v, _ := strconv.ParseInt(f, 10, 64)
					row[i].text = strconv.FormatInt(v, 10)
				case layout.F64:
					v, _ := strconv.ParseFloat(f, 64)
					row[i].text = strconv.FormatFloat(v, 'g', -1, 64)
				default:
					row[i].text = f
				}
			}
			return fn(row)
		})
	}
	t.load = func() ([]columnData, error) { return loadCSV(path, cols, rows) }
	rec := &record{name: "", kind: kindTable, typeName: "table", shape: []int64{rows}, offset: -1, nbytes: -1, table: t}
	return &source{file: path, format: "csv", records: []*record{rec}}, nil
}

// csvField is one field of a CSV record: null is an empty unquoted field
// (a quoted "" is the empty string).
type csvField struct {
	text string
	null bool
}

// readCSV streams the records of an RFC 4180 CSV file (LF or CRLF line
// ends, quoted fields with doubled quotes and line breaks). Every record
// must have as many fields as the first.
func readCSV(path string, fn func(line int, rec []csvField) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return readCSVFrom(f, fn)
}

// readCSVFrom is readCSV on a stream.
func readCSVFrom(r io.Reader, fn func(line int, rec []csvField) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	line, width := 1, -1
	var rec []csvField
	var field []byte
	for {
		start := line
		rec = rec[:0]
		if _, err := br.ReadByte(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := br.UnreadByte(); err != nil {
			return err
		}
		for {
			field = field[:0]
			quoted := false
			c, err := br.ReadByte()
			if err == nil && c == '"' {
				quoted = true
				for {
					c, err = br.ReadByte()
					if err == io.EOF {
						return fmt.Errorf("line %d: quoted field not closed", start)
					}
					if err != nil {
						return err
					}
					if c == '"' {
						// A doubled quote is a quote; else the field ends and
						// c, err are what follows it.
						c, err = br.ReadByte()
						if err == nil && c == '"' {
							field = append(field, '"')
							continue
						}
						break
					}
					if c == '\n' {
						line++
					}
					field = append(field, c)
				}
			}
			for err == nil && c != ',' && c != '\n' {
				if quoted && c != '\r' {
					return fmt.Errorf("line %d: text after a quoted field", line)
				}
				if c != '\r' {
					field = append(field, c)
				}
				c, err = br.ReadByte()
			}
			if err != nil && err != io.EOF {
				return err
			}
			text := string(field)
			if !quoted {
				text = strings.TrimSuffix(text, "\r")
			}
			rec = append(rec, csvField{text: text, null: !quoted && text == ""})
			if err == io.EOF || c == '\n' {
				break
			}
		}
		line++
		if width < 0 {
			width = len(rec)
		} else if len(rec) != width {
			return fmt.Errorf("line %d: %d fields, the header has %d", start, len(rec), width)
		}
		if err := fn(start, rec); err != nil {
			return err
		}
	}
}

// loadCSV reads every column of a CSV file into memory with the inferred
// types; nulls become reason 0.
func loadCSV(path string, cols []column, rows int64) ([]columnData, error) {
	out := make([]columnData, len(cols))
	for i, c := range cols {
		out[i].column = c
		switch c.elem {
		case layout.I64:
			out[i].values = make([]int64, 0, rows)
		case layout.F64:
			out[i].values = make([]float64, 0, rows)
		case layout.Bool:
			out[i].values = make([]bool, 0, rows)
		default:
			out[i].values = make([]string, 0, rows)
		}
		if c.nullable {
			out[i].reason = make([]int8, 0, rows)
		}
	}
	first := true
	err := readCSV(path, func(line int, rec []csvField) error {
		if first {
			first = false
			return nil
		}
		for i, fl := range rec {
			f := fl.text
			d := &out[i]
			if fl.null {
				f = ""
			}
			if d.reason != nil {
				if fl.null {
					d.reason = append(d.reason, 0)
				} else {
					d.reason = append(d.reason, -1)
				}
			}
			switch v := d.values.(type) {
			case []int64:
				x, err := strconv.ParseInt(f, 10, 64)
				if err != nil && !fl.null {
					return fmt.Errorf("line %d: column %q: %v", line, d.name, err)
				}
				d.values = append(v, x)
			case []float64:
				x, err := strconv.ParseFloat(f, 64)
				if err != nil && !fl.null {
					return fmt.Errorf("line %d: column %q: %v", line, d.name, err)
				}
				d.values = append(v, x)
			case []bool:
				d.values = append(v, f == "true")
			case []string:
				d.values = append(v, f)
			}
		}
		return nil
	})
	return out, err
}

// writeCSVTable writes columns in memory as CSV with a header line.
func writeCSVTable(w io.Writer, cols []columnData) error {
	cw := newCSVWriter(w)
	names := make([]string, len(cols))
	rows := -1
	for i, c := range cols {
		names[i] = c.name
		n := lenOf(c.values)
		if rows >= 0 && n != rows {
			return fmt.Errorf("column %q has %d values, column %q %d", c.name, n, cols[0].name, rows)
		}
		rows = n
	}
	if err := cw.writeHeader(names); err != nil {
		return err
	}
	row := make([]cell, len(cols))
	for k := 0; k < rows; k++ {
		for i := range cols {
			row[i] = cellOf(&cols[i], k)
		}
		if err := cw.writeRow(row); err != nil {
			return err
		}
	}
	return cw.flush()
}
