// Package csvtable reads and writes tables as CSV text (RFC 4180 with a
// header line of column names), the plain-text table format that mmapkit
// converts DAPHNE frames, SciDB files and structured NumPy arrays to and
// from. It registers the format "csv" (extension .csv) with package format.
//
// Reading maps the file once and indexes where each row starts (8 bytes
// a row); cells are parsed again when read, so a large CSV costs its
// mapping and its row index, not a copy of its text. Column types are
// inferred in the same pass: i64 when every value is an integer, f64 when
// every value is a number that prints back as the same decimal value after
// a trip through f64 (so 1e400, which f64 cannot hold, 1e-400, which it
// reads as 0, and 0.12345678901234567, whose last digit it loses, make
// their column text), bool when every value is true or false, text
// otherwise. An
// empty unquoted field is null; a quoted "" is the empty string. A
// byte-order mark at the start is not part of the first column's name.
//
// Writing quotes a field when it holds a comma, a quote, CR or LF, or is
// the empty string, so that an empty field always means null; lines end
// in LF. Integers print in decimal, floats in Go's shortest round-trip
// form, bools as true and false.
package csvtable

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	format.Register(format.Format{
		Name:        "csv",
		Description: "CSV tables with a header line (RFC 4180)",
		Extensions:  []string{".csv"},
		Open: func(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
			var opts Options
			if o != nil {
				opts.Options, opts.Salvage = o.Options, o.Salvage
			}
			var err error
			if opts.MaxField, err = format.ParsedParams[int](o, "csv", false); err != nil {
				return nil, &FormatError{FileError: format.FileError{Pkg: "csvtable", File: path, Offset: -1, Msg: err.Error()}}
			}
			return OpenFile(path, mode, &opts)
		},
		ParseParams: func(p map[string]string, write bool) (any, error) {
			if write {
				return nil, nil
			}
			return maxFieldParam(p["csv-max-field"])
		},
		Params: []format.Param{
			{Name: "csv-max-field", Usage: "the most bytes a CSV field may hold (default 16 MiB; -1: no limit)"},
		},
		Write: func(path string, src format.Source, o *format.Options) error {
			var perm = atomicfile.DefaultPerm
			if o != nil && o.Perm != 0 {
				perm = o.Perm
			}
			return atomicfile.Write(path, perm, func(f *os.File) error {
				w := bufio.NewWriterSize(f, 1<<20)
				if err := Encode(w, src); err != nil {
					return err
				}
				return w.Flush()
			})
		},
		Encode: func(w io.Writer, src format.Source, o *format.Options) error { return Encode(w, src) },
	})
}

// maxFieldParam reads the csv-max-field option: "" is the default (0).
func maxFieldParam(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("csv-max-field %q is not a number of bytes", s)
	}
	return n, nil
}

var (
	_ format.File         = (*File)(nil)
	_ format.TableScanner = (*File)(nil)
	_ format.TextTable    = (*File)(nil)
	_ format.TextReader   = (*File)(nil)
)
