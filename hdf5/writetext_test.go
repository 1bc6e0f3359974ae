package hdf5

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
)

// textSource is a format.Source of text records (a format.TextReader),
// as other formats hand out NumPy's and CSV's text; numbers from its
// memSource.
type textSource struct {
	memSource
	text map[int][]string
	name string
}

func (s *textSource) addText(name, typeName string, kind format.Kind, shape []int64, values []string, extra map[string]any) {
	s.recs = append(s.recs, format.Record{Array: layout.Array{Name: name, Shape: shape, Offset: -1}, Kind: kind, TypeName: typeName, Extra: extra})
	s.data = append(s.data, nil)
	if s.text == nil {
		s.text = map[int][]string{}
	}
	s.text[len(s.recs)-1] = values
}

func (s *textSource) ReadText(i int, fn func(batch []string) error) error {
	v, ok := s.text[i]
	if !ok {
		return errors.ErrUnsupported
	}
	for len(v) > 0 {
		n := min(len(v), 1000)
		if err := fn(v[:n]); err != nil {
			return err
		}
		v = v[n:]
	}
	return nil
}

func (s *textSource) Name() string { return s.name }

// The text datatypes are the bytes h5py's own datatypes encode to.
func TestTextDatatypes(t *testing.T) {
	for _, c := range []struct {
		name string
		got  []byte
		want []byte
	}{
		// numpy.dtype("S3"): null-padded ASCII.
		{"S3", fixedText(3, false), []byte{0x13, 0x01, 0, 0, 3, 0, 0, 0}},
		// h5py.string_dtype("utf-8", 4).
		{"utf-8 fixed", fixedText(4, true), []byte{0x13, 0x11, 0, 0, 4, 0, 0, 0}},
		// h5py.string_dtype() in a file: null-terminated UTF-8, 16 bytes,
		// a sequence of u8.
		{"vlen", vlenText, []byte{0x19, 0x01, 0x01, 0x00, 0x10, 0, 0, 0, 0x10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 8, 0}},
	} {
		assert.Equal(t, c.want, c.got, c.name)
	}
}

// A global heap collection is laid out as libhdf5 lays out h5py's: a
// 16-byte header, objects of a 16-byte header and their bytes padded to
// 8, the free space as object 0 (its size counting its header), at least
// 4096 bytes.
func TestHeapCollection(t *testing.T) {
	var c heapCollection
	c.reset()
	assert.Equal(t, 1, c.add(""))
	assert.Equal(t, 2, c.add("héllo"))
	b := c.finish()
	require.Len(t, b, gcolMinSize)
	le := binary.LittleEndian
	assert.Equal(t, "GCOL\x01\x00\x00\x00", string(b[:8]))
	assert.Equal(t, uint64(4096), le.Uint64(b[8:]))
	assert.Equal(t, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, b[16:32], "object 1, empty")
	assert.Equal(t, []byte{2, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0}, b[32:48], "object 2, 6 bytes")
	assert.Equal(t, "h\xc3\xa9llo\x00\x00", string(b[48:56]))
	assert.Equal(t, uint16(0), le.Uint16(b[56:]), "free space")
	assert.Equal(t, uint64(4096-56), le.Uint64(b[64:]))
}

// textSample holds fixed and variable-length text: NumPy's bytes and str
// arrays, an HDF5 UTF-8 fixed string, CSV-like text of any length, enough
// strings to fill more than one collection by count (65,535 objects)
// and one too long for a collection of 1 MiB.
func textSample() (*textSource, map[string][]string) {
	s := &textSource{name: "/tmp/sample.csv"}
	want := map[string][]string{}
	add := func(name, typeName string, kind format.Kind, shape []int64, v []string, extra map[string]any) {
		s.addText(name, typeName, kind, shape, v, extra)
		want["/"+strings.TrimPrefix(name, "/")] = v
	}
	add("s", "bytes3", format.KindOpaque, []int64{3}, []string{"ab", "cde", ""}, nil)
	add("g/s2", "bytes<3>", format.KindOpaque, []int64{2, 2}, []string{"a", "bb", "ccc", "\x00d"}, nil)
	add("u8fixed", "bytes<4>", format.KindOpaque, []int64{2}, []string{"é", "xy"}, map[string]any{"charset": "utf-8"})
	add("u", "str2", format.KindOpaque, []int64{3}, []string{"hé", "", "ß"}, nil)
	add("v", "string", format.KindOpaque, []int64{4}, []string{"héllo", "", "x", strings.Repeat("long ", 300000)}, nil)
	many := make([]string, 70000)
	for i := range many {
		many[i] = strings.Repeat("z", i%5) + strconv.Itoa(i)
	}
	add("many", "string", format.KindOpaque, []int64{70000}, many, nil)
	s.add("n", layout.I32, []int64{2}, false, []byte{1, 0, 0, 0, 2, 0, 0, 0})
	return s, want
}

// readTextH5py prints, for every dataset of strings, its dtype as h5py
// gives it to NumPy and its values: fixed strings as the bytes NumPy
// holds, variable-length ones through asstr().
const readTextH5py = `
import sys, json
import numpy as np, h5py
out = {}
def visit(name, obj):
    if isinstance(obj, h5py.Dataset) and h5py.check_string_dtype(obj.dtype) is not None:
        info = h5py.check_string_dtype(obj.dtype)
        if info.length is None:
            vals = [v for v in obj.asstr()[...].ravel()]
        else:
            vals = [v.decode("latin-1") for v in obj[...].ravel()]
        out["/" + name] = {"dtype": obj.dtype.str if info.length else "object:" + info.encoding, "shape": list(obj.shape), "values": vals}
with h5py.File(sys.argv[1], "r") as f:
    f.visititems(visit)
print(json.dumps(out))
`

// Text written to HDF5 reads back in h5py as the source's values: bytes
// as NumPy's |S<n> of the same bytes, other text as variable-length UTF-8
// strings; and in mmapkit as written; and h5dump passes the file.
func TestWriteText(t *testing.T) {
	src, want := textSample()
	path := filepath.Join(t.TempDir(), "text.h5")
	require.NoError(t, Write(path, src, nil))

	fs, err := format.Open(path, nil)
	require.NoError(t, err)
	defer fs.Close()
	types := map[string]string{}
	for i, r := range fs.Records() {
		types[r.Name] = r.TypeString()
		assert.Nil(t, r.Extra["storage"], "%s is contiguous and written", r.Name)
		if r.Name == "/n" {
			continue
		}
		var got []string
		require.NoError(t, format.ReadText(fs, i, func(b []string) error { got = append(got, b...); return nil }))
		assert.Equal(t, want[r.Name], got, r.Name)
	}
	assert.Equal(t, map[string]string{"/s": "bytes<3>", "/g/s2": "bytes<3>", "/u8fixed": "bytes<4>", "/u": "string", "/v": "string", "/many": "string", "/n": "i32"}, types)
	h5dumpPasses(t, path)

	var got map[string]struct {
		DType  string   `json:"dtype"`
		Shape  []int64  `json:"shape"`
		Values []string `json:"values"`
	}
	require.NoError(t, json.Unmarshal([]byte(oracle.Run(t, []string{"h5py", "numpy"}, readTextH5py, path)), &got))
	wantTypes := map[string]string{"/s": "|S3", "/g/s2": "|S3", "/u8fixed": "|S4", "/u": "object:utf-8", "/v": "object:utf-8", "/many": "object:utf-8"}
	require.Len(t, got, len(wantTypes))
	for name, typ := range wantTypes {
		g := got[name]
		assert.Equal(t, typ, g.DType, name)
		w := want[name]
		if strings.HasPrefix(typ, "|S") {
			// NumPy's bytes, as Latin-1 text: the UTF-8 bytes one by one.
			w = append([]string{}, w...)
			for k, v := range w {
				w[k] = latin1(v)
			}
		}
		assert.Equal(t, w, g.Values, name)
	}
}

// latin1 is s's bytes as the runes of the same numbers.
func latin1(s string) string {
	r := make([]rune, len(s))
	for i := range len(s) {
		r[i] = rune(s[i])
	}
	return string(r)
}

// The columns of a table whose names make no group go to a group named
// after the source file; a column of text is a variable-length string.
func TestWriteTableGroup(t *testing.T) {
	src := &textSource{name: filepath.Join("some", "dir", "prices.csv")}
	src.addText("item", "string", format.KindColumn, []int64{2}, []string{"tea", "café"}, nil)
	src.recs = append(src.recs, format.Record{Array: layout.Array{Name: "qty", Type: layout.I64, Shape: []int64{2}, Offset: -1}, Kind: format.KindColumn})
	src.data = append(src.data, []byte{3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0})
	sel, err := format.Select(src, "item", "qty")
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		src  format.Source
		want []string
	}{
		{"a CSV file", src, []string{"/prices/item", "/prices/qty"}},
		{"no file name", sel, []string{"/table/item", "/table/qty"}},
	} {
		path := filepath.Join(t.TempDir(), "t.h5")
		require.NoError(t, Write(path, c.src, nil), c.name)
		f, err := format.Open(path, nil)
		require.NoError(t, err)
		var names []string
		for _, r := range f.Records() {
			names = append(names, r.Name)
		}
		assert.Equal(t, c.want, names, c.name)
		var got []string
		require.NoError(t, format.ReadText(f, 0, func(b []string) error { got = append(got, b...); return nil }))
		assert.Equal(t, []string{"tea", "café"}, got)
		q, err := format.Read[int64](f, 1)
		require.NoError(t, err)
		assert.Equal(t, []int64{3, 4}, q)
		require.NoError(t, f.Close())
	}
}

// In .nc output every text is netCDF's string type (a variable-length
// string): netCDF4-python reads the source's values, ncdump lists string
// variables.
func TestWriteTextNetCDF(t *testing.T) {
	src := &textSource{}
	src.addText("b", "bytes3", format.KindOpaque, []int64{3}, []string{"ab", "cde", ""}, nil)
	src.addText("v", "string", format.KindOpaque, []int64{2}, []string{"héllo", "x"}, nil)
	path := filepath.Join(t.TempDir(), "t.nc")
	require.NoError(t, Write(path, src, nil))
	if _, err := exec.LookPath("ncdump"); err == nil {
		out, err := exec.Command("ncdump", path).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "\tstring b(dim_0) ;\n\tstring v(v_dim_0) ;\n")
		assert.Contains(t, string(out), ` b = "ab", "cde", _ ;`) // ncdump's "_" is the empty string
	} else {
		t.Log("no ncdump here (Debian's netcdf-bin has it): not checked")
	}
	out := oracle.Run(t, []string{"netCDF4"}, `
import sys, json, netCDF4
with netCDF4.Dataset(sys.argv[1]) as d:
    print(json.dumps({k: [str(x) for x in d[k][:]] for k in ("b", "v")}))
`, path)
	var got map[string][]string
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, map[string][]string{"b": {"ab", "cde", ""}, "v": {"héllo", "x"}}, got)
}
