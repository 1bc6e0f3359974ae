package csvtable

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// TestFieldsAreBounded: a field longer than MaxField is refused at its
// offset, without the memory or the time of the line it is on.
func TestFieldsAreBounded(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []struct {
		name     string
		content  string
		maxField int
		wantOff  int64 // -1: opens
		wantLine int
	}{
		{"a name at the limit", long(100) + "\n1\n", 100, -1, 0},
		{"a name past the limit", long(101) + "\n1\n", 100, 0, 1},
		{"a name past the limit before CRLF", long(101) + "\r\n1\r\n", 100, 0, 1},
		{"a name at the limit before CRLF", long(100) + "\r\n1\r\n", 100, -1, 0},
		{"a cell past the limit", "x,y\n1," + long(101) + "\n", 100, 6, 2},
		{"a cell past the limit, last in the file", "x,y\n1," + long(101), 100, 6, 2},
		{"a quoted cell at the limit, a doubled quote counting 2", "x\n\"" + long(98) + "\"\"\"\n", 100, -1, 0},
		{"a quoted cell past the limit", "x\n\"" + long(99) + "\"\"\"\n", 100, 2, 2},
		{"a quoted cell past the limit after a doubled quote", "x\n\"" + long(100) + "\"\"" + long(10) + "\"\n", 100, 2, 2},
		{"a quoted cell past the limit, not closed", "x\n\"" + long(1000), 100, 2, 2},
		{"no limit", "x\n" + long(1000) + "\n", -1, -1, 0},
		{"the default limit", "x\n" + long(DefaultMaxField+1) + "\n", 0, 2, 2},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.csv")
			require.NoError(t, os.WriteFile(path, []byte(c.content), 0o644))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			f, err := Open(path, &Options{MaxField: c.maxField})
			runtime.ReadMemStats(&after)
			if c.wantOff < 0 {
				require.NoError(t, err)
				require.NoError(t, f.Close())
				return
			}
			require.Error(t, err)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, c.wantOff, fe.Offset, "%v", err)
			assert.Equal(t, c.wantLine, fe.Line, "%v", err)
			assert.Contains(t, err.Error(), "the most a field may hold")
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))
		})
	}
	// The format's open takes the limit as the csv-max-field parameter.
	path := filepath.Join(dir, "p.csv")
	require.NoError(t, os.WriteFile(path, []byte("x\n"+long(200)+"\n"), 0o644))
	_, err := format.Open(path, &format.Options{Params: map[string]string{"csv-max-field": "100"}})
	assert.ErrorContains(t, err, "a field longer than 100 bytes")
	f, err := format.Open(path, &format.Options{Params: map[string]string{"csv-max-field": "200"}})
	require.NoError(t, err)
	f.Close()
}

// TestWideColumnReads: reading a wide table column by column (as the
// conversions to array formats do) finds each cell from the nearest mark,
// quoted fields with commas, line breaks and CRLF included, and takes no
// memory per column read.
func TestWideColumnReads(t *testing.T) {
	const cols, rows = 5000, 3
	var b strings.Builder
	for r := -1; r < rows; r++ {
		for c := range cols {
			if c > 0 {
				b.WriteByte(',')
			}
			switch {
			case r < 0 && c%7 == 3:
				fmt.Fprintf(&b, "\"c,%d\n\"", c) // a quoted name with a comma and a line break
			case r < 0:
				fmt.Fprintf(&b, "c%d", c)
			case c%markEvery == 0 && r == 1:
				fmt.Fprintf(&b, "\"%d\"", c*rows+r) // a quoted cell on a mark
			default:
				fmt.Fprint(&b, c*rows+r)
			}
		}
		b.WriteString("\r\n")
	}
	path := filepath.Join(t.TempDir(), "wide.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, cols, f.NumRecords())
	dst := make([]byte, 8*rows)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for c := range cols {
		require.Equal(t, layout.I64, f.types[c], "column %d", c)
		require.NoError(t, f.ReadArray(c, dst, 0, layout.RowMajor, binary.LittleEndian))
		for r := range rows {
			require.Equal(t, uint64(c*rows+r), binary.LittleEndian.Uint64(dst[8*r:]), "column %d, row %d", c, r)
		}
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "reading %d columns", cols)
	assert.Equal(t, "c,3\n", f.Record(3).Name)
	// The same cells as text, one column at a time.
	for _, c := range []int{0, 1, markEvery, 2*markEvery + 1, cols - 1} {
		var got []string
		require.NoError(t, f.ReadText(c, func(batch []string) error {
			got = append(got, batch...)
			return nil
		}))
		var want []string
		for r := range rows {
			want = append(want, fmt.Sprint(c*rows+r))
		}
		assert.Equal(t, want, got, "column %d", c)
	}
}

// FuzzColumnReads: a column read on its own (from the row's nearest
// mark) gives the values the whole-row scan gives, whatever the fields'
// quoting, and any field limit is an error, never a panic.
func FuzzColumnReads(f *testing.F) {
	wide := func(quoteEvery int) string {
		var b strings.Builder
		for r := -1; r < 2; r++ {
			for c := range 3*markEvery + 5 {
				if c > 0 {
					b.WriteByte(',')
				}
				switch {
				case r < 0:
					fmt.Fprintf(&b, "c%d", c)
				case quoteEvery > 0 && c%quoteEvery == 0:
					fmt.Fprintf(&b, "\"%d\"", c+r)
				default:
					fmt.Fprint(&b, c+r)
				}
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	f.Add(wide(0), 0)
	f.Add(wide(markEvery), 3)
	f.Add(wide(7), 100)
	f.Add("a,b\n1,2\n\"3\",4\r\n", 1)
	f.Fuzz(func(t *testing.T, in string, maxField int) {
		p := filepath.Join(t.TempDir(), "f.csv")
		require.NoError(t, os.WriteFile(p, []byte(in), 0o644))
		a, err := Open(p, &Options{MaxField: maxField})
		if err != nil {
			return
		}
		defer a.Close()
		var scanned [][]byte
		require.NoError(t, a.ScanTable(1<<10, func(_ int64, cols []format.Column) error {
			if scanned == nil {
				scanned = make([][]byte, len(cols))
			}
			for j, c := range cols {
				if _, vb, ok := layout.BytesOf(c.Values); ok {
					scanned[j] = append(scanned[j], vb...)
				}
			}
			return nil
		}))
		for j := range a.NumRecords() {
			typ := a.types[j]
			if !typ.Valid() || a.Len() == 0 {
				continue
			}
			dst := make([]byte, a.Len()*int64(typ.Size()))
			require.NoError(t, a.ReadArray(j, dst, 0, layout.RowMajor, binary.NativeEndian), "column %d", j)
			require.Equal(t, scanned[j], dst, "column %d: ReadArray and ScanTable differ", j)
		}
	})
}

// TestReadNulls: a column's nulls read on their own are its unquoted
// empty fields, not its quoted "" (the empty string), in a column past
// the first mark too.
func TestReadNulls(t *testing.T) {
	const cols = markEvery + 3
	var b strings.Builder
	for r := -1; r < 3; r++ {
		for c := range cols {
			if c > 0 {
				b.WriteByte(',')
			}
			switch {
			case r < 0:
				fmt.Fprintf(&b, "c%d", c)
			case r == 1:
				// null
			case r == 2:
				b.WriteString(`""`)
			default:
				fmt.Fprintf(&b, "t%d", c)
			}
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "nulls.csv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	for _, c := range []int{0, markEvery + 2} {
		var got []bool
		require.NoError(t, f.ReadNulls(c, func(batch []bool) error {
			got = append(got, batch...)
			return nil
		}))
		assert.Equal(t, []bool{false, true, false}, got, "column %d", c)
		assert.True(t, f.Record(c).Nullable)
	}
	assert.ErrorIs(t, f.ReadNulls(cols, func([]bool) error { return nil }), mmapfile.ErrOutOfRange)
}
