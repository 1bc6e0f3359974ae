package daphne

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWideFrameMemory opens a frame of a million si8 columns (4 rows: 4 MB
// of values, a 39 MB .meta): with its .meta and without, what the open
// allocates and what the open File keeps must stay at a few dozen bytes a
// column (it was 656 allocated and 97 kept: a tree of JSON values per
// schema entry, one label string per column).
func TestWideFrameMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 47 MB frame")
	}
	const n = 1 << 20
	cols := make([]any, n)
	for i := range cols {
		cols[i] = []int8{int8(i), 1, 2, 3}
	}
	p := filepath.Join(t.TempDir(), "wide.dbdf")
	require.NoError(t, WriteFrame(p, &Frame{Rows: 4, Columns: cols}, nil))
	cols = nil
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	for _, tc := range []struct {
		name        string
		open        func() (*File, error)
		alloc, kept uint64 // bytes per column
	}{
		{"with .meta", func() (*File, error) { return Open(p, nil) }, 128, 64},
		{"without .meta", func() (*File, error) {
			r, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { r.Close() })
			return NewReader(r, int64(len(data)), nil)
		}, 64, 32},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f, err := tc.open()
		require.NoError(t, err, tc.name)
		runtime.ReadMemStats(&after)
		alloc := (after.TotalAlloc - before.TotalAlloc) / n
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept := (after.HeapAlloc - before.HeapAlloc) / n
		t.Logf("%s: %d bytes allocated, %d kept per column", tc.name, alloc, kept)
		assert.LessOrEqual(t, alloc, tc.alloc, tc.name)
		assert.LessOrEqual(t, kept, tc.kept, tc.name)
		// The labels are the frame's: col_<i> from the .meta, and the same
		// from the file's own label bytes without it.
		assert.Equal(t, "col_1048575", f.label(n-1), tc.name)
		fr, err := ReadFrameRange(f, 2, 3)
		require.NoError(t, err)
		assert.Equal(t, []int8{2}, fr.Columns[n-1])
		runtime.KeepAlive(f)
		require.NoError(t, f.Close())
	}
}

// TestFrameLabelsFromFile: without a .meta, a frame written here keeps its
// labels (the file holds their bytes); DAPHNE's pointer bytes, repeated or
// invalid labels give col_<i>.
func TestFrameLabelsFromFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		labels []string
		want   []string
	}{
		{[]string{"a", "bc", "ünï"}, []string{"a", "bc", "ünï"}},
		{[]string{"a", "", "c"}, []string{"a", "", "c"}},
		{[]string{"x\ty", "b", "c"}, []string{"col_0", "col_1", "col_2"}},
	} {
		p := filepath.Join(dir, "f.dbdf")
		cols := []any{[]int8{1}, []int32{2}, []float64{3}}
		require.NoError(t, WriteFrame(p, &Frame{Rows: 1, Labels: tc.labels, Columns: cols}, &WriteOptions{NoMeta: true}))
		f, err := Open(p, nil)
		require.NoError(t, err)
		assert.Equal(t, tc.want, f.Labels())
		require.NoError(t, f.Close())
	}
	// Bytes that would be labels but repeat: col_<i>.
	p := filepath.Join(dir, "dup.dbdf")
	require.NoError(t, WriteFrame(p, &Frame{Rows: 1, Labels: []string{"a", "b"}, Columns: []any{[]int8{1}, []int8{2}}}, &WriteOptions{NoMeta: true}))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[18+2+2+1+2] = 'a' // the second label's byte
	require.NoError(t, os.WriteFile(p, b, 0o644))
	f, err := Open(p, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"col_0", "col_1"}, f.Labels())
	require.NoError(t, f.Close())
}

// TestFrameColumnsOneAtATime reads every column of a frame, one after
// another, through each path a column read takes: rows of 64 KiB or more
// (a frame of thousands of columns) value by value with pread, narrower
// rows through a mapped window kept for the next column over the same
// rows (each column of a million-column frame was a mapping of its own,
// and cat of such a frame took 75 s), and ranges under 64 KiB by pread.
// A file cut under the open File is an error wrapping ErrFault on each
// path, never zeros.
func TestFrameColumnsOneAtATime(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows, cols int
	}{
		{"wide rows, by pread", 3, 18000},    // rows of 6000·(1+8+4) bytes
		{"narrow rows, one window", 9000, 3}, // 117 KB of rows: one window
		{"small, by pread", 100, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols := make([]any, tc.cols)
			want := func(c, r int) float64 { return float64(c*1000 + r) }
			for c := range cols {
				switch c % 3 {
				case 0:
					v := make([]int8, tc.rows)
					for r := range v {
						v[r] = int8(want(c, r))
					}
					cols[c] = v
				case 1:
					v := make([]float64, tc.rows)
					for r := range v {
						v[r] = want(c, r)
					}
					cols[c] = v
				case 2:
					v := make([]int32, tc.rows)
					for r := range v {
						v[r] = int32(want(c, r))
					}
					cols[c] = v
				}
			}
			p := filepath.Join(t.TempDir(), "f.dbdf")
			require.NoError(t, WriteFrame(p, &Frame{Rows: uint64(tc.rows), Columns: cols}, nil))
			f, err := Open(p, nil)
			require.NoError(t, err)
			defer f.Close()
			for c := range cols {
				var got any
				label := f.label(c)
				switch c % 3 {
				case 0:
					got, err = Read[int8](f, label)
				case 1:
					got, err = Read[float64](f, label)
				case 2:
					got, err = Read[int32](f, label)
				}
				require.NoError(t, err, label)
				require.Equal(t, cols[c], got, label)
			}
			// Cut the file inside the last row: the last column's last
			// value is gone.
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(p, fi.Size()-4))
			last := tc.cols - 1
			var rerr error
			switch last % 3 {
			case 0:
				_, rerr = Read[int8](f, f.label(last))
			case 1:
				_, rerr = Read[float64](f, f.label(last))
			case 2:
				_, rerr = Read[int32](f, f.label(last))
			}
			require.ErrorIs(t, rerr, mmapfile.ErrFault)
		})
	}
}
