package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
)

// A Fortran-order .npy through ls, cat and set: the array is "0", cat
// prints it in logical order, set changes exactly the element's bytes.
func TestNPYLsCatSet(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.npy")
	// Logical [[1 2 3] [4 5 6.5]], stored column by column.
	require.NoError(t, npy.Save(p, []int64{2, 3}, layout.ColMajor, []float64{1, 4, 2, 5, 3, 6.5}))
	d := lsJSON(t, p)
	assert.Equal(t, "npy", d.Format)
	require.NotNil(t, d.Version)
	assert.Equal(t, "1.0", *d.Version)
	require.Len(t, d.Records, 1)
	checkRec(t, d.Records[0], "0", "f64", []float64{2, 3}, "col", 128.0, 48)
	const text = "[[1.0f64, 2.0f64, 3.0f64],\n[4.0f64, 5.0f64, 6.5f64]]\n"
	assert.Equal(t, text, mustMk(t, "cat", p))

	orig, err := os.ReadFile(p)
	require.NoError(t, err)
	mustMk(t, "set", p, "0", "[1,2]", "-0.25")
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	want := append([]byte(nil), orig...)
	// [1,2] is element 1 + 2·2 = 5 in Fortran order.
	binary.LittleEndian.PutUint64(want[128+5*8:], math.Float64bits(-0.25))
	assert.Equal(t, want, got)
	r := mk(t, "set", p, "0", "[2,0]", "1")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "mmapkit: "+p+": ")

	// Complex numbers print as (real, imaginary) pairs after a comment.
	c := filepath.Join(dir, "c.npy")
	require.NoError(t, npy.Save(c, []int64{2}, layout.RowMajor, []complex64{complex(1, -2), complex(0.5, 0)}))
	assert.Equal(t, "-- 0: c64 values as [..][2]f32 arrays of (real, imaginary)\n[[1.0f32, -2.0f32],\n[0.5f32, 0.0f32]]\n", mustMk(t, "cat", c))

	// ABF's column-major array becomes a Fortran-order .npy whose payload
	// is the ABF payload as it is: nothing transposed.
	a := filepath.Join(dir, "m.abf")
	writeABFFile(t, a, func(f *abf.File) error {
		return abf.Write(f, "m", []int64{2, 3}, []float64{1, 4, 2, 5, 3, 6.5})
	})
	fromABF := filepath.Join(dir, "from-abf.npy")
	mustMk(t, "convert", a, fromABF)
	b, err := os.ReadFile(fromABF)
	require.NoError(t, err)
	assert.Equal(t, orig, b, "byte-identical to npy.Save of the same Fortran-order array")
}

// An .npz through ls, cat and set: members by key with their versions,
// stored members edited in place (their CRC-32s kept right), deflated ones
// refused with the file unchanged.
func TestNPZLsCatSet(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.npz")
	z, err := npy.CreateZip(p, nil)
	require.NoError(t, err)
	require.NoError(t, npy.AddArray(z, "x", []int64{3}, layout.RowMajor, []int32{1, 2, 3}))
	require.NoError(t, npy.AddArray(z, "y", []int64{2, 2}, layout.ColMajor, []uint8{1, 2, 3, 4}))
	require.NoError(t, z.Close())
	d := lsJSON(t, p)
	assert.Equal(t, "npy", d.Format)
	require.Len(t, d.Records, 2)
	assert.Equal(t, "x", d.Records[0]["name"])
	assert.Equal(t, "1.0", d.Records[0]["version"])
	assert.Equal(t, "y", d.Records[1]["name"])
	assert.Equal(t, "col", d.Records[1]["order"])
	for _, rec := range d.Records {
		off, ok := rec["offset"].(float64)
		require.True(t, ok)
		assert.Zero(t, int64(off)%64, "member %v's data start at a multiple of 64", rec["name"])
	}
	assert.Equal(t, "[1i32, 2i32, 3i32]\n", mustMk(t, "cat", "--name", "x", p))
	assert.Equal(t, "[[1u8, 3u8],\n[2u8, 4u8]]\n", mustMk(t, "cat", "--name", "y", p))
	mustMk(t, "set", p, "x", "[2]", "-7")
	assert.Equal(t, "[1i32, 2i32, -7i32]\n", mustMk(t, "cat", "--name", "x", p))
	f, err := npy.Open(p, nil)
	require.NoError(t, err)
	require.NoError(t, f.Verify(), "the member's CRC-32 was rewritten")
	require.NoError(t, f.Close())

	// NumPy's own compressed archive: a deflated member cannot be set.
	src, err := os.ReadFile("../../npy/testdata/savez-compressed.npz")
	require.NoError(t, err)
	q := filepath.Join(dir, "c.npz")
	require.NoError(t, os.WriteFile(q, src, 0o644))
	name := lsJSON(t, q).Records[0]["name"].(string)
	r := mk(t, "set", q, name, "[0]", "1")
	assert.Equal(t, 1, r.code)
	after, err := os.ReadFile(q)
	require.NoError(t, err)
	assert.Equal(t, src, after)
}

// A Zarr store through convert's Zarr flags, ls (chunks and codecs), cat
// and set: in place on raw chunks (the chunk file keeps its inode), by
// re-encoding a compressed chunk, and by creating a missing one.
func TestZarrConvertLsCatSet(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "m.abf")
	writeABFFile(t, a, func(f *abf.File) error {
		return abf.Write(f, "m", []int64{2, 3}, []float64{1, 4, 2, 5, 3, 6.5})
	})
	const text = "[[1.0f64, 2.0f64, 3.0f64],\n[4.0f64, 5.0f64, 6.5f64]]\n"

	raw := filepath.Join(dir, "raw.zarr")
	mustMk(t, "convert", "--zarr-version", "2", "--chunks", "2,2", a, raw)
	ls := mustMk(t, "ls", raw)
	assert.Contains(t, ls, "raw.zarr: zarr, version 2, 1 record(s)\n")
	assert.Regexp(t, `(?m)^/m\s+f64\s+\[2\]\[3\]\s+col\s+-\s+48\s+chunks \[2\]\[2\], raw$`, ls)
	d := lsJSON(t, raw)
	assert.Equal(t, []any{2.0, 2.0}, d.Records[0]["chunks"])
	assert.Nil(t, d.Records[0]["offset"])
	assert.Equal(t, text, mustMk(t, "cat", raw))
	chunk := filepath.Join(raw, "m", "0.1")
	before, err := os.Stat(chunk)
	require.NoError(t, err)
	mustMk(t, "set", raw, "m", "[1,2]", "9") // accepted without the leading /
	after, err := os.Stat(chunk)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "a raw chunk is edited in place")
	assert.Equal(t, "[[1.0f64, 2.0f64, 3.0f64],\n[4.0f64, 5.0f64, 9.0f64]]\n", mustMk(t, "cat", "--name", "/m", raw))

	// Version 3, sharded and compressed: set re-encodes the chunk's shard.
	sharded := filepath.Join(dir, "sharded.zarr")
	mustMk(t, "convert", "--chunks", "1,1", "--shards", "2,2", "--compress", "zstd:3", a, sharded)
	ls = mustMk(t, "ls", sharded)
	assert.Contains(t, ls, "version 3")
	assert.Regexp(t, `chunks \[1\]\[1\] in shards \[2\]\[2\], zstd\(3\)`, ls)
	assert.Equal(t, text, mustMk(t, "cat", sharded))
	mustMk(t, "set", sharded, "/m", "[0,0]", "-1")
	assert.Equal(t, "[[-1.0f64, 2.0f64, 3.0f64],\n[4.0f64, 5.0f64, 6.5f64]]\n", mustMk(t, "cat", sharded))

	// A missing chunk reads as the fill value and set creates it.
	require.NoError(t, os.Remove(filepath.Join(raw, "m", "0.0")))
	assert.Equal(t, "[[0.0f64, 0.0f64, 3.0f64],\n[0.0f64, 0.0f64, 9.0f64]]\n", mustMk(t, "cat", raw))
	mustMk(t, "set", raw, "m", "[1,1]", "5")
	assert.FileExists(t, filepath.Join(raw, "m", "0.0"))
	assert.Equal(t, "[[0.0f64, 0.0f64, 3.0f64],\n[0.0f64, 5.0f64, 9.0f64]]\n", mustMk(t, "cat", raw))

	// Bad flags are usage errors.
	r := mk(t, "convert", "--zarr-version", "2", "--shards", "2,2", a, filepath.Join(dir, "bad.zarr"))
	assert.Equal(t, 2, r.code, r.stderr)
	assert.NoDirExists(t, filepath.Join(dir, "bad.zarr"))
}

// Arrays of NumPy's fixed-size text print as arrays of Futhark string
// literals in logical order, whatever their storage order; a 1-D one is a
// one-column table and prints as CSV, void bytes in 0x… hex.
func TestNPYTextArrays(t *testing.T) {
	assert.Equal(t, "[[\"a\", \"bc\"],\n[\"de\", \"f\"]]\n", mustMk(t, "cat", "../../npy/testdata/S2-2d.npy"))
	assert.Equal(t, "0\n0x01020304\n0xff000010\n", mustMk(t, "cat", "../../npy/testdata/V4.npy"))

	// np.asfortranarray([["a", "bb", "c"], ["d", "e", "ff"]]) as <U2.
	dir := t.TempDir()
	p := filepath.Join(dir, "f.npy")
	dt, err := npy.ParseDType("<U2")
	require.NoError(t, err)
	f, err := npy.Create(p, npy.Header{DType: dt, Shape: []int64{2, 3}, FortranOrder: true}, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for _, c := range []struct {
		idx []int64
		v   string
	}{{[]int64{0, 0}, "a"}, {[]int64{0, 1}, "bb"}, {[]int64{0, 2}, "c"}, {[]int64{1, 0}, "d"}, {[]int64{1, 1}, "e"}, {[]int64{1, 2}, "ff"}} {
		mustMk(t, "set", p, "0", fmt.Sprintf("[%d,%d]", c.idx[0], c.idx[1]), c.v)
	}
	assert.Equal(t, "[[\"a\", \"bb\", \"c\"],\n[\"d\", \"e\", \"ff\"]]\n", mustMk(t, "cat", p))

	e := filepath.Join(dir, "e.npy")
	f, err = npy.Create(e, npy.Header{DType: dt, Shape: []int64{0, 2}}, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, "empty([0][2]string)\n", mustMk(t, "cat", e))
}

// set reads Futhark's literals in every format, through one parser: 010
// is ten (not octal), and a value the element type cannot hold — an
// overflowing float, a nonzero one that rounds to zero — is an error
// that leaves the file as it was.
func TestSetLiteralsInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, filepath.Join(dir, "v.fut"), "[0i32, 0i32]\n[0.5f32, 0.5f32]\n[0.5f16]\n")
	for _, ext := range []string{".abf", ".in", ".npz", ".zarr"} {
		p := filepath.Join(dir, "v"+ext)
		if ext == ".in" {
			mustMk(t, "convert", "--aligned", src, p) // binary, mappable
		} else {
			mustMk(t, "convert", src, p)
		}
		recs := lsJSON(t, p).Records
		require.Len(t, recs, 3, ext)
		name := func(i int) string { return recs[i]["name"].(string) }
		mustMk(t, "set", p, name(0), "[1]", "010")
		mustMk(t, "set", p, name(1), "[1]", "1.6e1f32")
		want := fmt.Sprintf("-- %s\n[0i32, 10i32]\n-- %s\n[0.5f32, 16.0f32]\n-- %s\n[0.5f16]\n", name(0), name(1), name(2))
		assert.Equal(t, want, mustMk(t, "cat", p), ext)
		for _, c := range []struct {
			rec   int
			value string
		}{{1, "1e400"}, {1, "1e39"}, {2, "1e-8"}, {2, "1e5"}, {0, "2147483648"}, {0, "1.5"}} {
			r := mk(t, "set", p, name(c.rec), "[0]", c.value)
			assert.Equal(t, 1, r.code, "%s: set %s", ext, c.value)
		}
		assert.Equal(t, want, mustMk(t, "cat", p), ext)
	}
}

// A Zarr array of a type mmapkit cannot read is listed with its type
// and size, and cat fails naming the type instead of printing it as a
// value of no bytes.
func TestZarrUnreadableTypeFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "u.zarr")
	require.NoError(t, os.Mkdir(dir, 0o755))
	writeFile(t, filepath.Join(dir, ".zarray"), `{"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "<U4", "compressor": null, "fill_value": "", "order": "C", "filters": null}`)
	ls := mustMk(t, "ls", dir)
	assert.Regexp(t, `/\s+str4\s+\[3\]\s+row\s+-\s+48\s`, ls)
	r := mk(t, "cat", dir)
	assert.Equal(t, 1, r.code, "stdout %q", r.stdout)
	assert.Contains(t, r.stderr, "str4")
	assert.NotContains(t, r.stdout, "serialized")
}

// A bad literal given to set reads alike in every format that set
// changes: the file, the record as ls names it, and layout's reason, with
// no offset (the literal is wrong, not a byte of the file).
func TestSetBadLiteralReadsAlike(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "s.npy")
	require.NoError(t, npy.Save(src, []int64{2, 3}, layout.RowMajor, make([]float64, 6)))
	const reason = `layout: "abc" is not a f64 literal: unexpected 'a' at byte 0, expected digits: syntax error`
	for _, c := range []struct{ file, record string }{
		{"s.npy", "0"},
		{"s.abf", "0"},
		{"s.fut", "0"},
		{"s.dbdf", "matrix"},
		{"s.zarr", "/0"},
		{"s.h5", "/0"},
	} {
		p := filepath.Join(dir, c.file)
		if p != src {
			mustMk(t, "convert", src, p)
		}
		r := mk(t, "set", p, c.record, "[0,0]", "abc")
		assert.Equal(t, 1, r.code, c.file)
		assert.Equal(t, fmt.Sprintf("mmapkit: %s: record %q: %s\n", p, c.record, reason), r.stderr, c.file)
	}
}
