package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// pyBloscStores writes the stores most Zarr data comes in: zarr-python 2
// with its default compressor (Blosc lz4, level 5, byte shuffle) and
// xarray's to_zarr (the same default), each array beside a .npy of the
// same values.
const pyBloscStores = `
import sys, os, numpy as np, zarr, xarray as xr
d = sys.argv[1]
i = np.arange(1000 * 37).reshape(1000, 37)
temp = np.round(15 + 10 * np.sin(i / 500.0) + (i % 37) / 10, 2)
z = zarr.open(os.path.join(d, 'default.zarr'), mode='w', shape=temp.shape, chunks=(256, 16), dtype='<f8')
z[...] = temp
assert z.compressor.codec_id == 'blosc' and z.compressor.cname == 'lz4', z.compressor
np.save(os.path.join(d, 'default.npy'), temp)
ds = xr.Dataset({'temp': (('time', 'station'), temp.astype('<f4')), 'count': (('time',), np.arange(1000, dtype='<i8') * 7)},
                coords={'time': np.arange(1000, dtype='<i8') * 3600})
ds.to_zarr(os.path.join(d, 'xarray.zarr'), mode='w')
assert zarr.open(os.path.join(d, 'xarray.zarr'))['temp'].compressor.codec_id == 'blosc'
for name in ('temp', 'count', 'time'):
    np.save(os.path.join(d, 'xarray-%s.npy' % name), ds[name].values)
`

// pyCheckBlosc reads, in zarr-python, the store mmapkit converted a .npy
// to with --compress blosc, and checks its values and its compressor.
const pyCheckBlosc = `
import sys, numpy as np, zarr
from numcodecs import Blosc
z = zarr.open(sys.argv[1], mode='r')['0']  # a .npy's array is "0"
want = np.load(sys.argv[2])
assert np.array_equal(z[...], want), 'values differ'
assert z.compressor == Blosc(cname=sys.argv[3], clevel=int(sys.argv[4]), shuffle=Blosc.SHUFFLE, blocksize=0), z.compressor
print('ok')
`

// Stores written by zarr-python 2 with its defaults and by xarray's
// to_zarr — Blosc-compressed — print with cat exactly as the same arrays
// saved by NumPy do; what convert --compress blosc writes, zarr-python
// reads equal, with numcodecs' defaults or the codec and level asked for.
func TestBloscStoresFromAndForPython(t *testing.T) {
	modules := []string{"numpy", "zarr", "numcodecs", "xarray"}
	dir := t.TempDir()
	oracle.Run(t, modules, pyBloscStores, dir)
	p := func(name string) string { return filepath.Join(dir, name) }

	ls := mustMk(t, "ls", p("default.zarr"))
	assert.Contains(t, ls, "blosc(lz4:5, shuffle)")
	want := mustMk(t, "cat", p("default.npy"))
	require.NotEmpty(t, want)
	assert.Equal(t, want, mustMk(t, "cat", p("default.zarr")), "cat of zarr-python's default store")
	for _, name := range []string{"temp", "count", "time"} {
		assert.Equal(t, mustMk(t, "cat", p("xarray-"+name+".npy")), mustMk(t, "cat", "--name", "/"+name, p("xarray.zarr")),
			"cat of xarray's %s", name)
	}

	for _, c := range []struct {
		compress, cname, level string
	}{{"blosc", "lz4", "5"}, {"blosc:zstd", "zstd", "5"}, {"blosc:blosclz:9", "blosclz", "9"}} {
		out := p(strings.ReplaceAll(c.compress, ":", "-") + ".zarr")
		mustMk(t, "convert", "--zarr-version", "2", "--compress", c.compress, p("default.npy"), out)
		assert.Equal(t, "ok\n", oracle.Run(t, modules, pyCheckBlosc, out, p("default.npy"), c.cname, c.level), c.compress)
		assert.Equal(t, want, mustMk(t, "cat", out), "cat of what convert --compress %s wrote", c.compress)
	}

	// Version 3: the blosc codec as zarr-python 3 writes it, element
	// size included.
	v3 := p("v3.zarr")
	mustMk(t, "convert", "--compress", "blosc:lz4hc:7", p("default.npy"), v3)
	doc, err := os.ReadFile(filepath.Join(v3, "0", "zarr.json")) // the .npy's array, "0"
	require.NoError(t, err)
	var meta struct {
		Codecs []json.RawMessage `json:"codecs"`
	}
	require.NoError(t, json.Unmarshal(doc, &meta))
	require.Len(t, meta.Codecs, 2, "%s", doc)
	assert.JSONEq(t, `{"name":"blosc","configuration":{"cname":"lz4hc","clevel":7,"shuffle":"shuffle","typesize":8,"blocksize":0}}`, string(meta.Codecs[1]))
	assert.Equal(t, want, mustMk(t, "cat", v3))

	r := mk(t, "convert", "--compress", "blosc:lz5", p("default.npy"), p("bad.zarr"))
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "blosclz, lz4, lz4hc, snappy, zlib, zstd")
}
