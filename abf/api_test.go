package abf

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func roundTrip[T Elem](t *testing.T, dims []int64, vals []T) {
	t.Helper()
	tt := layout.TypeOf[T]()
	for _, format := range []Format{FormatA, FormatC} {
		name := fmt.Sprintf("%v/%v/%v", tt, format, dims)
		data := build(t, format, func(f *File) { must(Write(f, "k", dims, vals)) })
		f, _ := openBytes(t, data, "r")
		rec, ok := f.Lookup("k")
		require.True(t, ok, name)
		assert.Equal(t, tt, rec.Type, name)
		assert.Equal(t, dims, rec.Shape, name)
		assert.Equal(t, int64(0), rec.Offset%int64(tt.Size()), name)
		v, err := View[T](f, "k")
		require.NoError(t, err, name)
		assert.Equal(t, vals, v, name)
		if len(v) > 0 {
			// The view aliases the mapping: its address is the payload's.
			raw, err := f.ViewBytes("k")
			require.NoError(t, err)
			assert.Equal(t, unsafeslice.Addr(raw), unsafeslice.AddrOf(v), name)
		}
		r, err := Read[T](f, "k")
		require.NoError(t, err, name)
		assert.Equal(t, vals, r, name)
		g, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
		require.NoError(t, err)
		r, err = Read[T](g, "k")
		require.NoError(t, err, name)
		assert.Equal(t, vals, r, name)
	}
}

func TestRoundTripEveryType(t *testing.T) {
	roundTrip(t, []int64{3}, []int8{-128, 0, 127})
	roundTrip(t, []int64{3}, []uint8{0, 1, 255})
	roundTrip(t, []int64{3}, []int16{math.MinInt16, 0, math.MaxInt16})
	roundTrip(t, []int64{1, 2}, []uint16{0, math.MaxUint16})
	roundTrip(t, []int64{2}, []int32{math.MinInt32, math.MaxInt32})
	roundTrip(t, []int64{2}, []uint32{0, math.MaxUint32})
	roundTrip(t, []int64{2}, []int64{math.MinInt64, math.MaxInt64})
	roundTrip(t, []int64{2}, []uint64{0, math.MaxUint64})
	roundTrip(t, []int64{3}, []layout.Float16{0x3C00, 0xFC00, 0x7E01})
	roundTrip(t, []int64{2, 2}, []float32{1, float32(math.Inf(-1)), -0.5, math.MaxFloat32})
	roundTrip(t, []int64{2, 1, 1}, []float64{math.Pi, -math.SmallestNonzeroFloat64})
	roundTrip(t, []int64{2}, []bool{true, false})
	roundTrip(t, []int64{2}, []layout.Int128{{Lo: 1, Hi: math.MinInt64}, {Lo: math.MaxUint64, Hi: math.MaxInt64}})
	roundTrip(t, []int64{1}, []layout.Uint128{{Lo: 5, Hi: math.MaxUint64}})
	roundTrip(t, []int64{2}, []layout.Char{0xF296A1A0, 0x12345678})
	roundTrip(t, []int64{}, []float64{1.5})
	roundTrip(t, []int64{0}, []int64{})
	roundTrip(t, []int64{2, 0, 3}, []layout.Int128{})
}

func TestBoolArrayAndBitArray(t *testing.T) {
	vals := []bool{true, false, false, true, true}
	data := build(t, FormatC, func(f *File) {
		must(Write(f, "a", []int64{5}, vals))
		b, err := PackBits([]int64{5}, vals)
		must(err)
		must(f.WriteBits("b", b))
	})
	f, _ := openBytes(t, data, "r")
	recs := f.Entries()
	assert.Equal(t, "Array{Bool,1}", recs[0].TypeString)
	assert.Equal(t, "BitArray{1}", recs[1].TypeString)
	for _, k := range []string{"a", "b"} {
		got, err := Read[bool](f, k)
		require.NoError(t, err)
		assert.Equal(t, vals, got, k)
	}
	_, err := View[bool](f, "b")
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)

	// A Bool byte other than 0/1 is refused by views and strict reads.
	bad := append([]byte{}, data...)
	bad[recs[0].Offset+2] = 7
	g, _ := openBytes(t, bad, "r")
	_, err = View[bool](g, "a")
	requireFormatErr(t, err, recs[0].Offset+2, mmapfile.ErrInvalidBool)
	_, err = Read[bool](g, "a")
	requireFormatErr(t, err, recs[0].Offset+2, nil)
	h, err := openMode(tempFile(t, bad), "r", &Options{Lenient: true})
	require.NoError(t, err)
	got, err := Read[bool](h, "a")
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true, true, true}, got)
	h.Close()
}

func TestReadAt(t *testing.T) {
	x := make([]float64, 100)
	for i := range x {
		x[i] = float64(i)
	}
	bits := make([]bool, 130)
	for i := range bits {
		bits[i] = i%3 == 0
	}
	data := build(t, FormatC, func(f *File) {
		must(Write(f, "x", []int64{10, 10}, x))
		b, _ := PackBits([]int64{130}, bits)
		must(f.WriteBits("b", b))
	})
	for _, f := range []*File{func() *File { f, _ := openBytes(t, data, "r"); return f }(), must2(NewReader(bytes.NewReader(data), int64(len(data)), nil))} {
		dst := make([]float64, 7)
		require.NoError(t, ReadAt(f, "x", 93, dst))
		assert.Equal(t, x[93:100], dst)
		assert.Error(t, ReadAt(f, "x", 94, dst))
		assert.Error(t, ReadAt(f, "x", -1, dst[:1]))
		bdst := make([]bool, 70)
		require.NoError(t, ReadAt(f, "b", 60, bdst))
		assert.Equal(t, bits[60:130], bdst)
		assert.ErrorIs(t, ReadAt(f, "x", 0, make([]float32, 1)), mmapfile.ErrTypeMismatch)
	}
}

func must2[T any](v T, err error) T {
	must(err)
	return v
}

func TestNewReaderRefusesViews(t *testing.T) {
	data := unhex(tv1Hex)
	f, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
	require.NoError(t, err)
	_, err = View[float64](f, "x")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = f.ViewBits("b")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = f.ViewBytes("b")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.ErrorIs(t, Write(f, "y", []int64{1}, []int8{1}), mmapfile.ErrNotWritable)
	require.NoError(t, f.Close())
	_, err = Read[float64](f, "x")
	assert.ErrorIs(t, err, mmapfile.ErrClosed)
	assert.ErrorIs(t, f.Close(), mmapfile.ErrClosed)
}

func TestArrays(t *testing.T) {
	f, _ := openBytes(t, build(t, FormatC, func(f *File) {
		readmeFile1(f)
		must(f.WriteString("s", "hi"))
	}), "r")
	recs := f.Records()
	require.Len(t, recs, 5)
	assert.Equal(t, layout.Array{Name: "ζ!/b", Type: layout.F64, Shape: []int64{3, 5}, Order: layout.ColMajor, Offset: 296, Size: 120}, recs[2].Array)
	assert.NoError(t, recs[2].Check(480))
	assert.Equal(t, layout.Bool, recs[3].Type)
	assert.Equal(t, "bits", recs[3].TypeName)
	assert.Equal(t, "bits", f.Entries()[3].TypeName())
	assert.Equal(t, "string", f.Entries()[4].TypeName())
	assert.Equal(t, "char", f.Entries()[1].TypeName())
}

func TestAppendsKeepViewsAndLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.abf")
	f, err := openMode(p, "w+", nil)
	require.NoError(t, err)
	defer f.Close()
	_, err = openMode(p, "r+", nil)
	assert.ErrorIs(t, err, mmapfile.ErrLocked)
	require.NoError(t, Write(f, "a", []int64{4}, []int64{1, 2, 3, 4}))
	a, err := View[int64](f, "a")
	require.NoError(t, err)
	for i := 0; i < 50; i++ {
		require.NoError(t, Write(f, fmt.Sprint("k", i), []int64{1000}, make([]float64, 1000)))
	}
	assert.Equal(t, []int64{1, 2, 3, 4}, a)
	a[0] = 10
	again, err := Read[int64](f, "a")
	require.NoError(t, err)
	assert.Equal(t, int64(10), again[0])
}

func TestConcurrentUse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.abf")
	f, err := openMode(p, "w+", nil)
	require.NoError(t, err)
	require.NoError(t, Write(f, "base", []int64{3}, []float64{1, 2, 3}))
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				assert.NoError(t, Write(f, fmt.Sprintf("w%d-%d", w, i), []int64{2}, []int32{int32(w), int32(i)}))
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				v, err := View[float64](f, "base")
				assert.NoError(t, err)
				assert.Equal(t, 2.0, v[1])
				for _, r := range f.Entries() {
					if r.Type == layout.I32 {
						x, err := Read[int32](f, r.Name)
						assert.NoError(t, err)
						assert.Equal(t, fmt.Sprintf("w%d-%d", x[0], x[1]), r.Name)
					}
				}
			}
		}()
	}
	wg.Wait()
	assert.Len(t, f.Entries(), 101)
	require.NoError(t, f.Close())
	g, err := Open(p, nil)
	require.NoError(t, err)
	assert.Len(t, g.Entries(), 101)
	g.Close()
}

func TestFormatErrorText(t *testing.T) {
	e := errAt("x.abf", 93, mmapfile.ErrTruncated, `record "b": dimension 1 truncated (8 bytes needed, 7 left)`)
	assert.Equal(t, `abf: x.abf: offset 93: record "b": dimension 1 truncated (8 bytes needed, 7 left): file is truncated: unexpected EOF`, e.Error())
	e = errAt("", -1, os.ErrPermission, "boom")
	assert.Equal(t, "abf: boom: permission denied", e.Error())
}

// TestOpenFileModes: mmapfile's mode says read-only or read-write;
// Options.Mode chooses among Julia's modes, and the two must agree.
func TestOpenFileModes(t *testing.T) {
	tv1 := goldenFiles(t)["tv1-c.abf"]
	create := mmapfile.Options{Create: true}
	for _, tc := range []struct {
		name     string
		data     []byte // nil: no file
		mode     mmapfile.Mode
		opt      Options
		fails    bool
		err      error // what a failure wraps, if a sentinel
		records  int   // after opening
		size     int64 // of the file after Close
		readable bool
	}{
		{"read-only", tv1, mmapfile.ReadOnly, Options{}, false, nil, 2, 112, true},
		{"read-write is r+", tv1, mmapfile.ReadWrite, Options{}, false, nil, 2, 112, true},
		{"read-write with Truncate is w+", tv1, mmapfile.ReadWrite, Options{Options: mmapfile.Options{Truncate: true}}, false, nil, 0, 0, true},
		{"read-write with Create makes a missing file", nil, mmapfile.ReadWrite, Options{Options: create}, false, nil, 0, 0, true},
		{"read-write with Create, Format A", nil, mmapfile.ReadWrite, Options{Options: create, Format: FormatA}, false, nil, 0, 22, true},
		{"w", tv1, mmapfile.ReadWrite, Options{Mode: "w"}, false, nil, 0, 0, false},
		{"a", tv1, mmapfile.ReadWrite, Options{Mode: "a"}, false, nil, 2, 112, false},
		{"a makes a missing file", nil, mmapfile.ReadWrite, Options{Mode: "a"}, false, nil, 0, 0, false},
		{"r+ of a missing file", nil, mmapfile.ReadWrite, Options{}, true, os.ErrNotExist, 0, 0, false},
		{"w needs ReadWrite", tv1, mmapfile.ReadOnly, Options{Mode: "w"}, true, mmapfile.ErrNotWritable, 0, 0, false},
		{"r needs ReadOnly", tv1, mmapfile.ReadWrite, Options{Mode: "r"}, true, nil, 0, 0, false},
		{"Julia's a+ is not a mode", tv1, mmapfile.ReadWrite, Options{Mode: "a+"}, true, nil, 0, 0, false},
	} {
		p := filepath.Join(t.TempDir(), "x.abf")
		if tc.data != nil {
			require.NoError(t, os.WriteFile(p, tc.data, 0o644))
		}
		f, err := OpenFile(p, tc.mode, &tc.opt)
		if tc.fails {
			fe := requireFormatErr(t, err, -1, tc.err)
			assert.Equal(t, p, fe.File, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Len(t, f.Entries(), tc.records, tc.name)
		_, err = Read[float64](f, "x")
		assert.Equal(t, tc.readable && tc.records > 0, err == nil, "%s: %v", tc.name, err)
		require.NoError(t, f.Close(), tc.name)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, tc.size, fi.Size(), tc.name)
	}
	_, err := NewReader(bytes.NewReader(tv1), int64(len(tv1)), &Options{Mode: "r+"})
	requireFormatErr(t, err, -1, mmapfile.ErrNotWritable)
}
