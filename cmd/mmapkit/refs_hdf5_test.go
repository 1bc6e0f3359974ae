package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// `mmapkit refs` of an h5py file (contiguous, gzip+shuffle chunks with
// edge chunks, unallocated chunks with a fill value; a user block before
// the superblock) read through fsspec, zarr and xarray gives h5py's
// values, every range holding its chunk; a fletcher32 dataset is skipped
// naming its filter.
func TestRefsHDF5ReadByPython(t *testing.T) {
	modules := []string{"numpy", "fsspec", "zarr", "xarray", "h5py"}
	py := oracle.Python(t, modules...)
	dir := t.TempDir()
	oracle.Run(t, modules, `
import sys, numpy as np, h5py
d = sys.argv[1]
m = (np.arange(64 * 6, dtype="<f8") * 1.5).reshape(64, 6)
with h5py.File(d + "/x.h5", "w", userblock_size=512) as f:
    f["plain"] = m
    f.create_dataset("gz", data=m, chunks=(10, 4), compression="gzip", shuffle=True)
    h = f.create_dataset("holes", shape=(30,), dtype=">i4", chunks=(4,), fillvalue=-1, compression="gzip")
    h[5:9] = 7
    f.create_dataset("sum", data=m[:, 0], chunks=(8,), fletcher32=True)
with h5py.File(d + "/x.h5", "r") as f:
    for k in ("plain", "gz", "holes"):
        np.save("%s/%s.npy" % (d, k), f[k][()])
`, dir)
	p := func(name string) string { return filepath.Join(dir, name) }
	out := p("x.json")
	r := mk(t, "refs", "-o", out, p("x.h5"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "mmapkit: "+p("x.h5")+`: skipped record "/sum" (f64[64]): filter fletcher32 has no Zarr v2 codec here: unsupported operation`+"\n", r.stderr)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	refs := checkRefsJSON(t, b, true)
	assert.Equal(t, map[string]any{"id": "zlib", "level": 4.0}, refs["gz/.zarray"].(map[string]any)["compressor"])
	assert.Equal(t, []any{map[string]any{"id": "shuffle", "elementsize": 8.0}}, refs["gz/.zarray"].(map[string]any)["filters"])
	assert.Equal(t, -1.0, refs["holes/.zarray"].(map[string]any)["fill_value"])
	res, err := oracle.Output(py, refsReaders, out, "plain="+p("plain.npy"), "gz="+p("gz.npy"), "holes="+p("holes.npy"))
	require.NoError(t, err)
	var got map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(res), &got), "%s", res)
	assert.Equal(t, []any{10.0, 4.0}, got["gz"]["chunks"])
	assert.Equal(t, 14.0, got["gz"]["ranges"], "7 × 2 chunks, the edge ones stored whole")
	assert.Equal(t, 2.0, got["holes"]["ranges"], "unallocated chunks have no key")
	assert.Equal(t, 1.0, got["plain"]["ranges"])
}
