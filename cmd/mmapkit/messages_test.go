package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
)

// Each message names the real cause and the way out: a value that does
// not parse is about the value, never a range of the file; an index of
// the wrong length says how many numbers it needs; a missing record lists
// the names there are; a target that cannot be written is named, not its
// temporary file; a hint names the flag that helps. DIR stands for the
// test's directory.
func TestMessagesPointAtTheCause(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.npy")
	require.NoError(t, npy.Save(a, []int64{2, 3}, layout.RowMajor, []float32{0, 1, 2, 3, 4, 5}))
	s := filepath.Join(dir, "s.npy")
	require.NoError(t, npy.Save(s, []int64{}, layout.RowMajor, []int32{7}))
	e := filepath.Join(dir, "e.npy")
	require.NoError(t, npy.Save(e, []int64{0, 2}, layout.RowMajor, []int8{}))
	two := filepath.Join(dir, "two.npz")
	z, err := npy.CreateZip(two, nil)
	require.NoError(t, err)
	require.NoError(t, npy.AddArray(z, "x", []int64{1}, layout.RowMajor, []float64{1}))
	require.NoError(t, npy.AddArray(z, "y", []int64{2}, layout.RowMajor, []int64{2, 3}))
	require.NoError(t, z.Close())
	many := filepath.Join(dir, "many.npz")
	z, err = npy.CreateZip(many, nil)
	require.NoError(t, err)
	for i := range 12 {
		require.NoError(t, npy.AddArray(z, fmt.Sprintf("m%02d", i), []int64{1}, layout.RowMajor, []uint8{uint8(i)}))
	}
	require.NoError(t, z.Close())
	mustMk(t, "convert", a, filepath.Join(dir, "a.h5"))
	before, err := os.ReadFile(a)
	require.NoError(t, err)

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"value overflows its type",
			[]string{"set", "DIR/a.npy", "0", "[1,2]", "1e40"},
			`DIR/a.npy: record "0": layout: "1e40" is not a f32 literal: float literal overflows f32 (write inf for infinity)`},
		{"value that is not a number",
			[]string{"set", "DIR/a.npy", "0", "[1,2]", "abc"},
			`DIR/a.npy: record "0": layout: "abc" is not a f32 literal: unexpected 'a' at byte 0, expected digits: syntax error`},
		{"value of another type",
			[]string{"set", "DIR/a.h5", "/0", "[1,2]", "1i32"},
			`DIR/a.h5: record "/0": layout: "1i32" is not a f32 literal: unexpected "i32" after the literal: syntax error`},
		{"too few indices",
			[]string{"set", "DIR/a.npy", "0", "[1]", "1"},
			`DIR/a.npy: index [1] has 1 number, but record "0" has 2 dimensions (shape [2][3]): give one number per dimension, as [0,0]`},
		{"too many indices",
			[]string{"set", "DIR/a.h5", "/0", "[1,2,0]", "1"},
			`DIR/a.h5: index [1,2,0] has 3 numbers, but record "/0" has 2 dimensions (shape [2][3]): give one number per dimension, as [0,0]`},
		{"an index for a scalar",
			[]string{"set", "DIR/s.npy", "0", "[0]", "1"},
			`DIR/s.npy: record "0" is a scalar: its index is [], not [0]`},
		{"index past the end",
			[]string{"set", "DIR/a.npy", "0", "[1,3]", "1"},
			`DIR/a.npy: record "0": index [1,3]: 3 is past the end of dimension 1 of shape [2][3] (0 to 2)`},
		{"index into an empty dimension",
			[]string{"set", "DIR/e.npy", "0", "[0,0]", "1"},
			`DIR/e.npy: record "0": index [0,0]: dimension 0 of shape [0][2] is empty: the record has no elements to set`},
		{"no such record in a .npy",
			[]string{"set", "DIR/a.npy", "x", "[0,0]", "1"},
			`DIR/a.npy: no such record "x"; the file has "0"`},
		{"no such record, two there",
			[]string{"cat", "--name", "z", "DIR/two.npz"},
			`DIR/two.npz: no such record "z"; the file has "x" and "y"`},
		{"no such record, ten of twelve listed",
			[]string{"convert", "--name", "m12", "DIR/many.npz", "DIR/out.npy"},
			`DIR/many.npz: no such record "m12"; the file has "m00", "m01", "m02", "m03", "m04", "m05", "m06", "m07", "m08", "m09" and 2 more`},
		{"no such dataset in HDF5",
			[]string{"cat", "--name", "nope", "DIR/a.h5"},
			`DIR/a.h5: /nope: no "nope" in /: no such record (the file has "/0")`},
		{"target in a missing directory",
			[]string{"convert", "DIR/a.npy", "DIR/missing/out.abf"},
			`DIR/missing/out.abf: cannot create: the directory DIR/missing does not exist (create it first)`},
		{"store in a missing directory",
			[]string{"convert", "DIR/a.npy", "DIR/missing/out.zarr"},
			`DIR/missing/out.zarr: the directory DIR/missing does not exist (create it first)`},
		{"several records to one .npy",
			[]string{"convert", "DIR/two.npz", "DIR/out.npy"},
			`DIR/out.npy: a .npy file holds one array, and the 2 records are not the columns of a table; write an .npz, or choose one record (mmapkit convert --name NAME; format.Select): the target format cannot hold this record`},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := make([]string, len(c.args))
			for i, arg := range c.args {
				args[i] = strings.ReplaceAll(arg, "DIR", dir)
			}
			r := mk(t, args...)
			assert.Equal(t, 1, r.code)
			assert.Equal(t, "mmapkit: "+strings.ReplaceAll(c.want, "DIR", dir)+"\n", r.stderr)
		})
	}
	after, err := os.ReadFile(a)
	require.NoError(t, err)
	assert.Equal(t, before, after, "failed sets change nothing")
	_, err = os.Stat(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
