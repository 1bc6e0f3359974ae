package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tv1 is abf.md's TV-1: "x" = Float64[1.0, 2.0], "b" = BitVector([1,0,1]).
const tv1 = "" +
	"00040000000000000078400000000000" +
	"000041727261797b466c6f617436342c" +
	"317d0200000000000000000000000000" +
	"000000000000f03f0000000000000040" +
	"000400000000000000622c0000000000" +
	"00004269744172726179 7b317d030000" +
	"00000000000000000500000000000000"

func tv1Bytes(t *testing.T) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(tv1, " ", ""))
	require.NoError(t, err)
	require.Len(t, b, 112)
	return b
}

// lsJSON runs ls --json and parses the result.
type lsDoc struct {
	File    string           `json:"file"`
	Format  string           `json:"format"`
	Version *string          `json:"version"`
	Records []map[string]any `json:"records"`
}

func lsJSON(t *testing.T, args ...string) lsDoc {
	t.Helper()
	out := mustMk(t, append([]string{"ls", "--json"}, args...)...)
	var d lsDoc
	require.NoError(t, json.Unmarshal([]byte(out), &d), out)
	return d
}

// catValues is what cat prints of a file (args end with it) without the
// "-- NAME" line it prints before each record of a file of several,
// having checked that those lines are there, in order, one before each
// record ls lists: for comparing the values of files whose records are
// named differently (NumPy's "x" is HDF5's "/x").
func catValues(t *testing.T, args ...string) string {
	t.Helper()
	out := mustMk(t, append([]string{"cat"}, args...)...)
	recs := lsJSON(t, args...).Records
	if len(recs) < 2 {
		for _, r := range recs {
			require.False(t, strings.HasPrefix(out, "-- "+fmt.Sprint(r["name"])+"\n"), "one record prints without its name")
		}
		return out
	}
	var b strings.Builder
	next := 0
	for line := range strings.SplitAfterSeq(out, "\n") {
		if next < len(recs) && line == "-- "+fmt.Sprint(recs[next]["name"])+"\n" {
			next++
			continue
		}
		require.NotZero(t, next, "the output starts with the first record's name line: %q", line)
		b.WriteString(line)
	}
	require.Equal(t, len(recs), next, "a name line before each record")
	return b.String()
}

// rec checks one ls --json record field by field.
func checkRec(t *testing.T, got map[string]any, name, typ string, shape []float64, order string, offset any, nbytes float64) {
	t.Helper()
	assert.Equal(t, name, got["name"])
	assert.Equal(t, typ, got["type"])
	wantShape := make([]any, len(shape))
	for i, s := range shape {
		wantShape[i] = s
	}
	assert.Equal(t, wantShape, got["shape"])
	assert.Equal(t, order, got["order"])
	require.Contains(t, got, "offset")
	assert.Equal(t, offset, got["offset"])
	assert.Equal(t, nbytes, got["nbytes"])
}

func TestABFLsCatSet(t *testing.T) {
	dir := t.TempDir()
	orig := tv1Bytes(t)
	path := filepath.Join(dir, "tv1.abf")
	require.NoError(t, os.WriteFile(path, orig, 0o644))

	d := lsJSON(t, path)
	assert.Equal(t, path, d.File)
	assert.Equal(t, "abf", d.Format)
	require.NotNil(t, d.Version)
	assert.Equal(t, "C", *d.Version)
	require.Len(t, d.Records, 2)
	checkRec(t, d.Records[0], "x", "f64", []float64{2}, "col", 48.0, 16)
	checkRec(t, d.Records[1], "b", "bits", []float64{3}, "col", 104.0, 8)

	// Detected from the bytes without the extension.
	noext := filepath.Join(dir, "tv1")
	require.NoError(t, os.WriteFile(noext, orig, 0o644))
	assert.Equal(t, "abf", lsJSON(t, noext).Format)

	assert.Equal(t, "[true, false, true]\n", mustMk(t, "cat", "--name", "b", path))

	// set: exactly the element's bytes change.
	mustMk(t, "set", path, "b", "[1]", "true")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want := append([]byte(nil), orig...)
	want[104] = 0x07
	assert.Equal(t, want, got)
	assert.Equal(t, "[true, true, true]\n", mustMk(t, "cat", "--name", "b", path))

	r := mk(t, "set", path, "b", "[3]", "true")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "mmapkit: "+path+": ")
	r = mk(t, "set", path, "nope", "[0]", "1")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "mmapkit: "+path+": no such record \"nope\"; the file has \"x\" and \"b\"\n", r.stderr)
	got2, _ := os.ReadFile(path)
	assert.Equal(t, want, got2, "failed sets change nothing")
}

// writeABF writes an ABF file with the abf package.
func writeABFFile(t *testing.T, path string, write func(f *abf.File) error) {
	t.Helper()
	f, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	require.NoError(t, err)
	require.NoError(t, write(f))
	require.NoError(t, f.Close())
}

func TestABFColumnMajorPrintsRowMajor(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "z.abf")
	z := make([]int32, 15)
	for i := range z {
		z[i] = int32(i + 1)
	}
	cube := make([]int16, 24)
	for i := range cube {
		cube[i] = int16(i)
	}
	writeABFFile(t, path, func(f *abf.File) error {
		if err := abf.Write(f, "z", []int64{3, 5}, z); err != nil {
			return err
		}
		if err := abf.Write(f, "cube", []int64{2, 3, 4}, cube); err != nil {
			return err
		}
		if err := abf.Write(f, "s", []int64{}, []uint8{7}); err != nil {
			return err
		}
		if err := abf.Write(f, "e", []int64{3, 0}, []int64{}); err != nil {
			return err
		}
		return f.WriteString("log", "a∘α \"q\" 1")
	})
	// Julia's z[i,j] = i + 3(j-1) prints at [i-1][j-1].
	assert.Equal(t, "[[1i32, 4i32, 7i32, 10i32, 13i32],\n[2i32, 5i32, 8i32, 11i32, 14i32],\n[3i32, 6i32, 9i32, 12i32, 15i32]]\n",
		mustMk(t, "cat", "--name", "z", path))
	// cube[i,j,k] = i + 2j + 6k (0-based): row-major [i][j][k].
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < 2; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("[")
		for j := 0; j < 3; j++ {
			if j > 0 {
				b.WriteString(",\n")
			}
			b.WriteString("[")
			for k := 0; k < 4; k++ {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(itoa(i+2*j+6*k) + "i16")
			}
			b.WriteString("]")
		}
		b.WriteString("]")
	}
	b.WriteString("]\n")
	assert.Equal(t, b.String(), mustMk(t, "cat", "--name", "cube", path))
	assert.Equal(t, "7u8\n", mustMk(t, "cat", "--name", "s", path))
	assert.Equal(t, "empty([3][0]i64)\n", mustMk(t, "cat", "--name", "e", path))
	lit := mustMk(t, "cat", "--name", "log", path)
	assert.Equal(t, `"a\8728\945 \"q\" 1"`+"\n", lit)
	// Futhark reads the literal back as the string's UTF-8 bytes.
	fut := writeFile(t, filepath.Join(dir, "lit.fut"), lit)
	var u8s strings.Builder
	u8s.WriteString("[")
	for i, b := range []byte("a∘α \"q\" 1") {
		if i > 0 {
			u8s.WriteString(", ")
		}
		u8s.WriteString(itoa(int(b)) + "u8")
	}
	u8s.WriteString("]\n")
	assert.Equal(t, u8s.String(), mustMk(t, "cat", fut))

	// set [1,3] is Julia's z[2,4] at column-major position 1 + 3·3 = 10.
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	d := lsJSON(t, path)
	off := int(d.Records[0]["offset"].(float64))
	mustMk(t, "set", path, "z", "[1,3]", "-7")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want := append([]byte(nil), orig...)
	copy(want[off+4*10:], []byte{0xf9, 0xff, 0xff, 0xff})
	assert.Equal(t, want, got)
	assert.Contains(t, mustMk(t, "cat", "--name", "z", path), "[2i32, 5i32, 8i32, -7i32, 14i32]")
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDaphneTestdata(t *testing.T) {
	dir := testdata(t, "daphne")
	d := lsJSON(t, filepath.Join(dir, "aig.dbdf"))
	assert.Equal(t, "daphne", d.Format)
	require.NotNil(t, d.Version)
	assert.Equal(t, "1", *d.Version)
	require.Len(t, d.Records, 1)
	checkRec(t, d.Records[0], "matrix", "i32", []float64{4, 3}, "row", 45.0, 48)
	assert.Equal(t, "dense", d.Records[0]["layout"])

	d = lsJSON(t, filepath.Join(dir, "aig-csr.dbdf"))
	require.Len(t, d.Records, 1)
	assert.Equal(t, "csr", d.Records[0]["layout"])
	assert.Equal(t, []any{4.0, 3.0}, d.Records[0]["shape"])

	d = lsJSON(t, filepath.Join(dir, "frame_2x2_si64_f64.dbdf"))
	require.Len(t, d.Records, 2)
	checkRec(t, d.Records[0], "a", "i64", []float64{2}, "row", nil, 16)
	checkRec(t, d.Records[1], "bc", "f64", []float64{2}, "row", nil, 16)

	aig := "[[1i32, 5i32, 9i32],\n[2i32, 6i32, 10i32],\n[3i32, 7i32, 11i32],\n[4i32, 8i32, 12i32]]\n"
	assert.Equal(t, aig, mustMk(t, "cat", filepath.Join(dir, "aig.dbdf")))
	assert.Equal(t, aig, mustMk(t, "cat", filepath.Join(dir, "aig-csr.dbdf")))
	assert.Equal(t, "col_0,col_1,col_2\n1,5,9\n2,6,10\n3,7,11\n4,8,12\n", mustMk(t, "cat", filepath.Join(dir, "aig-f.dbdf")))
	assert.Equal(t, "a,bc\n7,0.5\n-1,1\n", mustMk(t, "cat", filepath.Join(dir, "frame_2x2_si64_f64.dbdf")))
	assert.Equal(t, "bc\n0.5\n1\n", mustMk(t, "cat", "--name", "bc", filepath.Join(dir, "frame_2x2_si64_f64.dbdf")))
	assert.Equal(t, "[[1.0f64, 2.0f64, 3.0f64],\n[4.0f64, 5.0f64, 6.0f64]]\n", mustMk(t, "cat", filepath.Join(dir, "dense_2x3_f64.dbdf")))
	assert.Equal(t, "[[0.0f64, 1.0f64, 0.0f64],\n[0.0f64, 0.0f64, 0.0f64],\n[0.0f64, 0.0f64, 2.0f64]]\n", mustMk(t, "cat", filepath.Join(dir, "csr_3x3_f64_nnz2.dbdf")))
	// Every .dbdf of the test data prints.
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".dbdf" {
			assert.NotEmpty(t, mustMk(t, "cat", filepath.Join(dir, e.Name())), e.Name())
			n++
		}
	}
	assert.Equal(t, 6, n)
}

// --name selects exactly one record, the empty name too.
func TestCatEmptyName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.abf")
	writeABFFile(t, path, func(f *abf.File) error {
		if err := abf.Write(f, "", []int64{1}, []uint8{7}); err != nil {
			return err
		}
		return abf.Write(f, "y", []int64{2}, []int16{-1, 2})
	})
	assert.Equal(t, "[7u8]\n", mustMk(t, "cat", "--name", "", path))
	assert.Equal(t, "[-1i16, 2i16]\n", mustMk(t, "cat", "--name", "y", path))
	assert.Equal(t, "-- \"\"\n[7u8]\n-- y\n[-1i16, 2i16]\n", mustMk(t, "cat", path), "the empty name quoted")
	assert.Contains(t, mustMk(t, "ls", path), "\n\"\"    u8 ")
	mustMk(t, "set", path, "", "[0]", "9")
	assert.Equal(t, "[9u8]\n", mustMk(t, "cat", "--name", "", path))
}

// Serialized Julia values (abf.md TV-19) are listed and print as comments.
func TestABFSerializedRecords(t *testing.T) {
	le := func(n int) string { return hex.EncodeToString([]byte{byte(n), 0, 0, 0, 0, 0, 0, 0}) }
	str := func(s string) string { return hex.EncodeToString([]byte(s)) }
	h := "00" + le(4) + str("T") + le(32) + str("DataType") + le(12) + "374a4c0c0400000001020304" +
		"00" + le(12) + str("foo") + le(72) + str("AbfSerializer{Foo}") + le(4) + "deadbeef" +
		"00" + le(4) + str("x") + le(64) + str("Array{Float64,1}") + le(1) + "000000000000" + "000000000000f03f"
	path := filepath.Join(t.TempDir(), "ser.abf")
	require.Len(t, writeHex(t, path, h), 152)
	d := lsJSON(t, path)
	require.Len(t, d.Records, 3)
	checkRec(t, d.Records[0], "T", "datatype", []float64{}, "col", 34.0, 12)
	checkRec(t, d.Records[1], "foo", "serialized", []float64{}, "col", 92.0, 4)
	checkRec(t, d.Records[2], "x", "f64", []float64{1}, "col", 144.0, 8)
	assert.Equal(t, "-- T: serialized, 12 bytes\n-- foo: serialized, 4 bytes\n-- x\n[1.0f64]\n", mustMk(t, "cat", path))
	r := mk(t, "convert", path, filepath.Join(t.TempDir(), "ser.in"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `record "T"`)
}

// A 2-D BitArray prints row-major and set flips exactly one bit.
func TestABFBitMatrix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bits.abf")
	writeABFFile(t, path, func(f *abf.File) error {
		b, err := abf.PackBits([]int64{2, 3}, []bool{true, false, false, true, true, true})
		if err != nil {
			return err
		}
		return f.WriteBits("b", b)
	})
	assert.Equal(t, "[[true, false, true],\n[false, true, true]]\n", mustMk(t, "cat", path))
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	off := int(lsJSON(t, path).Records[0]["offset"].(float64))
	mustMk(t, "set", path, "b", "[1,0]", "true") // Julia b[2,1]: column-major bit 1
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want := append([]byte(nil), orig...)
	want[off] |= 1 << 1
	assert.Equal(t, want, got)
	assert.Equal(t, "[[true, false, true],\n[true, true, true]]\n", mustMk(t, "cat", path))
}

// A big-endian ABF record (abf.md TV-18) prints swapped; set refuses it.
func TestABFBigEndian(t *testing.T) {
	path := filepath.Join(t.TempDir(), "be.abf")
	writeHex(t, path, "ff"+"0000000000000004"+"78"+"0000000000000040"+hex.EncodeToString([]byte("Array{Float64,1}"))+
		"0000000000000002"+"000000000000"+"3ff0000000000000"+"4000000000000000")
	assert.Equal(t, "[1.0f64, 2.0f64]\n", mustMk(t, "cat", path))
	r := mk(t, "set", path, "x", "[0]", "3")
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "mmapkit: "+path+": "), r.stderr)
}

// A failed conversion leaves an existing output file as it was.
func TestFailedConvertKeepsExistingOutput(t *testing.T) {
	dir := t.TempDir()
	out := writeFile(t, filepath.Join(dir, "out.in"), "[1, 2]\n")
	in := filepath.Join(dir, "c.abf")
	writeABFFile(t, in, func(f *abf.File) error {
		if err := abf.Write(f, "ok", []int64{2}, []int32{1, 2}); err != nil {
			return err
		}
		return abf.Write(f, "c", []int64{1}, []layout.Char{0x61000000})
	})
	assert.Equal(t, "[97u32]\n", mustMk(t, "cat", "--name", "c", in), "Julia Chars print as u32 code points")
	r := mk(t, "convert", in, out)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `record "c"`)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "[1, 2]\n", string(b))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 2)

	// A writer's error names the output, never the temporary file.
	str := filepath.Join(dir, "str.abf")
	writeABFFile(t, str, func(f *abf.File) error { return f.WriteString("log", "hello") })
	a := filepath.Join(dir, "a.abf")
	r = mk(t, "convert", "--abf-version", "A", str, a)
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "mmapkit: "+a+": "), r.stderr)
	assert.NotContains(t, r.stderr, ".tmp-")
	assert.NoFileExists(t, a)
}

func TestDaphneSetAndRoundTrips(t *testing.T) {
	src := testdata(t, "daphne")
	dir := t.TempDir()
	orig, err := os.ReadFile(filepath.Join(src, "aig.dbdf"))
	require.NoError(t, err)
	path := filepath.Join(dir, "aig.dbdf")
	require.NoError(t, os.WriteFile(path, orig, 0o644))
	meta, err := os.ReadFile(filepath.Join(src, "aig.dbdf.meta"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".meta", meta, 0o644))

	// DAPHNE dense -> ABF -> DAPHNE is byte-identical, .meta included.
	mustMk(t, "convert", path, filepath.Join(dir, "aig.abf"))
	assert.Equal(t, "[[1i32, 5i32, 9i32],\n[2i32, 6i32, 10i32],\n[3i32, 7i32, 11i32],\n[4i32, 8i32, 12i32]]\n",
		mustMk(t, "cat", filepath.Join(dir, "aig.abf")))
	d := lsJSON(t, filepath.Join(dir, "aig.abf"))
	checkRec(t, d.Records[0], "matrix", "i32", []float64{4, 3}, "col", d.Records[0]["offset"], 48)
	mustMk(t, "convert", filepath.Join(dir, "aig.abf"), filepath.Join(dir, "back.dbdf"))
	back, err := os.ReadFile(filepath.Join(dir, "back.dbdf"))
	require.NoError(t, err)
	assert.Equal(t, orig, back)
	backMeta, err := os.ReadFile(filepath.Join(dir, "back.dbdf.meta"))
	require.NoError(t, err)
	assert.Equal(t, meta, backMeta)

	// DAPHNE dense -> Futhark binary -> Futhark text -> Futhark binary ->
	// DAPHNE is byte-identical too; the two binary files are identical.
	fut := filepath.Join(dir, "aig.fut")
	mustMk(t, "convert", path, fut)
	mustMk(t, "convert", "--to", "futhark", "--text", fut, filepath.Join(dir, "aig.txt"))
	text, err := os.ReadFile(filepath.Join(dir, "aig.txt"))
	require.NoError(t, err)
	assert.Equal(t, "[[1i32, 5i32, 9i32],\n[2i32, 6i32, 10i32],\n[3i32, 7i32, 11i32],\n[4i32, 8i32, 12i32]]\n", string(text))
	mustMk(t, "convert", "--from", "futhark", "--to", "futhark", filepath.Join(dir, "aig.txt"), filepath.Join(dir, "again.fut"))
	futBytes, err := os.ReadFile(fut)
	require.NoError(t, err)
	again, err := os.ReadFile(filepath.Join(dir, "again.fut"))
	require.NoError(t, err)
	assert.Equal(t, futBytes, again, "text back to binary gives the same bytes")
	mustMk(t, "convert", filepath.Join(dir, "again.fut"), filepath.Join(dir, "back2.dbdf"))
	back, err = os.ReadFile(filepath.Join(dir, "back2.dbdf"))
	require.NoError(t, err)
	assert.Equal(t, orig, back)
	backMeta, err = os.ReadFile(filepath.Join(dir, "back2.dbdf.meta"))
	require.NoError(t, err)
	assert.Equal(t, meta, backMeta)

	// CSR stays CSR into DAPHNE, byte for byte.
	csrOrig, err := os.ReadFile(filepath.Join(src, "aig-csr.dbdf"))
	require.NoError(t, err)
	mustMk(t, "convert", filepath.Join(src, "aig-csr.dbdf"), filepath.Join(dir, "csr.dbdf"))
	csr, err := os.ReadFile(filepath.Join(dir, "csr.dbdf"))
	require.NoError(t, err)
	assert.Equal(t, csrOrig, csr)

	// CSR becomes dense for the array formats.
	mustMk(t, "convert", filepath.Join(src, "aig-csr.dbdf"), filepath.Join(dir, "csr.in"))
	assert.Equal(t, "[[1i32, 5i32, 9i32],\n[2i32, 6i32, 10i32],\n[3i32, 7i32, 11i32],\n[4i32, 8i32, 12i32]]\n",
		mustMk(t, "cat", filepath.Join(dir, "csr.in")))
	mustMk(t, "convert", filepath.Join(src, "csr_3x3_f64_nnz2.dbdf"), filepath.Join(dir, "csr3.abf"))
	assert.Equal(t, "[[0.0f64, 1.0f64, 0.0f64],\n[0.0f64, 0.0f64, 0.0f64],\n[0.0f64, 0.0f64, 2.0f64]]\n",
		mustMk(t, "cat", filepath.Join(dir, "csr3.abf")))

	// Frame -> ABF columns -> frame -> CSV.
	mustMk(t, "convert", filepath.Join(src, "frame_2x2_si64_f64.dbdf"), filepath.Join(dir, "fr.abf"))
	d = lsJSON(t, filepath.Join(dir, "fr.abf"))
	require.Len(t, d.Records, 2)
	assert.Equal(t, "a", d.Records[0]["name"])
	assert.Equal(t, "bc", d.Records[1]["name"])
	mustMk(t, "convert", filepath.Join(dir, "fr.abf"), filepath.Join(dir, "fr.dbdf"))
	assert.Equal(t, "a,bc\n7,0.5\n-1,1\n", mustMk(t, "cat", filepath.Join(dir, "fr.dbdf")))
	mustMk(t, "convert", filepath.Join(dir, "fr.dbdf"), filepath.Join(dir, "fr.csv"))
	csv, err := os.ReadFile(filepath.Join(dir, "fr.csv"))
	require.NoError(t, err)
	assert.Equal(t, "a,bc\n7,0.5\n-1,1\n", string(csv))
	mustMk(t, "convert", filepath.Join(dir, "fr.csv"), filepath.Join(dir, "fr2.dbdf"))
	assert.Equal(t, "a,bc\n7,0.5\n-1,1\n", mustMk(t, "cat", filepath.Join(dir, "fr2.dbdf")))

	// set on a dense matrix: one 4-byte element at 45 + (1·3+2)·4.
	mustMk(t, "set", path, "matrix", "[1,2]", "99")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want := append([]byte(nil), orig...)
	copy(want[45+4*5:], []byte{99, 0, 0, 0})
	assert.Equal(t, want, got)
	r := mk(t, "set", filepath.Join(src, "aig-csr.dbdf"), "matrix", "[0,0]", "1")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "only dense matrices are changed in place")

	// A conversion DAPHNE cannot hold fails and leaves nothing.
	writeABFFile(t, filepath.Join(dir, "i16.abf"), func(f *abf.File) error {
		return abf.Write(f, "h", []int64{2, 2}, []int16{1, 2, 3, 4})
	})
	r = mk(t, "convert", filepath.Join(dir, "i16.abf"), filepath.Join(dir, "i16.dbdf"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `record "h"`)
	assert.NoFileExists(t, filepath.Join(dir, "i16.dbdf"))
	assert.NoFileExists(t, filepath.Join(dir, "i16.dbdf.meta"))
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		assert.False(t, strings.Contains(e.Name(), ".tmp-"), e.Name())
	}
}

// A conversion reads one DAPHNE layout and writes the other in one step:
// --daphne-layout names the input's, --out-daphne-layout the output's
// (one flag set both before, so going between them took two conversions
// and a file in between).
func TestDaphneLayoutsInOneConversion(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "t.csv")
	const table = "a,b\n1,0.5\n-2,1.25\n"
	require.NoError(t, os.WriteFile(csvPath, []byte(table), 0o644))
	doc := filepath.Join(dir, "doc.dbdf")
	code := filepath.Join(dir, "code.dbdf")
	direct := filepath.Join(dir, "direct.dbdf")
	mustMk(t, "convert", "--out-daphne-layout=document", csvPath, doc)
	mustMk(t, "convert", "--daphne-layout=document", doc, code)
	mustMk(t, "convert", csvPath, direct)
	assert.Equal(t, table, mustMk(t, "cat", "--daphne-layout=document", doc))
	assert.Equal(t, table, mustMk(t, "cat", code))
	want, err := os.ReadFile(direct)
	require.NoError(t, err)
	got, err := os.ReadFile(code)
	require.NoError(t, err)
	assert.Equal(t, want, got, "DAPHNE's layout, byte for byte")
	docBytes, err := os.ReadFile(doc)
	require.NoError(t, err)
	assert.NotEqual(t, want, docBytes, "the document's layout differs")
}
