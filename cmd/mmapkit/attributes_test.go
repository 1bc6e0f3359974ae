package main

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

const pyXarrayUnits = `
import sys, numpy as np, xarray as xr
ds = xr.Dataset({'temp': (('time', 'x'), np.arange(6.0).reshape(2, 3),
                          {'units': 'K', 'long_name': 'air temperature', 'levels': [1, 2]})})
ds.to_zarr(sys.argv[1])
`

// What each written file holds of the attributes, as h5py, netCDF (through
// xarray) and zarr-python read them.
const pyReadUnits = `
import sys, json
kind, path = sys.argv[1], sys.argv[2]
def plain(v):
    if isinstance(v, bytes): return v.decode()
    if hasattr(v, 'tolist'): return plain(v.tolist())
    if isinstance(v, list): return [plain(x) for x in v]
    return v
if kind == 'h5py':
    import h5py
    a = h5py.File(path, 'r')['temp'].attrs
    got = {k: plain(a[k]) for k in a if k != 'DIMENSION_LIST'}
    dims = None
elif kind == 'xarray':
    import xarray as xr
    v = xr.open_dataset(path)['temp']
    got, dims = {k: plain(x) for k, x in v.attrs.items()}, list(v.dims)
else:
    import zarr
    a = zarr.open(path, mode='r')['temp']
    got = {k: plain(x) for k, x in a.attrs.items() if k != '_ARRAY_DIMENSIONS'}
    dims = a.attrs.get('_ARRAY_DIMENSIONS')
print(json.dumps({'attrs': got, 'dims': dims}, sort_keys=True))
`

// Attributes of an xarray store (units, long_name, a list) are carried to
// HDF5, netCDF-4 and Zarr, which hold them, as their readers see them;
// a format without attributes gets the values, and convert's summary line
// says what was dropped.
func TestAttributesCarriedAcross(t *testing.T) {
	modules := []string{"numpy", "xarray", "zarr", "h5py", "netCDF4"}
	dir := t.TempDir()
	src := filepath.Join(dir, "xa.zarr")
	oracle.Run(t, modules, pyXarrayUnits, src)
	attrs := `{"levels": [1, 2], "long_name": "air temperature", "units": "K"}`
	for _, c := range []struct {
		out, reader, want, said string
	}{
		{"t.h5", "h5py", `{"attrs": ` + attrs + `, "dims": null}`, "; dropped dimension names"},
		{"t.nc", "xarray", `{"attrs": ` + attrs + `, "dims": ["time", "x"]}`, ""},
		{"t2.zarr", "zarr", `{"attrs": ` + attrs + `, "dims": ["time", "x"]}`, ""},
	} {
		out := filepath.Join(dir, c.out)
		args := []string{"convert", "-v", src, out}
		if c.out == "t2.zarr" {
			args = []string{"convert", "-v", "--zarr-version", "2", src, out}
		}
		r := mk(t, args...)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Regexp(t, `^mmapkit: wrote `+regexp.QuoteMeta(out)+`: [^;]*\)`+regexp.QuoteMeta(c.said)+"\n$", r.stderr, c.out)
		assert.Equal(t, c.want+"\n", oracle.Run(t, modules, pyReadUnits, c.reader, out), c.out)
	}
	npyOut := filepath.Join(dir, "t.npy")
	r := mk(t, "convert", "-v", src, npyOut)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "mmapkit: wrote "+npyOut+": npy version 1.0, 1 record (0 f64[2][3]); dropped attributes: levels, long_name, units; dropped dimension names\n", r.stderr)
}
