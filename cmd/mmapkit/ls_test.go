package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"testing"
	"text/tabwriter"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeFile is a format.File of records only.
type fakeFile struct {
	recs    []format.Record
	version string
}

func (f *fakeFile) Records() []format.Record { return f.recs }
func (f *fakeFile) ReadArray(int, []byte, int64, layout.Order, binary.ByteOrder) error {
	return nil
}
func (f *fakeFile) Format() string  { return "fake" }
func (f *fakeFile) Version() string { return f.version }
func (f *fakeFile) Close() error    { return nil }

// lsTableAtOnce and lsJSONAtOnce are how ls printed before it streamed:
// every line through text/tabwriter, the whole object through one
// json.Marshal. The streaming writers must print the same bytes.
func lsTableAtOnce(w io.Writer, path string, f format.File) {
	var entries []lsEntry
	for _, r := range f.Records() {
		entries = append(entries, lsEntryOf(&r))
	}
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
	tw.Flush()
	bw.Flush()
}

func lsJSONAtOnce(t *testing.T, path string, f format.File) string {
	type doc struct {
		File    string    `json:"file"`
		Format  string    `json:"format"`
		Version string    `json:"version,omitempty"`
		Records []lsEntry `json:"records"`
	}
	entries := []lsEntry{}
	for _, r := range f.Records() {
		entries = append(entries, lsEntryOf(&r))
	}
	// Not HTML-escaped: "<f8" stays "<f8" for grep.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(doc{File: path, Format: f.Format(), Version: f.Version(), Records: entries}))
	return b.String()
}

// ls prints, record by record, what it printed when it held every line:
// the columns as wide as text/tabwriter makes them (widths in runes, names
// of any script, quoted names, a storage column or none), and the same
// JSON (HTML characters as they are, extra fields sorted).
func TestLsStreamsTheSameBytes(t *testing.T) {
	rec := func(name string, typ layout.Type, shape []int64, off, size int64, extra map[string]any) format.Record {
		return format.Record{Array: layout.Array{Name: name, Type: typ, Shape: shape, Order: layout.RowMajor, Offset: off, Size: size}, Extra: extra}
	}
	nullable := rec("größe", layout.F64, []int64{3}, -1, -1, nil)
	nullable.Nullable, nullable.Kind = true, format.KindColumn
	named := rec("x", layout.Invalid, []int64{2}, 64, 10, nil)
	named.TypeName, named.Order = "bytes5", layout.ColMajor
	plain := []format.Record{
		rec("a", layout.I8, []int64{}, 7, 1, map[string]any{"encoding": "binary"}),
		rec("日本語の名前", layout.F32, []int64{1000, 20}, 123456789, 80000, nil),
		rec("with space", layout.U64, []int64{0}, 0, 0, map[string]any{"encoding": "text"}),
		rec("", layout.Bool, nil, -1, 5, map[string]any{"layout": "csr", "note": "<&>"}),
		rec("bad\xffutf8", layout.I16, []int64{1, 2, 3}, 1, 12, map[string]any{"layout": "dense"}),
		nullable, named,
	}
	stored := append(append([]format.Record(nil), plain...),
		rec("/g/z", layout.F64, []int64{4096, 4096}, -1, 1<<27, map[string]any{"storage": "chunks [512][512], zstd(3)", "chunks": []int64{512, 512}}),
		rec("/ü", layout.I32, []int64{5}, -1, 20, map[string]any{"storage": "überall"}))
	for name, f := range map[string]*fakeFile{
		"none":    {version: "1"},
		"plain":   {recs: plain, version: "C"},
		"storage": {recs: stored},
	} {
		const path = "dir/<x>.bin"
		var want, got bytes.Buffer
		lsTableAtOnce(&want, path, f)
		require.NoError(t, writeLsTable(&got, path, f))
		assert.Equal(t, want.String(), got.String(), name)
		got.Reset()
		require.NoError(t, writeLsJSON(&got, path, f))
		assert.Equal(t, lsJSONAtOnce(t, path, f), got.String(), name)
	}
}

// TestLsJSONKeepsAngleBrackets: NumPy's type strings ("<f8") print as
// they are, so that grep finds them; encoding/json would write \u003c.
func TestLsJSONKeepsAngleBrackets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, npy.Save(path, []int64{2}, layout.RowMajor, []float64{1, 2}))
	out := mustMk(t, "ls", "--json", path)
	assert.Contains(t, out, `"descr":"<f8"`)
	assert.NotContains(t, out, `\u003c`)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), "still JSON")
}
