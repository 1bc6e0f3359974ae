package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every real Futhark file and every generated binary file prints as
// futhark-data's canonical text.
func TestFutharkCatMatchesCanonicalText(t *testing.T) {
	dir := testdata(t, "futhark")
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "real"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".gz") {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(dir, "real"), path)
		want, err := os.ReadFile(filepath.Join(dir, "generated", rel+".txt"))
		require.NoError(t, err)
		assert.Equal(t, string(want), catValues(t, "--format", "futhark", path), rel)
		bin := filepath.Join(dir, "generated", rel+".bin")
		assert.Equal(t, string(want), catValues(t, "--format", "futhark", bin), rel+".bin")
		n++
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 11, n)
	want, err := os.ReadFile(filepath.Join(dir, "generated", "all-types.txt"))
	require.NoError(t, err)
	assert.Equal(t, string(want), catValues(t, filepath.Join(dir, "generated", "all-types.bin")))
	assert.Equal(t, string(want), catValues(t, filepath.Join(dir, "generated", "all-types.input.txt")))
}

func TestFutharkLsJSON(t *testing.T) {
	dir := testdata(t, "futhark")
	d := lsJSON(t, filepath.Join(dir, "real", "futhark", "tests", "ad", "reducebyindexminmax7.in"))
	assert.Equal(t, "futhark", d.Format)
	require.NotNil(t, d.Version)
	assert.Equal(t, "2", *d.Version)
	require.Len(t, d.Records, 3)
	checkRec(t, d.Records[0], "0", "i64", []float64{500}, "row", 15.0, 4000)
	checkRec(t, d.Records[1], "1", "f32", []float64{100, 30}, "row", 4038.0, 12000)
	checkRec(t, d.Records[2], "2", "f32", []float64{500, 30}, "row", 16061.0, 60000)
	for _, r := range d.Records {
		assert.Equal(t, "binary", r["encoding"])
	}
	d = lsJSON(t, filepath.Join(dir, "real", "futhark", "tests_literate", "data", "array.in"))
	require.Len(t, d.Records, 1)
	checkRec(t, d.Records[0], "0", "i32", []float64{3}, "row", 0.0, 12)
	assert.Equal(t, "text", d.Records[0]["encoding"])
}

func TestFutharkABFRoundTrips(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.abf")
	m := []float32{1.5, -2, 3, 4.25, 5, 6} // Julia 2×3, column-major
	writeABFFile(t, src, func(f *abf.File) error {
		if err := abf.Write(f, "m", []int64{2, 3}, m); err != nil {
			return err
		}
		if err := abf.Write(f, "flags", []int64{3}, []bool{true, false, true}); err != nil {
			return err
		}
		return abf.Write(f, "h", []int64{2}, []layout.Float16{0x3c00, 0x2e66})
	})
	want := "[[1.5f32, 3.0f32, 5.0f32],\n[-2.0f32, 4.25f32, 6.0f32]]\n[true, false, true]\n[1.0f16, 9.9975586e-2f16]\n"
	assert.Equal(t, "-- m\n[[1.5f32, 3.0f32, 5.0f32],\n[-2.0f32, 4.25f32, 6.0f32]]\n-- flags\n[true, false, true]\n-- h\n[1.0f16, 9.9975586e-2f16]\n", mustMk(t, "cat", src))
	orig, err := os.ReadFile(src)
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"bin.in", nil},
		{"text.fut", []string{"--text"}},
		{"aligned.data", []string{"--aligned"}},
		{"aligned64.out", []string{"--aligned=64"}},
	} {
		out := filepath.Join(dir, c.name)
		mustMk(t, append(append([]string{"convert"}, c.flags...), src, out)...)
		assert.Equal(t, want, catValues(t, out), c.name)
		back := filepath.Join(dir, c.name+".abf")
		mustMk(t, "convert", "--names", "m,flags,h", out, back)
		got, err := os.ReadFile(back)
		require.NoError(t, err)
		assert.Equal(t, orig, got, c.name)
	}
	// --abf-bits: bool arrays become BitArrays.
	bits := filepath.Join(dir, "bits.abf")
	mustMk(t, "convert", "--abf-bits", "--names", "m,flags,h", filepath.Join(dir, "bin.in"), bits)
	d0 := lsJSON(t, bits)
	require.Len(t, d0.Records, 3)
	assert.Equal(t, "bits", d0.Records[1]["type"])
	assert.Equal(t, want, catValues(t, bits))
	text, err := os.ReadFile(filepath.Join(dir, "text.fut"))
	require.NoError(t, err)
	assert.Equal(t, want, string(text))
	d := lsJSON(t, filepath.Join(dir, "aligned64.out"))
	for _, r := range d.Records {
		assert.Zero(t, int(r["offset"].(float64))%64, r)
	}
	// Without --names, ABF keys are the value positions.
	mustMk(t, "convert", filepath.Join(dir, "bin.in"), filepath.Join(dir, "pos.abf"))
	d = lsJSON(t, filepath.Join(dir, "pos.abf"))
	require.Len(t, d.Records, 3)
	assert.Equal(t, "0", d.Records[0]["name"])
	assert.Equal(t, "2", d.Records[2]["name"])
}

func TestFutharkSetAndUnrepresentable(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "v.abf")
	writeABFFile(t, src, func(f *abf.File) error {
		return abf.Write(f, "v", []int64{4}, []int32{1, 2, 3, 4})
	})
	aligned := filepath.Join(dir, "v.in")
	mustMk(t, "convert", "--aligned", src, aligned)
	orig, err := os.ReadFile(aligned)
	require.NoError(t, err)
	d := lsJSON(t, aligned)
	off := int(d.Records[0]["offset"].(float64))
	assert.Zero(t, off%4)
	mustMk(t, "set", aligned, "0", "[2]", "-5i32")
	got, err := os.ReadFile(aligned)
	require.NoError(t, err)
	want := append([]byte(nil), orig...)
	copy(want[off+8:], []byte{0xfb, 0xff, 0xff, 0xff})
	assert.Equal(t, want, got)
	assert.Equal(t, "[1i32, 2i32, -5i32, 4i32]\n", mustMk(t, "cat", aligned))

	text := writeFile(t, filepath.Join(dir, "t.fut"), "[1, 2]\n")
	r := mk(t, "set", text, "0", "[0]", "7")
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "mmapkit: "+text+": "), r.stderr)
	b, _ := os.ReadFile(text)
	assert.Equal(t, "[1, 2]\n", string(b))

	// An i128 has no Futhark type: an error naming the record, no output.
	wide := filepath.Join(dir, "wide.abf")
	writeABFFile(t, wide, func(f *abf.File) error {
		return abf.Write(f, "big", []int64{2}, []layout.Int128{{Lo: 0xfffffffffffffffe, Hi: -1}, {Lo: 0, Hi: 1}})
	})
	assert.Equal(t, "[-2i128, 18446744073709551616i128]\n", mustMk(t, "cat", wide))
	r = mk(t, "convert", wide, filepath.Join(dir, "wide.in"))
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "mmapkit: "+filepath.Join(dir, "wide.in")+": record \"big\" (i128[2]): the target format cannot hold this record: Futhark has no element type i128\n", r.stderr)
	assert.NoFileExists(t, filepath.Join(dir, "wide.in"))
}

func TestDatasetWiredIn(t *testing.T) {
	dir := t.TempDir()
	out := mustMk(t, "dataset", "-s", "7", "-g", "[2][3]i32", "-g", "[4]f64")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3, out)
	assert.True(t, strings.HasSuffix(lines[1], "i32]]"), out)
	assert.True(t, strings.HasSuffix(lines[2], "f64]"), out)
	assert.Equal(t, out, mustMk(t, "dataset", "-s", "7", "-g", "[2][3]i32", "-g", "[4]f64"), "deterministic per seed")

	// Binary from dataset reads back through cat and ls.
	bin := filepath.Join(dir, "gen.in")
	b := mk(t, "dataset", "-b", "-s", "7", "-g", "[2][3]i32", "-g", "[4]f64")
	require.Equal(t, 0, b.code, b.stderr)
	require.NoError(t, os.WriteFile(bin, []byte(b.stdout), 0o644))
	assert.Equal(t, "-- 0\n"+lines[0]+"\n"+lines[1]+"\n-- 1\n"+lines[2]+"\n", mustMk(t, "cat", bin))
	d := lsJSON(t, bin)
	require.Len(t, d.Records, 2)
	checkRec(t, d.Records[0], "0", "i32", []float64{2, 3}, "row", 23.0, 24)

	r := mk(t, "dataset", "--no-such-option")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "mmapkit: dataset: ")
}

// A file of 70,000 values prints: it was mapped once per value, which ran
// out of vm.max_map_count (65,530 by default) and failed.
func TestFutharkManyValuesCat(t *testing.T) {
	p := writeFile(t, filepath.Join(t.TempDir(), "many.in"), strings.Repeat("b\x02\x00  i8\x01", 70000))
	r := mk(t, "cat", p)
	require.Equal(t, 0, r.code, r.stderr)
	var want strings.Builder
	for i := range 70000 {
		fmt.Fprintf(&want, "-- %d\n1i8\n", i)
	}
	assert.True(t, want.String() == r.stdout, "each value after its name line") // no diff of 70,000 lines on failure
}
