package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
)

// pyWriteStores has zarr-python write stores of every dtype, both orders,
// both separators, every compressor, fill values with missing chunks and
// nested groups; for each array it saves what zarr-python reads back
// (C order, little-endian) and lists the case in manifest.json.
const pyWriteStores = `
import sys, os, json, numpy as np, zarr
from numcodecs import Zlib, GZip, Zstd, LZ4, Blosc
out = sys.argv[1]
cases = []
def save(store, name, z, what, err=None):
    a = z[...]
    a = np.ascontiguousarray(a)
    if a.dtype.kind in 'iufcbmM' and a.dtype.itemsize > 1:
        a = a.astype(a.dtype.newbyteorder('<'))
    f = os.path.join(out, 'expect%d' % len(cases))
    open(f, 'wb').write(a.tobytes())
    cases.append(dict(store=store, name=name, expect=f, what=what, error=err))
def arr(dtype, shape):
    n = int(np.prod(shape))
    dt = np.dtype(dtype)
    if dt.kind == 'b':
        return (np.arange(n) % 3 == 1).reshape(shape)
    if dt.kind in 'mM':
        return np.arange(n).astype(dt.newbyteorder('=')).reshape(shape)
    v = np.arange(n) * 3 - 7
    if dt.kind == 'u':
        v = np.arange(n) * 3 + 1
    if dt.kind == 'c':
        v = v + 1j * (v + 0.5)
    if dt.kind == 'f':
        v = v + 0.25
    return v.astype(dt).reshape(shape)
k = 0
def store():
    global k
    k += 1
    return os.path.join(out, 's%d.zarr' % k)

dtypes = ['|b1', '|i1', '<i2', '>i2', '<i4', '>i4', '<i8', '|u1', '<u2', '>u4', '<u8', '<f2', '>f2', '<f4', '>f4', '<f8', '>f8', '<c8', '>c16', '<M8[s]', '<m8[ms]']
for dt in dtypes:
    for order, sep, comp in [('C', '.', None), ('F', '/', Zlib(level=3))]:
        p = store()
        z = zarr.open(p, mode='w', shape=(5, 7), chunks=(2, 3), dtype=dt, order=order, dimension_separator=sep, compressor=comp)
        z[...] = arr(dt, (5, 7))
        save(p, '/', z, 'dtype %s order %s sep %r compressor %s' % (dt, order, sep, comp and comp.codec_id))
blosc = [Blosc(cname='lz4'), Blosc(cname='zstd', clevel=9, shuffle=Blosc.BITSHUFFLE), Blosc(cname='blosclz', clevel=1, shuffle=Blosc.NOSHUFFLE, blocksize=256), Blosc(cname='zlib', shuffle=Blosc.AUTOSHUFFLE)]
for comp in [Zlib(level=1), GZip(level=5), Zstd(level=3), LZ4()] + blosc:
    for order in 'CF':
        p = store()
        z = zarr.open(p, mode='w', shape=(9, 4, 5), chunks=(4, 3, 2), dtype='<f8', order=order, compressor=comp)
        z[...] = arr('<f8', (9, 4, 5))
        save(p, '/', z, 'compressor %r order %s' % (comp, order))
for dt in ['|u1', '<i2', '<f4', '>f8', '<c16']:
    p = store()
    z = zarr.open(p, mode='w', shape=(300, 7), chunks=(128, 5), dtype=dt)  # zarr-python's default: Blosc lz4
    z[...] = arr(dt, (300, 7))
    save(p, '/', z, 'default compressor %r, dtype %s' % (z.compressor, dt))
fills = [('<f8', np.nan), ('<f8', np.inf), ('<f4', -np.inf), ('<f8', -2.5), ('<i4', 7), ('<u8', 2**64 - 1), ('|b1', True), ('<c16', 1 + 2j), ('<c8', complex(np.nan, -1)), ('<i2', 0), ('>f8', 1e300), ('<M8[s]', 5)]
for dt, fv in fills:
    for comp in [None, Zstd()]:
        p = store()
        z = zarr.open(p, mode='w', shape=(5, 7), chunks=(2, 3), dtype=dt, fill_value=fv, compressor=comp)
        z[0:2, 3:6] = arr(dt, (2, 3))
        z[4, 6] = arr(dt, (1,))[0]
        save(p, '/', z, 'fill %r %s, missing chunks, compressor %s' % (fv, dt, comp and comp.codec_id))
p = store()
z = zarr.open(p, mode='w', shape=(4,), chunks=(3,), dtype='<f8', fill_value=None, compressor=None)
z[...] = arr('<f8', (4,))
save(p, '/', z, 'fill null, all chunks present')
p = store()
z = zarr.open(p, mode='w', shape=(), dtype='<i8', compressor=None)
z[...] = 42
save(p, '/', z, '0-d array')
p = store()
z = zarr.open(p, mode='w', shape=(0, 3), chunks=(2, 2), dtype='<f4', compressor=None)
save(p, '/', z, 'empty array')
for consolidated in [False, True]:
    p = store()
    g = zarr.open_group(p, mode='w')
    a = g.create_dataset('temp', data=arr('<f4', (6, 4)), chunks=(4, 3), compressor=GZip(1), order='F')
    s = g.create_group('sub').create_group('deep')
    b = s.create_dataset('counts', data=arr('>i2', (11,)), chunks=(4,), compressor=None, fill_value=-1, dimension_separator='/')
    c = g.create_dataset('a_b', data=arr('<u1', (3, 3)), chunks=(2, 2), compressor=Zstd(1))
    if consolidated:
        zarr.consolidate_metadata(p)
    for z in [a, b, c]:
        save(p, z.name, z, 'group member %s, consolidated %s' % (z.name, consolidated))
json.dump(cases, open(os.path.join(out, 'manifest.json'), 'w'))
`

// TestReadZarrPython reads stores that zarr-python wrote and compares
// every array with what zarr-python reads from them.
func TestReadZarrPython(t *testing.T) {
	dir := t.TempDir()
	oracle.Run(t, []string{"numpy", "zarr", "numcodecs"}, pyWriteStores, dir)
	var cases []struct {
		Store, Name, Expect, What string
		Error                     *string
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 60 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.What, func(t *testing.T) {
			s, err := Open(c.Store, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var got []string
			for _, r := range s.Records() {
				got = append(got, r.Name)
			}
			if strings.HasPrefix(c.What, "group member") && !slicesEqual(got, []string{"/a_b", "/sub/deep/counts", "/temp"}) {
				t.Errorf("records %v, zarr-python visits /a_b, /sub/deep/counts, /temp", got)
			}
			i, err := format.Find(s, c.Name)
			if err != nil {
				t.Fatalf("%v (records %v)", err, got)
			}
			want, _ := os.ReadFile(c.Expect)
			buf := make([]byte, len(want))
			err = s.ReadArray(i, buf, 0, layout.RowMajor, leOrder)
			if c.Error != nil {
				if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), *c.Error) {
					t.Fatalf("got %v, want an error naming %s", err, *c.Error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, want) {
				t.Fatalf("values differ:\n got %v\nwant %v", buf, want)
			}
			// The same values in column-major order.
			r := s.Records()[i]
			col := make([]byte, len(want))
			if err := s.ReadArray(i, col, 0, layout.ColMajor, leOrder); err != nil {
				t.Fatal(err)
			}
			if err := layout.ReorderBytes(buf, want, r.Type.Size(), r.Shape, layout.RowMajor); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(col, buf) {
				t.Fatalf("column-major read differs")
			}
		})
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// pyCheckStores checks, in zarr-python and xarray, the stores that
// mmapkit wrote: each array equal to its expected bytes, its
// _ARRAY_DIMENSIONS present, and the group opening in xarray by dimension
// name.
const pyCheckStores = `
import sys, json, numpy as np, zarr, xarray as xr
cases = json.load(open(sys.argv[1]))
for c in cases:
    g = zarr.open_consolidated(c['Store']) if c['Consolidated'] else zarr.open(c['Store'], mode='r')
    z = g[c['Name']] if c['Name'] != '/' else g
    want = np.frombuffer(open(c['Expect'], 'rb').read(), dtype=np.dtype(c['Dtype']).newbyteorder('<')).reshape(c['Shape'])
    got = z[...]
    assert got.dtype == np.dtype(c['Dtype']), (c, got.dtype)
    assert z.order == c['Order'], (c, z.order)
    assert (z.compressor.codec_id if z.compressor else 'none') == c['Compressor'], (c, z.compressor)
    assert np.array_equal(got, want, equal_nan=got.dtype.kind in 'fc'), (c, got, want)
    assert z.attrs['_ARRAY_DIMENSIONS'] == c['Dims'], (c, z.attrs.asdict())
    if c['Name'] != '/':
        group, _, var = c['Name'].lstrip('/').rpartition('/')
        ds = xr.open_zarr(c['Store'], group=group or None, consolidated=c['Consolidated'])
        v = ds[var]
        assert list(v.dims) == c['Dims'], (c, v.dims)
        assert np.array_equal(v.values, want, equal_nan=got.dtype.kind in 'fc')
    print('ok', c['What'])
`

// TestZarrPythonReadsWrites has zarr-python and xarray read the v2 stores
// mmapkit writes: every dtype, both byte orders, both storage orders,
// every compressor, groups whose arrays disagree on their lengths.
func TestZarrPythonReadsWrites(t *testing.T) {
	oracle.Python(t, "numpy", "zarr", "xarray")
	dir := t.TempDir()
	type pycase struct {
		Store, Name, Expect, What, Dtype, Order, Compressor string
		Shape                                               []int64
		Dims                                                []string
		Consolidated                                        bool
	}
	var cases []pycase
	k := 0
	check := func(store string, src *memSource, opts *Options, want [][]byte, dims [][]string) {
		t.Helper()
		if err := Write(store, src, opts); err != nil {
			t.Fatal(err)
		}
		comp := strings.Split(opts.Compress, ":")[0]
		if comp == "" {
			comp = "none"
		}
		for i, r := range src.Records() {
			k++
			e := filepath.Join(dir, fmt.Sprintf("expect%d", k))
			if err := os.WriteFile(e, want[i], 0o644); err != nil {
				t.Fatal(err)
			}
			order := "C"
			if r.Order == layout.ColMajor && len(r.Shape) > 1 {
				order = "F"
			}
			name := r.Name
			if name != "/" {
				name = "/" + strings.TrimPrefix(name, "/")
			}
			cases = append(cases, pycase{Store: store, Name: name, Expect: e, Dtype: dtypeV2(dtype{typ: r.Type, name: r.TypeName, big: r.BigEndian && r.Type.Size() > 1}),
				Shape: r.Shape, Order: order, Compressor: comp, Dims: dims[i], Consolidated: name != "/",
				What: fmt.Sprintf("%s %s %s%v order %s big-endian %v compress %q", filepath.Base(store), r.Name, r.Type, r.Shape, order, r.BigEndian, opts.Compress)})
		}
	}
	types := []layout.Type{layout.Bool, layout.I8, layout.I16, layout.I32, layout.I64, layout.U8, layout.U16, layout.U32, layout.U64, layout.F16, layout.F32, layout.F64, layout.C64, layout.C128}
	shape := []int64{13, 9}
	for _, typ := range types {
		for _, v := range []struct {
			order layout.Order
			big   bool
			comp  string
		}{{layout.RowMajor, false, ""}, {layout.ColMajor, true, "zlib"}, {layout.ColMajor, false, "zstd:5"}, {layout.RowMajor, true, "gzip:9"},
			{layout.RowMajor, false, "blosc"}, {layout.ColMajor, true, "blosc:zstd:9"}, {layout.RowMajor, false, "blosc:blosclz:1"}} {
			data := ramp(typ, 13*9, -50)
			src := (&memSource{}).add("/", typ, shape, v.order, v.big, toOrder(t, typ, shape, data, v.order, v.big))
			store := filepath.Join(dir, fmt.Sprintf("s%d.zarr", k))
			check(store, src, &Options{Version: 2, Chunks: []int64{4, 5}, Compress: v.comp}, [][]byte{data}, [][]string{{"dim_0", "dim_1"}})
		}
	}
	// A group: arrays of different lengths get names that never conflict.
	a, b, c := ramp(layout.F64, 12, 0), ramp(layout.I32, 5*4, 3), ramp(layout.U8, 7, 1)
	src := (&memSource{}).add("a", layout.F64, []int64{3, 4}, layout.RowMajor, false, a).
		add("b", layout.I32, []int64{5, 4}, layout.ColMajor, false, toOrder(t, layout.I32, []int64{5, 4}, b, layout.ColMajor, false)).
		add("sub/c", layout.U8, []int64{7}, layout.RowMajor, false, c)
	check(filepath.Join(dir, "group.zarr"), src, &Options{Version: 2, Compress: "zstd"}, [][]byte{a, b, c},
		[][]string{{"dim_0", "dim_1"}, {"b_dim_0", "dim_1"}, {"dim_0"}})
	manifest := filepath.Join(dir, "manifest.json")
	mb, _ := json.Marshal(cases)
	if err := os.WriteFile(manifest, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	out := oracle.Run(t, []string{"numpy", "zarr", "xarray"}, pyCheckStores, manifest)
	if n := strings.Count(out, "ok "); n != len(cases) {
		t.Fatalf("zarr-python checked %d of %d arrays:\n%s", n, len(cases), out)
	}
}
