package hdf5

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
)

// memSource is a format.Source over arrays held in memory, row-major and
// little-endian; a record marked BigEndian is read in big-endian order.
type memSource struct {
	recs []format.Record
	data [][]byte
}

func (m *memSource) add(name string, t layout.Type, shape []int64, big bool, le []byte) {
	m.recs = append(m.recs, format.Record{Array: layout.Array{Name: name, Type: t, Shape: shape, Offset: -1, BigEndian: big}, Kind: format.KindArray})
	m.data = append(m.data, le)
}

func (m *memSource) Records() []format.Record { return m.recs }

func (m *memSource) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if order != layout.RowMajor {
		return errors.ErrUnsupported
	}
	size := int64(m.recs[i].Type.Size())
	copy(dst, m.data[i][first*size:])
	if bo == binary.BigEndian {
		part := int(size)
		if t := m.recs[i].Type; t == layout.C64 || t == layout.C128 {
			part /= 2
		}
		for k := 0; k+part <= len(dst); k += part {
			for a, b := k, k+part-1; a < b; a, b = a+1, b-1 {
				dst[a], dst[b] = dst[b], dst[a]
			}
		}
	}
	return nil
}

// pattern is n bytes of a fixed pseudo-random sequence.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

func f64s(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// writeSample is a source of every type the writer takes, in groups.
func writeSample() *memSource {
	m := &memSource{}
	m.add("/a", layout.F64, []int64{3, 4}, false, f64s(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
	m.add("g/b", layout.I32, []int64{5}, true, pattern(20, 1))
	m.add("g/h/c", layout.Bool, []int64{4}, false, []byte{1, 0, 0, 1})
	m.add("z", layout.C64, []int64{2}, false, pattern(16, 2))
	m.add("", layout.U16, nil, false, []byte{7, 1})
	m.add("g/e", layout.F32, []int64{0, 3}, false, nil)
	m.add("half", layout.F16, []int64{3}, true, []byte{0, 0x3c, 0, 0xc0, 0x00, 0x7c})
	m.add("c", layout.C128, []int64{1, 1}, true, f64s(1.5, -2.5))
	for _, t := range []layout.Type{layout.I8, layout.I16, layout.I64, layout.U8, layout.U32, layout.U64} {
		m.add("ints/"+t.String(), t, []int64{2, 3}, false, pattern(6*t.Size(), byte(t)))
	}
	return m
}

// readBackH5py prints, per dataset h5py finds, its type, shape, offset and
// the SHA-256 of its values little-endian.
const readBackH5py = `
import sys, json, hashlib
import numpy as np, h5py
types = {'i1': 'i8', 'i2': 'i16', 'i4': 'i32', 'i8': 'i64', 'u1': 'u8', 'u2': 'u16', 'u4': 'u32', 'u8': 'u64',
         'f2': 'f16', 'f4': 'f32', 'f8': 'f64', 'c8': 'c64', 'c16': 'c128', 'b1': 'bool'}
out = {}
def visit(name, obj):
    if isinstance(obj, h5py.Dataset):
        v = np.asarray(obj[()])
        dt = v.dtype.newbyteorder('<') if v.dtype.byteorder in '<>' else v.dtype
        v = np.ascontiguousarray(v.astype(dt))
        out['/' + name] = {'type': types[v.dtype.kind + str(v.dtype.itemsize)] if v.dtype.kind != 'b' else 'bool',
                           'shape': list(obj.shape), 'offset': obj.id.get_offset(),
                           'sha256': hashlib.sha256(v.tobytes()).hexdigest(), 'chunks': obj.chunks,
                           'compression': obj.compression}
with h5py.File(sys.argv[1], 'r') as f:
    f.visititems(visit)
print(json.dumps(out))
`

type h5pyDataset struct {
	Type        string  `json:"type"`
	Shape       []int64 `json:"shape"`
	Offset      *int64  `json:"offset"`
	SHA256      string  `json:"sha256"`
	Chunks      []int64 `json:"chunks"`
	Compression *string `json:"compression"`
}

func h5pyRead(t *testing.T, path string) map[string]h5pyDataset {
	t.Helper()
	out := oracle.Run(t, []string{"h5py", "numpy"}, readBackH5py, path)
	var got map[string]h5pyDataset
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	return got
}

func h5dumpPasses(t *testing.T, path string) {
	t.Helper()
	if _, err := exec.LookPath("h5dump"); err != nil {
		t.Log("no h5dump here (Debian's hdf5-tools has it): not checked")
		return
	}
	out, err := exec.Command("h5dump", path).CombinedOutput()
	require.NoError(t, err, "h5dump %s:\n%s", path, out)
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// The sample's datasets: where they go, and what h5py must read.
var sampleWant = []struct{ path, typ string }{
	{"/a", "f64"}, {"/g/b", "i32"}, {"/g/h/c", "bool"}, {"/z", "c64"}, {"/0", "u16"}, {"/g/e", "f32"},
	{"/half", "f16"}, {"/c", "c128"},
	{"/ints/i8", "i8"}, {"/ints/i16", "i16"}, {"/ints/i64", "i64"}, {"/ints/u8", "u8"}, {"/ints/u32", "u32"}, {"/ints/u64", "u64"},
}

// What Write writes reads back in mmapkit as written, every dataset at a
// 64-byte aligned offset, the file as long as its end-of-file address.
func TestWriteReadsBack(t *testing.T) {
	src := writeSample()
	path := filepath.Join(t.TempDir(), "w.h5")
	require.NoError(t, format.Write(path, src, nil))

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(b), superblockSize)
	assert.Equal(t, []byte("\x89HDF\r\n\x1a\n\x02\x08\x08\x00"), b[:12])
	assert.Equal(t, uint64(0), binary.LittleEndian.Uint64(b[12:]), "base address")
	assert.Equal(t, undefinedAddress, binary.LittleEndian.Uint64(b[20:]), "no extension")
	assert.Equal(t, uint64(len(b)), binary.LittleEndian.Uint64(b[28:]), "end-of-file address")
	assert.Equal(t, uint64(superblockSize), binary.LittleEndian.Uint64(b[36:]), "root group right after the superblock")
	assert.Equal(t, h5.Checksum(b[:44]), binary.LittleEndian.Uint32(b[44:]))

	f, err := format.Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	recs := f.Records()
	require.Len(t, recs, len(sampleWant))
	for i, w := range sampleWant {
		k, err := format.Find(f, w.path)
		require.NoError(t, err)
		r := recs[k]
		assert.Equal(t, w.path, r.Name)
		assert.Equal(t, w.typ, r.TypeString(), w.path)
		assert.Equal(t, fmt.Sprint(src.recs[i].Shape), fmt.Sprint(r.Shape), w.path)
		assert.Equal(t, src.recs[i].BigEndian && r.Type.Size() > 1, r.BigEndian, w.path)
		if r.Size > 0 {
			assert.Zero(t, r.Offset%dataAlign, w.path)
		}
		got, err := format.ReadAll(f, k, layout.RowMajor, binary.LittleEndian)
		require.NoError(t, err, w.path)
		assert.Equal(t, sha(src.data[i]), sha(got), w.path)
	}
	hf, err := Open(path, nil)
	require.NoError(t, err)
	defer hf.Close()
	a, err := View[float64](hf, "/a")
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, a)
	k, err := format.Find(f, "/a")
	require.NoError(t, err)
	assert.Equal(t, a, unsafeFloat64s(b[recs[k].Offset:recs[k].Offset+96]))
}

func unsafeFloat64s(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

// h5py reads what Write writes as written, each contiguous dataset at the
// offset mmapkit maps; h5dump reads the whole file.
func TestWriteH5pyReadsBack(t *testing.T) {
	src := writeSample()
	path := filepath.Join(t.TempDir(), "w.h5")
	require.NoError(t, Write(path, src, nil))
	h5dumpPasses(t, path)
	got := h5pyRead(t, path)
	require.Len(t, got, len(sampleWant))
	f, err := format.Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	for i, w := range sampleWant {
		g, ok := got[w.path]
		if !assert.True(t, ok, "h5py has no %s", w.path) {
			continue
		}
		assert.Equal(t, w.typ, g.Type, w.path)
		assert.Equal(t, fmt.Sprint(src.recs[i].Shape), fmt.Sprint(g.Shape), w.path)
		assert.Equal(t, sha(src.data[i]), g.SHA256, w.path)
		k, err := format.Find(f, w.path)
		require.NoError(t, err)
		if r := f.Records()[k]; r.Size > 0 {
			require.NotNil(t, g.Offset, w.path)
			assert.Equal(t, r.Offset, *g.Offset, w.path)
		}
	}
}

// Names that cannot be links, and names that are both a group and a
// dataset, are refused, leaving what was at the path.
func TestWriteRefusesNames(t *testing.T) {
	for _, names := range [][]string{{"a/../b"}, {"a//b"}, {"./a"}, {"a/"}, {"a", "a/b"}, {"a/b", "a"}, {"x", "/x"}} {
		m := &memSource{}
		for _, n := range names {
			m.add(n, layout.U8, []int64{1}, false, []byte{1})
		}
		path := filepath.Join(t.TempDir(), "n.h5")
		require.NoError(t, os.WriteFile(path, []byte("old"), 0o640))
		err := Write(path, m, nil)
		assert.ErrorIs(t, err, format.ErrNotRepresentable, "%q", names)
		b, _ := os.ReadFile(path)
		assert.Equal(t, "old", string(b), "%q", names)
	}
}

// Types HDF5 readers lack are refused naming them.
func TestWriteRefusesTypes(t *testing.T) {
	for _, typ := range []layout.Type{layout.I128, layout.U128, layout.JuliaChar} {
		m := &memSource{}
		m.add("x", typ, []int64{1}, false, make([]byte, typ.Size()))
		err := Write(filepath.Join(t.TempDir(), "t.h5"), m, nil)
		assert.ErrorIs(t, err, format.ErrNotRepresentable, typ.String())
		assert.ErrorContains(t, err, typ.String())
	}
}

// A replaced file keeps its permission bits.
func TestWriteKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.h5")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o604))
	require.NoError(t, os.Chmod(path, 0o604))
	require.NoError(t, Write(path, writeSample(), nil))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o604), st.Mode().Perm())
}

// Chunked output, plain and shuffled and deflated, reads in h5py and
// mmapkit as written: chunks as asked for or chosen from the shape, over
// B-trees of one node and of two levels, cut from bands of several chunk
// rows and of one; scalars and empty arrays stay contiguous.
func TestWriteChunked(t *testing.T) {
	defer func(b int64) { bandTarget = b }(bandTarget)
	big := make([]byte, 300*70*8)
	for i := range 300 * 70 {
		binary.LittleEndian.PutUint64(big[8*i:], math.Float64bits(float64(i%97)*0.5))
	}
	for _, c := range []struct {
		params     map[string]string
		band       int64
		bigChunks  string
		compressed bool
	}{
		{map[string]string{"chunks": "3,7"}, 32 << 20, "[3 7]", false},
		{map[string]string{"compress": "gzip"}, 32 << 20, "[300 70]", true},
		{map[string]string{"compress": "gzip:9", "chunks": "7,300"}, 1, "[7 70]", true},
		{map[string]string{"compress": "none", "chunks": "2,2"}, 1000, "[2 2]", false},
	} {
		what := fmt.Sprint(c.params)
		bandTarget = c.band
		src := writeSample()
		// Only 2-D arrays take 2-D chunks: the sample's others are left out.
		var keep memSource
		for i, r := range src.recs {
			if len(r.Shape) == 2 || len(r.Shape) == 0 || (c.params["chunks"] == "" && len(r.Shape) > 0) {
				keep.recs = append(keep.recs, r)
				keep.data = append(keep.data, src.data[i])
			}
		}
		keep.add("big", layout.F64, []int64{300, 70}, false, big)
		path := filepath.Join(t.TempDir(), "c.h5")
		require.NoError(t, Write(path, &keep, &format.Options{Params: c.params}), what)
		h5dumpPasses(t, path)
		f, err := format.Open(path, nil)
		require.NoError(t, err, what)
		got := h5pyRead(t, path)
		for i, r := range keep.recs {
			name := "/" + strings.TrimPrefix(r.Name, "/")
			if r.Name == "" {
				name = "/0"
			}
			g := got[name]
			assert.Equal(t, sha(keep.data[i]), g.SHA256, "%s %s in h5py", what, name)
			k, err := format.Find(f, name)
			require.NoError(t, err, "%s %s", what, name)
			b, err := format.ReadAll(f, k, layout.RowMajor, binary.LittleEndian)
			require.NoError(t, err, "%s %s", what, name)
			assert.Equal(t, sha(keep.data[i]), sha(b), "%s %s in mmapkit", what, name)
			n, _ := layout.Count(r.Shape)
			if len(r.Shape) == 0 || n == 0 {
				assert.Nil(t, g.Chunks, "%s %s", what, name)
				continue
			}
			require.NotNil(t, g.Chunks, "%s %s", what, name)
			if c.compressed {
				require.NotNil(t, g.Compression, "%s %s", what, name)
				assert.Equal(t, "gzip", *g.Compression, "%s %s", what, name)
			} else {
				assert.Nil(t, g.Compression, "%s %s", what, name)
			}
		}
		assert.Equal(t, c.bigChunks, fmt.Sprint(got["/big"].Chunks), what)
		require.NoError(t, f.Close())
	}
}

func TestWriteParamsRefused(t *testing.T) {
	for _, p := range []map[string]string{{"compress": "zstd"}, {"compress": "gzip:10"}, {"chunks": "0,1"}, {"chunks": "a"}} {
		err := Write(filepath.Join(t.TempDir(), "p.h5"), writeSample(), &format.Options{Params: p})
		assert.Error(t, err, "%v", p)
	}
	m := &memSource{}
	m.add("x", layout.U8, []int64{4}, false, make([]byte, 4))
	err := Write(filepath.Join(t.TempDir(), "p.h5"), m, &format.Options{Params: map[string]string{"chunks": "2,2"}})
	assert.ErrorIs(t, err, format.ErrNotRepresentable)
}

// Create makes datasets to fill through writable views, as open_memmap
// does; the target appears, with what was written, only at Close, and
// h5py reads it.
func TestCreateFillThroughView(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.h5")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	f, err := Create(path, []DatasetSpec{
		{Name: "/grid/t", Type: layout.F64, Shape: []int64{100, 50}},
		{Name: "n", Type: layout.I32, Shape: []int64{7}, BigEndian: true},
		{Name: "untouched", Type: layout.U16, Shape: []int64{3}},
	}, nil)
	require.NoError(t, err)
	v, err := View[float64](f, "/grid/t")
	require.NoError(t, err)
	require.Len(t, v, 5000)
	want := make([]byte, 0, 8*5000)
	for i := range v {
		v[i] = float64(i) / 4
		want = binary.LittleEndian.AppendUint64(want, math.Float64bits(v[i]))
	}
	require.NoError(t, Set[int32](f, "/n", []int64{3}, -9))
	b, _ := os.ReadFile(path)
	assert.Equal(t, "old", string(b), "the target is untouched until Close")
	require.NoError(t, f.Close())

	got := h5pyRead(t, path)
	assert.Equal(t, sha(want), got["/grid/t"].SHA256)
	assert.Equal(t, sha([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf7, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), got["/n"].SHA256)
	assert.Equal(t, sha(make([]byte, 6)), got["/untouched"].SHA256)
	require.NotNil(t, got["/grid/t"].Offset)
	assert.Zero(t, *got["/grid/t"].Offset%dataAlign)
	h5dumpPasses(t, path)
}

// A spec Write would refuse leaves the target as it was.
func TestCreateRefusesBadNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.h5")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	_, err := Create(path, []DatasetSpec{{Name: "a/../b", Type: layout.U8, Shape: []int64{1}}}, nil)
	assert.ErrorIs(t, err, format.ErrNotRepresentable)
	b, _ := os.ReadFile(path)
	assert.Equal(t, "old", string(b))
}

// readBackNetCDF prints, per variable netCDF4-python finds (groups
// included), its dimension names, and xarray's dimensions of the root
// group's variables.
const readBackNetCDF = `
import sys, json, hashlib
import numpy as np, netCDF4, xarray as xr
out = {}
def walk(g, prefix):
    for name, v in g.variables.items():
        a = np.ascontiguousarray(np.asarray(v[:]).astype(v.dtype.newbyteorder('<')))
        out[prefix + name] = {'dims': list(v.dimensions), 'sha256': hashlib.sha256(a.tobytes()).hexdigest()}
    for name, sub in g.groups.items():
        walk(sub, prefix + name + '/')
with netCDF4.Dataset(sys.argv[1]) as d:
    d.set_auto_mask(False)
    walk(d, '/')
with xr.open_dataset(sys.argv[1]) as ds:
    xd = {name: list(v.dims) for name, v in ds.variables.items()}
print(json.dumps({'vars': out, 'xarray': xd}))
`

// .nc output: netCDF-4 dimension scales named dim_<i>, or
// <variable>_dim_<i> where dim_<i> has another length, that netCDF4-python
// and xarray see; ncdump reads the file; bool is written as u8 and
// complex refused; mmapkit lists the variables only.
func TestWriteNetCDF(t *testing.T) {
	m := &memSource{}
	m.add("a", layout.F64, []int64{3, 4}, false, f64s(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
	m.add("b", layout.I32, []int64{3}, true, pattern(12, 1))
	m.add("c", layout.Bool, []int64{5}, false, []byte{1, 0, 0, 1, 1})
	m.add("g/d", layout.U16, []int64{2, 4}, false, pattern(16, 3))
	m.add("s", layout.F32, nil, false, pattern(4, 4))
	path := filepath.Join(t.TempDir(), "w.nc")
	require.NoError(t, Write(path, m, nil))
	h5dumpPasses(t, path)
	if _, err := exec.LookPath("ncdump"); err == nil {
		out, err := exec.Command("ncdump", "-h", path).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, `netcdf w {
dimensions:
	dim_0 = 3 ;
	dim_1 = 4 ;
	c_dim_0 = 5 ;
variables:
	double a(dim_0, dim_1) ;
	int b(dim_0) ;
	ubyte c(c_dim_0) ;
	float s ;

group: g {
  dimensions:
  	dim_0 = 2 ;
  	dim_1 = 4 ;
  variables:
  	ushort d(dim_0, dim_1) ;
  } // group g
}
`, string(out))
	} else {
		t.Log("no ncdump here (Debian's netcdf-bin has it): not checked")
	}
	var got struct {
		Vars map[string]struct {
			Dims   []string `json:"dims"`
			SHA256 string   `json:"sha256"`
		} `json:"vars"`
		Xarray map[string][]string `json:"xarray"`
	}
	require.NoError(t, json.Unmarshal([]byte(oracle.Run(t, []string{"netCDF4", "xarray", "numpy"}, readBackNetCDF, path)), &got))
	wantDims := map[string][]string{"/a": {"dim_0", "dim_1"}, "/b": {"dim_0"}, "/c": {"c_dim_0"}, "/g/d": {"dim_0", "dim_1"}, "/s": {}}
	require.Len(t, got.Vars, len(wantDims))
	for i, r := range m.recs {
		name := "/" + r.Name
		assert.Equal(t, wantDims[name], got.Vars[name].Dims, name)
		assert.Equal(t, sha(m.data[i]), got.Vars[name].SHA256, name)
	}
	assert.Equal(t, map[string][]string{"a": {"dim_0", "dim_1"}, "b": {"dim_0"}, "c": {"c_dim_0"}, "s": {}}, got.Xarray)

	f, err := format.Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	var names []string
	for _, r := range f.Records() {
		names = append(names, r.Name+":"+r.TypeString())
	}
	assert.Equal(t, []string{"/a:f64", "/b:i32", "/c:u8", "/g/d:u16", "/s:f32"}, names)

	m.add("z", layout.C64, []int64{1}, false, make([]byte, 8))
	assert.ErrorIs(t, Write(path, m, nil), format.ErrNotRepresentable)
}

// The source's dimension names are kept (one that cannot name a link
// falls back to dim_<i>), and a 1-D dataset of a dimension's name and
// length becomes its coordinate variable.
func TestWriteNetCDFSourceDims(t *testing.T) {
	m := &memSource{}
	m.add("t", layout.F32, []int64{2, 3}, false, pattern(24, 5))
	m.add("x", layout.F64, []int64{3}, false, f64s(10, 20, 30))
	m.add("y", layout.I8, []int64{3}, false, []byte{1, 2, 3})
	m.recs[0].Extra = map[string]any{"dims": []string{"time", "x"}}
	m.recs[1].Extra = map[string]any{"dims": []string{"x"}}
	m.recs[2].Extra = map[string]any{"dims": []string{"../bad"}}
	path := filepath.Join(t.TempDir(), "d.nc")
	require.NoError(t, Write(path, m, nil))
	h5dumpPasses(t, path)
	if _, err := exec.LookPath("ncdump"); err == nil {
		out, err := exec.Command("ncdump", "-h", path).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, "netcdf d {\ndimensions:\n\ttime = 2 ;\n\tx = 3 ;\n\tdim_0 = 3 ;\nvariables:\n\tfloat t(time, x) ;\n\tdouble x(x) ;\n\tbyte y(dim_0) ;\n}\n", string(out))
	}
	var got struct {
		Vars map[string]struct {
			Dims []string `json:"dims"`
		} `json:"vars"`
		Xarray map[string][]string `json:"xarray"`
	}
	require.NoError(t, json.Unmarshal([]byte(oracle.Run(t, []string{"netCDF4", "xarray", "numpy"}, readBackNetCDF, path)), &got))
	assert.Equal(t, map[string][]string{"t": {"time", "x"}, "x": {"x"}, "y": {"dim_0"}}, got.Xarray)
}
