package main

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/layout"
)

// A source is an opened input file as the commands see it: its format,
// the format's version and its records in file order. Each format package
// plugs in through an opener (see openers) that builds one.
type source struct {
	file    string
	format  string // abf, futhark, daphne, scidb, csv
	version string // "" where the format has none
	records []*record
	close   func() error
	// setter changes one element in place (set); nil if the format cannot.
	// col is the table column for tables, else -1; idx is checked by it.
	setter func(r *record, col int, idx []int64, value string) error
}

func (s *source) Close() error {
	if s.close == nil {
		return nil
	}
	c := s.close
	s.close = nil
	return c()
}

// kind is what a record holds.
type kind int

const (
	kindArray      kind = iota // an n-d array of layout element type
	kindString                 // an ABF String record
	kindSerialized             // an ABF DataType/AbfSerializer record: opaque bytes
	kindTable                  // a table: DAPHNE frame, SciDB file, CSV file
)

// record is one record of a source.
type record struct {
	name     string
	kind     kind
	typeName string // as ls prints it: f64, bits, char, string, datatype, serialized
	elem     layout.Type
	shape    []int64 // logical shape
	order    layout.Order
	offset   int64 // payload offset; -1 when not one contiguous run
	nbytes   int64
	extra    map[string]any // further ls --json fields ("layout", "encoding")

	// Arrays. read fills dst with the elements [first, first+len(dst)/size)
	// of the array in logical row-major order, in the host's byte order,
	// one byte per element for BitArrays (0 or 1). It must work in bounded
	// memory for any range.
	read func(dst []byte, first int64) error
	// csrLoad, when set, reads the record's sparse form (a DAPHNE CSR
	// matrix) for convert.
	csrLoad func() (*csrData, error)

	// Strings: the value. Serialized: the payload size is nbytes.
	text string

	// Tables.
	table *table
}

// count is the number of elements of an array record.
func (r *record) count() (int64, error) { return layout.Count(r.shape) }

// readAll reads the whole array record into host-order row-major bytes.
func (r *record) readAll() ([]byte, error) {
	n, err := r.count()
	if err != nil {
		return nil, err
	}
	sz, ok := layout.Mul(n, int64(r.elem.Size()))
	if !ok || sz > maxInMemory {
		return nil, fmt.Errorf("record %q: %d elements are too many to convert in memory", r.name, n)
	}
	// Allocate with 16-byte alignment so that the bytes can be cast to any
	// element type.
	words := make([]uint64, (sz+15)/16*2)
	buf := bytesOf(words)[:sz]
	if sz == 0 {
		return buf, nil
	}
	if err := r.read(buf, 0); err != nil {
		return nil, err
	}
	return buf, nil
}

// maxInMemory bounds what convert loads into memory at once (one record).
const maxInMemory = 1 << 40

// csrData is a sparse matrix in CSR form, values in host order.
type csrData struct {
	rows, cols int64
	rowOffsets []uint64
	colIdxs    []uint64
	values     []byte // nnz elements of the record's element type
}

// table is a table of named columns, read row by row for cat and column by
// column for convert.
type table struct {
	columns []column
	rows    int64 // -1 if unknown without reading the file
	// scan calls fn for each row with its cells; the slice is reused.
	scan func(fn func(row []cell) error) error
	// load reads every column into memory.
	load func() ([]columnData, error)
	// formatString is the SciDB format string of the input (SciDB only).
	formatString string
}

// column describes one column of a table.
type column struct {
	name     string
	typeName string      // as ls prints it
	elem     layout.Type // Invalid for types layout lacks (SciDB string, datetime, …)
	nullable bool
	offset   int64 // -1 unless the values are one contiguous run
	nbytes   int64 // -1 if unknown
}

// cell is one CSV field: null prints as an empty field, an empty string as "".
type cell struct {
	null bool
	text string
}

// columnData is one column in memory. values is a typed slice: []int8 …
// []float64, []bool, []layout.Float16 for layout types; []string, [][]byte
// for SciDB string and binary; []byte for SciDB char; []int64 for
// datetime; [][2]int64 for datetimetz. reason is nil for non-nullable
// columns; else -1 for a present value, 0..127 the null's missing reason.
type columnData struct {
	column
	scidbType string // the SciDB type name where the column came from SciDB
	values    any
	reason    []int8
}

var errNoRecord = errors.New("no such record")

// lookup returns the record named name.
func (s *source) lookup(name string) (*record, error) {
	for _, r := range s.records {
		if r.name == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%w %q", errNoRecord, name)
}
