package npy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// TestRecordIsRecordsEntry: the records described one at a time
// (format.RecordLister) are those Records lists, for structured arrays
// with padding, titles, subarray and nested fields, a nullable column, a
// name that is not a plain literal, in a table, a 2-D array and an
// archive; and the dtype Arrays gives back holds every field.
func TestRecordIsRecordsEntry(t *testing.T) {
	const descr = `[('a', '<i4'), ('', '|V4'), (('title b', 'b'), '<f8', (2, 3)), ('c', [('x', '<u2'), ('y', '|S3'), ('', '|V1')]), ('d', '>i2', (4,)), ('', '|V2'), ('e', '<U5'), ('n', '<f8'), ('n.mask', '|b1'), ("q's", '<c8'), ('s', '|S2'), ('t', '<M8[s]'), ('', '|V3')]`
	const item = 122 // np.dtype(descr).itemsize
	table := npyBytes(1, header(descr, "(3,)"), make([]byte, 3*item))
	grid := npyBytes(3, header(descr, "(2, 2)"), make([]byte, 4*item))
	archive := zipBytes([]rawMember{
		stored("t.npy", table),
		deflated("g.npy", grid),
		stored("x.npy", npyBytes(1, header("'<f8'", "(2,)"), make([]byte, 16))),
		stored("notes.txt", []byte("hello")),
	}, nil)
	dir := t.TempDir()
	cases := []struct {
		name   string
		file   []byte
		names  []string
		arrays int
	}{
		{"table.npy", table, []string{"a", "b", "c", "d", "e", "n", "q's", "s", "t"}, 1},
		{"grid.npy", grid, []string{"a", "b", "c", "d", "e", "n", "n.mask", "q's", "s", "t"}, 1},
		{"both.npz", archive, []string{
			"t/a", "t/b", "t/c", "t/d", "t/e", "t/n", "t/n.mask", "t/q's", "t/s", "t/t",
			"g/a", "g/b", "g/c", "g/d", "g/e", "g/n", "g/n.mask", "g/q's", "g/s", "g/t",
			"x", "notes.txt"}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			require.NoError(t, os.WriteFile(path, c.file, 0o644))
			f, err := Open(path, nil)
			require.NoError(t, err)
			defer f.Close()
			recs := f.Records()
			require.Equal(t, len(recs), f.NumRecords())
			var names []string
			for i := range recs {
				assert.Equal(t, recs[i], f.Record(i), "record %d", i)
				assert.Equal(t, recs[i], format.RecordAt(f, i), "record %d", i)
				names = append(names, recs[i].Name)
			}
			assert.Equal(t, c.names, names)
			require.Len(t, f.Arrays(), c.arrays)
			for _, a := range f.Arrays() {
				if a.DType.Structured() {
					assert.Equal(t, descr, a.DType.String(), a.Name)
					assert.Len(t, a.DType.Fields, 10, a.Name)
					assert.Equal(t, "title b", a.DType.Fields[1].Title)
					assert.Equal(t, []int64{2, 3}, a.DType.Fields[1].Shape)
					assert.Equal(t, 8, a.DType.Fields[1].Offset)
				}
			}
			if c.name == "table.npy" {
				n := recs[5]
				assert.True(t, n.Nullable, "n with its mask")
				assert.Equal(t, format.KindColumn, n.Kind)
				assert.Equal(t, format.KindOpaque, recs[2].Kind, "c, a nested structure")
				assert.Equal(t, []int64{3, 2, 3}, recs[1].Shape)
				assert.Equal(t, "<M8[s]", recs[8].Facts.NativeType)
				i, err := f.recordOf("n", recs[5].Type)
				require.NoError(t, err)
				assert.Equal(t, 5, i)
				_, err = f.recordOf("n.mask", layout.Bool)
				assert.ErrorIs(t, err, errors.ErrUnsupported, "a mask has no record of its own")
			}
		})
	}
}
