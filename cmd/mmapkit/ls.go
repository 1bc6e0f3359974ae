package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/plainjson"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/spf13/cobra"
)

func newLsCmd(e *env) *cobra.Command {
	var rf readFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [--json] FILE...",
		Short: "List the records of files: name, type, shape, order, payload offset, bytes",
		Long: `ls lists the records of array files: name, element type, logical shape, storage order,
payload offset and payload bytes. The format is detected from the extension or the bytes; --format
overrides; SciDB files need --scidb-format '(...)'. Table columns (frame columns, SciDB
attributes, structured fields) are one record each, with offset null where the values are not one
contiguous run. Several files are listed one after another (--json: one JSON object per line).`,
		Example: `  mmapkit ls data.abf
  mmapkit ls --json matrix.dbdf
  mmapkit ls *.npy
  mmapkit ls --scidb-format '(int64, double null)' cells.scidb`,
		Args: minArgs(1, "FILE..."),
		RunE: func(cmd *cobra.Command, args []string) error {
			// What ls keeps is the formats' indexes; what it allocates
			// besides is a record's description at a time, garbage at
			// once. Collecting at a quarter above what is live (not
			// twice it) keeps the resident set near the indexes' size.
			if os.Getenv("GOGC") == "" {
				debug.SetGCPercent(25)
			}
			var first error
			bar := newCountProgress(e, int64(len(args)), "ls", "files")
			defer bar.Done()
			for k, path := range args {
				bar.Set(int64(k))
				err := lsOne(e, &rf, path, asJSON)
				if err != nil {
					var ex *exitError
					if len(args) == 1 || (errors.As(err, &ex) && ex.code == 2) {
						return err
					}
					// Go on with the other files; report each failure.
					fmt.Fprintln(e.stderr, "mmapkit: "+err.(*exitError).message())
					if first == nil {
						first = &exitError{code: 1}
					}
				}
			}
			return first
		},
	}
	rf.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per file (file, format, version, records)")
	return cmd
}

// lsOne lists one file. It streams: the records are described one at a
// time (format.EachRecord) and never held all at once, so that a file of
// millions of records lists in memory proportional to the format's own
// index, not to the listing.
func lsOne(e *env, rf *readFlags, path string, asJSON bool) error {
	f, err := openInput(rf, path, mmapfile.ReadOnly, mmapfile.AdviceNormal)
	if err != nil {
		return err
	}
	defer f.Close()
	if asJSON {
		err = writeLsJSON(e.stdout, path, f)
	} else {
		err = writeLsTable(e.stdout, path, f)
	}
	if err != nil {
		return fileErr(path, err)
	}
	return fileErr(path, f.Close())
}

// lsEntry is one record of ls --json.
type lsEntry struct {
	Name     string         `json:"name"`
	Type     string         `json:"type"`
	Shape    []int64        `json:"shape"`
	Order    string         `json:"order"`
	Offset   *int64         `json:"offset"`
	NBytes   *int64         `json:"nbytes"`
	Nullable *bool          `json:"nullable,omitempty"`
	Extra    map[string]any `json:"-"`
}

// MarshalJSON writes the fixed fields in their documented order, then the extra
// fields in sorted order.
func (l lsEntry) MarshalJSON() ([]byte, error) {
	type plain lsEntry
	b, err := plainjson.Marshal(plain(l))
	if err != nil || len(l.Extra) == 0 {
		return b, err
	}
	ext, err := plainjson.Marshal(l.Extra)
	if err != nil {
		return nil, err
	}
	// Splice {"name":…} and {"layout":…} into one object.
	out := append(b[:len(b)-1:len(b)-1], ',')
	return append(out, ext[1:]...), nil
}

func lsEntryOf(r *format.Record) lsEntry {
	shape := r.Shape
	if shape == nil {
		shape = []int64{}
	}
	e := lsEntry{Name: r.Name, Type: r.TypeString(), Shape: shape, Order: r.Order.String(),
		Offset: optInt(r.Offset), NBytes: optInt(r.Size), Extra: r.Extra}
	if r.Nullable {
		t := true
		e.Nullable = &t
	}
	return e
}

func optInt(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// writeLsJSON writes one JSON object, {"file", "format", "version",
// "records": [...]}, on one line, a record at a time.
func writeLsJSON(w io.Writer, path string, f format.File) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	field := func(sep, key, value string) error {
		b, err := plainjson.Marshal(value)
		if err != nil {
			return err
		}
		bw.WriteString(sep + `"` + key + `":`)
		_, err = bw.Write(b)
		return err
	}
	if err := field("{", "file", path); err != nil {
		return err
	}
	if err := field(",", "format", f.Format()); err != nil {
		return err
	}
	if v := f.Version(); v != "" {
		if err := field(",", "version", v); err != nil {
			return err
		}
	}
	bw.WriteString(`,"records":[`)
	err := format.EachRecord(f, func(i int, r *format.Record) error {
		b, err := plainjson.Marshal(lsEntryOf(r))
		if err != nil {
			return err
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		_, err = bw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	bw.WriteByte(']')
	if fi, ok := f.(format.FileInfo); ok {
		info := fi.FileInfo()
		keys := make([]string, 0, len(info))
		for k := range info {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b, err := json.Marshal(info[k])
			if err != nil {
				return err
			}
			bw.WriteString(`,` + strconv.Quote(k) + `:`)
			bw.Write(b)
		}
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// The columns of the ls table; lsStorage is printed only when some record
// says how its values are stored.
const (
	lsName = iota
	lsType
	lsShape
	lsOrder
	lsOffset
	lsBytes
	lsStorage
	lsColumns
)

var lsHead = [lsColumns]string{"NAME", "TYPE", "SHAPE", "ORDER", "OFFSET", "BYTES", "STORAGE"}

// lsCells returns the cells of a record's line in the table, and whether
// it has a storage cell.
func lsCells(r *format.Record) ([lsColumns]string, bool) {
	var c [lsColumns]string
	c[lsName] = strconv.Quote(r.Name)
	if isPlainName(r.Name) {
		c[lsName] = r.Name
	}
	typ := r.TypeString()
	if r.Nullable {
		typ += " null"
	}
	if l, ok := r.Extra["layout"].(string); ok && l != "dense" {
		typ += " (" + l + ")"
	}
	if enc, ok := r.Extra["encoding"].(string); ok && enc == "text" {
		typ += " (text)"
	}
	c[lsType] = typ
	c[lsShape] = layout.ShapeString(r.Shape)
	if len(r.Shape) == 0 {
		c[lsShape] = "scalar"
	}
	c[lsOrder] = r.Order.String()
	c[lsOffset] = optString(optInt(r.Offset))
	c[lsBytes] = optString(optInt(r.Size))
	s, storage := r.Extra["storage"].(string)
	c[lsStorage] = s
	return c, storage
}

// writeLsTable writes a heading line and a table of the records, columns
// aligned as text/tabwriter aligns them (each column as wide as its widest
// cell in runes, plus two spaces; the last column unpadded). It makes two
// passes over the records, the first for the widths, so that no line is
// held.
func writeLsTable(w io.Writer, path string, f format.File) error {
	var width [lsColumns]int
	for k, h := range lsHead {
		width[k] = utf8.RuneCountInString(h)
	}
	n, storage := 0, false
	err := format.EachRecord(f, func(i int, r *format.Record) error {
		c, st := lsCells(r)
		for k := range c {
			width[k] = max(width[k], utf8.RuneCountInString(c[k]))
		}
		storage = storage || st
		n++
		return nil
	})
	if err != nil {
		return err
	}
	last := lsBytes
	if storage {
		last = lsStorage
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	head := f.Format()
	if v := f.Version(); v != "" {
		head += ", version " + v
	}
	fmt.Fprintf(bw, "%s: %s, %d record(s)\n", path, head, n)
	line := func(c *[lsColumns]string) {
		for k := 0; k < last; k++ {
			bw.WriteString(c[k])
			for pad := width[k] + 2 - utf8.RuneCountInString(c[k]); pad > 0; pad-- {
				bw.WriteByte(' ')
			}
		}
		bw.WriteString(c[last])
		bw.WriteByte('\n')
	}
	line(&lsHead)
	err = format.EachRecord(f, func(i int, r *format.Record) error {
		c, _ := lsCells(r)
		line(&c)
		return nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

func optString(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// isPlainName reports whether a name prints unquoted in the ls table.
func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == '"' || r == 0x7f || r == '\uFFFD' {
			return false
		}
	}
	return true
}
