package hdf5

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// netCDFFile writes a netCDF-4 file with netCDF4-python (dimensions, one
// unlimited, one without a variable; variables compressed or not, in the
// root and in a group) and prints what netCDF4-python reads of each
// variable.
const netCDFFile = `
import sys, json, hashlib
import numpy as np, netCDF4
p = sys.argv[1]
rng = np.random.default_rng(5)
with netCDF4.Dataset(p, 'w') as nc:
    nc.createDimension('x', 3)
    nc.createDimension('y', 4)
    nc.createDimension('t', None)
    nc.createDimension('nv', 2)
    x = nc.createVariable('x', 'f8', ('x',))
    x[:] = [0.5, 1.5, 2.5]
    v = nc.createVariable('v', 'i2', ('t', 'x', 'y'), zlib=True, complevel=3, fill_value=-1)
    v[0:2] = rng.integers(-100, 100, (2, 3, 4))
    w = nc.createVariable('w', 'f4', ('y', 'nv'), endian='big')
    w[:] = rng.random((4, 2))
    g = nc.createGroup('grp')
    g.createDimension('z', 5)
    u = g.createVariable('u', 'u8', ('z', 'x'))
    u[:] = rng.integers(0, 2**40, (5, 3))
out = {}
with netCDF4.Dataset(p) as nc:
    def walk(grp, prefix):
        for name, var in grp.variables.items():
            a = np.asarray(var[:].filled() if hasattr(var[:], 'filled') else var[:])
            a = a.astype(a.dtype.newbyteorder('<'))
            out[prefix + '/' + name] = {'dims': list(var.dimensions), 'shape': list(a.shape),
                'sha256': hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()}
        for name, sub in grp.groups.items():
            walk(sub, prefix + '/' + name)
    walk(nc, '')
print(json.dumps(out))
`

// Files netCDF4-python writes read as it reads them: variables (not the
// dimension without one), shapes, dimension names and values.
func TestNetCDF4(t *testing.T) {
	p := filepath.Join(t.TempDir(), "n.nc")
	out := oracle.Run(t, []string{"netCDF4", "numpy"}, netCDFFile, p)
	var want map[string]struct {
		Dims   []string `json:"dims"`
		Shape  []int64  `json:"shape"`
		SHA256 string   `json:"sha256"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &want))
	f, err := format.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	got := map[string]bool{}
	for i, r := range f.Records() {
		w, ok := want[r.Name]
		if !assert.True(t, ok, "%s is no netCDF variable", r.Name) {
			continue
		}
		got[r.Name] = true
		assert.Equal(t, fmt.Sprint(w.Shape), fmt.Sprint(r.Shape), r.Name)
		assert.Equal(t, w.Dims, r.Extra["dims"], r.Name)
		b, err := format.ReadAll(f, i, layout.RowMajor, binary.LittleEndian)
		require.NoError(t, err, r.Name)
		sum := sha256.Sum256(b)
		assert.Equal(t, w.SHA256, hex.EncodeToString(sum[:]), r.Name)
	}
	assert.Len(t, got, len(want), "every variable is a record")
}

// A netCDF dimension without a coordinate variable (ocean.nc's bnd) is no
// record, as netCDF4-python and xarray have no variable of it; it is
// still an HDF5 dataset, which the typed calls read by name as h5py does:
// never written, so its values are the fill value (h5py reads [0. 0.]).
func TestNetCDFDimensionWithoutVariable(t *testing.T) {
	p := copyRef(t, "ocean.nc")
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	defer f.Close()
	for _, r := range f.Records() {
		assert.NotEqual(t, "/bnd", r.Name, "a dimension is no variable")
	}
	_, err = format.Find(f, "bnd")
	assert.ErrorIs(t, err, format.ErrNoRecord)
	assert.Contains(t, err.Error(), "netCDF dimension")

	v, err := Read[float32](f, "bnd")
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 0}, v)
	part := []float32{9}
	require.NoError(t, ReadAt(f, "/bnd", 1, part))
	assert.Equal(t, []float32{0}, part)
	assert.ErrorIs(t, ReadAt(f, "bnd", 1, make([]float32, 2)), mmapfile.ErrOutOfRange)
	_, err = Read[float64](f, "bnd")
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	_, err = View[float32](f, "bnd")
	assert.ErrorIs(t, err, errors.ErrUnsupported, "never written: nothing to alias")
	assert.Regexp(t, `use Read\b`, err.Error())
	assert.ErrorIs(t, Set(f, "bnd", []int64{0}, float32(1)), errors.ErrUnsupported, "never written: nothing to change in place")

	// The methods of format.File take the listed records only.
	n := len(f.Records())
	assert.ErrorIs(t, f.ReadArray(n, make([]byte, 8), 0, layout.RowMajor, binary.LittleEndian), mmapfile.ErrOutOfRange)
	_, err = f.Payload(n)
	assert.ErrorIs(t, err, mmapfile.ErrOutOfRange)
}
