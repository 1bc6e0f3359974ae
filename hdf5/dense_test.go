package hdf5

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
)

// denseGroups writes groups whose links live in a fractal heap indexed by a
// v2 B-tree ("dense" storage): a root group tracking creation order, a group
// of more links than the compact limit under libver latest, one of 70,000
// soft links around a dataset (more than a compact group's 16-bit count),
// and a netCDF-4 file of many variables. It prints, per file, each dataset
// h5py finds (visititems), with the SHA-256 of its values in little-endian
// row-major order, and each group's link names.
const denseGroups = `
import sys, json, hashlib
import numpy as np, h5py, netCDF4
d = sys.argv[1]
with h5py.File(d + '/track.h5', 'w', track_order=True) as f:
    for i in range(12):
        f['d%02d' % (11 - i)] = np.arange(i + 1, dtype='<i8') * (i + 1)
with h5py.File(d + '/latest.h5', 'w', libver='latest') as f:
    g = f.create_group('g')
    for i in range(20):
        g['x%d' % i] = np.full((2, 3), i, dtype='>i4')
with h5py.File(d + '/many.h5', 'w', libver='latest') as f:
    g = f.create_group('g')
    for i in range(70000):
        g['s%06d' % i] = h5py.SoftLink('/nowhere/%d' % i)
    g['real'] = np.arange(5.0)
nc = netCDF4.Dataset(d + '/vars.nc', 'w')
nc.createDimension('x', 4)
for i in range(30):
    v = nc.createVariable('v%02d' % i, 'f4', ('x',))
    v[:] = np.arange(4) + i
nc.close()
res = {}
for name in ['track.h5', 'latest.h5', 'many.h5', 'vars.nc']:
    out = {'datasets': {}, 'groups': {}}
    with h5py.File(d + '/' + name, 'r') as f:
        def visit(path, obj):
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind in 'iuf' and 'CLASS' not in obj.attrs:
                v = np.ascontiguousarray(obj[()].astype(obj.dtype.newbyteorder('<')))
                out['datasets']['/' + path] = hashlib.sha256(v.tobytes()).hexdigest()
            elif isinstance(obj, h5py.Group):
                out['groups']['/' + path] = len(obj.keys())
        f.visititems(visit)
        out['groups']['/'] = len(f.keys())
    res[name] = out
print(json.dumps(res))
`

// Dense groups as h5py and netCDF4-python write them list every dataset
// h5py visits and read its values.
func TestDenseGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 70,000 links with h5py")
	}
	dir := t.TempDir()
	out := oracle.Run(t, []string{"h5py", "numpy", "netCDF4"}, denseGroups, dir)
	var files map[string]struct {
		Datasets map[string]string `json:"datasets"`
		Groups   map[string]int    `json:"groups"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &files))
	require.Len(t, files, 4)
	for name, want := range files {
		f, err := Open(filepath.Join(dir, name), nil)
		require.NoError(t, err, name)
		got := map[string]string{}
		src := f
		for i, r := range src.Records() {
			b, err := format.ReadAll(src, i, layout.RowMajor, binary.LittleEndian)
			require.NoError(t, err, "%s %s", name, r.Name)
			sum := sha256.Sum256(b)
			got[r.Name] = hex.EncodeToString(sum[:])
		}
		assert.Equal(t, want.Datasets, got, name)
		for g, n := range want.Groups {
			links, ok := f.groupAt[g]
			require.True(t, ok, "%s: group %s not read", name, g)
			assert.Len(t, links, n, "%s %s", name, g)
			assert.True(t, sort.SliceIsSorted(links, func(i, j int) bool { return links[i].name < links[j].name }), "%s %s", name, g)
		}
		require.NoError(t, f.Close())
	}
	// The files are dense: the root of track.h5 and the groups of the
	// others keep no link messages in their headers.
	for _, c := range []struct{ file, group string }{{"track.h5", "/"}, {"latest.h5", "/g"}, {"many.h5", "/g"}, {"vars.nc", "/"}} {
		f, err := Open(filepath.Join(dir, c.file), nil)
		require.NoError(t, err)
		addr := f.root()
		if c.group != "/" {
			for _, l := range f.groupAt["/"] {
				if "/"+l.name == c.group {
					addr = l.addr
				}
			}
		}
		oh, err := readObjectHeader(f.m, addr)
		require.NoError(t, err)
		assert.Nil(t, oh.find(msgLink), "%s %s has link messages in its header", c.file, c.group)
		li := oh.find(msgLinkInfo)
		require.NotNil(t, li, "%s %s", c.file, c.group)
		di, err := parseDenseIndex(f.m, li, 8)
		require.NoError(t, err)
		assert.False(t, f.m.undefined(di.heap), "%s %s: no link heap", c.file, c.group)
		require.NoError(t, f.Close())
	}
}
