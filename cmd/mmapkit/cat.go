package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/spf13/cobra"
)

func newCatCmd(e *env) *cobra.Command {
	var rf readFlags
	var name string
	var head int64
	cmd := &cobra.Command{
		Use:   "cat [--name NAME] [--head N] FILE",
		Short: "Print the values of a file: arrays as Futhark text, tables as CSV",
		Long: `cat prints every record of a file in file order. Arrays print in Futhark's canonical text
form (futhark-data's printing, one value per line) in logical row-major order: an ABF array's
Julia x[i,j] prints as [i-1][j-1]. BitArrays print as bool arrays, Julia Char arrays as u32 arrays
of their code points, i128/u128 as decimal integers with an i128/u128 suffix (an mmapkit
extension), complex arrays as arrays of (real, imaginary) pairs of their float type after a
comment line that says so, text records as Futhark string literals (NumPy's fixed-size text
arrays of two or more dimensions as arrays of them, void bytes in 0x… hex; a 1-D text array is a
table column, and prints as CSV) and serialized records as a
"-- name: serialized, N bytes" comment line. A sparse matrix prints as one dense array. Tables
(frames, SciDB files, structured arrays, CSV) print as RFC 4180 CSV with a header line; null is an
empty field. A file of several records prints a "-- NAME" comment line before each (and before
a table that has a name of its own, as an HDF5 compound dataset has); one record, or --name, prints
without it. Rows of more than 1024 values break their line after every
1024 values (Futhark's syntax allows line breaks between values), so that head and less can cut
them. --head N prints the first N values of each array (as a 1-D array, after a comment line that
gives the array's shape) and the first N rows of each table. Output is streamed: memory stays
bounded whatever the file's size.`,
		Example: `  mmapkit cat data.abf
  mmapkit cat --name x data.abf
  mmapkit cat --head 10 data.npy
  mmapkit cat --scidb-format '(int64, string null)' --scidb-names id,label cells.scidb`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// cat's buffers are a few MiB; a soft memory limit makes the
			// garbage collector keep the heap near that, so that the
			// resident set stays bounded.
			debug.SetMemoryLimit(32 << 20)
			path := args[0]
			f, err := openInput(&rf, path, mmapfile.ReadOnly, mmapfile.AdviceSequential)
			if err != nil {
				return err
			}
			defer f.Close()
			// What opening keeps — a format's index, tens of MiB for a
			// file of millions of records — comes on top: a limit below
			// the live heap would have the collector run without end.
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			debug.SetMemoryLimit(32<<20 + int64(ms.HeapAlloc))
			w := bufio.NewWriterSize(e.stdout, 256<<10)
			first, end := 0, format.NumRecords(f)
			if cmd.Flags().Changed("name") {
				i, err := format.Find(f, name)
				if err != nil {
					return fileErr(path, err)
				}
				first, end = i, i+1
			}
			if cmd.Flags().Changed("head") && head < 0 {
				return usageErr("cat: --head wants a count of 0 or more, not %d", head)
			}
			if !cmd.Flags().Changed("head") {
				head = -1
			}
			err = catRecords(e, w, f, first, end, head)
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return fileErr(path, err)
			}
			return fileErr(path, f.Close())
		},
	}
	rf.add(cmd)
	cmd.Flags().StringVar(&name, "name", "", "print only the record (or table column) with exactly this name; may be empty")
	cmd.Flags().Int64Var(&head, "head", 0, "print only the first N values of each array and the first N rows of each table")
	return cmd
}

// catRecords prints the records [first, end) of f in order: consecutive
// table columns as one CSV table, every other record on its own. Records are described
// one at a time (format.RecordAt), never listed all at once. head, when
// not negative, is how many values of an array or rows of a table print.
func catRecords(e *env, w *bufio.Writer, f format.File, first, end int, head int64) error {
	// Where more than one record (or table) prints, a comment line names
	// each before its values; one record prints as it always has.
	named := tableEnd(f, first, end) < end
	for k := first; k < end; {
		r := format.RecordAt(f, k)
		if named && r.Kind != format.KindOpaque {
			if _, err := w.WriteString(nameLine(&r)); err != nil {
				return err
			}
		}
		if r.Kind == format.KindColumn {
			k0 := k
			k = tableEnd(f, k, end)
			var names []string // nil for the whole file: no selection to build
			if k0 > 0 || k < format.NumRecords(f) {
				for i := k0; i < k; i++ {
					names = append(names, format.RecordAt(f, i).Name)
				}
			}
			if err := catTable(w, f, names, head); err != nil {
				return err
			}
			continue
		}
		if err := catRecord(e, w, f, k, &r, head, named); err != nil {
			if loc := format.Located(nil); errors.As(err, &loc) {
				return err // names its file and where in it
			}
			return fmt.Errorf("record %q: %w", r.Name, err)
		}
		k++
	}
	return nil
}

// tableEnd returns where the record k prints to: past the columns of its
// table for a column, k+1 for any other record.
func tableEnd(f format.File, k, end int) int {
	if k >= end {
		return end
	}
	r := format.RecordAt(f, k)
	k++
	if r.Kind != format.KindColumn {
		return k
	}
	for k < end && format.RecordAt(f, k).Kind == format.KindColumn && sameTable(&r, format.RecordAt(f, k)) {
		k++
	}
	return k
}

// nameLine is the Futhark comment line that names record r, or the table
// of r where r is a column: "-- name\n". A table without a name of its own
// (one per file) gets none (""): its header line names its columns. A name
// that would not read back from the line (empty, or with control
// characters) prints as a Go string literal.
func nameLine(r *format.Record) string {
	name := r.Name
	if r.Kind == format.KindColumn {
		table, _ := r.Extra["table"].(string)
		if table == "" {
			return ""
		}
		name = table
	}
	if name == "" || strings.ContainsFunc(name, func(c rune) bool { return c < 0x20 || c == 0x7f || c == utf8.RuneError }) {
		name = strconv.Quote(name)
	}
	return "-- " + name + "\n"
}

// sameTable reports whether two columns are of one table: a file of
// several tables (HDF5's compound datasets) names each column's table in
// Extra["table"].
func sameTable(a *format.Record, b format.Record) bool {
	return a.Extra["table"] == b.Extra["table"]
}

// errEnough stops a stream once --head's count is printed.
var errEnough = errors.New("enough printed")

// headWriter passes on the header line and the first rows of CSV text,
// then fails with errEnough; line breaks inside quoted fields do not end
// a row.
type headWriter struct {
	w      io.Writer
	rows   int64 // rows still to pass, the header included
	quoted bool
}

func (h *headWriter) Write(p []byte) (int, error) {
	for i, c := range p {
		switch {
		case c == '"':
			h.quoted = !h.quoted
		case c == '\n' && !h.quoted:
			if h.rows--; h.rows == 0 {
				if _, err := h.w.Write(p[:i+1]); err != nil {
					return 0, err
				}
				return i + 1, errEnough
			}
		}
	}
	return h.w.Write(p)
}

// catTable prints the named columns of f, or all of f where names is nil,
// as CSV, with the registered CSV format's encoder: all rows, or the first
// head when head is not negative.
func catTable(w io.Writer, f format.File, names []string, head int64) error {
	csv, ok := format.Lookup("csv")
	if !ok || csv.Encode == nil {
		return errors.New("printing tables needs the csv format, which is not in this build")
	}
	var src format.Source = f
	if names != nil {
		var err error
		if src, err = format.Select(f, names...); err != nil {
			return err
		}
	}
	if head < 0 {
		return csv.Encode(w, src, nil)
	}
	if err := csv.Encode(&headWriter{w: w, rows: head + 1}, src, nil); !errors.Is(err, errEnough) {
		return err
	}
	return nil
}

// catRecord prints one record that is not a table column. named says
// that a serialized record that prints as text starts with its name line
// (one that does not names itself in its own comment line).
func catRecord(e *env, w *bufio.Writer, f format.File, i int, r *format.Record, head int64, named bool) error {
	switch r.Kind {
	case format.KindString:
		b, err := format.ReadAll(f, i, layout.RowMajor, layout.HostOrder())
		if err != nil {
			return err
		}
		_, err = w.Write(append(appendFutharkString(nil, string(b)), '\n'))
		return err
	case format.KindOpaque:
		if tr, ok := f.(format.TextReader); ok {
			first := ""
			if named {
				first = nameLine(r)
			}
			err := printText(w, tr, i, *r, first)
			if !errors.Is(err, errors.ErrUnsupported) {
				return err
			}
		}
		_, err := fmt.Fprintf(w, "-- %s: %s, %d bytes\n", r.Name, "serialized", r.Size)
		return err
	}
	return printArray(e, w, f, i, r, head)
}

// textBufs holds printArray's text buffers.
var textBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// wrapValues is how many values of a row share a line in cat's output.
const wrapValues = 1024

// printArray streams an array in Futhark's canonical text form
// (layout.ArrayText), or its first head values as a 1-D array when head
// is not negative. Complex numbers print as pairs of their parts.
func printArray(e *env, w *bufio.Writer, f format.File, i int, r *format.Record, head int64) error {
	t, shape := r.Type, r.Shape
	if !t.Valid() {
		return fmt.Errorf("%w: its type %s has no text form", errors.ErrUnsupported, r.TypeString())
	}
	n, err := layout.Count(shape)
	if err != nil {
		return err
	}
	if head >= 0 && len(shape) > 0 {
		if head < n || len(shape) > 1 {
			fmt.Fprintf(w, "-- %s: the first %d of %d values of %s%s, in row-major order\n", r.Name, min(head, n), n, layout.ShapeString(shape), t)
		}
		n = min(head, n)
		shape = []int64{n}
	}
	if t.IsComplex() {
		fmt.Fprintf(w, "-- %s: %s values as [..][2]%s arrays of (real, imaginary)\n", r.Name, t, t.Part())
		t, shape = t.Part(), append(append([]int64(nil), shape...), 2)
	}
	text, err := layout.NewArrayText(t, shape)
	if err != nil {
		return err
	}
	text.Wrap(wrapValues)
	// One buffer serves every record: a file of a million scalars must
	// not allocate a million of them.
	bp := textBufs.Get().(*[]byte)
	out := (*bp)[:0]
	defer func() { *bp = out[:0]; textBufs.Put(bp) }()
	if text.Len() > 0 {
		size := t.Size()
		bar := newProgress(e, text.Len()*int64(size), "cat "+r.Name)
		defer bar.Done()
		err = format.Stream(f, i, layout.RowMajor, layout.HostOrder(), func(chunk []byte) error {
			if text.Left() == 0 {
				return errEnough
			}
			bar.Add(int64(len(chunk)))
			// A few thousand elements at a time: the text stays small.
			for step := 4096 * size; len(chunk) > 0; chunk = chunk[min(step, len(chunk)):] {
				if out, err = spill(w, text.Append(out, chunk[:min(step, len(chunk))])); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil && !(errors.Is(err, errEnough) && text.Left() == 0) {
			return err
		}
	}
	out = append(text.End(out), '\n')
	_, err = w.Write(out)
	return err
}

// spill writes out to w once it holds 60 KiB and returns it emptied, so
// that the text of an array goes out in pieces of bounded size.
func spill(w io.Writer, out []byte) ([]byte, error) {
	if len(out) < 60<<10 {
		return out, nil
	}
	_, err := w.Write(out)
	return out[:0], err
}

// printText prints an array of text elements in Futhark's array form,
// each element a string literal, after the line first. Where the reader
// has no text for the record (errors.ErrUnsupported), nothing is written.
func printText(w *bufio.Writer, tr format.TextReader, i int, r format.Record, first string) error {
	text, err := layout.NewArrayText(layout.U8, r.Shape)
	if err != nil {
		return err
	}
	out := []byte(first)
	err = tr.ReadText(i, func(batch []string) error {
		for _, s := range batch {
			if out, err = spill(w, appendFutharkString(text.Next(out), s)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if text.Len() == 0 {
		out = append(out, "empty("+layout.ShapeString(r.Shape)+"string)"...)
	} else {
		out = text.End(out)
	}
	_, err = w.Write(append(out, '\n'))
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
