package main

import (
	"bufio"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/spf13/cobra"
)

func newCatCmd(e *env) *cobra.Command {
	var rf readFlags
	var name string
	cmd := &cobra.Command{
		Use:   "cat [--name NAME] FILE",
		Short: "Print the values of a file: arrays as Futhark text, tables as CSV",
		Long: `cat prints every record of a file in file order. Arrays print in Futhark's canonical text
form (futhark-data's printing, one value per line) in logical row-major order: an ABF array's
Julia x[i,j] prints as [i-1][j-1]. BitArrays print as bool arrays, Julia Char arrays as u32 arrays
of their code points, i128/u128 as decimal integers with an i128/u128 suffix (an mmapkit
extension), ABF String records as a Futhark string literal and DataType/serialized records as a
"-- name: serialized, N bytes" comment line. A DAPHNE CSR matrix prints as one dense 2-D array.
Tables (DAPHNE frames, SciDB files, CSV) print as RFC 4180 CSV with a header line; null is an empty
field. Output is streamed: memory stays bounded whatever the file's size.`,
		Example: `  mmapkit cat data.abf
  mmapkit cat --name x data.abf
  mmapkit cat --scidb-format '(int64, string null)' --scidb-names id,label cells.scidb`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// cat's buffers are a few MiB; a soft memory limit makes the
			// garbage collector keep the heap near that, so that the
			// resident set stays bounded (design.md: under 64 MiB).
			debug.SetMemoryLimit(24 << 20)
			s, err := openSource(e, args[0], openOptionsFrom(&rf))
			if err != nil {
				return err
			}
			defer s.Close()
			w := bufio.NewWriterSize(e.stdout, 256<<10)
			if cmd.Flags().Changed("name") {
				err = catOne(e, w, s, name)
			} else {
				for _, r := range s.records {
					if err = catRecord(e, w, r, nil); err != nil {
						break
					}
				}
			}
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return fileErr(args[0], err)
			}
			return fileErr(args[0], s.Close())
		},
	}
	rf.add(cmd)
	cmd.Flags().StringVar(&name, "name", "", "print only the record (or table column) with exactly this name; may be empty")
	return cmd
}

// catOne prints the one record, or the one table column, named name.
func catOne(e *env, w *bufio.Writer, s *source, name string) error {
	var found *record
	var cols []int
	n := 0
	for _, r := range s.records {
		if r.kind == kindTable {
			for i, c := range r.table.columns {
				if c.name == name {
					found, cols = r, []int{i}
					n++
				}
			}
			continue
		}
		if r.name == name {
			found = r
			n++
		}
	}
	switch {
	case n == 0:
		return fmt.Errorf("%w %q", errNoRecord, name)
	case n > 1:
		return fmt.Errorf("%d records are named %q", n, name)
	}
	return catRecord(e, w, found, cols)
}

// catRecord prints one record; for a table, only the columns cols (nil: all).
func catRecord(e *env, w *bufio.Writer, r *record, cols []int) error {
	switch r.kind {
	case kindString:
		b := appendFutharkString(nil, r.text)
		_, err := w.Write(append(b, '\n'))
		return err
	case kindSerialized:
		_, err := fmt.Fprintf(w, "-- %s: serialized, %d bytes\n", r.name, r.nbytes)
		return err
	case kindTable:
		return catTable(w, r.table, cols)
	}
	return printArray(e, w, r)
}

// catTable streams a table as CSV with a header line.
func catTable(w io.Writer, t *table, cols []int) error {
	if cols == nil {
		cols = make([]int, len(t.columns))
		for i := range cols {
			cols[i] = i
		}
	}
	cw := newCSVWriter(w)
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = t.columns[c].name
	}
	if err := cw.writeHeader(names); err != nil {
		return err
	}
	out := make([]cell, len(cols))
	err := t.scan(func(row []cell) error {
		for i, c := range cols {
			out[i] = row[c]
		}
		return cw.writeRow(out)
	})
	if err != nil {
		return err
	}
	return cw.flush()
}

// printType is the Futhark type an array record prints as.
func printType(r *record) string {
	switch {
	case r.typeName == "bits":
		return "bool"
	case r.elem == layout.JuliaChar:
		return "u32"
	}
	return r.elem.String()
}

// textPrinter prints an array in Futhark's canonical text with package
// futhark's streaming encoder; it reports false for element types Futhark
// lacks (i128, u128), which printArray prints itself.
var textPrinter func(e *env, w *bufio.Writer, r *record) (bool, error)

// elemAppender returns a function that appends the canonical text of one
// element (host-order bytes) with its suffix (layout.AppendText), and the
// element's size.
func elemAppender(r *record) (func(dst, b []byte) []byte, int, error) {
	t := r.elem
	if r.typeName == "bits" {
		t = layout.Bool
	}
	if !t.Valid() {
		return nil, 0, fmt.Errorf("record %q: cannot print element type %s", r.name, t)
	}
	return func(dst, b []byte) []byte { return layout.AppendText(dst, t, b) }, t.Size(), nil
}

// catChunkBytes is the size of the buffer cat reads array values into.
const catChunkBytes = 1 << 20

// printArray streams an array record in Futhark's canonical text form:
// "[" elements "]", ", " between scalars, ",\n" between sub-arrays, and
// empty([d0][d1]…t) for an array with no elements.
func printArray(e *env, w *bufio.Writer, r *record) error {
	if textPrinter != nil {
		if done, err := textPrinter(e, w, r); done {
			return err
		}
	}
	n, err := r.count()
	if err != nil {
		return fmt.Errorf("record %q: %w", r.name, err)
	}
	if n == 0 {
		b := []byte("empty(")
		for _, d := range r.shape {
			b = append(strconv.AppendInt(append(b, '['), d, 10), ']')
		}
		b = append(append(b, printType(r)...), ")\n"...)
		_, err := w.Write(b)
		return err
	}
	app, size, err := elemAppender(r)
	if err != nil {
		return err
	}
	rank := len(r.shape)
	idx := make([]int64, rank)
	per := int64(catChunkBytes / size)
	buf := alignedBytes(min(per, n) * int64(size))
	out := make([]byte, 0, 64<<10)
	for i := 0; i < rank; i++ {
		out = append(out, '[')
	}
	bar := newProgress(e, n*int64(size), "cat "+r.name)
	defer bar.Done()
	for first := int64(0); first < n; first += per {
		k := min(per, n-first)
		chunk := buf[:k*int64(size)]
		if err := r.read(chunk, first); err != nil {
			return fmt.Errorf("record %q: %w", r.name, err)
		}
		for j := int64(0); j < k; j++ {
			if first+j > 0 {
				// Advance the index odometer; c dimensions wrapped.
				c := 0
				for d := rank - 1; d >= 0; d-- {
					idx[d]++
					if idx[d] < r.shape[d] {
						break
					}
					idx[d] = 0
					c++
				}
				for i := 0; i < c; i++ {
					out = append(out, ']')
				}
				if c == 0 {
					out = append(out, ", "...)
				} else {
					out = append(out, ",\n"...)
				}
				for i := 0; i < c; i++ {
					out = append(out, '[')
				}
			}
			out = app(out, chunk[j*int64(size):])
			if len(out) >= 60<<10 {
				if _, err := w.Write(out); err != nil {
					return err
				}
				out = out[:0]
			}
		}
		bar.Add(k * int64(size))
	}
	for i := 0; i < rank; i++ {
		out = append(out, ']')
	}
	out = append(out, '\n')
	_, err = w.Write(out)
	return err
}

// appendFutharkString appends s as a Futhark string literal that reads back
// as the UTF-8 bytes of s: printable ASCII as is, other code points as
// decimal escapes (futhark-data reads raw non-ASCII bytes as Latin-1, and
// has no \& separator, so a digit after an escape is escaped too).
func appendFutharkString(b []byte, s string) []byte {
	b = append(b, '"')
	esc := false
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			// Not UTF-8: a byte Futhark can only produce as its own code
			// point would re-encode; escape it as the Latin-1 character.
			r = rune(s[0])
		}
		s = s[n:]
		switch {
		case r == '"':
			b = append(b, `\"`...)
			esc = false
		case r == '\\':
			b = append(b, `\\`...)
			esc = false
		case r == '\n':
			b = append(b, `\n`...)
			esc = false
		case r == '\t':
			b = append(b, `\t`...)
			esc = false
		case r >= 0x20 && r < 0x7f && !(esc && r >= '0' && r <= '9'):
			b = append(b, byte(r))
			esc = false
		default:
			b = strconv.AppendInt(append(b, '\\'), int64(r), 10)
			esc = true
		}
	}
	return append(b, '"')
}
