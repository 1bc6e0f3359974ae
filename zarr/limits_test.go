package zarr

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
)

// TestGroupOpenMemoryFollowsItsMetadata: opening a group of many small
// arrays reads each document once and describes arrays described alike
// with one Extra and one Facts, so that the memory it allocates, and the
// memory it keeps, stay a small multiple of the metadata's bytes (the
// file system's own objects, an open and a stat per document, are most of
// what is left). It allocated 40 times the metadata and kept 9 times it
// when each document was read twice into a buffer padded by 512 bytes and
// each record had maps of its own.
func TestGroupOpenMemoryFollowsItsMetadata(t *testing.T) {
	const arrays = 4000
	dir := filepath.Join(t.TempDir(), "g.zarr")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write := func(name, doc string) int {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644))
		return len(doc)
	}
	metadata := write(".zgroup", `{"zarr_format":2}`)
	for i := range arrays {
		require.NoError(t, os.Mkdir(filepath.Join(dir, fmt.Sprint("a", i)), 0o755))
		metadata += write(fmt.Sprint("a", i, "/.zarray"), `{"chunks":[10],"compressor":null,"dtype":"<f8","fill_value":0.0,"filters":null,"order":"C","shape":[10],"zarr_format":2}`)
	}
	var before, opened, kept runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := format.Open(dir, nil)
	require.NoError(t, err)
	runtime.ReadMemStats(&opened)
	runtime.GC()
	runtime.ReadMemStats(&kept)
	defer f.Close()
	recs := f.Records()
	require.Len(t, recs, arrays)
	assert.Equal(t, "/a0", recs[0].Name)
	assert.Equal(t, "chunks [10], raw", recs[arrays-1].Extra["storage"])
	assert.Equal(t, "0.0", string(recs[arrays-1].Facts.FillValue))
	allocated, held := opened.TotalAlloc-before.TotalAlloc, kept.HeapAlloc-before.HeapAlloc
	t.Logf("%d bytes of metadata: %d allocated (%.1f per byte), %d kept (%.1f per byte)",
		metadata, allocated, float64(allocated)/float64(metadata), held, float64(held)/float64(metadata))
	assert.LessOrEqual(t, allocated, uint64(30*metadata+1<<20))
	assert.LessOrEqual(t, held, uint64(7*metadata+1<<20))
}
