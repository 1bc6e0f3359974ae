package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// convert -v says what it wrote, and what it chose that reading the file
// back needs (a SciDB format string); on a pipe without -v, or with
// --quiet, it says nothing.
func TestConvertSaysWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "cells.csv")
	require.NoError(t, os.WriteFile(csv, []byte("a,b,c\n1,2.5,x\n3,,y\n"), 0o644))
	nums := filepath.Join(dir, "nums.csv")
	require.NoError(t, os.WriteFile(nums, []byte("a,b\n1,2.5\n3,\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-v", csv, filepath.Join(dir, "cells.scidb")},
			"mmapkit: wrote " + filepath.Join(dir, "cells.scidb") + ": scidb, 3 records (a0 int64[2]; a1 double[2]; a2 string[2]); read it back with --scidb-format '(int64, double null, string)'\n"},
		{[]string{"-v", "--zarr-version", "2", "--compress", "zstd", nums, filepath.Join(dir, "cells.zarr")},
			"mmapkit: wrote " + filepath.Join(dir, "cells.zarr") + ": zarr version 2, 3 records (/a i64[2] chunks [2], zstd(1); /b f64[2] chunks [2], zstd(1); /b.reason i8[2] chunks [2], zstd(1))\n"},
		{[]string{nums, filepath.Join(dir, "quiet.zarr")}, ""},
		{[]string{"-v", "--quiet", nums, filepath.Join(dir, "q2.zarr")}, ""},
	} {
		r := mk(t, append([]string{"convert"}, c.args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, c.want, r.stderr, "%v", c.args)
	}
	// What it said reads the file back.
	out := mustMk(t, "cat", "--scidb-format", "(int64, double null, string)", filepath.Join(dir, "cells.scidb"))
	assert.Equal(t, "a0,a1,a2\n1,2.5,x\n3,,y\n", out)
}
