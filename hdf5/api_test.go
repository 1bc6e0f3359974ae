package hdf5

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// copyRef copies a reference file into a directory of the test's, writable.
func copyRef(t *testing.T, name string) string {
	t.Helper()
	b := reference(t, name)
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// View aliases contiguous host-order data at h5py's get_offset(); what it
// cannot alias is refused naming Read, which copies.
func TestView(t *testing.T) {
	if mmapfile.HostOrder() != binary.LittleEndian {
		t.Skip("big-endian host: the reference files are little-endian")
	}
	f, err := Open(filepath.Join(testdata, "surface.h5"), nil)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no reference files")
	}
	require.NoError(t, err)
	defer f.Close()
	v, err := View[float64](f, "height")
	require.NoError(t, err)
	require.Len(t, v, 256*384)
	ds, err := f.Lookup("/height")
	require.NoError(t, err)
	assert.Equal(t, int64(2048), ds.Offset)
	gz, err := Read[float64](f, "/height_gz")
	require.NoError(t, err)
	assert.Equal(t, gz, v, "the chunked, gzipped copy reads the same values")
	part := make([]float64, 500)
	require.NoError(t, ReadAt(f, "/height_gz", 1000, part))
	assert.Equal(t, v[1000:1500], part)

	_, err = View[float64](f, "/height_gz")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Regexp(t, `use Read\b`, err.Error())
	_, err = View[float32](f, "/height")
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	assert.Contains(t, err.Error(), "surface.h5")

	g, err := Open(filepath.Join(testdata, "oldstyle_numbers.h5"), nil)
	require.NoError(t, err)
	defer g.Close()
	_, err = View[int64](g, "/num/be_i8")
	assert.ErrorIs(t, err, mmapfile.ErrByteOrder)
	assert.Regexp(t, `use Read\b`, err.Error())
	be, err := Read[int64](g, "/num/be_i8")
	require.NoError(t, err)
	assert.Equal(t, []int64{-2892742277569597975, 385638665470252009, -9020554957610071153, -6133110812972586330}, be)
	_, err = View[float64](g, "/num/le_f8") // at 2632: aligned for 8
	require.NoError(t, err)
	_, err = View[int32](g, "/num/le_i4") // at 2443: not aligned for 4
	assert.ErrorIs(t, err, mmapfile.ErrMisaligned)
	_, err = View[float64](g, "/small_compact")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	fill, err := Read[uint16](g, "/never_written")
	require.NoError(t, err)
	assert.Equal(t, []uint16{7, 7, 7, 7, 7, 7}, fill)
	_, err = View[uint16](g, "/never_written")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	vec, err := Read[float64](g, "/vec3") // an array datatype's elements
	require.NoError(t, err)
	assert.Len(t, vec, 6)
}

// Set writes in place what h5py then reads: contiguous data and an
// unfiltered chunk; compact data, filtered chunks and a read-only file are
// refused with the file unchanged.
func TestSet(t *testing.T) {
	p := copyRef(t, "chunked_v1btree.h5")
	before, err := os.ReadFile(p)
	require.NoError(t, err)
	ro, err := Open(p, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, Set(ro, "/raw", []int64{4, 4}, float32(7.5)), mmapfile.ErrNotWritable)
	require.NoError(t, ro.Close())

	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	err = Set(f, "/deflate", []int64{0, 0}, float64(1))
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Contains(t, err.Error(), "unchanged")
	err = Set(f, "/holes", []int64{0}, int32(1)) // a chunk never written
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.ErrorIs(t, Set(f, "/raw", []int64{6, 0}, float32(1)), mmapfile.ErrOutOfRange)
	after, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, before, after, "refused sets change nothing")

	require.NoError(t, Set(f, "/raw", []int64{4, 4}, float32(7.5)))
	require.NoError(t, Set(f, "/holes", []int64{7}, int32(-42)))
	got, err := Read[float32](f, "/raw")
	require.NoError(t, err)
	assert.Equal(t, float32(7.5), got[4*6+4])
	require.NoError(t, f.Close())

	out := oracle.Run(t, []string{"h5py"}, `
import sys, h5py
with h5py.File(sys.argv[1], 'r') as f:
    print(float(f['raw'][4, 4]), int(f['holes'][7]))
`, p)
	assert.Equal(t, "7.5 -42", strings.TrimSpace(out))
}

// The columns of a compound dataset are a table of their own: a
// selection of them scans that dataset alone, whatever else the file
// holds; arrays read in column-major order too.
func TestTablesAndOrders(t *testing.T) {
	f, err := format.Open(filepath.Join(testdata, "records.h5"), nil)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no reference files")
	}
	require.NoError(t, err)
	defer f.Close()
	sel, err := format.Select(f, "/rows/label", "/rows/count")
	require.NoError(t, err)
	var labels []string
	var counts []uint16
	require.NoError(t, format.ScanTable(sel, 2, func(first int64, cols []format.Column) error {
		labels = append(labels, cols[0].Values.([]string)...)
		counts = append(counts, cols[1].Values.([]uint16)...)
		return nil
	}))
	assert.Equal(t, []string{"north", "", "a,b", `x"y`, "sixsix"}, labels)
	assert.Equal(t, []uint16{0, 1, 65535, 7, 300}, counts)
	mixed, err := format.Select(f, "/rows/count", "/pair/r")
	require.NoError(t, err)
	assert.ErrorIs(t, format.ScanTable(mixed, 10, func(int64, []format.Column) error { return nil }), format.ErrNotRepresentable)

	// /rows/pos is f64 [5][2]: column-major is its transpose.
	i, err := format.Find(f, "/rows/pos")
	require.NoError(t, err)
	col, err := format.ReadAll(f, i, layout.ColMajor, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, []any{-4.5, -2.5, -0.5, 1.5, 3.5, -3.5, -1.5, 0.5, 2.5, 4.5}, values(layout.F64, col))

	g, err := format.Open(filepath.Join(testdata, "chunked_v1btree.h5"), nil)
	require.NoError(t, err)
	defer g.Close()
	k, err := format.Find(g, "/raw")
	require.NoError(t, err)
	row, err := format.ReadAll(g, k, layout.RowMajor, binary.BigEndian)
	require.NoError(t, err)
	cm, err := format.ReadAll(g, k, layout.ColMajor, binary.BigEndian)
	require.NoError(t, err)
	for r := 0; r < 6; r++ {
		for c := 0; c < 6; c++ {
			assert.Equal(t, row[(r*6+c)*4:(r*6+c+1)*4], cm[(c*6+r)*4:(c*6+r+1)*4], "[%d,%d]", r, c)
		}
	}
}
