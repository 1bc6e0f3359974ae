package abf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/stretchr/testify/require"
)

// canonical reports whether the writer would produce data exactly: Format
// A or C, little-endian, canonical type strings, zero padding, nothing
// the writer cannot write, and no trailing bytes.
func canonical(t testing.TB, f *File, data []byte) bool {
	if f.version() == FormatB || f.TrailingBytes() != 0 || f.version() == FormatA && data[0] == 0 {
		return false
	}
	for i := range f.tab.len() {
		te := f.tab.at(i)
		e := te.record(string(te.key))
		if e.BigEndian || e.Unpadded || !rewritable(t, f, e, f.version()) {
			return false
		}
		if f.version() == FormatC && e.TypeString != canonicalType(e.Kind, e.Type, len(e.Shape)) {
			return false
		}
		if e.Kind == KindArray || e.Kind == KindBitArray {
			if e.Offset > int64(len(data)) {
				return false // an upstream empty tail: the writer pads it
			}
			for _, b := range data[te.hdrEnd():e.Offset] {
				if b != 0 {
					return false
				}
			}
		}
	}
	return true
}

// FuzzOpen parses arbitrary bytes: it must never panic, must fail only
// with *FormatError, must give records in order inside the file, and what
// it parsed must re-write to the same values (and the same bytes when the
// input is what the writer produces).
func FuzzOpen(f *testing.F) {
	for _, data := range goldenFiles(f) {
		f.Add(data)
	}
	f.Add(unhex(tv1Hex)[:100])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := exercise(t, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		out := rewrite(t, src, src.version())
		if canonical(t, src, data) {
			require.Equal(t, data, out, "canonical input re-written differently")
		}
		back, err := NewReader(bytes.NewReader(out), int64(len(out)), nil)
		require.NoError(t, err)
		var want []Entry
		for _, r := range src.Entries() {
			if rewritable(t, src, r, back.version()) {
				want = append(want, r)
			}
		}
		got := back.Entries()
		require.Len(t, got, len(want))
		for i, r := range want {
			g := got[i]
			require.Equal(t, r.Name, g.Name)
			require.Equal(t, r.Kind, g.Kind)
			require.Equal(t, r.Type, g.Type)
			require.Equal(t, r.Shape, g.Shape)
			require.Equal(t, lePayload(t, src, r), lePayload(t, back, g), "record %q", r.Name)
		}
		require.Equal(t, out, rewrite(t, back, back.version()), "re-writing is not idempotent")
	})
}

// FuzzFormat opens arbitrary bytes through package format and writes them
// back through the registered writer, which streams every record: what it
// writes must be what the package's own writer makes of the same records,
// and a record it refuses must be one ABF cannot re-create.
func FuzzFormat(f *testing.F) {
	for _, data := range goldenFiles(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in.abf"), filepath.Join(dir, "out.abf")
		require.NoError(t, os.WriteFile(in, data, 0o644))
		src, err := Open(in, nil)
		if err != nil {
			return
		}
		defer src.Close()
		all := true
		for _, r := range src.Entries() {
			all = all && rewritable(t, src, r, src.version())
		}
		version := map[Format]string{FormatA: "A", FormatB: "C", FormatC: "C"}[src.version()]
		err = format.Convert(in, out, nil, &format.Options{Params: map[string]string{"abf-version": version}})
		if !all {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, rewrite(t, src, src.version()), got)
	})
}
