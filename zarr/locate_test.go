package zarr

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
)

// writeV2 writes a version 2 array of 4×2 int32 in chunks of one row, its
// .zarray with the separator sep.
func writeV2(t *testing.T, sep string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.zarr")
	require.NoError(t, os.MkdirAll(p, 0o755))
	zarray := `{"zarr_format": 2, "shape": [4, 2], "chunks": [1, 2], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C", "filters": null, "dimension_separator": "` + sep + `"}`
	require.NoError(t, os.WriteFile(filepath.Join(p, ".zarray"), []byte(zarray), 0o644))
	return p
}

// Locate finds chunk files by listing their directories: nested keys,
// missing chunks (no entry), a link inside the store followed as a read
// follows it.
func TestLocateChunkFiles(t *testing.T) {
	p := writeV2(t, "/")
	require.NoError(t, os.MkdirAll(filepath.Join(p, "0"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(p, "1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p, "0", "0"), make([]byte, 8), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(p, "3-data"), make([]byte, 8), 0o644))
	require.NoError(t, os.Symlink("../3-data", filepath.Join(p, "1", "0")))
	s, err := Open(p, nil)
	require.NoError(t, err)
	defer s.Close()
	loc, err := s.Locate(0)
	require.NoError(t, err)
	assert.Equal(t, "/", loc.Grid.Separator)
	assert.Equal(t, []format.Chunk{
		{Index: []int64{0, 0}, Path: "0/0", Offset: 0, Length: 8},
		{Index: []int64{1, 0}, Path: "1/0", Offset: 0, Length: 8},
	}, loc.Grid.Stored, "rows 2 and 3 are missing: no directory, no entry")
}

// A chunk that is not a regular file, or a link out of the store, is an
// error naming the key, as it is when read.
func TestLocateChunkFilesRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, p string)
		want string
	}{
		{"directory", func(t *testing.T, p string) { require.NoError(t, os.MkdirAll(filepath.Join(p, "1.0"), 0o755)) }, "1.0: is not a regular file"},
		{"link out", func(t *testing.T, p string) {
			out := filepath.Join(t.TempDir(), "secret")
			require.NoError(t, os.WriteFile(out, make([]byte, 8), 0o644))
			require.NoError(t, os.Symlink(out, filepath.Join(p, "2.0")))
		}, "2.0: leaves the store"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeV2(t, ".")
			require.NoError(t, os.WriteFile(filepath.Join(p, "0.0"), make([]byte, 8), 0o644))
			c.make(t, p)
			s, err := Open(p, nil)
			require.NoError(t, err)
			defer s.Close()
			_, err = s.Locate(0)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
