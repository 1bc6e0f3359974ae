package npy

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
)

// gatherCases are arrays NumPy writes (as a .npy, a stored and a deflated
// .npz member) whose reads in the other order, or of one field, are
// gathers: expr builds the array, field names the field read ("" for the
// whole array).
var gatherCases = []struct{ name, expr, field string }{
	{"fortran 3-d", `np.zeros((2, 3, 4), "<f8", order="F")`, ""},
	{"fortran 4-d", `np.zeros((2, 3, 4, 5), "<i2", order="F")`, ""},
	{"fortran 0-length axis", `np.zeros((3, 0, 2), "<f4", order="F")`, ""},
	{"fortran 1-element axes", `np.zeros((1, 3, 1, 4), "<f8", order="F")`, ""},
	{"fortran big-endian", `np.zeros((5, 6), ">i4", order="F")`, ""},
	{"fortran text", `np.zeros((3, 4), "S3", order="F")`, ""},
	{"field at an unaligned offset", `np.zeros(7, [("a", "i1"), ("b", "<f8"), ("c", "<i2")])`, "b"},
	{"subarray field", `np.zeros(4, [("x", "<i4"), ("v", "<f4", (2, 3))])`, "v"},
	{"big-endian subarray field of a fortran 2-d", `np.zeros((3, 4), [("p", "u1"), ("v", ">i2", (2,))], order="F")`, "v"},
	{"big-endian field of a fortran 3-d", `np.zeros((2, 3, 4), [("a", ">f8"), ("b", "<u2")], order="F")`, "a"},
	{"field of a fortran 4-d with 1-element axes", `np.zeros((2, 1, 3, 1), [("a", "<u2"), ("b", "<i8"), ("c", "u1")], order="F")`, "b"},
	{"field with a 0-length axis", `np.zeros((0, 3), [("a", "<f8"), ("b", "<i4")], order="F")`, "b"},
	{"text field of a fortran 2-d", `np.zeros((3, 2), [("n", "<i2"), ("s", "<U2")], order="F")`, "s"},
}

// gatherScript writes each case's files into argv[1] and prints, per
// case, the target's shape and bytes in C order, in Fortran order and in
// storage order (the array's order, a subarray's own axes fastest), the
// numbers little-endian in C and Fortran order and as stored in storage
// order, and text as NumPy gives it in C order.
const gatherScript = `
import sys, json, numpy as np
out = {}
for i, (expr, field) in enumerate(json.loads(sys.argv[2])):
    a = eval(expr)
    parts = [a[n] for n in a.dtype.names] if a.dtype.names else [a]
    for j, p in enumerate(parts):
        v = np.arange(p.size).reshape(p.shape) % 97 * 3 + j + 1
        p[...] = v.astype(str) if p.dtype.kind in "SU" else v
    np.save(f"{sys.argv[1]}/{i}.npy", a)
    np.savez(f"{sys.argv[1]}/{i}s.npz", a=a)
    np.savez_compressed(f"{sys.argv[1]}/{i}d.npz", a=a)
    t = a[field] if field else a
    outer = a.ndim if a.flags.f_contiguous and not a.flags.c_contiguous else 0
    axes = list(reversed(range(outer))) + list(range(outer, t.ndim))
    le = t.astype(t.dtype.newbyteorder("<"))
    out[i] = {"shape": t.shape, "c": le.tobytes("C").hex(), "f": le.tobytes("F").hex(),
              "storage": t.transpose(axes).tobytes("C").hex(),
              "text": [x.decode() if isinstance(x, bytes) else x for x in t.reshape(-1).tolist()] if t.dtype.kind in "SU" else None}
print(json.dumps(out))
`

// TestGathersMatchNumPy reads every case whole and in parts (from an
// element past the first to one in the middle of a row), in both orders,
// through a mapping, NewReader and stored and deflated .npz members, and
// compares with NumPy's bytes.
func TestGathersMatchNumPy(t *testing.T) {
	py := oracle.Python(t, "numpy")
	dir := t.TempDir()
	var exprs [][2]string
	for _, c := range gatherCases {
		exprs = append(exprs, [2]string{c.expr, c.field})
	}
	arg, err := json.Marshal(exprs)
	require.NoError(t, err)
	out, err := oracle.Output(py, gatherScript, dir, string(arg))
	require.NoError(t, err, out)
	var want map[int]struct {
		Shape         []int64
		C, F, Storage string
		Text          []string
	}
	require.NoError(t, json.Unmarshal([]byte(out), &want))
	for ci, c := range gatherCases {
		w := want[ci]
		n, err := layout.Count(w.Shape)
		require.NoError(t, err)
		hexBytes := func(s string) []byte {
			b, err := hex.DecodeString(s)
			require.NoError(t, err)
			return b
		}
		byOrder := map[layout.Order][]byte{layout.RowMajor: hexBytes(w.C), layout.ColMajor: hexBytes(w.F)}
		storage := hexBytes(w.Storage)
		size := int64(len(storage)) / max(n, 1)
		for _, src := range []struct{ name, file string }{
			{".npy", strconv.Itoa(ci) + ".npy"},
			{"NewReader", strconv.Itoa(ci) + ".npy"},
			{"stored member", strconv.Itoa(ci) + "s.npz"},
			{"deflated member", strconv.Itoa(ci) + "d.npz"},
		} {
			t.Run(c.name+"/"+src.name, func(t *testing.T) {
				path := filepath.Join(dir, src.file)
				var f *File
				if src.name == "NewReader" {
					b, err := os.ReadFile(path)
					require.NoError(t, err)
					f, err = NewReader(bytes.NewReader(b), int64(len(b)), nil)
					require.NoError(t, err)
				} else {
					f, err = Open(path, nil)
					require.NoError(t, err)
				}
				defer f.Close()
				name := c.field
				if filepath.Ext(path) == ".npz" {
					name = "a"
					if c.field != "" {
						name += "/" + c.field
					}
				} else if name == "" {
					name = "0"
				}
				f.mu.RLock()
				tg, err := f.resolve(name)
				f.mu.RUnlock()
				require.NoError(t, err)
				// Storage order, as stored: every range.
				for lo := int64(0); lo <= n; lo++ {
					for hi := lo; hi <= n; hi++ {
						got := make([]byte, (hi-lo)*size)
						f.mu.RLock()
						err := f.readRaw(&tg, lo, got)
						f.mu.RUnlock()
						require.NoError(t, err)
						require.Equal(t, storage[lo*size:hi*size], got, "storage order [%d, %d)", lo, hi)
					}
				}
				if w.Text != nil {
					var got []string
					i := recordNamed(t, f, name)
					require.NoError(t, f.ReadText(i, func(b []string) error { got = append(got, b...); return nil }))
					require.Equal(t, w.Text, got, "text in C order")
					return
				}
				i := recordNamed(t, f, name)
				for order, all := range byOrder {
					row := w.Shape[len(w.Shape)-1:]
					if order == layout.ColMajor {
						row = w.Shape[:1]
					}
					l := int64(1)
					if len(row) > 0 {
						l = row[0]
					}
					for _, r := range [][2]int64{{0, n}, {1, n}, {1, n - 1}, {l - 1, l + l/2}, {l, 2*l + 1}, {n / 2, n}, {1, l + l/2}} {
						lo, hi := r[0], min(r[1], n)
						if lo < 0 || lo > hi {
							continue
						}
						got := make([]byte, (hi-lo)*size)
						require.NoError(t, f.ReadArray(i, got, lo, order, binary.LittleEndian), "%s order [%d, %d)", order, lo, hi)
						require.Equal(t, all[lo*size:hi*size], got, "%s order [%d, %d)", order, lo, hi)
					}
				}
			})
		}
	}
}

func recordNamed(t *testing.T, f *File, name string) int {
	t.Helper()
	for i, r := range f.Records() {
		if r.Name == name || (name == "0" && len(f.Records()) == 1) {
			return i
		}
	}
	t.Fatalf("no record %q in %v", name, f.Records())
	return -1
}

// TestScanTableFieldsMatchNumPy: a table's columns taken out of records
// whose fields sit at offsets no multiple of their size, in batches that
// end mid-table, are NumPy's.
func TestScanTableFieldsMatchNumPy(t *testing.T) {
	py := oracle.Python(t, "numpy")
	// Records of 17 bytes (offsets 2, 10 and 12) and of 16.
	path, path2 := filepath.Join(t.TempDir(), "t.npy"), filepath.Join(t.TempDir(), "t16.npy")
	out, err := oracle.Output(py, `
import sys, json, numpy as np
a = np.zeros(7, [("a", "<i2"), ("b", "<f8"), ("c", ">i2"), ("d", "<u4"), ("e", "i1")])
b = np.zeros(7, [(n, a.dtype[n]) for n in "abcd"])
for j, n in enumerate(a.dtype.names):
    a[n] = np.arange(7) * (j + 3) - 5
    if n in b.dtype.names:
        b[n] = a[n]
np.save(sys.argv[1], a)
np.save(sys.argv[2], b)
print(json.dumps([a[n].tolist() for n in a.dtype.names]))
`, path, path2)
	require.NoError(t, err, out)
	var want [][]float64
	require.NoError(t, json.Unmarshal([]byte(out), &want))
	require.Equal(t, want, scanColumns(t, path))
	require.Equal(t, want[:4], scanColumns(t, path2))
}

// scanColumns is every column of a table, as float64.
func scanColumns(t *testing.T, path string) [][]float64 {
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	got := make([][]float64, len(f.Records()))
	require.NoError(t, f.ScanTable(3, func(first int64, cols []format.Column) error {
		require.Equal(t, int64(len(got[0])), first)
		for j, c := range cols {
			switch v := c.Values.(type) {
			case []int8:
				for _, x := range v {
					got[j] = append(got[j], float64(x))
				}
			case []float64:
				got[j] = append(got[j], v...)
			case []int16:
				for _, x := range v {
					got[j] = append(got[j], float64(x))
				}
			case []uint32:
				for _, x := range v {
					got[j] = append(got[j], float64(x))
				}
			default:
				t.Fatalf("column %d holds %T", j, v)
			}
		}
		return nil
	}))
	return got
}
