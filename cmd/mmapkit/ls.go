package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/spf13/cobra"
)

func newLsCmd(e *env) *cobra.Command {
	var rf readFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [--json] FILE",
		Short: "List the records of a file: name, type, shape, order, payload offset, bytes",
		Long: `ls lists the records of an array file: name, element type, logical shape, storage order,
payload offset and payload bytes. The format is detected from the extension (.abf .dbdf .fut .in
.out .data .scidb .csv) or the bytes (ABF, Futhark); --format overrides; SciDB files need
--scidb-format '(...)'. Frame columns and SciDB attributes are one record each, with offset null
where the values are not one contiguous run.`,
		Example: `  mmapkit ls data.abf
  mmapkit ls --json matrix.dbdf
  mmapkit ls --scidb-format '(int64, double null)' cells.scidb`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openSource(e, args[0], openOptionsFrom(&rf))
			if err != nil {
				return err
			}
			defer s.Close()
			entries := lsEntries(s)
			if asJSON {
				err = writeLsJSON(e.stdout, s, entries)
			} else {
				err = writeLsTable(e.stdout, s, entries)
			}
			if err != nil {
				return fileErr(args[0], err)
			}
			return fileErr(args[0], s.Close())
		},
	}
	rf.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object (file, format, version, records)")
	return cmd
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

// MarshalJSON writes the fixed fields in design.md's order, then the extra
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

func lsEntries(s *source) []lsEntry {
	var out []lsEntry
	for _, r := range s.records {
		if r.kind == kindTable {
			for _, c := range r.table.columns {
				shape := []int64{r.table.rows}
				if r.table.rows < 0 {
					shape = []int64{}
				}
				e := lsEntry{Name: c.name, Type: c.typeName, Shape: shape, Order: "row",
					Offset: optInt(c.offset), NBytes: optInt(c.nbytes)}
				if c.nullable {
					t := true
					e.Nullable = &t
				}
				out = append(out, e)
			}
			continue
		}
		shape := r.shape
		if shape == nil {
			shape = []int64{}
		}
		nb := r.nbytes
		out = append(out, lsEntry{Name: r.name, Type: r.typeName, Shape: shape, Order: r.order.String(),
			Offset: optInt(r.offset), NBytes: &nb, Extra: r.extra})
	}
	return out
}

func optInt(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func writeLsJSON(w io.Writer, s *source, entries []lsEntry) error {
	type doc struct {
		File    string    `json:"file"`
		Format  string    `json:"format"`
		Version string    `json:"version,omitempty"`
		Records []lsEntry `json:"records"`
	}
	if entries == nil {
		entries = []lsEntry{}
	}
	b, err := json.Marshal(doc{File: s.file, Format: s.format, Version: s.version, Records: entries})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func writeLsTable(w io.Writer, s *source, entries []lsEntry) error {
	bw := bufio.NewWriter(w)
	head := s.format
	if s.version != "" {
		head += ", version " + s.version
	}
	fmt.Fprintf(bw, "%s: %s, %d record(s)\n", s.file, head, len(entries))
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTYPE\tSHAPE\tORDER\tOFFSET\tBYTES")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, typ, shape, e.Order, optString(e.Offset), optString(e.NBytes))
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
