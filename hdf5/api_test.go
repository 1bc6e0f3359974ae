package hdf5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
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
	if layout.HostOrder() != binary.LittleEndian {
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

// A bool byte other than 0 and 1 is an error naming it, unless Lenient
// (h5py hands out the enum's bytes).
func TestBoolBytes(t *testing.T) {
	p := copyRef(t, "tree_old.h5")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[6164] = 2 // /x_tail's first element
	require.NoError(t, os.WriteFile(p, b, 0o644))
	f, err := Open(p, nil)
	require.NoError(t, err)
	_, err = Read[bool](f, "/x_tail")
	assert.ErrorIs(t, err, mmapfile.ErrInvalidBool)
	require.NoError(t, f.Close())
	f, err = Open(p, &Options{Lenient: true})
	require.NoError(t, err)
	v, err := Read[bool](f, "/x_tail")
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false}, v)
	require.NoError(t, f.Close())
}

// Types h5py writes beyond numbers: a compound with a variable-length
// string member and a nested compound (listed, refused naming the
// member), an enumeration over u16 (its base type), opaque bytes (hex),
// and attributes of each kind.
func TestH5pyTypes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "types.h5")
	oracle.Run(t, []string{"h5py", "numpy"}, `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'w') as f:
    s = h5py.string_dtype()
    inner = np.dtype([('a', '<i2'), ('b', '<f4')])
    dt = np.dtype([('name', s), ('n', '>i4'), ('in', inner)])
    d = f.create_dataset('c', (3,), dtype=dt)
    d[...] = np.array([('x', 1, (1, 2.5)), ('yy', -2, (3, 4.5)), ('', 3, (5, 6.5))], dtype=dt)
    e = h5py.enum_dtype({'LOW': 0, 'HIGH': 1000}, basetype='<u2')
    f.create_dataset('e', data=np.array([0, 1000, 0], dtype='<u2'), dtype=e)
    f.create_dataset('o', data=np.array([b'\x01\x02', b'\xff\x00'], dtype='V2'))
    f.attrs['nums'] = np.array([[1, 2], [3, 4]], dtype='<i8')
    f.attrs['one'] = np.array([1.5])
    f.attrs['nan'] = np.float32('nan')
    f.attrs['s'] = 'text'
    f.attrs['flag'] = True
    f.create_dataset('z', data=h5py.Empty('<f8'))
`, p)
	f, err := format.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	var names, types []string
	var kinds []format.Kind
	for _, r := range f.Records() {
		names, types, kinds = append(names, r.Name), append(types, r.TypeString()), append(kinds, r.Kind)
	}
	assert.Equal(t, []string{"/c/name", "/c/n", "/c/in", "/e", "/o", "/z"}, names)
	assert.Equal(t, []string{"string", "i32", "compound", "u16", "void<2>", "f64"}, types)
	assert.Equal(t, []format.Kind{format.KindColumn, format.KindColumn, format.KindOpaque, format.KindArray, format.KindOpaque, format.KindArray}, kinds)
	empty, err := format.ReadAll(f, 5, layout.RowMajor, binary.LittleEndian)
	require.NoError(t, err, "h5py's Empty: no elements")
	assert.Empty(t, empty)
	assert.Equal(t, []int64{0}, f.Records()[5].Shape)
	sel, err := format.Select(f, "/c/name", "/c/n")
	require.NoError(t, err)
	require.NoError(t, format.ScanTable(sel, 10, func(_ int64, cols []format.Column) error {
		assert.Equal(t, []string{"x", "yy", ""}, cols[0].Values)
		assert.Equal(t, []int32{1, -2, 3}, cols[1].Values)
		return nil
	}))
	err = f.ReadArray(2, make([]byte, 8), 0, layout.RowMajor, binary.LittleEndian)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Contains(t, err.Error(), "/c/in")
	e, err := format.ReadAll(f, 3, layout.RowMajor, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 0, 0xe8, 3, 0, 0}, e)
	var hex []string
	require.NoError(t, f.(format.TextReader).ReadText(4, func(b []string) error { hex = append(hex, b...); return nil }))
	assert.Equal(t, []string{"0x0102", "0xff00"}, hex)
	root := f.(format.FileInfo).FileInfo()["groups"].([]map[string]any)[0]["attributes"]
	assert.Equal(t, map[string]any{"nums": []any{[]any{int64(1), int64(2)}, []any{int64(3), int64(4)}}, "one": []any{1.5},
		"nan": "nan", "s": "text", "flag": true}, root)
}

// Readers in several goroutines read what one reads alone: chunks,
// tables, variable-length strings (through the kept heap collections).
func TestConcurrentReads(t *testing.T) {
	for _, name := range []string{"chunked_v4.h5", "text.h5", "records.h5"} {
		f, err := format.Open(filepath.Join(testdata, name), nil)
		if errors.Is(err, os.ErrNotExist) {
			t.Skip("no reference files")
		}
		require.NoError(t, err)
		readAll := func() []string {
			var out []string
			for i, r := range f.Records() {
				if r.Type.Valid() {
					b, err := format.ReadAll(f, i, layout.RowMajor, binary.LittleEndian)
					assert.NoError(t, err)
					out = append(out, string(b))
					continue
				}
				assert.NoError(t, f.(format.TextReader).ReadText(i, func(b []string) error {
					out = append(out, strings.Join(b, "\x00"))
					return nil
				}))
			}
			return out
		}
		want := readAll()
		done := make(chan []string)
		for k := 0; k < 4; k++ {
			go func() { done <- readAll() }()
		}
		for k := 0; k < 4; k++ {
			assert.Equal(t, want, <-done, name)
		}
		require.NoError(t, f.Close())
	}
}

// Select finds records through links, for a few names and for many.
func TestSelectThroughLinks(t *testing.T) {
	f, err := format.Open(filepath.Join(testdata, "tree_old.h5"), nil)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no reference files")
	}
	require.NoError(t, err)
	defer f.Close()
	for _, n := range []int{1, 9} {
		var names []string
		for k := 0; k < n; k++ {
			names = append(names, []string{"/p/branch", "shortcut", "/x_tail"}[k%3])
		}
		sel, err := format.Select(f, names...)
		require.NoError(t, err, "%d names", n)
		recs := sel.Records()
		assert.Equal(t, "/alias", recs[0].Name)
		if n > 1 {
			assert.Equal(t, "/p/q/leaf", recs[1].Name)
		}
		_, err = format.Select(f, append(names, "/broken")...)
		assert.ErrorIs(t, err, format.ErrNoRecord, "%d names", n)
		assert.Contains(t, err.Error(), "dangling")
	}
}

// A MATLAB v7.3 MAT-file (HDF5 after a 512-byte user block that starts
// "MATLAB 7.3 MAT-file") is detected from its bytes.
func TestMatlabDetected(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.mat")
	oracle.Run(t, []string{"h5py", "numpy"}, `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'w', userblock_size=512) as f:
    f.create_dataset('x', data=np.arange(6, dtype='<f8').reshape(2, 3))
with open(sys.argv[1], 'r+b') as f:
    f.write(b'MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Fri Nov 27 00:00:00 2026 HDF5 schema 1.00 .')
`, p)
	f, err := format.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "hdf5", f.Format())
	r := f.Records()[0]
	assert.Equal(t, "/x", r.Name)
	b, err := format.ReadAll(f, 0, layout.RowMajor, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, []any{0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, values(layout.F64, b))
}

// HDF5 files with user blocks of 1024 and 4096 bytes (h5py's
// userblock_size) are detected from their bytes under a name that says
// nothing, and read at the offsets h5py gives.
func TestUserBlockDetected(t *testing.T) {
	dir := t.TempDir()
	out := oracle.Run(t, []string{"h5py", "numpy"}, `
import sys, h5py, numpy as np
for size in (1024, 4096):
    name = '%s/ub%d.dat' % (sys.argv[1], size)
    with h5py.File(name, 'w', userblock_size=size) as f:
        f.create_dataset('x', data=np.arange(6, dtype='<f8').reshape(2, 3) + size)
    with open(name, 'r+b') as f:
        f.write(b'not a signature: a user block of %d bytes' % size)
    with h5py.File(name, 'r') as f:
        print(size, f['x'].id.get_offset())
`, dir)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var size, offset int64
		_, err := fmt.Sscan(line, &size, &offset)
		require.NoError(t, err, line)
		p := filepath.Join(dir, fmt.Sprintf("ub%d.dat", size))
		ff, err := format.Detect(p, nil)
		require.NoError(t, err)
		assert.Equal(t, "hdf5", ff.Name)
		f, err := format.Open(p, nil)
		require.NoError(t, err)
		assert.Equal(t, offset, f.Records()[0].Offset)
		b, err := format.ReadAll(f, 0, layout.RowMajor, binary.LittleEndian)
		require.NoError(t, err)
		s := float64(size)
		assert.Equal(t, []any{s, s + 1, s + 2, s + 3, s + 4, s + 5}, values(layout.F64, b))
		require.NoError(t, f.Close())
	}
}

// A group linked into itself is walked once (its second path is a link)
// and names through it resolve; soft links that lead in a circle are an
// error, not a hang.
func TestLinkCycles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "loop.h5")
	oracle.Run(t, []string{"h5py", "numpy"}, `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'w', libver='latest') as f:
    g = f.create_group('g')
    g['x'] = np.arange(3, dtype='<i4')
    g['loop'] = g
    f['a'] = h5py.SoftLink('/b')
    f['b'] = h5py.SoftLink('/a')
`, p)
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	var names []string
	for _, d := range f.Datasets() {
		names = append(names, d.Name)
	}
	assert.Equal(t, []string{"/g/x"}, names)
	assert.Equal(t, []Link{{Name: "/a", Soft: "/b"}, {Name: "/b", Soft: "/a"}, {Name: "/g/loop", Hard: "/g"}}, f.Links())
	v, err := Read[int32](f, "/g/loop/loop/x")
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 1, 2}, v)
	_, err = Read[int32](f, "/a")
	assert.ErrorIs(t, err, ErrCycle)
}

// Ranges that start and end inside an array datatype's element read the
// logical elements asked for; a table scanned whole; UserBlock and Groups.
func TestPartialElements(t *testing.T) {
	f, err := format.Open(filepath.Join(testdata, "oldstyle_numbers.h5"), nil)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("no reference files")
	}
	require.NoError(t, err)
	defer f.Close()
	i, err := format.Find(f, "/vec3") // f64 [2][3] as 2 elements of f64[3]
	require.NoError(t, err)
	all, err := format.ReadAll(f, i, layout.RowMajor, binary.BigEndian)
	require.NoError(t, err)
	for first := int64(0); first < 6; first++ {
		for n := int64(0); first+n <= 6; n++ {
			dst := make([]byte, 8*n)
			require.NoError(t, f.ReadArray(i, dst, first, layout.RowMajor, binary.BigEndian))
			assert.Equal(t, all[8*first:8*(first+n)], dst, "[%d, %d)", first, first+n)
		}
	}
	h := f.(*File)
	assert.Equal(t, int64(0), h.UserBlock())
	assert.Equal(t, "/", h.Groups()[0].Name)

	u, err := Open(filepath.Join(testdata, "userblock_1k.h5"), nil)
	require.NoError(t, err)
	defer u.Close()
	assert.Equal(t, int64(1024), u.UserBlock())

	r, err := format.Open(filepath.Join(testdata, "records.h5"), nil)
	require.NoError(t, err)
	defer r.Close()
	sel, err := format.Select(r, "/pair/r", "/pair/i")
	require.NoError(t, err)
	one, err := format.Open(filepath.Join(testdata, "records.h5"), nil)
	require.NoError(t, err)
	defer one.Close()
	// The whole file is several tables: a scan of all of them is refused.
	err = one.(format.TableScanner).ScanTable(10, func(int64, []format.Column) error { return nil })
	assert.ErrorIs(t, err, format.ErrNotRepresentable)
	require.NoError(t, format.ScanTable(sel, 10, func(_ int64, cols []format.Column) error {
		assert.Equal(t, []float64{1}, cols[0].Values)
		assert.Equal(t, []float32{2}, cols[1].Values)
		return nil
	}))
}

// A superblock extension is read (paged file space, as h5py makes it).
func TestSuperblockExtension(t *testing.T) {
	dir := t.TempDir()
	oracle.Run(t, []string{"h5py", "numpy"}, `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1] + '/paged.h5', 'w', libver='latest', fs_strategy='page') as f:
    f['x'] = np.arange(5, dtype='<i8')
`, dir)
	f, err := Open(filepath.Join(dir, "paged.h5"), nil)
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, f.m.undefined(f.sb.ext), "the file has a superblock extension")
	v, err := Read[int64](f, "/x")
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 2, 3, 4}, v)

	// Its first message made a shared message table (checksum redone):
	// refused, naming the message.
	oh, err := readObjectHeader(f.m, f.sb.ext)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "paged.h5"))
	require.NoError(t, err)
	require.Zero(t, b[oh.at+5]&0x04, "no creation order in the messages")
	b[oh.msgs[0].at-4] = msgSharedTable
	resealHeader(b, oh)
	_, err = NewReader(bytes.NewReader(b), int64(len(b)), nil)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Contains(t, err.Error(), "shared message table")
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, oh.msgs[0].at, fe.Offset)
}

// Files with 4-byte offsets and lengths (both superblock generations)
// read as h5py reads them.
func TestSmallOffsets(t *testing.T) {
	dir := t.TempDir()
	oracle.Run(t, []string{"h5py", "numpy"}, `
import sys, h5py, numpy as np
for name, latest in (('small0.h5', False), ('small3.h5', True)):
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_sizes(4, 4)
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    if latest:
        fapl.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
    fid = h5py.h5f.create((sys.argv[1] + '/' + name).encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl)
    with h5py.File(fid) as f:
        f['g/x'] = np.arange(6, dtype='<i2').reshape(2, 3)
        f.create_dataset('c', data=np.arange(10, dtype='<f4'), chunks=(3,), compression='gzip')
        f.create_dataset('u', shape=(4,), dtype='<i4', chunks=(2,), maxshape=(None,), fillvalue=9)
        f['s'] = h5py.SoftLink('/g/x')
        f.attrs['a'] = np.int32(-3)
        f.attrs['s'] = 'text'
`, dir)
	for _, name := range []string{"small0.h5", "small3.h5"} {
		f, err := Open(filepath.Join(dir, name), nil)
		require.NoError(t, err, name)
		x, err := Read[int16](f, "/s")
		require.NoError(t, err, name)
		assert.Equal(t, []int16{0, 1, 2, 3, 4, 5}, x, name)
		c, err := Read[float32](f, "/c")
		require.NoError(t, err, name)
		assert.Equal(t, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, c, name)
		u, err := Read[int32](f, "/u")
		require.NoError(t, err, name)
		assert.Equal(t, []int32{9, 9, 9, 9}, u, name)
		assert.Equal(t, int64(-3), f.Groups()[0].Attributes["a"], name)
		assert.Equal(t, "text", f.Groups()[0].Attributes["s"], name)
		require.NoError(t, f.Close())
	}
}

// resealHeader writes the checksum of the first block of the version 2
// object header oh after its bytes in b were changed.
func resealHeader(b []byte, oh *objectHeader) {
	flags := b[oh.at+5]
	n := int64(6)
	if flags&0x20 != 0 {
		n += 16
	}
	if flags&0x10 != 0 {
		n += 4
	}
	w := int64(1) << (flags & 3)
	var size int64
	for k := w - 1; k >= 0; k-- {
		size = size<<8 | int64(b[oh.at+n+k])
	}
	end := oh.at + n + w + size
	binary.LittleEndian.PutUint32(b[end:], h5.Checksum(b[oh.at:end]))
}
