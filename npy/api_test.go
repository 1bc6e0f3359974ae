package npy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// copyGolden copies a golden file into dir.
func copyGolden(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func TestViewAliasesTheMapping(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.npy")
	want := []float64{1, 2, 3, 4, 5, 6}
	require.NoError(t, Save(p, []int64{2, 3}, layout.RowMajor, want))
	f, err := Open(p, nil)
	require.NoError(t, err)
	v, err := View[float64](f, "0")
	require.NoError(t, err)
	assert.Equal(t, want, v)
	reg := f.reg.Load().Bytes()
	a, _ := f.Lookup("0")
	assert.Equal(t, unsafeslice.Addr(reg[a.Offset:]), unsafeslice.AddrOf(v), "the view is the mapping at the data offset")
	c, err := Read[float64](f, "")
	require.NoError(t, err)
	assert.Equal(t, want, c)
	assert.NotEqual(t, unsafeslice.AddrOf(v), unsafeslice.AddrOf(c), "Read copies")
	require.NoError(t, f.Close())
	require.ErrorIs(t, f.Close(), mmapfile.ErrClosed)
	_, err = Read[float64](f, "0")
	require.ErrorIs(t, err, mmapfile.ErrClosed)

	// Read-write: writes through the view reach the file.
	w, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	v, err = View[float64](w, "0")
	require.NoError(t, err)
	v[4] = -10
	require.NoError(t, Set(w, "0", []int64{0, 1}, 20.5))
	require.NoError(t, w.Close())
	f, err = Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	c, err = Read[float64](f, "0")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 20.5, 3, 4, -10, 6}, c)
}

// TestViewRefusesWhatItCannotAlias: every refusal names the file and the
// copying call to use, and wraps the shared sentinel.
func TestViewRefusesWhatItCannotAlias(t *testing.T) {
	cases := []struct {
		file, name string
		view       func(f *File, name string) error
		want       error
	}{
		{"be-f8.npy", "0", viewAs[float64], mmapfile.ErrByteOrder},
		{"le-f8.npy", "0", viewAs[float32], mmapfile.ErrTypeMismatch},
		{"savez.npz", "x", viewAs[float64], mmapfile.ErrMisaligned}, // np.savez does not align
		{"savez-compressed.npz", "x", viewAs[float64], errors.ErrUnsupported},
		{"struct.npy", "a", viewAs[int32], errors.ErrUnsupported},
		{"M8s.npy", "0", viewAs[float64], mmapfile.ErrTypeMismatch},
		{"S5.npy", "0", viewAs[uint8], mmapfile.ErrTypeMismatch},
		{"f8-c.npy", "nope", viewAs[float64], format.ErrNoRecord},
	}
	for _, c := range cases {
		t.Run(c.file+"/"+c.name, func(t *testing.T) {
			p := filepath.Join("testdata", c.file)
			f, err := Open(p, nil)
			require.NoError(t, err)
			defer f.Close()
			err = c.view(f, c.name)
			require.ErrorIs(t, err, c.want)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, p, fe.File)
			if c.want != mmapfile.ErrTypeMismatch && c.want != format.ErrNoRecord {
				assert.Contains(t, err.Error(), "use Read")
			}
		})
	}
	b, err := os.ReadFile("testdata/le-f8.npy")
	require.NoError(t, err)
	r, err := NewReader(bytes.NewReader(b), int64(len(b)), nil)
	require.NoError(t, err)
	require.ErrorIs(t, viewAs[float64](r, "0"), errors.ErrUnsupported)
	x, err := Read[float64](r, "0")
	require.NoError(t, err)
	assert.Equal(t, -1.5, x[0])
}

func viewAs[T layout.Elem](f *File, name string) error {
	_, err := View[T](f, name)
	return err
}

// TestAlignedViews: every element type of a file this package writes, and
// of a stored member of an archive it writes, is viewed in place.
func TestAlignedViews(t *testing.T) {
	dir := t.TempDir()
	z, err := CreateZip(filepath.Join(dir, "a.npz"), nil)
	require.NoError(t, err)
	require.NoError(t, AddArray(z, "u1", []int64{3}, layout.RowMajor, []uint8{1, 2, 3}))
	require.NoError(t, AddArray(z, "c16", []int64{2}, layout.RowMajor, []complex128{1 + 2i, -3i}))
	require.NoError(t, AddArray(z, "h", []int64{1}, layout.RowMajor, []layout.Float16{layout.Float16From(1.5)}))
	require.NoError(t, AddArray(z, "b", []int64{2, 2}, layout.ColMajor, []bool{true, false, false, true}))
	require.NoError(t, z.Close())
	f, err := Open(filepath.Join(dir, "a.npz"), nil)
	require.NoError(t, err)
	defer f.Close()
	for _, a := range f.Arrays() {
		assert.Zero(t, a.Offset%64, a.Name)
	}
	c, err := View[complex128](f, "c16")
	require.NoError(t, err)
	assert.Equal(t, []complex128{1 + 2i, -3i}, c)
	h, err := View[layout.Float16](f, "h")
	require.NoError(t, err)
	assert.Equal(t, float32(1.5), h[0].Float32())
	bs, err := View[bool](f, "b")
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false, true}, bs)
	a, _ := f.Lookup("b")
	assert.True(t, a.FortranOrder)
}

func TestSetWritesTheFilesByteOrder(t *testing.T) {
	dir := t.TempDir()
	p := copyGolden(t, dir, "be-i4.npy")
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, Set(f, "0", []int64{1}, int32(0x01020304)))
	require.ErrorIs(t, Set(f, "0", []int64{4}, int32(1)), mmapfile.ErrOutOfRange)
	require.ErrorIs(t, Set(f, "0", []int64{1}, int64(1)), mmapfile.ErrTypeMismatch)
	require.NoError(t, f.Close())
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 2, 3, 4}, b[128+4:128+8], "big-endian on disk")
	g, err := Open(p, nil)
	require.NoError(t, err)
	defer g.Close()
	v, err := Read[int32](g, "0")
	require.NoError(t, err)
	assert.Equal(t, int32(0x01020304), v[1])
	require.ErrorIs(t, Set(g, "0", []int64{1}, int32(5)), mmapfile.ErrNotWritable)
}

// TestSetFieldsAndFortranIndexes: Set takes the logical (C-order) index,
// also for Fortran-order arrays and for fields.
func TestSetFieldsAndFortranIndexes(t *testing.T) {
	dir := t.TempDir()
	p := copyGolden(t, dir, "struct.npy")
	q := copyGolden(t, dir, "f8-f.npy")
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, Set(f, "a", []int64{2}, int32(-77)))
	require.NoError(t, Set(f, "b", []int64{1, 1}, 9.75)) // the >f8 (2,) subarray
	require.NoError(t, f.Close())
	f, err = Open(p, nil)
	require.NoError(t, err)
	a, err := Read[int32](f, "a")
	require.NoError(t, err)
	assert.Equal(t, []int32{1, -2, -77}, a)
	b, err := Read[float64](f, "b")
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, 1.5, 2.5, 9.75, -1, -2}, b)
	s, err := f.ReadStrings("c")
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "yz", "abc"}, s)
	d, err := f.ReadStrings("d")
	require.NoError(t, err)
	assert.Equal(t, []string{"p", "qr", ""}, d)
	require.NoError(t, f.Close())

	g, err := OpenFile(q, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, Set(g, "0", []int64{1, 0}, 100.0)) // x[1, 0]
	v, err := Read[float64](g, "0")
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 100, 0.25, 1, 0.5, 1.25}, v, "storage (Fortran) order")
	require.NoError(t, g.Close())
}

// TestCreateFillsThroughAView: Create is open_memmap(mode="w+"): the file
// appears at Close, byte-identical to np.save of the filled array.
func TestCreateFillsThroughAView(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "made.npy")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	h := Header{DType: DType{Kind: 'f', ItemSize: 4}, Shape: []int64{3, 2}, FortranOrder: true}
	f, err := Create(p, h, nil)
	require.NoError(t, err)
	v, err := View[float32](f, "0")
	require.NoError(t, err)
	for i := range v {
		v[i] = float32(i) + 0.5
	}
	old, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "old", string(old), "the target is untouched until Close")
	require.NoError(t, f.Close())
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	ref := filepath.Join(dir, "ref.npy")
	require.NoError(t, Save(ref, []int64{3, 2}, layout.ColMajor, []float32{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}))
	want, err := os.ReadFile(ref)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	if py := oracle.Find("numpy"); py != "" {
		out, err := oracle.Output(py, `
import sys, numpy as np
a = np.load(sys.argv[1]); m = np.lib.format.open_memmap(sys.argv[2], mode="w+", dtype="<f4", shape=(3, 2), fortran_order=True)
m[...] = a; m.flush(); del m
print(open(sys.argv[1], "rb").read() == open(sys.argv[2], "rb").read(), a.tolist())`, p, filepath.Join(dir, "numpy.npy"))
		require.NoError(t, err)
		assert.Equal(t, "True [[0.5, 3.5], [1.5, 4.5], [2.5, 5.5]]\n", out)
	}
}

func TestAppendGrowsInPlace(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		order layout.Order
		shape []int64
		add   int // slices added
	}{
		{"C rows", layout.RowMajor, []int64{2, 3}, 8},
		{"Fortran columns", layout.ColMajor, []int64{3, 2}, 9},
		{"1-D from empty", layout.RowMajor, []int64{0}, 1000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, "grow.npy")
			n, _ := layout.Count(c.shape)
			vals := make([]int16, n)
			for i := range vals {
				vals[i] = int16(i)
			}
			require.NoError(t, Save(p, c.shape, c.order, vals))
			before, _ := os.Stat(p)
			f, err := OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			axis := 0
			if c.order == layout.ColMajor {
				axis = len(c.shape) - 1
			}
			slice := int64(1)
			for i, d := range c.shape {
				if i != axis {
					slice *= d
				}
			}
			shape := append([]int64{}, c.shape...)
			for k := 0; k < c.add; k++ {
				more := make([]int16, slice)
				for i := range more {
					more[i] = int16(len(vals))
					vals = append(vals, int16(len(vals)))
				}
				require.NoError(t, Append(f, more))
				shape[axis]++
			}
			got, err := Read[int16](f, "0")
			require.NoError(t, err)
			assert.Equal(t, vals, got)
			if slice > 1 {
				require.ErrorIs(t, Append(f, make([]int16, slice+1)), mmapfile.ErrOutOfRange)
			}
			require.ErrorIs(t, Append(f, []float64{1}), mmapfile.ErrTypeMismatch)
			require.NoError(t, f.Close())
			// The same bytes np.save writes for the grown array (its
			// header length does not depend on the growth axis).
			ref := filepath.Join(dir, "ref.npy")
			require.NoError(t, Save(ref, shape, c.order, vals))
			want, _ := os.ReadFile(ref)
			have, _ := os.ReadFile(p)
			assert.Equal(t, want, have)
			g, err := Open(p, nil)
			require.NoError(t, err)
			a, _ := g.Lookup("0")
			assert.Equal(t, shape, a.Shape)
			assert.Equal(t, int64(len(want))-a.Size, a.Offset)
			assert.Equal(t, before.Size()-int64(2*n), a.Offset, "the header kept its length")
			require.NoError(t, g.Close())
		})
	}
}

// A failed append leaves the file as it was: a data write that fails, or
// a header write that fails after the data went out.
func TestAppendFailureLeavesTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.npy")
	require.NoError(t, Save(p, []int64{2, 2}, layout.RowMajor, []float64{1, 2, 3, 4}))
	orig, _ := os.ReadFile(p)
	for _, failAt := range []int{1, 2} {
		f, err := OpenFile(p, mmapfile.ReadWrite, nil)
		require.NoError(t, err)
		f.wr = &failingWriter{w: f.mf, failAt: failAt}
		err = Append(f, []float64{5, 6})
		require.Error(t, err)
		var fe *FormatError
		require.ErrorAs(t, err, &fe)
		got, _ := os.ReadFile(p)
		assert.Equal(t, orig, got, "failure at write %d", failAt)
		v, err := Read[float64](f, "0")
		require.NoError(t, err)
		assert.Equal(t, []float64{1, 2, 3, 4}, v)
		require.NoError(t, f.Close())
	}
	// No room in a header written without growth spaces (NumPy < 1.23
	// wrote none): the shape cannot lengthen, and nothing changes.
	q := filepath.Join(dir, "tight.npy")
	orig = npyBytes(1, header("'|u1'", "(9,)"), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	require.NoError(t, os.WriteFile(q, orig, 0o644))
	f, err := OpenFile(q, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	err = Append(f, []uint8{10})
	require.ErrorIs(t, err, ErrNoRoom)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(10), fe.Offset, "the header")
	require.NoError(t, f.Close())
	got, _ := os.ReadFile(q)
	assert.Equal(t, orig, got)
	// 0-d arrays have no axis to grow.
	z := copyGolden(t, dir, "f8-0d.npy")
	f, err = OpenFile(z, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.ErrorIs(t, Append(f, []float64{1}), errors.ErrUnsupported)
	require.NoError(t, f.Close())
}

type failingWriter struct {
	w      writerAt
	n      int
	failAt int
}

func (w *failingWriter) WriteAt(p []byte, off int64) (int, error) {
	w.n++
	if w.n == w.failAt {
		n, _ := w.w.WriteAt(p[:len(p)/2], off) // a torn write
		return n, io.ErrShortWrite
	}
	return w.w.WriteAt(p, off)
}

// TestBytesAfterTheDataAreKept: bytes after a .npy's data (what a writer
// killed between its data and header writes leaves, or 1,500 bytes
// anyone appended) are not part of the array: NumPy reads such a file as
// it is, and so does every open here, a read-write one included, which
// cuts nothing. An append writes its rows over them; a failed one puts
// them back.
func TestBytesAfterTheDataAreKept(t *testing.T) {
	dir := t.TempDir()
	for _, extra := range [][]byte{{9, 9, 9, 9, 9}, bytes.Repeat([]byte{0}, 1500), bytes.Repeat([]byte{7}, 40)} {
		p := filepath.Join(dir, "x.npy")
		require.NoError(t, Save(p, []int64{4}, layout.RowMajor, []float64{0, 1, 2, 3}))
		orig, _ := os.ReadFile(p)
		withExtra := append(append([]byte{}, orig...), extra...)
		require.NoError(t, os.WriteFile(p, withExtra, 0o644))
		if py := oracle.Find("numpy"); py != "" {
			out, err := oracle.Output(py, "import sys, numpy as np; print(np.load(sys.argv[1]).tolist(), np.load(sys.argv[1], mmap_mode='r+').tolist())", p)
			require.NoError(t, err)
			assert.Equal(t, "[0.0, 1.0, 2.0, 3.0] [0.0, 1.0, 2.0, 3.0]\n", out, "NumPy reads the file with %d bytes after the data", len(extra))
		}
		f, err := Open(p, nil)
		require.NoError(t, err)
		v, err := Read[float64](f, "0")
		require.NoError(t, err)
		assert.Equal(t, []float64{0, 1, 2, 3}, v)
		assert.NoError(t, f.Damage())
		require.NoError(t, f.Close())

		w, err := OpenFile(p, mmapfile.ReadWrite, nil)
		require.NoError(t, err)
		assert.NoError(t, w.Damage())
		require.Error(t, Set(w, "0", []int64{7}, 5.0), "index out of range")
		w.wr = &failingWriter{w: w.mf, failAt: 1}
		require.Error(t, Append(w, []float64{4, 5, 6}))
		require.NoError(t, w.Close())
		got, _ := os.ReadFile(p)
		require.Equal(t, withExtra, got, "%d bytes after the data: failed calls change nothing", len(extra))

		w, err = OpenFile(p, mmapfile.ReadWrite, nil)
		require.NoError(t, err)
		require.NoError(t, Append(w, []float64{4, 5}))
		require.NoError(t, w.Close())
		got, _ = os.ReadFile(p)
		dt, _ := DTypeOf(layout.F64)
		gh := Header{DType: dt, Shape: []int64{6}}
		grown, _ := gh.Encode()
		want := append(append(append([]byte{}, grown...), orig[len(grown):]...), 0, 0, 0, 0, 0, 0, 0x10, 0x40, 0, 0, 0, 0, 0, 0, 0x14, 0x40)
		if len(extra) > 16 {
			want = append(want, extra[16:]...)
		}
		assert.Equal(t, want, got, "%d bytes after the data: the append writes over them", len(extra))
	}
}

// TestConcurrentReadersWhileAppending: copies and views from many
// goroutines while the same File appends (run with -race).
func TestConcurrentReadersWhileAppending(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, Save(p, []int64{0, 4}, layout.RowMajor, []float64{}))
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	defer f.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				v, err := Read[float64](f, "0")
				if err != nil {
					t.Error(err)
					return
				}
				for i, x := range v {
					if x != float64(i) {
						t.Errorf("element %d is %v", i, x)
						return
					}
				}
				if w, err := View[float64](f, "0"); err != nil || len(w)%4 != 0 {
					t.Error(err)
					return
				}
			}
		}()
	}
	for r := 0; r < 300; r++ {
		row := []float64{float64(4 * r), float64(4*r + 1), float64(4*r + 2), float64(4*r + 3)}
		require.NoError(t, Append(f, row))
	}
	close(stop)
	wg.Wait()
	a, _ := f.Lookup("0")
	assert.Equal(t, []int64{300, 4}, a.Shape)
}

func TestParseDType(t *testing.T) {
	for in, want := range map[string]string{"float64": "<f8", ">i4": ">i4", "datetime64[s]": "<M8[s]", "S5": "|S5", "<U3": "<U3", "i4,f8": "[('f0', '<i4'), ('f1', '<f8')]", "?": "|b1", "complex64": "<c8"} {
		d, err := ParseDType(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, d.String(), in)
	}
	for _, in := range []string{"O", "object", "<f16", "S0", "float", "q9"} {
		_, err := ParseDType(in)
		if in == "float" {
			require.NoError(t, err)
			continue
		}
		require.Error(t, err, in)
	}
	_, err := ParseDType("O")
	require.ErrorIs(t, err, ErrObject)
}
