package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// ls --json of an HDF5 file: its datasets, and the links and groups the
// file has beside them.
func TestHDF5LsJSON(t *testing.T) {
	p := filepath.Join(testdata(t, "hdf5"), "tree_new.h5")
	out := mustMk(t, "ls", "--json", p)
	assert.JSONEq(t, `{"file":"`+p+`","format":"hdf5","version":"3",
		"records":[{"name":"/again","type":"u64","shape":[3],"order":"row","offset":2048,"nbytes":24}],
		"groups":[{"name":"/","attributes":{}},{"name":"/m","attributes":{"depth":2}},{"name":"/m/n","attributes":{}}],
		"links":[{"name":"/m/n/data","hard":"/again"},{"name":"/m/near","soft":"n/data"},{"name":"/up","soft":"/m/n/data"}]}`, out)
}

// cat of one dataset, by its name or through links; an external link is
// never followed, a dangling soft link named.
func TestHDF5Cat(t *testing.T) {
	dir := testdata(t, "hdf5")
	old := filepath.Join(dir, "tree_old.h5")
	for _, name := range []string{"/p/q/leaf", "p/q/leaf", "/shortcut"} {
		assert.Equal(t, "[[1i32, 2i32, 3i32]]\n", mustMk(t, "cat", "--name", name, old), name)
	}
	assert.Equal(t, "[5u64, 4u64, 3u64]\n", mustMk(t, "cat", "--name", "/m/near", filepath.Join(dir, "tree_new.h5")))
	r := mk(t, "cat", "--name", "/broken", old)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "/broken is a dangling soft link to /gone/away")
	r = mk(t, "cat", "--name", "/elsewhere", filepath.Join(dir, "external_link.h5"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "/elsewhere is an external link to linked_target.h5:/payload; external links are not followed")
	// A file of several tables prints each as its own CSV, after a line
	// that names it.
	assert.Equal(t, `-- /padded_be
/padded_be/p,/padded_be/q
1,-1
4294967295,0.125
77,2
-- /pair
/pair/r,/pair/i
1,2
-- /rows
/rows/label,/rows/weight,/rows/count,/rows/valid
north,1.25,0,false
"",-0,1,true
"a,b",+Inf,65535,true
"x""y",3e-08,7,false
sixsix,1e+07,300,true
-- /rows/pos
[[-4.5f64, -3.5f64],
[-2.5f64, -1.5f64],
[-0.5f64, 0.5f64],
[1.5f64, 2.5f64],
[3.5f64, 4.5f64]]
-- /zz
-- /zz: c64 values as [..][2]f32 arrays of (real, imaginary)
[[-26.266403f32, -26.642643f32],
[-38.34982f32, 15.465919f32],
[27.191706f32, -12.160931f32]]
`, mustMk(t, "cat", filepath.Join(dir, "records.h5")))
	assert.Equal(t, `["red", "green", "", "blue1234"]`+"\n", mustMk(t, "cat", "--name", "/fixed", filepath.Join(dir, "text.h5")))
	r = mk(t, "ls", filepath.Join(dir, "offset64.nc"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "netCDF-3 file (CDF\\x02) is not HDF5")
}

// set changes an element in place, through a soft link too; a filtered
// chunk is refused with the file unchanged; convert reads HDF5.
func TestHDF5SetConvert(t *testing.T) {
	dir := testdata(t, "hdf5")
	tmp := t.TempDir()
	cp := func(name string) (string, []byte) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		p := filepath.Join(tmp, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p, b
	}
	p, _ := cp("tree_old.h5")
	mustMk(t, "set", p, "/shortcut", "[0,2]", "42")
	assert.Equal(t, "[[1i32, 2i32, 42i32]]\n", mustMk(t, "cat", "--name", "/p/q/leaf", p))
	c, before := cp("chunked_v1btree.h5")
	r := mk(t, "set", c, "/deflate", "[0,0]", "1")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "filtered")
	after, err := os.ReadFile(c)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the file is unchanged")
	// A whole-file conversion leaves external links out, and says so.
	r = mk(t, "convert", filepath.Join(dir, "external_link.h5"), filepath.Join(tmp, "e.npz"))
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "/elsewhere is an external link to linked_target.h5:/payload; external links are not followed: skipped")
	assert.Contains(t, mustMk(t, "ls", filepath.Join(tmp, "e.npz")), "own")
	npyOut := filepath.Join(tmp, "leaf.npy")
	mustMk(t, "convert", "--name", "/p/q/leaf", p, npyOut)
	assert.Equal(t, "[[1i32, 2i32, 42i32]]\n", mustMk(t, "cat", npyOut))
}

// convert writes HDF5 from every kind of source — HDF5 itself (chunked
// and filtered), NumPy, Zarr and column-major ABF (transposed) — and back:
// what is read from the .h5 written is what the source holds, every
// dataset at a 64-byte aligned offset, and h5dump reads the file.
func TestHDF5ConvertWrites(t *testing.T) {
	orig := filepath.Join(testdata(t, "hdf5"), "chunked_v1btree.h5")
	tmp := t.TempDir()
	want := catValues(t, orig)
	for _, via := range []string{"", "v.npz", "v.zarr", "v.abf"} {
		src := orig
		if via != "" {
			src = filepath.Join(tmp, via)
			mustMk(t, "convert", orig, src)
		}
		out := filepath.Join(tmp, "from-"+via+".h5")
		mustMk(t, "convert", src, out)
		assert.Equal(t, want, catValues(t, out), via)
		ls := mustMk(t, "ls", "--json", out)
		var listing struct {
			Records []struct {
				Name   string `json:"name"`
				Offset int64  `json:"offset"`
			} `json:"records"`
		}
		require.NoError(t, json.Unmarshal([]byte(ls), &listing), ls)
		require.Len(t, listing.Records, 8, via)
		for _, r := range listing.Records {
			assert.Zero(t, r.Offset%64, "%s %s at %d", via, r.Name, r.Offset)
		}
		if _, err := exec.LookPath("h5dump"); err == nil {
			b, err := exec.Command("h5dump", out).CombinedOutput()
			assert.NoError(t, err, "h5dump %s:\n%s", out, b)
		}
		// And back to NumPy.
		back := filepath.Join(tmp, "back-"+via+".npz")
		mustMk(t, "convert", out, back)
		assert.Equal(t, want, catValues(t, back), via)
	}
}

// convert --compress gzip[:LEVEL] and --chunks write chunked HDF5 that
// reads back as the source; other codecs are usage errors.
func TestHDF5ConvertChunked(t *testing.T) {
	orig := filepath.Join(testdata(t, "hdf5"), "chunked_v1btree.h5")
	tmp := t.TempDir()
	want := mustMk(t, "cat", orig)
	out := filepath.Join(tmp, "g.h5")
	mustMk(t, "convert", "--compress", "gzip:6", orig, out)
	assert.Equal(t, want, mustMk(t, "cat", out))
	assert.Contains(t, mustMk(t, "ls", out), "/lots         u16   [60][40]  row    -       4800   chunks [60][40] shuffle,deflate")
	sel := filepath.Join(tmp, "s.h5")
	mustMk(t, "convert", "--name", "/lots", "--chunks", "7,9", orig, sel)
	assert.Contains(t, mustMk(t, "ls", sel), "chunks [7][9]\n")
	assert.Equal(t, mustMk(t, "cat", "--name", "/lots", orig), mustMk(t, "cat", sel))
	r := mk(t, "convert", "--compress", "zstd", orig, filepath.Join(tmp, "z.h5"))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `compress "zstd": HDF5 is written with none or gzip[:LEVEL]`)
}

// convert to .nc writes netCDF-4 that ncdump reads with named
// dimensions, and that reads back as the source.
func TestHDF5ConvertNetCDF(t *testing.T) {
	orig := filepath.Join(testdata(t, "hdf5"), "chunked_v1btree.h5")
	out := filepath.Join(t.TempDir(), "c.nc")
	mustMk(t, "convert", orig, out)
	assert.Equal(t, mustMk(t, "cat", orig), mustMk(t, "cat", out))
	if _, err := exec.LookPath("ncdump"); err != nil {
		t.Skip("no ncdump here (Debian's netcdf-bin has it)")
	}
	b, err := exec.Command("ncdump", "-h", out).CombinedOutput()
	require.NoError(t, err, "%s", b)
	assert.Contains(t, string(b), "\tushort lots(lots_dim_0, lots_dim_1) ;\n")
	assert.Contains(t, string(b), "\tshort checksummed(dim_0, dim_1) ;\n")
}

// pyStringsH5 writes, into the directory argv[1], strings.h5 (text as
// h5py stores NumPy's bytes and Python's str) and tables.h5 (two
// compound datasets of different lengths, one with a text field).
const pyStringsH5 = `
import sys, os
import numpy as np, h5py
d = sys.argv[1]
with h5py.File(os.path.join(d, "strings.h5"), "w") as f:
    f["s"] = np.array([b"ab", b"cde", b""], dtype="S3")
    f["s2"] = np.array([[b"a", b"bb"], [b"ccc", b"d"]], dtype="S3")
    f["u8"] = np.array(["\u00e9".encode(), b"xy"], dtype=h5py.string_dtype("utf-8", 4))
    f.create_dataset("v", data=np.array(["h\u00e9llo", "x", ""], dtype=object), dtype=h5py.string_dtype())
    f.create_dataset("a", data=np.array(["ab", "c"], dtype=object), dtype=h5py.string_dtype("ascii"))
with h5py.File(os.path.join(d, "tables.h5"), "w") as f:
    f["t1"] = np.array([(1, 2.5), (2, 3.5)], dtype=[("a", "<i4"), ("b", "<f8")])
    f["t2"] = np.array([(1, b"x"), (2, b"yy"), (3, b"")], dtype=[("c", "<i2"), ("d", "S2")])
`

// pyCompareNpy prints "ok" where the .npy argv[2] holds what h5py gives
// NumPy for the dataset argv[3] of argv[1]: the same |S<n> array for
// fixed strings, the str array of the values for variable-length ones.
const pyCompareNpy = `
import sys
import numpy as np, h5py
a = np.load(sys.argv[2])
d = h5py.File(sys.argv[1], "r")[sys.argv[3]]
ref = d[...] if d.dtype.kind == "S" else d.asstr()[...].astype("U")
print("ok" if a.dtype == ref.dtype and a.shape == ref.shape and (a == ref).all() else "differ: %r %r" % (a, ref))
`

// HDF5 text converts to .npy as h5py hands it to NumPy (bytes as |S<n>,
// variable-length strings as <U<n>), and the text of NumPy and HDF5 back
// to HDF5 as h5py reads it; a whole-file .npz of two compound tables of
// different lengths holds each column.
func TestHDF5Text(t *testing.T) {
	modules := []string{"h5py", "numpy"}
	dir := t.TempDir()
	oracle.Run(t, modules, pyStringsH5, dir)
	in := filepath.Join(dir, "strings.h5")
	for _, name := range []string{"s", "s2", "u8", "v", "a"} {
		out := filepath.Join(dir, name+".npy")
		mustMk(t, "convert", "--name", name, in, out)
		assert.Equal(t, "ok\n", oracle.Run(t, modules, pyCompareNpy, in, out, name), name)
		// And back: the .npy's text to HDF5 is what h5py reads as the source.
		back := filepath.Join(dir, name+".h5")
		mustMk(t, "convert", out, back)
		assert.Equal(t, "ok\n", oracle.Run(t, modules, pyCompareNpy, back, out, "0"), name)
	}
	all := filepath.Join(dir, "all.h5")
	mustMk(t, "convert", in, all)
	assert.Equal(t, mustMk(t, "cat", in), mustMk(t, "cat", all))

	tables := filepath.Join(dir, "tables.h5")
	npz := filepath.Join(dir, "tables.npz")
	mustMk(t, "convert", tables, npz)
	assert.Equal(t, "ok\n", oracle.Run(t, modules, `
import sys
import numpy as np
z = np.load(sys.argv[1])
want = {"t1/a": np.array([1, 2], "<i4"), "t1/b": np.array([2.5, 3.5]), "t2/c": np.array([1, 2, 3], "<i2"), "t2/d": np.array([b"x", b"yy", b""], "S2")}
ok = sorted(z.keys()) == sorted(want) and all(z[k].dtype == w.dtype and (z[k] == w).all() for k, w in want.items())
print("ok" if ok else {k: z[k] for k in z})
`, npz))
}

// A CSV table converts to HDF5 as a group named after the file, one
// dataset per column, text as variable-length UTF-8 strings, nulls in
// "<column>.reason"; h5py lists the columns in the CSV's order.
func TestCSVToHDF5Group(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "prices.csv")
	require.NoError(t, os.WriteFile(csv, []byte("item,qty,price\ntea,3,2.5\ncafé,4,\n\"a,b\",5,1e3\n"), 0o644))
	out := filepath.Join(dir, "out.h5")
	mustMk(t, "convert", csv, out)
	assert.Equal(t, "ok\n", oracle.Run(t, []string{"h5py", "numpy"}, `
import sys
import numpy as np, h5py
with h5py.File(sys.argv[1], "r") as f:
    g = f["prices"]
    got = (list(g), g["item"].asstr()[...].tolist(), g["qty"][...].tolist(), g["price"][...].tolist(), g["price.reason"][...].tolist(), str(g["qty"].dtype))
want = (["item", "qty", "price", "price.reason"], ["tea", "caf\u00e9", "a,b"], [3, 4, 5], [2.5, 0.0, 1000.0], [-1, 0, -1], "int64")
print("ok" if got == want else got)
`, out))
}

// A CSV of numbers and text converts to HDF5 and back to the same bytes
// (the columns renamed from the group's "<file>/<column>"), nulls kept in
// "<column>.reason" and an empty text apart from a null. The columns are
// named in byte order: HDF5 lists a group's datasets by name, as h5py's
// visititems does, so other orders come back sorted.
func TestHDF5CSVRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, csv, names, header string
	}{
		{"numbers and text", "id,item,price\n1,tea,2.5\n-7,\"a,b\",1e+300\n3,café,0.1\n", "id,item,price", "t/id,t/item,t/price\n"},
		{"nulls", "id,item,price\n1,tea,\n,,2.5\n3,\"\",0.5\n", "id,id.reason,item,item.reason,price,price.reason", "t/id,t/item,t/price\n"},
		{"quotes and lines", "n,s\n1,\"say \"\"hi\"\"\"\n2,\"two\nlines\"\n", "n,s", "t/n,t/s\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "t.csv")
			require.NoError(t, os.WriteFile(in, []byte(tc.csv), 0o644))
			h5 := filepath.Join(dir, "t.h5")
			mustMk(t, "convert", in, h5)
			back := filepath.Join(dir, "back.csv")
			mustMk(t, "convert", "--names", tc.names, h5, back)
			got, err := os.ReadFile(back)
			require.NoError(t, err)
			assert.Equal(t, tc.csv, string(got))
			// Without --names, the columns keep the datasets' names.
			_, body, _ := strings.Cut(tc.csv, "\n")
			named := filepath.Join(dir, "named.csv")
			mustMk(t, "convert", h5, named)
			got, err = os.ReadFile(named)
			require.NoError(t, err)
			assert.Equal(t, tc.header+body, string(got))
		})
	}
}

// h5py's 1-D string datasets of one length, fixed and variable-length,
// convert to CSV beside numbers; text of other shapes is refused naming
// the record.
func TestHDF5StringsToCSV(t *testing.T) {
	dir := t.TempDir()
	oracle.Run(t, []string{"h5py", "numpy"}, `
import sys, os
import numpy as np, h5py
with h5py.File(os.path.join(sys.argv[1], "one.h5"), "w") as f:
    f["a"] = np.array([b"ab", b"cde", b""], dtype="S3")
    f["b"] = np.array([3, -1, 0], dtype="<i2")
    f.create_dataset("c", data=np.array(["h\u00e9llo", "x,y", ""], dtype=object), dtype=h5py.string_dtype())
with h5py.File(os.path.join(sys.argv[1], "other.h5"), "w") as f:
    f["a"] = np.array([b"ab", b"cde"], dtype="S3")
    f["b"] = np.array([1, 2, 3], dtype="<i2")
with h5py.File(os.path.join(sys.argv[1], "two.h5"), "w") as f:
    f["s2"] = np.array([[b"a", b"bb"], [b"ccc", b"d"]], dtype="S3")
`, dir)
	out := filepath.Join(dir, "one.csv")
	mustMk(t, "convert", filepath.Join(dir, "one.h5"), out)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "a,b,c\nab,3,héllo\ncde,-1,\"x,y\"\n\"\",0,\"\"\n", string(got))
	for file, want := range map[string]string{
		"other.h5": `record "b" (i16[3]): the target format cannot hold this record: a table's columns have one length, and record "a" (bytes<3>[2]) has 2`,
		"two.h5":   `record "s2" (bytes<3>[2][2]): the target format cannot hold this record: a table's columns are 1-D`,
	} {
		r := mk(t, "convert", filepath.Join(dir, file), filepath.Join(dir, file+".csv"))
		assert.Equal(t, 1, r.code, file)
		assert.Contains(t, r.stderr, want, file)
		assert.NoFileExists(t, filepath.Join(dir, file+".csv"))
	}
}
