package csvtable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// FormatError reports a problem with a CSV file at a byte offset and,
// where known, its line (1-based). It reads as every format's error does;
// see format.FileError.
type FormatError struct {
	format.FileError
}

// Options configure Open, OpenFile and NewReader. A nil *Options means the
// defaults.
type Options struct {
	// Options are the mapping's options (advice, populate, lock, wait).
	mmapfile.Options
	// Salvage keeps the rows before the first malformed one (a last row
	// cut short by the end of the file, a row with a wrong number of
	// fields) instead of failing; Damage reports what was wrong.
	Salvage bool
	// MaxField bounds the bytes of one field (a column name or a cell; a
	// quoted field's text between its quotes, a doubled quote counting
	// 2): a longer one is an error naming its offset, found without
	// reading past the bound, so that a huge line cannot make reads,
	// listings and conversions take memory in proportion to it. 0 means
	// DefaultMaxField, a negative value no limit.
	MaxField int
}

// DefaultMaxField is the longest field a CSV file may have when
// Options.MaxField is 0: 16 MiB.
const DefaultMaxField = 16 << 20

func (o *Options) maxField() int {
	switch {
	case o == nil || o.MaxField == 0:
		return DefaultMaxField
	case o.MaxField < 0:
		return math.MaxInt
	}
	return o.MaxField
}

// File is an open CSV file: a mapping, its row index and the inferred
// column types. Its methods may be used from several goroutines.
type File struct {
	name   string
	mf     *mmapfile.File   // nil for NewReader
	region *mmapfile.Region // nil for NewReader
	data   []byte
	rows   []int64 // offset of each data row (the header excluded)
	// marks, in a table of more than markEvery columns, say where every
	// markEvery-th field of each row starts (fields markEvery,
	// 2*markEvery, …; marksPerRow a row), as offsets from the row's
	// start, so that reading one column parses at most markEvery fields
	// of a row rather than the whole row: a column-by-column conversion
	// of a wide table takes time linear in its cells. nil when a row is
	// too long for 32-bit offsets; columns are then found from the row's
	// start.
	marks       []uint32
	marksPerRow int
	// The columns, a few dozen bytes each (a CSV may have a million):
	// their Records are built on demand.
	maxField int // the longest field allowed
	names    []string
	types    []layout.Type // layout.Invalid: text
	nullable []bool
	listOnce sync.Once
	list     []format.Record // Records, built on first use
	damage   error
	closed   atomic.Bool
}

// field is one field of a row: its bytes, whether it was quoted, and
// whether its quotes are doubled inside (so that its text must be
// unescaped).
type field struct {
	start, end      int
	quoted, doubled bool
}

// text returns the field's value.
func (f field) text(data []byte) string {
	s := string(data[f.start:f.end])
	if f.doubled {
		s = strings.ReplaceAll(s, `""`, `"`)
	}
	return s
}

func (f field) null() bool { return !f.quoted && f.start == f.end }

// parseRow parses the row starting at off. It returns the fields, the
// offset of the next row, and the number of line breaks inside quoted
// fields (for line numbers). At the end of data next is len(data). A
// field longer than maxField bytes is an error (errFieldTooLong) found
// without reading past it.
func parseRow(data []byte, off int, fields []field, maxField int) ([]field, int, int, error) {
	fields = fields[:0]
	breaks := 0
	i := off
	for {
		f, next, n, last, err := parseField(data, i, maxField)
		breaks += n
		if err != nil {
			return fields, next, breaks, err
		}
		fields = append(fields, f)
		if last {
			return fields, next, breaks, nil
		}
		i = next
	}
}

// parseField parses the field starting at i. next is where the following
// field starts, or the next row when last; breaks counts the line breaks
// inside a quoted field.
func parseField(data []byte, i, maxField int) (f field, next, breaks int, last bool, err error) {
	maxField = min(maxField, len(data))
	if i < len(data) && data[i] == '"' {
		f = field{start: i + 1, quoted: true}
		i++
		bound := min(len(data), f.start+maxField+1) // the text and its closing quote
		for {
			j := -1
			if i <= bound {
				j = indexByte(data[i:bound], '"')
			}
			if j < 0 {
				if i > bound || bound < len(data) {
					return f, f.start - 1, breaks, false, errFieldTooLong
				}
				return f, i, breaks, false, errNotClosed
			}
			breaks += countByte(data[i:i+j], '\n')
			i += j + 1
			if i < len(data) && data[i] == '"' {
				f.doubled = true
				i++
				continue
			}
			break
		}
		f.end = i - 1
		if f.end-f.start > maxField {
			return f, f.start - 1, breaks, false, errFieldTooLong
		}
		if i < len(data) && data[i] == '\r' {
			i++
		}
		switch {
		case i >= len(data):
			return f, i, breaks, true, nil
		case data[i] == ',':
			return f, i + 1, breaks, false, nil
		case data[i] == '\n':
			return f, i + 1, breaks, true, nil
		}
		return f, i, breaks, false, errors.New("text after a quoted field")
	}
	j := i
	stop := min(len(data), i+maxField+2) // the field, and a CR before its LF
	for j < stop && data[j] != ',' && data[j] != '\n' {
		j++
	}
	end := j
	if end > i && data[end-1] == '\r' && (j == len(data) || data[j] == '\n') {
		end--
	}
	if end-i > maxField || (j == stop && stop < len(data)) {
		return field{start: i, end: end}, i, 0, false, errFieldTooLong
	}
	f = field{start: i, end: end}
	if j >= len(data) {
		return f, j, 0, true, nil
	}
	if data[j] == '\n' {
		return f, j + 1, 0, true, nil
	}
	return f, j + 1, 0, false, nil
}

// markEvery is the distance in fields between the marks of a wide table's
// rows: 4 bytes of index for every 64 cells.
const markEvery = 64

// addMarks notes where fields markEvery, 2*markEvery, … of the row at
// offset at start. It drops the marks when one does not fit 32 bits.
func (f *File) addMarks(at int, fields []field) {
	if f.marks == nil {
		return
	}
	for k := markEvery; k < len(fields); k += markEvery {
		d := fields[k].start - at
		if fields[k].quoted {
			d-- // the field starts at its quote
		}
		if d > math.MaxUint32 {
			f.marks, f.marksPerRow = nil, 0
			return
		}
		f.marks = append(f.marks, uint32(d))
	}
}

// cell finds the field of column col in the row at offset at (row r).
func (f *File) cell(r int64, at, col int) (field, error) {
	i := at
	k := 0
	if f.marksPerRow > 0 && col >= markEvery {
		m := col/markEvery - 1
		i += int(f.marks[r*int64(f.marksPerRow)+int64(m)])
		k = (m + 1) * markEvery
	}
	for ; ; k++ {
		fl, next, _, last, err := parseField(f.data, i, f.maxField)
		if err != nil {
			return fl, err
		}
		if k == col {
			return fl, nil
		}
		if last {
			return fl, errors.New("the row changed since the file was opened")
		}
		i = next
	}
}

// errFieldTooLong: a field is longer than Options.MaxField.
var errFieldTooLong = errors.New("field too long")

// errNotClosed: a quoted field runs to the end of the data.
var errNotClosed = errors.New("quoted field not closed")

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func countByte(b []byte, c byte) int {
	n := 0
	for _, x := range b {
		if x == c {
			n++
		}
	}
	return n
}

// infer is the type inference of one column.
type infer struct {
	seen, notInt, notFloat, notBool, inexact, nullable bool
}

func (c *infer) add(data []byte, f field) {
	if f.null() {
		c.nullable = true
		return
	}
	c.seen = true
	b := data[f.start:f.end]
	if f.quoted && f.doubled {
		c.notInt, c.notFloat, c.notBool = true, true, true
		return
	}
	if !c.notInt {
		// "-0" is a float's negative zero: as an integer it would lose
		// its sign and print back as "0".
		if v, ok := parseInt(b); !ok || v == 0 && b[0] == '-' {
			c.notInt = true
		}
	}
	if c.notInt && !c.notFloat {
		if !isNumber(b) {
			c.notFloat = true
		}
	}
	if !c.notFloat && !c.inexact && !exactInF64(b) {
		c.inexact = true
	}
	if !c.notBool && string(b) != "true" && string(b) != "false" {
		c.notBool = true
	}
}

// typ is the column's type: i64, f64 (only when every number survives the
// trip through f64 and back to text), bool, or text (Invalid).
func (c *infer) typ() (layout.Type, string) {
	switch {
	case !c.seen:
		// No values at all (no rows, or only nulls): f64 converts
		// everywhere.
		return layout.F64, ""
	case !c.notInt:
		return layout.I64, ""
	case !c.notFloat && !c.inexact:
		return layout.F64, ""
	case !c.notBool:
		return layout.Bool, ""
	}
	return layout.Invalid, "string"
}

// parseInt parses a decimal int64 (optional sign, digits) without
// allocating.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-9)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// isNumber reports whether b is a decimal number as strconv.ParseFloat
// reads it (also inf, nan; not hex floats, which CSV data does not use).
func isNumber(b []byte) bool {
	if len(b) == 0 || len(b) > 64 {
		return false
	}
	_, err := strconv.ParseFloat(string(b), 64)
	var ne *strconv.NumError
	return err == nil || (errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange))
}

// exactInF64 reports whether the number b prints back unchanged after a
// trip through f64 (Go's shortest form, as cat and the writers print it):
// the same decimal value, sign included. Integers must be exact (2^53 + 1
// is not); a value beyond f64's range (1e400) or below its smallest
// subnormal (1e-400, which reads as 0) is not held, nor is one with more
// digits than f64 keeps. inf and nan are held.
func exactInF64(b []byte) bool {
	s := string(b)
	if v, ok := parseInt(b); ok {
		if v >= -(1<<53) && v <= 1<<53 {
			return true
		}
		return int64(float64(v)) == v && float64(v) != math.Exp2(63)
	}
	if _, ok := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10); ok {
		// An integer beyond int64: exact only if f64 holds it exactly.
		f, _ := strconv.ParseFloat(s, 64)
		bf := new(big.Float).SetFloat64(f)
		bi, _ := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10)
		return !math.IsInf(f, 0) && bf.Cmp(new(big.Float).SetInt(bi)) == 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return false
	}
	in, ok := decimalOf(s)
	if !ok {
		// No decimal digits: inf, infinity or nan, which f64 holds.
		return math.IsInf(f, 0) || math.IsNaN(f)
	}
	out, _ := decimalOf(strconv.FormatFloat(f, 'g', -1, 64))
	return in == out
}

// decimal is a decimal number in a canonical form: its sign, its
// significant digits without leading or trailing zeros ("" for zero) and
// the power of ten of the last of them.
type decimal struct {
	neg    bool
	digits string
	exp    int
}

// decimalOf reads s, a decimal number as strconv.ParseFloat reads it
// ("-1.50e3", ".5", "7."), into canonical form. ok is false for anything
// else (inf, nan, hexadecimal, underscores).
func decimalOf(s string) (d decimal, ok bool) {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		d.neg, s = s[0] == '-', s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > 1<<20 || e < -(1<<20) {
			return d, false
		}
		mant, exp = s[:i], e
	}
	var digits []byte
	point, seen := false, false
	for i := 0; i < len(mant); i++ {
		c := mant[i]
		switch {
		case c == '.' && !point:
			point = true
		case c >= '0' && c <= '9':
			seen = true
			if c != '0' || len(digits) > 0 {
				digits = append(digits, c)
			}
			if point {
				exp--
			}
		default:
			return d, false
		}
	}
	if !seen {
		return d, false
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		exp = 0
	}
	d.digits, d.exp = string(digits), exp
	return d, true
}

// Open maps a CSV file and indexes it: the header line names the columns,
// every row must have as many fields, and the column types are inferred.
// A last row that the end of the file cuts short (a missing field, an
// unclosed quote) is an error wrapping mmapfile.ErrTruncated at the row; a
// cut that leaves whole fields cannot be told from a shorter file.
func Open(path string, o *Options) (*File, error) {
	return OpenFile(path, mmapfile.ReadOnly, o)
}

// OpenFile opens a CSV file in mode. CSV files are read, or replaced whole
// by the format's writer, never changed in place: mmapfile.ReadWrite is an
// error wrapping errors.ErrUnsupported.
func OpenFile(path string, mode mmapfile.Mode, o *Options) (*File, error) {
	if mode != mmapfile.ReadOnly {
		return nil, &FormatError{FileError: format.FileError{Pkg: "csvtable", File: path, Offset: -1, Msg: "CSV files are read or replaced whole, not changed in place", Err: errors.ErrUnsupported}}
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	mf, r, err := mmapfile.OpenMapped(path, mmapfile.ReadOnly, &opts.Options)
	if err != nil {
		return nil, err
	}
	f := &File{name: path, mf: mf, region: r, data: r.Bytes(), maxField: opts.maxField()}
	var perr error
	if gerr := r.Guard(func() { perr = f.index(opts.Salvage) }); gerr != nil {
		mf.Close()
		return nil, gerr
	}
	if perr != nil {
		mf.Close()
		return nil, perr
	}
	return f, nil
}

// NewReader reads the size bytes of a CSV table from r (read into memory
// once) and indexes them as Open does. Errors name r's Name() if it has
// one (an *os.File does).
func NewReader(r io.ReaderAt, size int64, o *Options) (*File, error) {
	name := "<reader>"
	if n, ok := r.(interface{ Name() string }); ok {
		name = n.Name()
	}
	if size < 0 {
		return nil, &FormatError{FileError: format.FileError{Pkg: "csvtable", File: name, Offset: -1, Msg: fmt.Sprintf("size %d", size), Err: mmapfile.ErrOutOfRange}}
	}
	var data bytes.Buffer
	if _, err := io.Copy(&data, io.NewSectionReader(r, 0, size)); err != nil {
		return nil, &FormatError{FileError: format.FileError{Pkg: "csvtable", File: name, Offset: -1, Err: err}}
	}
	if int64(data.Len()) < size {
		return nil, &FormatError{FileError: format.FileError{Pkg: "csvtable", File: name, Offset: int64(data.Len()), Msg: fmt.Sprintf("the reader ends before its %d bytes", size), Err: mmapfile.ErrTruncated}}
	}
	f := &File{name: name, data: data.Bytes(), maxField: o.maxField()}
	if err := f.index(o != nil && o.Salvage); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) errAt(line int, off int, msg string, a ...any) *FormatError {
	return &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Line: line, Offset: int64(off), Msg: fmt.Sprintf(msg, a...)}}
}

// Damage returns what Options.Salvage skipped: the error that ended the
// rows kept, or nil.
func (f *File) Damage() error { return f.damage }

// guard runs fn, which reads f.data, guarded against a file truncated
// under the mapping.
func (f *File) guard(fn func()) error {
	if f.closed.Load() {
		return &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Offset: -1, Err: mmapfile.ErrClosed}}
	}
	if f.region == nil {
		fn()
		return nil
	}
	return f.region.Guard(fn)
}

// index reads the header and every row once. With salvage, a malformed
// row ends the rows kept and becomes f.damage.
func (f *File) index(salvage bool) error {
	data := f.data
	start := 0
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		start = 3 // a UTF-8 byte-order mark is not part of the first name
	}
	if start >= len(data) {
		return &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Offset: int64(start), Msg: "CSV file has no header line"}}
	}
	fields, next, breaks, err := parseRow(data, start, nil, f.maxField)
	if err != nil {
		return f.rowError(1, start, next, err)
	}
	line := 2 + breaks
	names := make([]string, len(fields))
	seen := make(map[string]bool, len(fields))
	for i, fl := range fields {
		names[i] = fl.text(data)
		if seen[names[i]] {
			return f.errAt(1, fl.start, "column name %q is given twice", names[i])
		}
		seen[names[i]] = true
	}
	inf := make([]infer, len(fields))
	if len(names) > markEvery {
		f.marksPerRow = (len(names) - 1) / markEvery
		f.marks = []uint32{}
	}
	for next < len(data) {
		at := next
		fields, next, breaks, err = parseRow(data, at, fields, f.maxField)
		switch {
		case err != nil:
			err = f.rowError(line, at, next, err)
		case len(fields) < len(names) && next == len(data) && data[next-1] != '\n':
			err = &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Line: line, Offset: int64(at), Err: mmapfile.ErrTruncated, Msg: fmt.Sprintf("the end of the file cuts the row short: %d fields, the header has %d", len(fields), len(names))}}
		case len(fields) != len(names):
			err = f.errAt(line, at, "%d fields, the header has %d", len(fields), len(names))
		}
		if err != nil {
			if !salvage {
				return err
			}
			f.damage = err
			break
		}
		for i, fl := range fields {
			inf[i].add(data, fl)
		}
		f.addMarks(at, fields)
		f.rows = append(f.rows, int64(at))
		line += 1 + breaks
	}
	f.names = names
	f.types = make([]layout.Type, len(names))
	f.nullable = make([]bool, len(names))
	for i := range names {
		f.types[i], _ = inf[i].typ()
		f.nullable[i] = inf[i].nullable
	}
	return nil
}

// NumRecords returns the number of columns.
func (f *File) NumRecords() int { return len(f.names) }

// Record describes column i.
func (f *File) Record(i int) format.Record {
	r := format.Record{
		Array:    layout.Array{Name: f.names[i], Type: f.types[i], Shape: []int64{int64(len(f.rows))}, Offset: -1, Size: -1},
		Kind:     format.KindColumn,
		Nullable: f.nullable[i],
	}
	if !r.Type.Valid() {
		r.TypeName = "string"
	}
	return r
}

// rowError is the error of parseRow in the row starting at at, which
// failed at next: a quote the end of the file leaves open is a truncated
// row.
func (f *File) rowError(line, at, next int, err error) error {
	if errors.Is(err, errFieldTooLong) {
		return f.errAt(line, next, "a field longer than %d bytes, the most a field may hold (Options.MaxField, the csv-max-field option)", f.maxField)
	}
	if errors.Is(err, errNotClosed) {
		return &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Line: line, Offset: int64(at), Err: mmapfile.ErrTruncated, Msg: "the end of the file cuts the row short: a quoted field is not closed"}}
	}
	return f.errAt(line, next, "%v", err)
}

// Format returns "csv".
func (f *File) Format() string { return "csv" }

// Name returns the name the file was opened with.
func (f *File) Name() string { return f.name }

// Version returns "": CSV has no versions.
func (f *File) Version() string { return "" }

// Records returns one column record per column.
func (f *File) Records() []format.Record {
	f.listOnce.Do(func() {
		f.list = make([]format.Record, len(f.names))
		for i := range f.list {
			f.list[i] = f.Record(i)
		}
	})
	return f.list
}

// Len returns the number of data rows.
func (f *File) Len() int64 { return int64(len(f.rows)) }

// Close unmaps the file. A second Close returns an error wrapping
// mmapfile.ErrClosed.
func (f *File) Close() error {
	if f.closed.Swap(true) {
		return &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Offset: -1, Err: mmapfile.ErrClosed}}
	}
	if f.mf == nil {
		return nil
	}
	return f.mf.Close()
}

// scan parses rows [r0, r1) and calls fn with each row's fields, guarded
// against a file truncated under the mapping.
func (f *File) scan(r0, r1 int64, fn func(row int64, fields []field) error) error {
	var ferr error
	var fields []field
	gerr := f.guard(func() {
		for r := r0; r < r1; r++ {
			var err error
			fields, _, _, err = parseRow(f.data, int(f.rows[r]), fields, f.maxField)
			if err == nil && len(fields) != len(f.names) {
				err = errors.New("the row changed since the file was opened")
			}
			if err != nil {
				ferr = f.errAt(0, int(f.rows[r]), "row %d: %v", r, err)
				return
			}
			if ferr = fn(r, fields); ferr != nil {
				return
			}
		}
	})
	if gerr != nil {
		return gerr
	}
	return ferr
}

// value parses the text of a cell of a column of type t into dst (host
// order). Null cells are zero.
func (f *File) value(dst []byte, t layout.Type, fl field, row int64, col int) error {
	if fl.null() {
		for i := range dst {
			dst[i] = 0
		}
		return nil
	}
	b := f.data[fl.start:fl.end]
	host := layout.HostOrder()
	switch t {
	case layout.I64:
		v, ok := parseInt(b)
		if !ok {
			return f.errAt(0, fl.start, "row %d, column %q: %q is not an i64", row, f.names[col], b)
		}
		host.PutUint64(dst, uint64(v))
	case layout.F64:
		v, err := strconv.ParseFloat(string(b), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return f.errAt(0, fl.start, "row %d, column %q: %q is not an f64", row, f.names[col], b)
		}
		host.PutUint64(dst, math.Float64bits(v))
	case layout.Bool:
		dst[0] = 0
		if string(b) == "true" {
			dst[0] = 1
		}
	}
	return nil
}

// ReadArray copies cells [first, first+n) of column i (a column of i64,
// f64 or bool; null cells read as zero).
func (f *File) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	t := f.types[i]
	if !t.Valid() {
		return &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Record: f.names[i], Offset: -1, Msg: "holds text, not numbers: read it with ScanTable", Err: errors.ErrUnsupported}}
	}
	size := int64(t.Size())
	n := int64(len(dst)) / size
	if end, ok := layout.Add(first, n); first < 0 || !ok || end > int64(len(f.rows)) {
		return &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Record: f.names[i], Offset: -1, Msg: fmt.Sprintf("rows [%d, +%d) outside [0, %d)", first, n, len(f.rows)), Err: mmapfile.ErrOutOfRange}}
	}
	var err error
	gerr := f.guard(func() {
		for r := first; r < first+n; r++ {
			var fl field
			if fl, err = f.cell(r, int(f.rows[r]), i); err != nil {
				err = f.errAt(0, int(f.rows[r]), "row %d: %v", r, err)
				return
			}
			k := r - first
			if err = f.value(dst[k*size:(k+1)*size], t, fl, r, i); err != nil {
				return
			}
		}
	})
	if gerr != nil {
		return gerr
	}
	if err != nil {
		return err
	}
	layout.SwapOrder(dst, t, layout.HostOrder(), bo)
	return nil
}

// ReadText calls fn with the cells of column i as written (unquoted; null
// cells ""), a batch of rows at a time, whatever the column's type: a
// column read on its own, which a writer of one array per column (an
// .npz) uses so that a wide table is read in time linear in its cells.
// The batch is reused after fn returns.
func (f *File) ReadText(i int, fn func(batch []string) error) error {
	return readColumn(f, i, func(fl field) string {
		if fl.null() {
			return ""
		}
		return fl.text(f.data)
	}, fn)
}

// ReadNulls calls fn with whether each cell of column i is null (an
// unquoted empty field), a batch of rows at a time: a column's nulls read
// on their own, as ReadText reads its cells. The batch is reused after fn
// returns.
func (f *File) ReadNulls(i int, fn func(batch []bool) error) error {
	return readColumn(f, i, field.null, fn)
}

// readColumn calls fn with of(cell) for each cell of column i, a batch of
// rows at a time, each cell found from its row's nearest mark.
func readColumn[T any](f *File, i int, of func(field) T, fn func(batch []T) error) error {
	if i < 0 || i >= len(f.names) {
		return &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Offset: -1, Msg: fmt.Sprintf("no column %d (the file has %d)", i, len(f.names)), Err: mmapfile.ErrOutOfRange}}
	}
	batch := make([]T, 0, 1<<12)
	for first := int64(0); first < int64(len(f.rows)); first += int64(cap(batch)) {
		last := min(first+int64(cap(batch)), int64(len(f.rows)))
		batch = batch[:0]
		var err error
		gerr := f.guard(func() {
			for r := first; r < last; r++ {
				var fl field
				if fl, err = f.cell(r, int(f.rows[r]), i); err != nil {
					err = f.errAt(0, int(f.rows[r]), "row %d: %v", r, err)
					return
				}
				batch = append(batch, of(fl))
			}
		})
		if gerr != nil {
			return gerr
		}
		if err != nil {
			return err
		}
		if err := fn(batch); err != nil {
			return err
		}
	}
	return nil
}

// ScanTable calls fn with batches of at most batch rows: i64, f64 and bool
// columns as []int64, []float64, []bool, text columns as []string; a
// nullable column's Reason is 0 where the cell is null, -1 elsewhere.
func (f *File) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	return f.scanTable(batch, nil, fn)
}

// ScanTableText is ScanTable with each column j for which text[j] is true
// given as its cells' text, as written ([]string, unquoted; null cells "",
// with Reason 0), whatever its inferred type: "007" (inferred i64) stays
// "007" for a writer that wants text, 9223372036854775808 (inferred f64)
// stays exact for one that wants uint64.
func (f *File) ScanTableText(batch int, text []bool, fn func(first int64, cols []format.Column) error) error {
	if len(text) != len(f.names) {
		return &FormatError{FileError: format.FileError{Pkg: "csvtable", File: f.name, Offset: -1, Msg: fmt.Sprintf("%d text flags for %d columns", len(text), len(f.names))}}
	}
	return f.scanTable(batch, text, fn)
}

// scanTable is ScanTable, with the columns text marks given as text.
func (f *File) scanTable(batch int, text []bool, fn func(first int64, cols []format.Column) error) error {
	asText := func(j int) bool { return !f.types[j].Valid() || text != nil && text[j] }
	if batch <= 0 {
		batch = 1 << 14
	}
	var rowBytes int64
	for j, t := range f.types {
		if !asText(j) {
			rowBytes += int64(t.Size())
		} else {
			rowBytes += 16 // a string header, its text aside
		}
	}
	batch = format.BatchRows(batch, rowBytes)
	nrows := int64(len(f.rows))
	cols := make([]format.Column, len(f.names))
	bufs := make([][]byte, len(f.names))
	texts := make([][]string, len(f.names))
	for first := int64(0); first < nrows || first == 0; first += int64(batch) {
		k := min(int64(batch), nrows-first)
		for j, t := range f.types {
			if !asText(j) {
				need := k * int64(t.Size())
				if int64(cap(bufs[j])) < need {
					bufs[j] = unsafeslice.AlignedBytes(need)
				}
				bufs[j] = bufs[j][:need]
			} else {
				texts[j] = texts[j][:0]
			}
			cols[j].Reason = nil
			if f.nullable[j] {
				cols[j].Reason = make([]int8, k)
			}
		}
		err := f.scan(first, first+k, func(row int64, fields []field) error {
			at := row - first
			for j, fl := range fields {
				if cols[j].Reason != nil {
					cols[j].Reason[at] = -1
					if fl.null() {
						cols[j].Reason[at] = 0
					}
				}
				if asText(j) {
					s := ""
					if !fl.null() {
						s = fl.text(f.data)
					}
					texts[j] = append(texts[j], s)
					continue
				}
				t := f.types[j]
				size := int64(t.Size())
				if err := f.value(bufs[j][at*size:(at+1)*size], t, fl, row, j); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for j, t := range f.types {
			if !asText(j) {
				cols[j].Values = layout.SliceOf(t, bufs[j])
			} else {
				cols[j].Values = texts[j]
			}
		}
		if err := fn(first, cols); err != nil {
			return err
		}
		if nrows == 0 {
			break
		}
	}
	return nil
}
