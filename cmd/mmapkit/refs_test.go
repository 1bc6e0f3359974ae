package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// refsReaders reads a reference set with the real readers and checks it
// against the arrays of a .npy each (argv: refs.json, then name=want.npy
// pairs): through fsspec's ReferenceFileSystem and zarr (the mapper
// wrapped in a KVStore, for missing keys), through xarray, and byte for
// byte: each data reference's range of its target holds exactly the
// chunk's elements as zarr places them.
const refsReaders = `
import json, sys
import numpy as np, fsspec, zarr, xarray as xr
fo = sys.argv[1]
so = {"fo": fo, "remote_protocol": "file"}
g = zarr.open_group(zarr.storage.KVStore(fsspec.get_mapper("reference://", **so)), mode="r")
refs = json.load(open(fo))["refs"]
out = {}
for pair in sys.argv[2:]:
    name, path = pair.split("=", 1)
    want = np.load(path)
    a = g[name]
    got = a[...]
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    assert np.array_equal(got, want), name
    # xarray masks a stored fill value (Zarr sources); a null one is not.
    group, _, leaf = name.rpartition("/")
    mask = a.fill_value is None
    if a.nchunks_initialized == a.nchunks:  # fsspec 2022.11 raises KeyError for a missing chunk
        ds = xr.open_dataset("reference://", engine="zarr", mask_and_scale=mask,
                             backend_kwargs={"consolidated": False, "storage_options": so, "group": group or None})
        assert np.array_equal(ds[leaf].values, want), name
    ds = xr.open_zarr(g.store, group=group or None, consolidated=False, mask_and_scale=mask)
    assert np.array_equal(ds[leaf].values, want), name
    ranges = 0
    for key, ref in refs.items():
        if not key.startswith(name + "/") or key.rsplit("/", 1)[1].startswith("."):
            continue
        target, off, n = ref
        with open(target, "rb") as f:
            f.seek(off)
            b = f.read(n)
        assert len(b) == n, key
        if a.compressor is None:
            idx = [int(x) for x in key[len(name) + 1:].split(a._dimension_separator or ".")] if a.ndim else []
            box = tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, a.chunks))
            chunk = np.frombuffer(b, dtype=a.dtype).reshape(a.chunks, order=a.order)
            part = got[box]  # an edge chunk is stored whole, its tail beyond the array
            assert np.array_equal(chunk[tuple(slice(0, k) for k in part.shape)], part), key
        ranges += 1
    out[name] = {"chunks": list(a.chunks), "order": a.order, "ranges": ranges, "dims": list(ds[leaf].dims), "attrs": dict(a.attrs)}
out[""] = {"attrs": dict(g.attrs)}
print(json.dumps(out))
`

// refsCluster reads arrays through reference sets on the workers of a
// dask.distributed LocalCluster of two processes (argv:
// refs.json:name=want.npy each) and checks them against the sources.
const refsCluster = `
import sys
import numpy as np, fsspec, zarr, dask.array as da
from dask.distributed import Client, LocalCluster
if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
        for arg in sys.argv[1:]:
            fo, rest = arg.split(":", 1)
            name, want = rest.split("=", 1)
            m = zarr.storage.KVStore(fsspec.get_mapper("reference://", fo=fo, remote_protocol="file"))
            x = da.from_zarr(m, component=name)
            got = x.compute()
            assert np.array_equal(got, np.load(want)), arg
            assert got.dtype == np.load(want).dtype, arg
        print("%d arrays equal on %d workers" % (len(sys.argv) - 1, len(client.scheduler_info()["workers"])))
`

// checkRefsJSON checks a reference set's shape: version 1; metadata as
// JSON text of an object; every other key a [target, offset, length]
// triple (with an absolute target, unless made with --url); no inline data.
func checkRefsJSON(t *testing.T, b []byte, absolute bool) map[string]any {
	t.Helper()
	var doc struct {
		Version int                        `json:"version"`
		Refs    map[string]json.RawMessage `json:"refs"`
	}
	require.NoError(t, json.Unmarshal(b, &doc), "%s", b)
	require.Equal(t, 1, doc.Version)
	out := map[string]any{}
	for k, v := range doc.Refs {
		base := k[strings.LastIndex(k, "/")+1:]
		if strings.HasPrefix(base, ".z") {
			var text string
			require.NoError(t, json.Unmarshal(v, &text), "%s: metadata must be JSON text", k)
			var obj map[string]any
			require.NoError(t, json.Unmarshal([]byte(text), &obj), "%s: %s", k, text)
			out[k] = obj
			continue
		}
		var ref []any
		require.NoError(t, json.Unmarshal(v, &ref), "%s: a data key must be [target, offset, length], not %s", k, v)
		require.Len(t, ref, 3, "%s", k)
		target, ok := ref[0].(string)
		require.True(t, ok, "%s: target %v", k, ref[0])
		assert.False(t, strings.HasPrefix(target, "base64:"), "%s: inline data", k)
		assert.True(t, !absolute || filepath.IsAbs(target), "%s: target %q is not absolute", k, target)
		_, ok1 := ref[1].(float64)
		_, ok2 := ref[2].(float64)
		assert.True(t, ok1 && ok2, "%s: offset and length must be numbers: %v", k, ref)
		out[k] = ref
	}
	return out
}

// TestRefsReadByPython describes a file of each format mmapkit reads in
// place and reads it back through fsspec, zarr and xarray: every value
// equals the source's, every range holds its chunk's bytes.
func TestRefsReadByPython(t *testing.T) {
	modules := []string{"numpy", "fsspec", "zarr", "xarray"}
	py := oracle.Python(t, modules...)
	dir := t.TempDir()
	// Sources written by NumPy: a row-major matrix, a big-endian vector,
	// a Fortran-order matrix, a 0-d array, an empty array, datetimes, bytes.
	oracle.Run(t, modules, `
import sys, zipfile, numpy as np
d = sys.argv[1]
m = (np.arange(64 * 6, dtype="<f8") * 1.5).reshape(64, 6)
np.save(d + "/m.npy", m)
np.save(d + "/v.npy", np.arange(10, dtype="<i8"))
np.save(d + "/be.npy", np.arange(12, dtype=">i4").reshape(4, 3))
np.save(d + "/f.npy", np.asfortranarray(np.arange(20, dtype="<u2").reshape(4, 5)))
np.save(d + "/s.npy", np.array(7.25))
np.save(d + "/e.npy", np.zeros((0, 3), dtype="<f4"))
np.save(d + "/t.npy", np.array([1, 2, 3], dtype="<M8[ns]"))
np.save(d + "/b.npy", np.array([b"ab", b"cde"], dtype="|S3"))
np.savez(d + "/z.npz", m=m, f=np.asfortranarray(np.arange(20, dtype="<u2").reshape(4, 5)))
import zarr, numcodecs
g = zarr.open_group(d + "/sparse.zarr", mode="w")
g.attrs["title"] = "sparse"
a = g.create_dataset("grid/t", shape=(9, 4), chunks=(2, 3), dtype="<i4", fill_value=-7, compressor=numcodecs.Zlib(level=3))
a[0:2, 0:3] = np.arange(6).reshape(2, 3)
a[8, 3] = 5
a.attrs["_ARRAY_DIMENSIONS"] = ["time", "x"]
a.attrs["units"] = "K"
np.save(d + "/sparse.npy", a[...])
with zipfile.ZipFile(d + "/mixed.npz", "w") as z:
    z.write(d + "/v.npy", "v.npy", compress_type=zipfile.ZIP_STORED)
    z.write(d + "/m.npy", "m.npy", compress_type=zipfile.ZIP_DEFLATED)
`, dir)
	p := func(name string) string { return filepath.Join(dir, name) }
	mustMk(t, "convert", p("m.npy"), p("m.abf"))
	mustMk(t, "convert", p("m.npy"), p("m.in"))
	mustMk(t, "convert", p("m.npy"), p("m.dbdf"))
	mustMk(t, "convert", p("v.npy"), p("v.scidb"))
	mustMk(t, "convert", "--zarr-version", "2", "--chunks", "10,6", p("m.npy"), p("m.zarr"))
	mustMk(t, "convert", "--chunks", "16,6", p("m.npy"), p("v3.zarr"))
	mustMk(t, "convert", "--chunks", "8,6", "--shards", "32,6", p("m.npy"), p("v3shard.zarr"))
	mustMk(t, "convert", "--chunks", "16,6", "--compress", "zstd", p("m.npy"), p("v3zstd.zarr"))
	mustMk(t, "convert", "--chunks", "64,2", p("m.abf"), p("v3f.zarr"))
	mustMk(t, "convert", "--chunks", "16,6", p("m.npy"), p("v3crc.zarr"))
	// A crc32c after the bytes codec: each chunk file gains 4 bytes, which
	// the ranges leave out (their value is not read here).
	oracle.Run(t, modules, `
import json, os, sys
root = sys.argv[1]
def add_crc(doc):
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "codecs" and isinstance(v, list) and v and v[-1].get("name") == "bytes":
                v.append({"name": "crc32c"})
            else:
                add_crc(v)
    elif isinstance(doc, list):
        for v in doc:
            add_crc(v)
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        if f == "zarr.json":
            doc = json.load(open(p))
            add_crc(doc)
            json.dump(doc, open(p, "w"))
        else:
            open(p, "ab").write(b"\xde\xad\xbe\xef")
`, p("v3crc.zarr"))

	cases := []struct {
		name  string
		args  []string
		want  map[string]string // array → .npy of its values
		check func(t *testing.T, got map[string]map[string]any)
	}{
		{"npy", []string{"--chunks", "16", p("m.npy")}, map[string]string{"0": "m.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, []any{16.0, 6.0}, got["0"]["chunks"])
			assert.Equal(t, 4.0, got["0"]["ranges"])
		}},
		{"npy big-endian", []string{p("be.npy")}, map[string]string{"0": "be.npy"}, nil},
		{"npy Fortran", []string{"--chunks", "2", p("f.npy")}, map[string]string{"0": "f.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, "F", got["0"]["order"])
			assert.Equal(t, []any{4.0, 1.0}, got["0"]["chunks"], "5 columns: the largest divisor within 2 is 1")
			assert.Equal(t, 5.0, got["0"]["ranges"])
		}},
		{"npy 0-d", []string{p("s.npy")}, map[string]string{"0": "s.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, []any{}, got["0"]["chunks"])
			assert.Equal(t, 1.0, got["0"]["ranges"])
		}},
		{"npy empty", []string{p("e.npy")}, map[string]string{"0": "e.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, []any{1.0, 3.0}, got["0"]["chunks"])
			assert.Equal(t, 0.0, got["0"]["ranges"])
		}},
		{"npy datetime", []string{p("t.npy")}, map[string]string{"0": "t.npy"}, nil},
		{"npy bytes", []string{p("b.npy")}, map[string]string{"0": "b.npy"}, nil},
		{"npz stored", []string{"--chunks", "32", p("z.npz")}, map[string]string{"m": "m.npy", "f": "f.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, 2.0, got["m"]["ranges"])
			assert.Equal(t, []any{"dim_0", "dim_1"}, got["m"]["dims"])
			assert.Equal(t, []any{"f_dim_0", "f_dim_1"}, got["f"]["dims"], "lengths 4 and 5 differ from m's")
		}},
		{"abf", []string{"--chunks", "3", p("m.abf")}, map[string]string{"0": "m.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, "F", got["0"]["order"])
			assert.Equal(t, []any{64.0, 3.0}, got["0"]["chunks"])
		}},
		{"futhark", []string{p("m.in")}, map[string]string{"0": "m.npy"}, nil},
		{"daphne", []string{"--chunks", "8", p("m.dbdf")}, map[string]string{"matrix": "m.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, 8.0, got["matrix"]["ranges"])
		}},
		{"scidb", []string{"--scidb-format", "(int64)", p("v.scidb")}, map[string]string{"a0": "v.npy"}, nil},
		{"zarr v2", []string{p("m.zarr")}, map[string]string{"0": "m.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, []any{10.0, 6.0}, got["0"]["chunks"], "the store's own chunks")
			assert.Equal(t, 7.0, got["0"]["ranges"])
		}},
		{"zarr v3", []string{p("v3.zarr")}, map[string]string{"0": "m.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, 4.0, got["0"]["ranges"])
		}},
		{"zarr v3 sharded", []string{p("v3shard.zarr")}, map[string]string{"0": "m.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, []any{8.0, 6.0}, got["0"]["chunks"], "the inner chunks")
			assert.Equal(t, 8.0, got["0"]["ranges"])
		}},
		{"zarr v3 zstd", []string{p("v3zstd.zarr")}, map[string]string{"0": "m.npy"}, nil},
		{"zarr v3 transposed", []string{p("v3f.zarr")}, map[string]string{"0": "m.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, "F", got["0"]["order"])
		}},
		{"zarr v3 crc32c", []string{p("v3crc.zarr")}, map[string]string{"0": "m.npy"}, nil},
		{"zarr v2 sparse, compressed", []string{p("sparse.zarr")}, map[string]string{"grid/t": "sparse.npy"}, func(t *testing.T, got map[string]map[string]any) {
			assert.Equal(t, 2.0, got["grid/t"]["ranges"], "missing chunks have no key")
			assert.Equal(t, []any{"time", "x"}, got["grid/t"]["dims"])
			assert.Equal(t, map[string]any{"title": "sparse"}, got[""]["attrs"], "the root group's attributes")
			assert.Equal(t, map[string]any{"_ARRAY_DIMENSIONS": []any{"time", "x"}, "units": "K"}, got["grid/t"]["attrs"])
		}},
	}
	var clusterArgs []string // refs.json:name=want.npy, for the cluster
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := p(strings.ReplaceAll(c.name, " ", "_") + ".json")
			mustMk(t, append([]string{"refs", "-o", out}, c.args...)...)
			b, err := os.ReadFile(out)
			require.NoError(t, err)
			checkRefsJSON(t, b, true)
			again := mustMk(t, append([]string{"refs"}, c.args...)...)
			assert.Equal(t, string(b), again, "two runs give the same bytes")
			args := []string{out}
			for name, src := range c.want {
				args = append(args, name+"="+p(src))
				clusterArgs = append(clusterArgs, out+":"+name+"="+p(src))
			}
			res, err := oracle.Output(py, refsReaders, args...)
			require.NoError(t, err)
			var got map[string]map[string]any
			require.NoError(t, json.Unmarshal([]byte(res), &got), "%s", res)
			if c.check != nil {
				c.check(t, got)
			}
		})
	}

	t.Run("dask cluster", func(t *testing.T) {
		if testing.Short() {
			t.Skip("starts a dask cluster")
		}
		cluster := []string{"numpy", "fsspec", "zarr", "dask", "distributed"}
		out := oracle.Run(t, cluster, refsCluster, clusterArgs...)
		assert.Equal(t, strconv.Itoa(len(clusterArgs))+" arrays equal on 2 workers\n", out)
	})

	t.Run("skipped", func(t *testing.T) {
		r := mk(t, "refs", p("mixed.npz"))
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "mmapkit: "+p("mixed.npz")+`: skipped record "m" (f64[64][6]): a deflated member: unsupported operation`+"\n", r.stderr)
		refs := checkRefsJSON(t, []byte(r.stdout), true)
		assert.Contains(t, refs, "v/0")
		assert.NotContains(t, refs, "m/.zarray")

		r = mk(t, "refs", "--name", "m", p("mixed.npz"))
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Contains(t, r.stderr, `record "m"`)
		assert.Contains(t, r.stderr, "a deflated member")

		r = mk(t, "refs", "--name", "v,nope", p("mixed.npz"))
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Contains(t, r.stderr, `record "nope": no such record`)
	})

	t.Run("url", func(t *testing.T) {
		refs := checkRefsJSON(t, []byte(mustMk(t, "refs", "--url", "https://example.org/d/", p("v.npy"))), false)
		assert.Equal(t, []any{"https://example.org/d/v.npy", 128.0, 80.0}, refs["0/0"])
		refs = checkRefsJSON(t, []byte(mustMk(t, "refs", "--url", "/mnt/data/other.npy", p("v.npy"))), false)
		assert.Equal(t, []any{"/mnt/data/other.npy", 128.0, 80.0}, refs["0/0"])
		refs = checkRefsJSON(t, []byte(mustMk(t, "refs", "--url", "s3://bucket/m.zarr", p("m.zarr"))), false)
		assert.Equal(t, "s3://bucket/m.zarr/0/6.0", refs["0/6.0"].([]any)[0])
	})
}

// TestBeyondOneMachineRefs does what the README's "Beyond one machine"
// shows first, with its own commands and script: a reference set of the
// ABF file of 32 MiB, read in place by a dask.distributed LocalCluster of
// two worker processes (sum, column sums) and by xarray. Every result
// equals the source's.
func TestBeyondOneMachineRefs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dask cluster")
	}
	modules := []string{"numpy", "fsspec", "zarr", "dask", "distributed", "xarray"}
	py := oracle.Python(t, modules...)
	const heading = "## Beyond one machine: Zarr, dask and xarray"
	commands := readmeBlock(t, heading, "sh", 0)
	script := readmeBlock(t, heading, "python", 0)
	run := readmeBlock(t, heading, "sh", 1)

	dir := t.TempDir()
	sum, _, colsum := writeClusterABF(t, dir)
	cmds := readmeCommands(commands)
	require.Len(t, cmds, 1, "the README's commands: %s", commands)
	cmd := exec.Command(mkBin, cmds[0]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "mmapkit %s: %s", strings.Join(cmds[0], " "), out)
	args := strings.Fields(run)
	require.Equal(t, []string{"python3", "refs.py", "data.json"}, args)
	var got clusterSums
	runScript(t, py, dir, args[1], script, args[2:], &got)
	got.check(t, "a reference set", sum, colsum)
}

// clusterSums is what the README's scripts print of the ABF file of
// writeClusterABF read by two dask workers and by xarray.
type clusterSums struct {
	Workers      int       `json:"workers"`
	Chunks       int       `json:"chunks"`
	Sum          float64   `json:"sum"`
	Colsum       []float64 `json:"colsum"`
	Dims         []string  `json:"dims"`
	XarrayColsum []float64 `json:"xarray_colsum"`
}

// check checks the sums against the source's: two workers, one dask
// chunk per range of 512 columns.
func (got *clusterSums) check(t *testing.T, through string, sum float64, colsum []float64) {
	t.Helper()
	t.Logf("dask LocalCluster over %s: %d worker processes, %d chunks: sum %v (source %v); xarray dims %v",
		through, got.Workers, got.Chunks, got.Sum, sum, got.Dims)
	assert.Equal(t, 2, got.Workers)
	assert.Equal(t, 4, got.Chunks, "one dask chunk per range")
	assert.Equal(t, sum, got.Sum)
	assert.Equal(t, colsum, got.Colsum)
	assert.Equal(t, []string{"dim_0", "dim_1"}, got.Dims)
	assert.Equal(t, colsum, got.XarrayColsum)
}
