package npy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// allocatedBy is how many bytes fn allocates on the heap.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// keptBy is how many bytes of the heap fn leaves in use after a
// collection.
func keptBy(fn func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestOpenMemoryFollowsTheHeader: what a header declares (its rank, its
// keys, its fields, an archive's members) cannot make opening take memory
// out of proportion to the header's own bytes. Ranks above MaxRank are
// refused before their entries are read, as NumPy refuses them.
func TestOpenMemoryFollowsTheHeader(t *testing.T) {
	ones := func(n int) string { return "(" + strings.Repeat("1, ", n) + ")" }
	fields := func(n int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			fmt.Fprintf(&b, "('f%d', '|u1'), ", i)
		}
		return b.String() + "]"
	}
	manyMembers := func(n int) []byte {
		var ms []rawMember
		for i := range n {
			ms = append(ms, stored(fmt.Sprintf("a%d.npy", i), npyBytes(1, header("'<f8'", "(1,)"), make([]byte, 8))))
		}
		return zipBytes(ms, nil)
	}
	cases := []struct {
		name    string
		file    []byte
		wantErr string // "" when the file opens
		records int    // records format.Open lists, when it opens
		perByte uint64 // bytes allocated per byte of file, at most
		kept    int64  // bytes kept with the file open per byte of file, at most; 0: not checked
	}{
		{"rank 64 opens", npyBytes(1, header("'<f8'", ones(64)), make([]byte, 8)), "", 1, 64, 0},
		{"rank 65", npyBytes(1, header("'<f8'", ones(65)), make([]byte, 8)), "shape has more than 64 entries", 0, 64, 0},
		{"rank 1,000,000", npyBytes(2, header("'<f8'", ones(1_000_000)), make([]byte, 8)), "shape has more than 64 entries", 0, 2, 0},
		{"rank 1,000,000 in parentheses", npyBytes(2, header("'<f8'", "("+ones(1_000_000)+")"), make([]byte, 8)), "shape has more than 64 entries", 0, 2, 0},
		{"an unknown key holding 1,000,000 items", npyBytes(2, "{'x': "+ones(1_000_000)+", "+header("'<f8'", "(1,)")[1:], make([]byte, 8)), "unexpected key 'x'", 0, 2, 0},
		{"fortran_order holding 1,000,000 items", npyBytes(2, "{'descr': '<f8', 'fortran_order': "+ones(1_000_000)+", 'shape': (1,)}", make([]byte, 8)), "fortran_order is not True or False", 0, 2, 0},
		{"a descr of 1,000,000 ints", npyBytes(2, header("["+strings.Repeat("1, ", 1_000_000)+"]", "(1,)"), make([]byte, 8)), "a field must be (name, descr) or (name, descr, shape)", 0, 2, 0},
		{"a field of rank 65", npyBytes(1, header("[('a', '|u1', "+ones(65)+")]", "(1,)"), make([]byte, 1)), "a field's shape has 65 dimensions", 0, 64, 0},
		// A field is 28 bytes of the dtype's field table (its name a
		// part of the header's text, which is kept) and 12 of the record
		// index, its record described on demand, and no literal is kept
		// while the header is parsed: about 7.5 bytes allocated per
		// header byte; 41 when each field was a format.Record and three
		// literals, 76 before records shared their maps.
		{"100,000 fields", npyBytes(2, header(fields(100_000), "(1,)"), make([]byte, 100_000)), "", 100_000, 9, 4},
		// A member's header dict is read from the parser's stack, not
		// copied, and arrays of one type share their records' facts:
		// 6.9 bytes allocated per archive byte (13.5 with the copy and
		// a Record and Extra kept for each member).
		{"10,000 members", manyMembers(10_000), "", 10_000, 9, 5},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			require.NoError(t, os.WriteFile(path, c.file, 0o644))
			var f format.File
			var err error
			var kept int64
			used := allocatedBy(func() {
				kept = keptBy(func() { f, err = format.Open(path, &format.Options{Format: "npy"}) })
			})
			if c.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrHeader)
				assert.Contains(t, err.Error(), c.wantErr)
				assert.Contains(t, err.Error(), path)
			} else {
				require.NoError(t, err)
				t.Logf("%d kept with the file open (%.1f per byte)", kept, float64(kept)/float64(len(c.file)))
				if c.kept > 0 && !raceEnabled {
					// What stays of 100,000 fields is about the header's
					// text and the fields' table: 3.4 bytes per header
					// byte (it was 17).
					assert.LessOrEqual(t, kept, c.kept*int64(len(c.file))+1<<20, "opening %d bytes kept %d", len(c.file), kept)
				}
				assert.Len(t, f.Records(), c.records)
				require.NoError(t, f.Close())
			}
			limit := c.perByte*uint64(len(c.file)) + 1<<20
			t.Logf("%d bytes: %d allocated (%.1f per byte)", len(c.file), used, float64(used)/float64(len(c.file)))
			if !raceEnabled { // the race detector's sync.Pool drops what is put back, on purpose
				assert.LessOrEqual(t, used, limit, "opening %d bytes allocated %d", len(c.file), used)
			}
			// The same bytes from memory.
			_, err = NewReader(bytes.NewReader(c.file), int64(len(c.file)), nil)
			assert.Equal(t, c.wantErr == "", err == nil, "%v", err)
		})
	}
}

// TestWritersRefuseRanksNumPyCannotRead: an array of more than MaxRank
// dimensions is refused by every writer, naming the limit, and no file
// is left behind.
func TestWritersRefuseRanksNumPyCannotRead(t *testing.T) {
	dir := t.TempDir()
	shape := make([]int64, MaxRank+1)
	for i := range shape {
		shape[i] = 1
	}
	dt, err := DTypeOf(layout.F64)
	require.NoError(t, err)
	cases := []struct {
		name  string
		write func(path string) error
	}{
		{"Save", func(path string) error { return Save(path, shape, layout.RowMajor, []float64{1}) }},
		{"Create", func(path string) error {
			f, err := Create(path, Header{DType: dt, Shape: shape}, nil)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"Encode", func(string) error { _, err := (&Header{DType: dt, Shape: shape}).Encode(); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".npy")
			err := c.write(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "65 dimensions; NumPy arrays have at most 64")
			assert.NoFileExists(t, path)
		})
	}
	ok := shape[:MaxRank]
	require.NoError(t, Save(filepath.Join(dir, "64.npy"), ok, layout.RowMajor, []float64{1}))
}

// textTable is a memTable whose cells are stored as text (as a CSV's):
// it reads a column's text and nulls on their own, and counts its scans
// of the whole table.
type textTable struct {
	memTable
	scans int
}

func (m *textTable) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	m.scans++
	return m.memTable.ScanTable(batch, fn)
}

func (m *textTable) ScanTableText(batch int, _ []bool, fn func(first int64, cols []format.Column) error) error {
	return m.ScanTable(batch, fn)
}

func (m *textTable) ReadText(i int, fn func(batch []string) error) error { return fn(m.text[i]) }

func (m *textTable) ReadNulls(i int, fn func(batch []bool) error) error {
	null := make([]bool, len(m.text[i]))
	for k, reason := range m.nulls[i] {
		null[k] = reason >= 0
	}
	return fn(null)
}

// TestWideNullableTextToNPZ: a table of nullable text columns becomes one
// member per column and one per column's nulls, each read on its own,
// never by a scan of the whole table for each column (which made a wide
// CSV's conversion quadratic in its columns).
func TestWideNullableTextToNPZ(t *testing.T) {
	const cols, rows = 300, 3
	src := &textTable{memTable: memTable{&memSource{text: map[int][]string{}, nulls: map[int][]int8{}}}}
	for c := range cols {
		src.recs = append(src.recs, format.Record{Array: layout.Array{Name: fmt.Sprint("c", c), Type: layout.Invalid, Shape: []int64{rows}, Offset: -1}, Kind: format.KindColumn, TypeName: "string", Nullable: true})
		src.data = append(src.data, nil)
		src.text[c] = []string{fmt.Sprint("t", c), "", ""}
		src.nulls[c] = []int8{-1, 0, -1} // row 1 is null, row 2 the empty string
	}
	p := filepath.Join(t.TempDir(), "wide.npz")
	require.NoError(t, format.Write(p, src, nil))
	assert.Zero(t, src.scans, "scans of the whole table for %d columns", cols)

	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Arrays(), 2*cols)
	for _, c := range []int{0, 1, cols - 1} {
		mask, err := Read[bool](f, fmt.Sprint("c", c, MaskSuffix))
		require.NoError(t, err)
		assert.Equal(t, []bool{false, true, false}, mask, "column %d", c)
		var text []string
		require.NoError(t, f.ReadText(slices.IndexFunc(f.Records(), func(r format.Record) bool { return r.Name == fmt.Sprint("c", c) }), func(b []string) error {
			text = append(text, b...)
			return nil
		}))
		assert.Equal(t, []string{fmt.Sprint("t", c), "", ""}, text, "column %d", c)
	}
}

// listerTable is a table of one-row i64 columns that describes each on
// demand, as a CSV does, and counts the lists of them it builds.
type listerTable struct {
	cols  int
	lists int
}

func (l *listerTable) Records() []format.Record {
	l.lists++
	recs := make([]format.Record, l.cols)
	for i := range recs {
		recs[i] = l.Record(i)
	}
	return recs
}
func (l *listerTable) NumRecords() int { return l.cols }
func (l *listerTable) Record(i int) format.Record {
	return format.Record{Array: layout.Array{Name: fmt.Sprint("c", i), Type: layout.I64, Shape: []int64{1}, Offset: -1, Size: 8}, Kind: format.KindColumn}
}
func (l *listerTable) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	bo.PutUint64(dst, uint64(i))
	return nil
}

// TestManyMembersWrittenInBoundedMemory: an archive of one member per
// column of a wide table is written record by record (the source's list
// of records is never built: for a CSV of a million columns, 120 MB),
// with little garbage per member: its header's text is built in the
// buffer that holds it, the list of members doubles as it grows, and
// each member's local header, extra field and directory entry are built
// in buffers the writer reuses.
func TestManyMembersWrittenInBoundedMemory(t *testing.T) {
	const cols = 50_000
	p := filepath.Join(t.TempDir(), "wide.npz")
	var err error
	src := &listerTable{cols: cols}
	used := allocatedBy(func() { err = format.Write(p, src, nil) })
	require.NoError(t, err)
	t.Logf("%d members: %d bytes allocated, %.0f per member", cols, used, float64(used)/cols)
	assert.Zero(t, src.lists, "lists of records built")
	if !raceEnabled { // the race detector's sync.Pool drops what is put back, on purpose
		assert.LessOrEqual(t, used, uint64(cols*640+1<<20)) // 785 per member before
	}

	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Arrays(), cols)
	for _, i := range []int{0, 1, cols - 1} {
		v, err := Read[int64](f, fmt.Sprint("c", i))
		require.NoError(t, err)
		assert.Equal(t, []int64{int64(i)}, v)
	}
}

// TestCopyMemoryFollowsTheHeader: a .npy of 100,000 fields converted to a
// .npy or an .npz keeps its header's text as np.save writes it, written
// from the fields' table: no Field, and no string, per field.
func TestCopyMemoryFollowsTheHeader(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 100_000 {
		fmt.Fprintf(&b, "('f%d', '<f8'), ", i)
	}
	file := npyBytes(2, header(b.String()+"]", "(2,)"), make([]byte, 2*8*100_000))
	dir := t.TempDir()
	src := filepath.Join(dir, "f.npy")
	require.NoError(t, os.WriteFile(src, file, 0o644))
	hdr := len(file) - 2*8*100_000
	for _, out := range []string{"o.npy", "o.npz"} {
		t.Run(out, func(t *testing.T) {
			var err error
			used := allocatedBy(func() {
				err = format.Convert(src, filepath.Join(dir, out), nil, &format.Options{Params: map[string]string{"npy-large-headers": "true"}})
			})
			require.NoError(t, err)
			t.Logf("%d header bytes: %d allocated (%.1f per byte)", hdr, used, float64(used)/float64(hdr))
			if !raceEnabled { // the race detector's sync.Pool drops what is put back, on purpose
				// Opening (about 7.5 per byte) and the text written
				// once into a buffer of its size: 9.6 per byte; 58
				// when the header was parsed into a tree and each field
				// became a Field and a few strings to be written.
				assert.LessOrEqual(t, used, uint64(12*hdr+2<<20))
			}
		})
	}
	f, err := Open(filepath.Join(dir, "o.npy"), nil)
	require.NoError(t, err)
	defer f.Close()
	a, _ := f.Lookup("0")
	assert.Len(t, a.DType.Fields, 100_000)
	assert.Equal(t, "f99999", a.DType.Fields[99_999].Name)
}

// TestScanWideTableMemory: a table of 100,000 columns (a 1-D structured
// array) is scanned with a few small slices per column (about 250
// bytes), not a record or a target each, although the file keeps no
// description of its columns.
func TestScanWideTableMemory(t *testing.T) {
	const cols = 100_000
	var b strings.Builder
	b.WriteString("[")
	for i := range cols {
		fmt.Fprintf(&b, "('f%d', '<f8'), ", i)
	}
	path := filepath.Join(t.TempDir(), "wide.npy")
	require.NoError(t, os.WriteFile(path, npyBytes(2, header(b.String()+"]", "(2,)"), make([]byte, 2*8*cols)), 0o644))
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	var got int
	used := allocatedBy(func() {
		err = f.ScanTable(0, func(first int64, c []format.Column) error {
			got += len(c)
			return nil
		})
	})
	require.NoError(t, err)
	assert.Equal(t, cols, got)
	t.Logf("%d columns: %d bytes allocated, %.0f per column", cols, used, float64(used)/cols)
	if !raceEnabled {
		assert.LessOrEqual(t, used, uint64(cols*300+1<<20))
	}
}
