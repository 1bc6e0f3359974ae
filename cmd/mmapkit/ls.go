package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/mmapkit/mmapkit/format"
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
			var first error
			for _, path := range args {
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

// lsOne lists one file.
func lsOne(e *env, rf *readFlags, path string, asJSON bool) error {
	f, err := openInput(rf, path, mmapfile.ReadOnly, mmapfile.AdviceNormal)
	if err != nil {
		return err
	}
	defer f.Close()
	entries := lsEntries(f)
	if asJSON {
		err = writeLsJSON(e.stdout, path, f, entries)
	} else {
		err = writeLsTable(e.stdout, path, f, entries)
	}
	if err != nil {
		return fileErr(path, err)
	}
	return fileErr(path, f.Close())
}

// lsEntry is one line of ls: a record, or one column of a table.
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
	b, err := json.Marshal(plain(l))
	if err != nil || len(l.Extra) == 0 {
		return b, err
	}
	ext, err := json.Marshal(l.Extra)
	if err != nil {
		return nil, err
	}
	// Splice {"name":…} and {"layout":…} into one object.
	out := append(b[:len(b)-1:len(b)-1], ',')
	return append(out, ext[1:]...), nil
}

func lsEntries(f format.File) []lsEntry {
	var out []lsEntry
	for _, r := range f.Records() {
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
		out = append(out, e)
	}
	return out
}

func optInt(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func writeLsJSON(w io.Writer, path string, f format.File, entries []lsEntry) error {
	type doc struct {
		File    string    `json:"file"`
		Format  string    `json:"format"`
		Version string    `json:"version,omitempty"`
		Records []lsEntry `json:"records"`
	}
	if entries == nil {
		entries = []lsEntry{}
	}
	b, err := json.Marshal(doc{File: path, Format: f.Format(), Version: f.Version(), Records: entries})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func writeLsTable(w io.Writer, path string, f format.File, entries []lsEntry) error {
	bw := bufio.NewWriter(w)
	head := f.Format()
	if v := f.Version(); v != "" {
		head += ", version " + v
	}
	fmt.Fprintf(bw, "%s: %s, %d record(s)\n", path, head, len(entries))
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	storage := false
	for _, e := range entries {
		_, ok := e.Extra["storage"].(string)
		storage = storage || ok
	}
	head = "NAME\tTYPE\tSHAPE\tORDER\tOFFSET\tBYTES"
	if storage {
		head += "\tSTORAGE"
	}
	fmt.Fprintln(tw, head)
	for _, e := range entries {
		name := strconv.Quote(e.Name)
		if isPlainName(e.Name) {
			name = e.Name
		}
		typ := e.Type
		if e.Nullable != nil && *e.Nullable {
			typ += " null"
		}
		if l, ok := e.Extra["layout"].(string); ok && l != "dense" {
			typ += " (" + l + ")"
		}
		if enc, ok := e.Extra["encoding"].(string); ok && enc == "text" {
			typ += " (text)"
		}
		shape := layout.ShapeString(e.Shape)
		if len(e.Shape) == 0 {
			shape = "scalar"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s", name, typ, shape, e.Order, optString(e.Offset), optString(e.NBytes))
		if storage {
			s, _ := e.Extra["storage"].(string)
			fmt.Fprintf(tw, "\t%s", s)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
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
