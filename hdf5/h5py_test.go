package hdf5

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
)

// randomFiles is a script that writes files of random datasets with h5py
// (shapes, types in both byte orders, contiguous, compact and chunked
// storage, filters gzip, shuffle, fletcher32 and lzf, unlimited
// dimensions, chunks left unwritten, both superblock generations) and
// prints, per file, what h5py reads of each dataset.
const randomFiles = `
import sys, json, hashlib, random
import numpy as np, h5py
out, seed, nfiles = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
types = {'i1': 'i8', 'i2': 'i16', 'i4': 'i32', 'i8': 'i64', 'u1': 'u8', 'u2': 'u16', 'u4': 'u32', 'u8': 'u64',
         'f2': 'f16', 'f4': 'f32', 'f8': 'f64', 'c8': 'c64', 'c16': 'c128', '?': 'bool'}
res = {}
for k in range(nfiles):
    name = '%s/r%d.h5' % (out, k)
    libver = rng.choice(['earliest', 'latest'])
    objs = []
    with h5py.File(name, 'w', libver=libver) as f:
        for j in range(rng.randint(1, 6)):
            code = rng.choice(list(types))
            order = rng.choice('<>') if code not in ('i1', 'u1', '?') else '|'
            dt = np.dtype(order + code if order != '|' else code)
            rank = rng.randint(0, 3)
            shape = tuple(rng.randint(0, 9) for _ in range(rank))
            n = int(np.prod(shape)) if shape else 1
            if code == '?':
                vals = np.array([rng.random() < 0.5 for _ in range(n)], dtype=dt)
            elif code[0] in 'iu':
                info = np.iinfo(dt)
                vals = np.array([rng.randint(int(info.min), int(info.max)) for _ in range(n)], dtype=dt)
            elif code[0] == 'c':
                vals = np.array([complex(rng.uniform(-1e3, 1e3), rng.uniform(-1e3, 1e3)) for _ in range(n)], dtype=dt)
            else:
                vals = np.array([rng.uniform(-1e3, 1e3) for _ in range(n)], dtype=dt)
            vals = vals.reshape(shape)
            kw = {}
            storage = rng.choice(['contiguous', 'compact', 'chunked', 'chunked', 'chunked'])
            if rank == 0 or n == 0:
                storage = 'contiguous'
            if storage == 'chunked':
                kw['chunks'] = tuple(rng.randint(1, max(1, d)) for d in shape)
                flt = rng.choice(['none', 'gzip', 'shuffle+gzip', 'fletcher32', 'lzf', 'shuffle+lzf'])
                if 'gzip' in flt:
                    kw['compression'] = 'gzip'
                    kw['compression_opts'] = rng.randint(1, 9)
                if 'lzf' in flt:
                    kw['compression'] = 'lzf'
                if 'shuffle' in flt:
                    kw['shuffle'] = True
                if flt == 'fletcher32':
                    kw['fletcher32'] = True
                if rng.random() < 0.4:
                    kw['maxshape'] = tuple(None if rng.random() < 0.5 else d for d in shape)
                if rng.random() < 0.3 and code[0] != 'c':
                    kw['fillvalue'] = vals.flat[0]
            dsname = 'd%d' % j
            if storage == 'compact' and vals.nbytes < 60000:
                dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
                dcpl.set_layout(h5py.h5d.COMPACT)
                space = h5py.h5s.create_simple(shape)
                h5py.h5d.create(f.id, dsname.encode(), h5py.h5t.py_create(dt), space, dcpl=dcpl)
                f[dsname][...] = vals
            else:
                ds = f.create_dataset(dsname, shape=shape, dtype=dt, **kw)
                if storage == 'chunked' and rank > 0 and rng.random() < 0.4:
                    # Write only the first half along the first axis: the
                    # rest reads as the fill value.
                    h = shape[0] // 2
                    ds[:h] = vals[:h]
                else:
                    ds[...] = vals
            ds = f[dsname]
            got = ds[()]
            got = np.asarray(got).astype(dt.newbyteorder('<') if order != '|' else dt)
            off = ds.id.get_offset()
            objs.append({'path': '/' + dsname, 'type': types[code], 'shape': list(shape),
                         'sha256': hashlib.sha256(np.ascontiguousarray(got).tobytes()).hexdigest(),
                         'offset': off, 'chunks': list(ds.chunks) if ds.chunks else None})
    res[name] = objs
print(json.dumps(res))
`

// Files h5py writes with random shapes, types, storage and filters read
// as h5py reads them.
func TestH5pyRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("writes files with h5py")
	}
	dir := t.TempDir()
	for _, seed := range []int{1, 2, 3} {
		out := oracle.Run(t, []string{"h5py", "numpy"}, randomFiles, dir, strconv.Itoa(seed), "8")
		var files map[string][]struct {
			Path   string  `json:"path"`
			Type   string  `json:"type"`
			Shape  []int64 `json:"shape"`
			SHA256 string  `json:"sha256"`
			Offset *int64  `json:"offset"`
			Chunks []int64 `json:"chunks"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &files))
		for name, objs := range files {
			f, err := format.Open(name, nil)
			require.NoError(t, err, name)
			recs := f.Records()
			require.Len(t, recs, len(objs), name)
			for i, o := range objs {
				what := fmt.Sprintf("seed %d %s %s", seed, filepath.Base(name), o.Path)
				r := recs[i]
				assert.Equal(t, o.Path, r.Name, what)
				assert.Equal(t, o.Type, r.TypeString(), what)
				assert.Equal(t, fmt.Sprint(o.Shape), fmt.Sprint(r.Shape), what)
				if o.Offset != nil && o.Chunks == nil {
					assert.Equal(t, *o.Offset, r.Offset, what)
				}
				if o.Chunks != nil {
					assert.Equal(t, o.Chunks, r.Extra["chunks"], what)
				}
				b, err := format.ReadAll(f, i, layout.RowMajor, binary.LittleEndian)
				if !assert.NoError(t, err, what) {
					continue
				}
				sum := sha256.Sum256(b)
				assert.Equal(t, o.SHA256, hex.EncodeToString(sum[:]), what)
			}
			require.NoError(t, f.Close())
		}
	}
}
