package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
)

// cat breaks long rows into lines of 1024 values, so that head can cut a
// big 1-D array, and --head prints the first values of arrays and the
// first rows of tables.
func TestCatLinesAndHead(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.npy")
	vals := make([]int32, 2500)
	for i := range vals {
		vals[i] = int32(i)
	}
	require.NoError(t, npy.Save(long, []int64{2500}, layout.RowMajor, vals))
	matrix := filepath.Join(dir, "m.npy")
	require.NoError(t, npy.Save(matrix, []int64{2, 3}, layout.RowMajor, []float64{1, 2, 3, 4, 5, 6}))
	table := filepath.Join(dir, "t.csv")
	require.NoError(t, os.WriteFile(table, []byte("a,b\n1,\"x\ny\"\n2,z\n3,w\n"), 0o644))

	out := mustMk(t, "cat", long)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3, "2500 values in lines of 1024")
	assert.True(t, strings.HasPrefix(lines[0], "[0i32, 1i32, "))
	assert.True(t, strings.HasSuffix(lines[0], ", 1023i32,"), lines[0][len(lines[0])-30:])
	assert.True(t, strings.HasPrefix(lines[1], "1024i32, "))
	assert.True(t, strings.HasSuffix(lines[2], ", 2499i32]"))

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--head", "3", long}, "-- 0: the first 3 of 2500 values of [2500]i32, in row-major order\n[0i32, 1i32, 2i32]\n"},
		{[]string{"--head", "4", matrix}, "-- 0: the first 4 of 6 values of [2][3]f64, in row-major order\n[1.0f64, 2.0f64, 3.0f64, 4.0f64]\n"},
		{[]string{"--head", "0", long}, "-- 0: the first 0 of 2500 values of [2500]i32, in row-major order\nempty([0]i32)\n"},
		{[]string{"--head", "9", matrix}, "-- 0: the first 6 of 6 values of [2][3]f64, in row-major order\n[1.0f64, 2.0f64, 3.0f64, 4.0f64, 5.0f64, 6.0f64]\n"},
		{[]string{"--head", "1", table}, "a,b\n1,\"x\ny\"\n"},
		{[]string{"--head", "2", table}, "a,b\n1,\"x\ny\"\n2,z\n"},
		{[]string{"--head", "0", table}, "a,b\n"},
	} {
		assert.Equal(t, c.want, mustMk(t, append([]string{"cat"}, c.args...)...), "%v", c.args)
	}
	r := mk(t, "cat", "--head", "-1", long)
	assert.Equal(t, 2, r.code, "a negative count is a usage error: %s", r.stderr)
}

// What cat's help says of text arrays is what it does: a 1-D array of
// NumPy text is a table column (CSV), one of two dimensions an array of
// Futhark string literals.
func TestCatTextAsHelpSays(t *testing.T) {
	dir := t.TempDir()
	h := mustMk(t, "cat", "--help")
	assert.Contains(t, strings.Join(strings.Fields(h), " "), "a 1-D text array is a table column, and prints as CSV")
	one := filepath.Join(dir, "s.npy")
	// <U3 of "ab", "c d": NumPy's own bytes.
	hdr := "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }"
	hdr += strings.Repeat(" ", 128-10-len(hdr)-1) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00\x76\x00"), hdr...)
	for _, s := range []string{"ab\x00", "c d"} {
		for _, r := range s {
			b = append(b, byte(r), 0, 0, 0)
		}
	}
	require.NoError(t, os.WriteFile(one, b, 0o644))
	assert.Equal(t, "0\nab\nc d\n", mustMk(t, "cat", one))
}

// An empty file is no ABF file: nothing in it tells a format, unless its
// name does.
func TestEmptyFileIsNotDetected(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		code int
		out  string
	}{
		{"empty.dat", 1, "empty file: no bytes to tell its format by"},
		{"empty.bin", 1, "empty file: no bytes to tell its format by"},
		{"empty.abf", 0, "abf, version C, 0 record(s)"},
	} {
		p := filepath.Join(dir, c.name)
		require.NoError(t, os.WriteFile(p, nil, 0o644))
		r := mk(t, "ls", p)
		assert.Equal(t, c.code, r.code, "%s: %s", c.name, r.stderr)
		assert.Contains(t, r.stdout+r.stderr, c.out, c.name)
	}
}
