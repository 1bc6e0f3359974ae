package conformance

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/hdf5"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/npy"
	"github.com/mmapkit/mmapkit/scidb"
	"github.com/mmapkit/mmapkit/zarr"
)

// An index with the wrong number of components is reported as such by
// every way of setting an element through the library — format.Set,
// format.Setter's SetText and each package's own Set — never as a range
// outside the file: the message says how many numbers the index has, how
// many dimensions the record has and what an index looks like, and the
// error wraps layout.ErrIndexCount (and still mmapfile.ErrOutOfRange, as
// it did).
func TestSetWrongIndexCount(t *testing.T) {
	const matrix = `index [1] has 1 number, but the array has 2 dimensions (shape [2][3]): give one number per dimension, as [0,0]`
	grid := arrays().array("m", []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	cases := []struct {
		format, file string
		src          *memSource
		rec          string // the record's name in the file
		idx          []int64
		want         string // the message about the index
		typed        func(path string, idx []int64) error
	}{
		{"abf", "x.abf", grid, "m", []int64{1}, matrix, func(p string, idx []int64) error {
			f, err := abf.OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			defer f.Close()
			return abf.Set(f, "m", idx, 1.0)
		}},
		{"futhark", "x.in", grid, "0", []int64{1}, matrix, func(p string, idx []int64) error {
			f, err := futhark.OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			defer f.Close()
			return futhark.Set(f, 0, idx, 1.0)
		}},
		{"daphne", "x.dbdf", grid, "matrix", []int64{1}, matrix, func(p string, idx []int64) error {
			f, err := daphne.OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			defer f.Close()
			return daphne.Set(f, f.Records()[0].Name, idx, 1.0)
		}},
		{"npy", "x.npy", grid, "0", []int64{1}, matrix, func(p string, idx []int64) error {
			f, err := npy.OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			defer f.Close()
			return npy.Set(f, f.Records()[0].Name, idx, 1.0)
		}},
		{"zarr", "x.zarr", grid, "m", []int64{1}, matrix, func(p string, idx []int64) error {
			s, err := zarr.OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			defer s.Close()
			a, err := s.Array("m")
			require.NoError(t, err)
			return zarr.Set(a, idx, 1.0)
		}},
		{"hdf5", "x.h5", grid, "/m", []int64{1}, matrix, func(p string, idx []int64) error {
			f, err := hdf5.OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			defer f.Close()
			return hdf5.Set(f, "/m", idx, 1.0)
		}},
		{"scidb", "x.scidb", arrays().column("v", []float64{1, 2, 3}), "a0", []int64{1, 0},
			`index [1,0] has 2 numbers, but the array has 1 dimension (shape [3]): give one number per dimension, as [0]`,
			func(p string, idx []int64) error {
				f, err := scidb.OpenFile(p, mmapfile.ReadWrite, scidbOptions("(double)"))
				require.NoError(t, err)
				defer f.Close()
				return scidb.Set(f, 0, idx, 1.0)
			}},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			sub := &subject{format: c.format, file: c.file}
			if c.format == "scidb" {
				sub.params = map[string]string{"scidb-format": "(double)"}
			}
			p := sub.write(t, t.TempDir(), c.src)
			check := func(how string, err error) {
				t.Helper()
				require.Error(t, err, how)
				assert.Contains(t, err.Error(), c.want, how)
				assert.Contains(t, err.Error(), filepath.Base(p), how)
				assert.True(t, errors.Is(err, layout.ErrIndexCount), "%s: %v does not wrap ErrIndexCount", how, err)
				assert.ErrorIs(t, err, mmapfile.ErrOutOfRange, how)
			}
			check(c.format+".Set", c.typed(p, c.idx))

			f, err := format.OpenFile(p, mmapfile.ReadWrite, sub.options(nil))
			require.NoError(t, err)
			defer f.Close()
			i, err := format.Find(f, c.rec)
			require.NoError(t, err)
			check("format.Set", format.Set(f, i, c.idx, 1.0))
			s, ok := f.(format.Setter)
			require.True(t, ok)
			check("SetText", s.SetText(i, c.idx, "1"))
		})
	}
}
