package serve

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/mmapkit/mmapkit/csvtable"
	_ "github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/format"
	_ "github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/internal/oracle"
)

// httpReaders reads arrays from a server in another process (argv: the
// server's base URL, then F|name|want.npy triples): through
// fsspec's HTTP mapper and zarr (consolidated metadata), xarray's
// open_zarr, dask, and fsspec's ReferenceFileSystem on /refs/F.json
// whose targets are the server's /raw/ route (a fourth field "computed":
// the array is not in the reference set).
const httpReaders = `
import json, sys
import numpy as np, fsspec, zarr, xarray as xr, dask.array as da
base = sys.argv[1]
out = {}
for arg in sys.argv[2:]:
    f, name, want, *only = arg.split("|")
    want = np.load(want)
    url = base + "/zarr/" + f + "/"
    g = zarr.open_consolidated(fsspec.get_mapper(url), mode="r")
    a = g[name]
    got = a[...]
    assert got.dtype == want.dtype, (arg, got.dtype, want.dtype)
    assert got.shape == want.shape, (arg, got.shape, want.shape)
    assert np.array_equal(got, want), arg
    group, _, leaf = name.rpartition("/")
    mask = a.fill_value is None
    ds = xr.open_zarr(url, group=group or None, mask_and_scale=mask)
    assert np.array_equal(ds[leaf].values, want), arg
    if want.ndim:
        s = da.from_zarr(url, component=name).sum().compute(scheduler="threads")
        assert s == want.sum(), (arg, s, want.sum())
    fs = fsspec.filesystem("reference", fo=base + "/refs/" + f + ".json", remote_protocol="http")
    refs = zarr.open_group(zarr.storage.KVStore(fs.get_mapper("")), mode="r")
    if only:  # computed chunks: not in a reference set
        assert name not in refs, arg
    else:
        assert np.array_equal(refs[name][...], want), arg
    out[f + ":" + name] = {"chunks": list(a.chunks), "order": a.order, "dims": list(ds[leaf].dims)}
print(json.dumps(out))
`

// Every file mmapkit describes reads back over HTTP, from another
// process, equal to NumPy's values: as a Zarr store under /zarr/ (zarr,
// xarray, dask) and as a reference set under /refs/ whose ranges come
// from /raw/.
func TestServedReadByPython(t *testing.T) {
	modules := []string{"numpy", "fsspec", "aiohttp", "zarr", "xarray", "dask"}
	py := oracle.Python(t, modules...)
	fx := start(t, nil)
	d := fx.dir
	oracle.Run(t, modules, `
import sys, numpy as np, zarr, numcodecs
d = sys.argv[1]
m = (np.arange(64 * 6, dtype="<f8") * 1.5).reshape(64, 6)
np.save(d + "/m.npy", m)
np.save(d + "/sub/be.npy", np.arange(12, dtype=">i4").reshape(4, 3))
np.save(d + "/f.npy", np.asfortranarray(np.arange(20, dtype="<u2").reshape(4, 5)))
np.save(d + "/s.npy", np.array(7.25))
np.save(d + "/e.npy", np.zeros((0, 3), dtype="<f4"))
np.savez(d + "/z.npz", m=m, v=np.arange(10, dtype="<i8"))
g = zarr.open_group(d + "/sparse.zarr", mode="w")
a = g.create_dataset("grid/t", shape=(9, 4), chunks=(2, 3), dtype="<i4", fill_value=-7, compressor=numcodecs.Zlib(level=3))
a[0:2, 0:3] = np.arange(6).reshape(2, 3)
a[8, 3] = 5
a.attrs["_ARRAY_DIMENSIONS"] = ["time", "x"]
np.save(d + "/sparse.npy", a[...])
np.save(d + "/v.npy", np.arange(10, dtype="<i8"))
import zipfile
with zipfile.ZipFile(d + "/mixed.npz", "w") as z:
    z.write(d + "/v.npy", "v.npy", compress_type=zipfile.ZIP_STORED)
    z.write(d + "/m.npy", "m.npy", compress_type=zipfile.ZIP_DEFLATED)
np.savetxt(d + "/t.csv", np.column_stack([np.arange(5), np.arange(5) * 0.5]), delimiter=",", header="a,b", comments="", fmt=["%d", "%.1f"])
np.save(d + "/ta.npy", np.arange(5, dtype="<i8"))
np.save(d + "/tb.npy", np.arange(5) * 0.5)
`, d)
	p := func(name string) string { return filepath.Join(d, name) }
	require.NoError(t, format.Convert(p("m.npy"), p("m.abf"), nil, nil))
	require.NoError(t, format.Convert(p("m.npy"), p("m.in"), nil, nil))
	require.NoError(t, format.Convert(p("m.npy"), p("m.dbdf"), nil, nil))
	require.NoError(t, format.Convert(p("m.npy"), p("m3.zarr"), nil, &format.Options{Params: map[string]string{"chunks": "16,6"}}))
	require.NoError(t, format.Convert(p("m.npy"), p("text.in"), nil, &format.Options{Params: map[string]string{"text": "true"}}))

	args := []string{fx.base}
	for _, c := range [][3]string{
		{"m.npy", "0", "m.npy"},
		{"sub/be.npy", "0", "sub/be.npy"},
		{"f.npy", "0", "f.npy"},
		{"s.npy", "0", "s.npy"},
		{"e.npy", "0", "e.npy"},
		{"z.npz", "m", "m.npy"},
		{"z.npz", "v", "v.npy"},
		{"sparse.zarr", "grid/t", "sparse.npy"},
		{"m.abf", "0", "m.npy"},
		{"m.in", "0", "m.npy"},
		{"m.dbdf", "matrix", "m.npy"},
		{"m3.zarr", "0", "m.npy"},
	} {
		args = append(args, c[0]+"|"+c[1]+"|"+p(c[2]))
	}
	// Computed chunks: text, a deflated member, a CSV table's columns.
	for _, c := range [][3]string{
		{"text.in", "0", "m.npy"},
		{"mixed.npz", "m", "m.npy"},
		{"t.csv", "a", "ta.npy"},
		{"t.csv", "b", "tb.npy"},
	} {
		args = append(args, c[0]+"|"+c[1]+"|"+p(c[2])+"|computed")
	}
	res, err := oracle.Output(py, httpReaders, args...)
	require.NoError(t, err)
	var got map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(res), &got), "%s", res)
	assert.Equal(t, "F", got["f.npy:0"]["order"], "Fortran order, not transposed")
	assert.Equal(t, "F", got["m.abf:0"]["order"])
	assert.Equal(t, []any{16.0, 6.0}, got["m3.zarr:0"]["chunks"], "a v3 store's own chunks, as v2")
	assert.Equal(t, []any{2.0, 3.0}, got["sparse.zarr:grid/t"]["chunks"])
	assert.Equal(t, []any{"time", "x"}, got["sparse.zarr:grid/t"]["dims"])
	assert.Equal(t, []any{"dim_0", "dim_1"}, got["m.npy:0"]["dims"])
	assert.Equal(t, []any{64.0, 6.0}, got["text.in:0"]["chunks"])
	assert.Equal(t, []any{"dim_0"}, got["t.csv:a"]["dims"])
}
