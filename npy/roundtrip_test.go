package npy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
)

// roundTripMake writes the matrix of arrays NumPy and this package trade:
// every dtype, C and Fortran order, both byte orders, format versions
// 1.0, 2.0 and 3.0, 0-d and empty arrays, structured arrays, and .npz
// archives (stored and deflated). For each input it also writes, under
// ref/, what np.save writes for the same array. It prints the list.
const roundTripMake = `
import json, os, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
d = sys.argv[1]
for sub in ("in", "ref"):
    os.makedirs(os.path.join(d, sub), exist_ok=True)
out = []
def base(t):
    dt = np.dtype(t)
    if dt.kind == "b": return np.array([True, False, True, True, False, False, True, False, False, True, True, True])
    if dt.kind == "c": return np.arange(12) - 5.5 + 1j * (np.arange(12) / 4)
    if dt.kind == "f": return np.array([-1.5, 0, 2.25, 1e3, -7, 0.125, 3, 4, 5, 6, float("inf"), float("nan")])
    if dt.kind in "iu": return np.arange(12) * 7 % 100
    if dt.kind in "Mm": return np.arange(12) * 86400 - 3600
    if dt.kind == "S": return np.array([b"a", b"bc", b"", b"hello", b"x\x00y"] + [b"z%d" % i for i in range(7)])
    if dt.kind == "U": return np.array(["a", "\u00df", "", "\u20acu", "xyz"] + ["q%d" % i for i in range(7)])
    if dt.kind == "V": return np.array([bytes([i, 255 - i, 0, i * 3 % 256]) for i in range(12)], dtype="V4")
def put(name, a, fmtv, **attrs):
    with open(os.path.join(d, "in", name), "wb") as f:
        np.lib.format.write_array(f, a, version=fmtv)
    np.save(os.path.join(d, "ref", name), np.load(os.path.join(d, "in", name)))
    attrs["file"] = name
    out.append(attrs)
types = ["|b1", "i1", "u1", "i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16", "M8[s]", "m8[ns]", "S5", "U3", "V4"]
for t in types:
    dt0 = np.dtype(t)
    orders = "<>" if dt0.byteorder not in "|" and dt0.itemsize > 1 or dt0.kind == "U" else "|"
    for bo in orders:
        dt = dt0 if bo == "|" else dt0.newbyteorder(bo)
        a = base(t).astype(dt).reshape(3, 4)
        for order in "CF":
            arr = np.asfortranarray(a) if order == "F" else a
            for v in ((1, 0), (2, 0), (3, 0)):
                put("%s-%s-%s-v%d.npy" % (dt.str.replace("|", "").replace("<", "le").replace(">", "be").replace("[", "_").replace("]", ""), order, bo, v[0]), arr, v,
                    dtype=dt.str, order=order, byteorder=bo, version="%d.0" % v[0], shape="3x4")
    put("%s-0d.npy" % dt0.str.replace("|", "").replace("<", "").replace("[", "_").replace("]", ""), base(t).astype(dt0)[1].reshape(()), None, dtype=dt0.str, order="C", byteorder=dt0.byteorder, version="1.0", shape="0-d")
    put("%s-empty.npy" % dt0.str.replace("|", "").replace("<", "").replace("[", "_").replace("]", ""), base(t).astype(dt0)[:0].reshape(0, 5), None, dtype=dt0.str, order="C", byteorder=dt0.byteorder, version="1.0", shape="0x5")
st = np.dtype([("a", "<i4"), ("b", ">f8"), ("c", "S3"), ("d", "<U2"), ("e", "?"), ("m", "<M8[ms]")])
s = np.zeros(6, dtype=st)
s["a"] = np.arange(6) - 2; s["b"] = np.arange(6) / 3; s["c"] = [b"x", b"yz", b"", b"abc", b"q", b"r"]
s["d"] = ["p", "\u00df", "", "xy", "z", "w"]; s["e"] = [True, False] * 3; s["m"] = np.arange(6) * 1000
for v in ((1, 0), (2, 0), (3, 0)):
    put("struct-C-v%d.npy" % v[0], s, v, dtype="struct", order="C", byteorder="mixed", version="%d.0" % v[0], shape="6")
    put("struct-F-v%d.npy" % v[0], np.asfortranarray(s.reshape(2, 3)), v, dtype="struct", order="F", byteorder="mixed", version="%d.0" % v[0], shape="2x3")
al = np.zeros(4, dtype=np.dtype([("x", "<i2"), ("y", ">f8", (2,)), ("z", "u1")], align=True))
al["x"] = [1, 2, 3, 4]; al["y"] = [[0.5, 1], [2, 3], [4, 5], [6, 7]]; al["z"] = [9, 8, 7, 6]
put("struct-aligned-subarray.npy", al, None, dtype="struct(aligned, subarray)", order="C", byteorder="mixed", version="1.0", shape="4")
u = np.zeros(3, dtype=[("\u540d", "<i4"), ("v", "<f2")]); u["\u540d"] = [1, 2, 3]; u["v"] = [0.5, 1, 2]
put("struct-unicode.npy", u, None, dtype="struct(non-latin-1 names)", order="C", byteorder="mixed", version="3.0", shape="3")
members = {"x": np.arange(12.0).reshape(3, 4), "y": np.asfortranarray(np.arange(12, dtype=">i4").reshape(3, 4)),
           "s": s, "t": np.array(["ab", "c"], dtype="<U2"), "z": np.zeros((0, 2), dtype="<c8"), "k": np.array(7, dtype="u2")}
np.savez(os.path.join(d, "in", "savez.npz"), **members)
np.savez_compressed(os.path.join(d, "in", "savez_compressed.npz"), **members)
out.append(dict(file="savez.npz", dtype="mixed", order="C+F", byteorder="mixed", version="1.0", shape="npz stored"))
out.append(dict(file="savez_compressed.npz", dtype="mixed", order="C+F", byteorder="mixed", version="1.0", shape="npz deflated"))
print(json.dumps(out))
`

// roundTripCheck loads every file of in/ and the same name in each
// output directory, and prints for each whether NumPy reads equal values
// with the same dtype and order (and, for .npz, that zipfile's CRC check
// passes and every stored member's data start at a multiple of 64).
const roundTripCheck = `
import json, os, sys, zipfile, struct, warnings
import numpy as np
warnings.simplefilter("ignore")
d, outs = sys.argv[1], sys.argv[2:]
def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape: return "dtype/shape %s%s vs %s%s" % (a.dtype, a.shape, b.dtype, b.shape)
    if a.flags.f_contiguous != b.flags.f_contiguous or a.flags.c_contiguous != b.flags.c_contiguous: return "order"
    if a.tobytes(order="A") != b.tobytes(order="A"): return "values"
    return "ok"
res = {}
for name in sorted(os.listdir(os.path.join(d, "in"))):
    for o in outs:
        p = os.path.join(d, o, name)
        if not os.path.exists(p):
            continue
        try:
            if name.endswith(".npz"):
                z = zipfile.ZipFile(p)
                bad = z.testzip()
                r = "ok" if bad is None else "crc " + bad
                for info in z.infolist():
                    with open(p, "rb") as f:
                        f.seek(info.header_offset + 26)
                        n, e = struct.unpack("<HH", f.read(4))
                    if (info.header_offset + 30 + n + e) % 64:
                        r = "member %s not aligned" % info.filename
                a, b = np.load(os.path.join(d, "in", name)), np.load(p)
                if list(a.keys()) != list(b.keys()): r = "keys %s vs %s" % (list(a.keys()), list(b.keys()))
                for k in a.keys():
                    if r == "ok": r = same(a[k], b[k])
            else:
                r = same(np.load(os.path.join(d, "in", name)), np.load(p))
        except Exception as e:
            r = "error: %s" % e
        res["%s/%s" % (o, name)] = r
print(json.dumps(res))
`

type roundTripCase struct {
	File      string `json:"file"`
	DType     string `json:"dtype"`
	Order     string `json:"order"`
	ByteOrder string `json:"byteorder"`
	Version   string `json:"version"`
	Shape     string `json:"shape"`
}

// TestNumPyRoundTrip: NumPy writes every kind of array; this package
// reads each and writes it again, twice: as a whole file (a .npy or .npz
// source) and record by record through a wrapped source (the path every
// other format's records take, asking the source for its order and byte
// order); the .npy it writes must be byte-identical to what np.save
// writes for the same array, and NumPy must read back equal values with
// the same dtype and order. The matrix goes to the test log.
func TestNumPyRoundTrip(t *testing.T) {
	oracle.Python(t, "numpy")
	dir := t.TempDir()
	var cases []roundTripCase
	require.NoError(t, json.Unmarshal([]byte(oracle.Run(t, []string{"numpy"}, roundTripMake, dir)), &cases))
	for _, sub := range []string{"whole", "records"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
	}
	type result struct{ whole, records, bytes string }
	results := map[string]*result{}
	for _, c := range cases {
		r := &result{}
		results[c.File] = r
		in := filepath.Join(dir, "in", c.File)
		// The whole file.
		out := filepath.Join(dir, "whole", c.File)
		if err := format.Convert(in, out, nil, nil); err != nil {
			r.whole = "error: " + err.Error()
		}
		// Record by record, through a source that hides the npy file.
		src, err := format.Open(in, nil)
		require.NoError(t, err, c.File)
		var names []string
		for _, rec := range src.Records() {
			names = append(names, rec.Name)
		}
		sel, err := format.Select(src, names...)
		require.NoError(t, err)
		if err := format.Write(filepath.Join(dir, "records", c.File), sel, nil); err != nil {
			r.records = "n/a (" + shortErr(err) + ")"
		}
		require.NoError(t, src.Close())
		if strings.HasSuffix(c.File, ".npy") {
			ref, err := os.ReadFile(filepath.Join(dir, "ref", c.File))
			require.NoError(t, err)
			got, err := os.ReadFile(out)
			if err == nil && bytes.Equal(ref, got) {
				r.bytes = "identical"
			} else {
				r.bytes = "DIFFER"
			}
			if b, err := os.ReadFile(filepath.Join(dir, "records", c.File)); err == nil {
				if bytes.Equal(ref, b) {
					r.bytes += ", identical"
				} else if !strings.HasPrefix(c.DType, "struct") {
					r.bytes += ", DIFFER"
				} else {
					r.bytes += ", repacked"
				}
			}
		}
	}
	var check map[string]string
	require.NoError(t, json.Unmarshal([]byte(oracle.Run(t, []string{"numpy"}, roundTripCheck, dir, "whole", "records")), &check))
	var lines []string
	failed := 0
	for _, c := range cases {
		r := results[c.File]
		if r.whole == "" {
			r.whole = check["whole/"+c.File]
		}
		if r.records == "" {
			r.records = check["records/"+c.File]
		}
		ok := r.whole == "ok" && (r.records == "ok" || strings.HasPrefix(r.records, "n/a")) && !strings.Contains(r.bytes, "DIFFER")
		if strings.HasPrefix(r.records, "n/a") && !strings.HasPrefix(c.DType, "struct") && c.DType != "mixed" && !strings.ContainsAny(c.DType, "SUV") {
			ok = false // only text and structured records may need the whole file
		}
		mark := "ok"
		if !ok {
			mark = "FAIL"
			failed++
		}
		lines = append(lines, fmt.Sprintf("%-28s %-9s %-5s %-6s %-4s %-13s → %-4s whole:%s records:%s bytes:%s",
			c.DType, c.Shape, c.Order, c.ByteOrder, c.Version, c.File[max(0, len(c.File)-13):], mark, r.whole, r.records, r.bytes))
	}
	sort.Strings(lines)
	t.Logf("dtype × shape × order × byte order × version → result (%d cases, %d failed):\n%s", len(cases), failed, strings.Join(lines, "\n"))
	require.Zero(t, failed)
}

func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s)-i < 80 {
		return s[i+2:]
	}
	return s
}
