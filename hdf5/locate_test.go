package hdf5

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/refs"
)

// locateFiles writes, with h5py, datasets of every storage a reference set
// can describe — contiguous, compact, chunked under each chunk index
// (libver earliest and latest), deflate and shuffle, unallocated chunks
// with and without a fill value, edge chunks, big-endian, bool, complex,
// f16, an array datatype, a user block before the superblock — and those
// it cannot: fletcher32, lzf, a table, strings, a dataset never written.
const locateFiles = `
import sys, numpy as np, h5py
d = sys.argv[1]
def fill(f):
    f['contig'] = (np.arange(60, dtype='<f8') * 1.5).reshape(6, 10)
    f['be'] = np.arange(12, dtype='>i2').reshape(3, 4)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    h5py.h5d.create(f.id, b'compact', h5py.h5t.py_create(np.dtype('<u4')), h5py.h5s.create_simple((5,)), dcpl=dcpl)
    f['compact'][...] = np.arange(5, dtype='<u4') * 3
    f.create_dataset('gzshuf', data=np.arange(1000.).reshape(40, 25), chunks=(7, 10), compression='gzip', compression_opts=6, shuffle=True)
    h = f.create_dataset('holes', shape=(30,), dtype='<i4', chunks=(4,), fillvalue=-1, compression='gzip')
    h[5:9] = 7
    z = f.create_dataset('zeros', shape=(5, 6), dtype='<f4', chunks=(2, 2))
    z[0:2, 2:4] = 9.5
    f.create_dataset('shuf', data=np.arange(50, dtype='<i8'), chunks=(16,), shuffle=True)
    f.create_dataset('unlimited', data=np.arange(20, dtype='<u2'), chunks=(6,), maxshape=(None,), compression='gzip')
    f.create_dataset('grow2d', data=np.arange(24, dtype='<i4').reshape(4, 6), chunks=(3, 4), maxshape=(None, None), compression='gzip')
    f.create_dataset('flags', data=np.arange(9) % 2 == 0, chunks=(4,), compression='gzip')
    f['cplx'] = np.arange(4) * (1 + 2j)
    f.create_dataset('half', data=np.arange(8, dtype='<f2'), chunks=(3,), compression='gzip')
    f.create_dataset('fletcher', data=np.arange(10, dtype='<f4'), chunks=(3,), fletcher32=True)
    f.create_dataset('lzf', data=np.arange(10, dtype='<f4'), chunks=(3,), compression='lzf')
    f['table'] = np.array([(1, 2.0)], dtype=[('a', '<i4'), ('b', '<f8')])
    f['text'] = np.array([b'ab', b'cd'], dtype='S2')
    f.create_dataset('never', shape=(4,), dtype='<f8')
    f['contig'].attrs['units'] = 'K'
    f['contig'].attrs['scale'] = 0.5
with h5py.File(d + '/early.h5', 'w', libver='earliest') as f:
    fill(f)
with h5py.File(d + '/late.h5', 'w', libver='latest') as f:
    fill(f)
with h5py.File(d + '/ub.h5', 'w', userblock_size=1024) as f:
    fill(f)
`

// locateReaders reads each array of a reference set through fsspec's
// ReferenceFileSystem and zarr and compares it with h5py's values
// (argv: refs.json, file.h5, names...); prints the names read equal.
const locateReaders = `
import sys, json, numpy as np, fsspec, zarr, h5py
fo, path = sys.argv[1], sys.argv[2]
g = zarr.open_group(zarr.storage.KVStore(fsspec.get_mapper("reference://", fo=fo, remote_protocol="file")), mode="r")
out = {}
with h5py.File(path, 'r') as f:
    for name in sys.argv[3:]:
        want = f[name][()]
        got = g[name][...]
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert np.array_equal(got, want), (name, got, want)
        out[name] = {"attrs": dict(g[name].attrs), "fill": g[name].fill_value if not isinstance(g[name].fill_value, np.generic) else g[name].fill_value.item()}
print(json.dumps(out))
`

// A reference set of h5py's files, read through fsspec and zarr, gives
// h5py's values for every dataset it describes; the others are skipped
// saying why.
func TestLocateReadByZarr(t *testing.T) {
	modules := []string{"h5py", "numpy", "fsspec", "zarr"}
	py := oracle.Python(t, modules...)
	dir := t.TempDir()
	oracle.Run(t, modules, locateFiles, dir)
	described := []string{"be", "compact", "contig", "cplx", "flags", "grow2d", "gzshuf", "half", "holes", "shuf", "unlimited", "zeros"}
	wantSkipped := map[string]string{
		"/fletcher": "filter fletcher32 has no Zarr v2 codec here",
		"/lzf":      "filter lzf has no Zarr v2 codec here",
		"/table/a":  "a column of the compound dataset /table",
		"/table/b":  "a column of the compound dataset /table",
		"/text":     "values cannot be read as an array",
		"/never":    "never written",
	}
	for _, name := range []string{"early.h5", "late.h5", "ub.h5"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			f, err := format.Open(path, nil)
			require.NoError(t, err)
			defer f.Close()
			skipped := map[string]string{}
			set, err := refs.Build(f, path, &refs.Options{Skipped: func(rec *format.Record, why error) {
				assert.ErrorIs(t, why, errors.ErrUnsupported)
				skipped[rec.Name] = why.Error()
			}})
			require.NoError(t, err)
			require.Len(t, skipped, len(wantSkipped), "%v", skipped)
			for k, v := range wantSkipped {
				assert.Contains(t, skipped[k], v, k)
			}
			out := filepath.Join(dir, name+".json")
			w, err := os.Create(out)
			require.NoError(t, err)
			require.NoError(t, set.WriteJSON(w))
			require.NoError(t, w.Close())
			res, err := oracle.Output(py, locateReaders, append([]string{out, path}, described...)...)
			require.NoError(t, err)
			var got map[string]struct {
				Attrs map[string]any `json:"attrs"`
				Fill  any            `json:"fill"`
			}
			require.NoError(t, json.Unmarshal([]byte(res), &got), res)
			var names []string
			for k := range got {
				names = append(names, k)
			}
			sort.Strings(names)
			assert.Equal(t, described, names)
			assert.Equal(t, "K", got["contig"].Attrs["units"])
			assert.Equal(t, 0.5, got["contig"].Attrs["scale"])
			assert.Equal(t, -1.0, got["holes"].Fill, "unallocated chunks read as the dataset's fill value")
			assert.Equal(t, 0.0, got["zeros"].Fill, "unallocated chunks read as zeros without a fill value")
			assert.Nil(t, got["gzshuf"].Fill, "every chunk allocated: no fill value")
			// Chunked datasets are ranges of the file, one per allocated chunk.
			for _, k := range []string{"gzshuf/0.0", "gzshuf/5.2", "holes/1", "holes/2", "zeros/0.1"} {
				r, ok := set.Data[k]
				if assert.True(t, ok, k) {
					assert.Equal(t, path, r.Target)
				}
			}
			for _, k := range []string{"holes/0", "holes/3", "zeros/0.0"} {
				assert.NotContains(t, set.Data, k, "an unallocated chunk has no key")
			}
		})
	}
}
