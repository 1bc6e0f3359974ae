package daphne

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numeric is DAPHNE's eight value types as Go types, for generic tests that
// do arithmetic.
type numeric interface {
	int8 | int32 | int64 | uint8 | uint32 | uint64 | float32 | float64
}

func sample[T numeric](n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = T(i*7 + 3)
	}
	return v
}

func roundTripDense[T numeric](t *testing.T) {
	vt := valueTypeOf[T]()
	for _, dims := range [][2]uint64{{0, 0}, {0, 5}, {5, 0}, {1, 1}, {3, 4}, {17, 3}} {
		n := int(dims[0] * dims[1])
		v := sample[T](n)
		path := filepath.Join(t.TempDir(), "m.dbdf")
		require.NoError(t, WriteDense(path, dims[0], dims[1], v, nil))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Len(t, data, 45+n*vt.Size())
		assert.Equal(t, matrixHeader(KindDense, vt, false, dims[0], dims[1], BodyDense), data[:45])
		meta, err := os.ReadFile(path + ".meta")
		require.NoError(t, err)
		assert.Equal(t, `{"numCols":`+utoa(dims[1])+`,"numRows":`+utoa(dims[0])+`,"valueType":"`+vt.String()+`"}`, string(meta))

		f, err := Open(path, nil)
		require.NoError(t, err)
		got, err := Read[T](f, "matrix")
		require.NoError(t, err)
		assert.Equal(t, v, got)
		vals, aliased, err := DenseValues[T](f)
		require.NoError(t, err)
		assert.Equal(t, v, vals)
		assert.Equal(t, vt.Size() == 1 || n == 0, aliased, "only 1-byte types alias at offset 45")
		if vt.Size() > 1 && n > 0 {
			_, err = View[T](f, "matrix")
			assert.ErrorIs(t, err, mmapfile.ErrMisaligned)
		}
		require.NoError(t, f.Close())
	}
}

func utoa(v uint64) string { return itoa(v) }

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

func TestRoundTripDenseAllTypes(t *testing.T) {
	t.Run("si8", roundTripDense[int8])
	t.Run("si32", roundTripDense[int32])
	t.Run("si64", roundTripDense[int64])
	t.Run("ui8", roundTripDense[uint8])
	t.Run("ui32", roundTripDense[uint32])
	t.Run("ui64", roundTripDense[uint64])
	t.Run("f32", roundTripDense[float32])
	t.Run("f64", roundTripDense[float64])
}

func TestDenseBitExact(t *testing.T) {
	v := []float64{math.Copysign(0, -1), math.Float64frombits(0x7ff0000000000abc), math.Inf(-1), math.SmallestNonzeroFloat64}
	path := filepath.Join(t.TempDir(), "x.dbdf")
	require.NoError(t, WriteDense(path, 2, 2, v, nil))
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	got, err := Read[float64](f, "matrix")
	require.NoError(t, err)
	for i := range v {
		assert.Equal(t, math.Float64bits(v[i]), math.Float64bits(got[i]))
	}
}

// TestRowStride: DAPHNE #679 writes X[,1] of [[1,2],[3,4],[5,6]] as 2,3,4;
// mmapkit honours the stride and writes 2,4,6.
func TestRowStride(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6}
	path := filepath.Join(t.TempDir(), "col.dbdf")
	require.NoError(t, WriteDense(path, 3, 1, x[1:], &WriteOptions{RowStride: 2}))
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	got, err := Read[float64](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []float64{2, 4, 6}, got)
}

func TestWriteFailsBeforeTouchingFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keep.dbdf")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	require.NoError(t, os.WriteFile(path+".meta", []byte("old meta"), 0o644))
	bad := []func() error{
		func() error { return WriteDense(path, 2, 2, []float64{1, 2, 3}, nil) },
		func() error { return WriteDense(path, 1<<32, 1, []float64{}, nil) },
		func() error { return WriteDense(path, 2, 2, []float64{1, 2, 3, 4}, &WriteOptions{RowStride: 1}) },
		func() error { return WriteDense(path, 3, 2, []float64{1, 2, 3, 4}, &WriteOptions{RowStride: 1 << 63}) },
		func() error {
			return WriteCSR(path, &CSR[float64]{Rows: 2, Cols: 2, RowOffsets: []uint64{0, 2, 1}, ColIdxs: []uint64{0, 1}, Values: []float64{1, 2}}, nil)
		},
		func() error {
			return WriteCSR(path, &CSR[float64]{Rows: 1, Cols: 2, RowOffsets: []uint64{0, 2}, ColIdxs: []uint64{1, 0}, Values: []float64{1, 2}}, nil)
		},
		func() error {
			return WriteCSR(path, &CSR[float64]{Rows: 1, Cols: 2, RowOffsets: []uint64{0, 1}, ColIdxs: []uint64{2}, Values: []float64{1}}, nil)
		},
		func() error {
			return WriteCSR(path, &CSR[float64]{Rows: 1 << 32, Cols: 1, RowOffsets: []uint64{0}}, nil)
		},
		func() error { return WriteFrame(path, &Frame{Rows: 2, Columns: []any{[]int64{1}}}, nil) },
		func() error { return WriteFrame(path, &Frame{Rows: 1, Columns: []any{[]int16{1}}}, nil) },
		func() error {
			return WriteFrame(path, &Frame{Rows: 1, Labels: []string{"a", "a"}, Columns: []any{[]int8{1}, []int8{2}}}, nil)
		},
		func() error {
			return WriteFrame(path, &Frame{Rows: 1, Labels: []string{"\xff"}, Columns: []any{[]int8{1}}}, nil)
		},
		func() error {
			return WriteFrame(path, &Frame{Rows: 1, Labels: []string{string(make([]byte, 33))}, Columns: []any{[]int8{1}}}, nil)
		},
		func() error {
			return WriteFrame(path, &Frame{Rows: 1, Labels: []string{string(make([]byte, 65536))}, Columns: []any{[]int8{1}}}, &WriteOptions{AllowLongLabels: true})
		},
		func() error {
			return WriteFrame(path, &Frame{Rows: 1, Types: []ValueType{F64}, Columns: []any{[]int8{1}}}, nil)
		},
	}
	for i, fn := range bad {
		err := fn()
		require.Error(t, err, "case %d", i)
		var fe *FormatError
		assert.ErrorAs(t, err, &fe, "case %d", i)
		data, _ := os.ReadFile(path)
		meta, _ := os.ReadFile(path + ".meta")
		assert.Equal(t, "old", string(data), "case %d", i)
		assert.Equal(t, "old meta", string(meta), "case %d", i)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary files left behind")
	assert.ErrorIs(t, bad[1](), mmapfile.ErrTooLarge)
	assert.Contains(t, bad[1]().Error(), "u32")
}

func roundTripCSR[T numeric](t *testing.T) {
	// 5×4 with empty rows 0, 2 and 4.
	m := &CSR[T]{Rows: 5, Cols: 4, RowOffsets: []uint64{0, 0, 2, 2, 3, 3}, ColIdxs: []uint64{0, 3, 1}, Values: []T{1, 2, 3}}
	path := filepath.Join(t.TempDir(), "s.dbdf")
	require.NoError(t, WriteCSR(path, m, nil))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	s := valueTypeOf[T]().Size()
	require.Len(t, data, 53+8*6+3*(8+s))
	meta, err := os.ReadFile(path + ".meta")
	require.NoError(t, err)
	assert.Equal(t, `{"numCols":4,"numNonZeros":3,"numRows":5,"valueType":"`+valueTypeOf[T]().String()+`"}`, string(meta))
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	got, err := ReadCSR[T](f)
	require.NoError(t, err)
	assert.Equal(t, m.RowOffsets, got.RowOffsets)
	assert.Equal(t, m.ColIdxs, got.ColIdxs)
	assert.Equal(t, m.Values, got.Values)
	d, err := got.ToDense(0)
	require.NoError(t, err)
	assert.Equal(t, []T{0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0}, d)
	v, err := got.At(1, 3)
	require.NoError(t, err)
	assert.Equal(t, T(2), v)
	_, err = got.At(5, 0)
	assert.Error(t, err)

	view, aliased, err := CSRValues[T](f)
	require.NoError(t, err)
	assert.Equal(t, s == 1, aliased, "1-byte values alias the mapping")
	assert.Equal(t, m.Values, view.Values)
	assert.Equal(t, m.ColIdxs, view.ColIdxs)
}

func TestRoundTripCSRAllTypes(t *testing.T) {
	t.Run("si8", roundTripCSR[int8])
	t.Run("si32", roundTripCSR[int32])
	t.Run("si64", roundTripCSR[int64])
	t.Run("ui8", roundTripCSR[uint8])
	t.Run("ui32", roundTripCSR[uint32])
	t.Run("ui64", roundTripCSR[uint64])
	t.Run("f32", roundTripCSR[float32])
	t.Run("f64", roundTripCSR[float64])
}

func TestCSREdgeCases(t *testing.T) {
	dir := t.TempDir()
	for i, m := range []*CSR[float64]{
		{Rows: 0, Cols: 0, RowOffsets: []uint64{0}},
		{Rows: 1, Cols: 1, RowOffsets: []uint64{0, 1}, ColIdxs: []uint64{0}, Values: []float64{7}},
		{Rows: 3, Cols: 3, RowOffsets: []uint64{0, 0, 0, 0}},
	} {
		path := filepath.Join(dir, itoa(uint64(i))+".dbdf")
		require.NoError(t, WriteCSR(path, m, nil))
		f, err := Open(path, nil)
		require.NoError(t, err)
		got, err := ReadCSR[float64](f)
		require.NoError(t, err)
		assert.Equal(t, m.RowOffsets, got.RowOffsets)
		assert.Equal(t, m.Values, append([]float64(nil), got.Values...)[:len(m.Values):len(m.Values)])
		require.NoError(t, f.Close())
	}
	// A view with RowOffsets[0] ≠ 0 and spare capacity is normalised: the
	// bytes equal the tight matrix's, as DAPHNE writes them.
	view := &CSR[float64]{Rows: 3, Cols: 3, RowOffsets: []uint64{5, 6, 6, 7}, ColIdxs: []uint64{9, 9, 9, 9, 9, 1, 2, 9}, Values: []float64{0, 0, 0, 0, 0, 1, 2, 0}}
	path := filepath.Join(dir, "view.dbdf")
	require.NoError(t, WriteCSR(path, view, nil))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, unhex(t, hexCSR3x3), got)
}

func roundTripFrame(t *testing.T, fr *Frame, o *WriteOptions) {
	path := filepath.Join(t.TempDir(), "f.dbdf")
	require.NoError(t, WriteFrame(path, fr, o))
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	got, err := ReadFrame(f)
	require.NoError(t, err)
	assert.Equal(t, fr.Rows, got.Rows)
	assert.Equal(t, fr.Columns, got.Columns)
	if fr.Labels != nil {
		assert.Equal(t, fr.Labels, got.Labels)
	}
	arrays := f.arrays()
	require.Len(t, arrays, len(fr.Columns))
	for _, a := range arrays {
		assert.Equal(t, int64(-1), a.Offset)
		assert.Equal(t, []int64{int64(fr.Rows)}, a.Shape)
	}
}

func TestRoundTripFrame(t *testing.T) {
	all := &Frame{Rows: 3,
		Labels: []string{"i8", "i32", "i64", "u8", "u32", "u64", "f32", "f64 \"quoted\"\n"},
		Columns: []any{[]int8{-1, 0, 1}, []int32{-5, 6, 7}, []int64{math.MinInt64, 0, math.MaxInt64},
			[]uint8{0, 128, 255}, []uint32{1, 2, math.MaxUint32}, []uint64{0, 1, math.MaxUint64},
			[]float32{0.5, -1.5, float32(math.Inf(1))}, []float64{1e300, -0.25, 3}}}
	roundTripFrame(t, all, nil)
	roundTripFrame(t, &Frame{Rows: 0, Columns: []any{[]int64{}, []float64{}}}, nil)
	roundTripFrame(t, &Frame{Rows: 0, Columns: []any{}}, nil)
	roundTripFrame(t, &Frame{Rows: 1, Labels: []string{"é€😀"}, Columns: []any{[]float32{1}}}, nil)
	long := string(make([]byte, 40))
	roundTripFrame(t, &Frame{Rows: 1, Labels: []string{long}, Columns: []any{[]uint8{1}}}, &WriteOptions{AllowLongLabels: true})
}

func TestFrameRangeChunks(t *testing.T) {
	const rows = 400000 // 13-byte rows: 5.2 MB, more than one 4 MiB mapping chunk
	a := make([]int64, rows)
	b := make([]float32, rows)
	c := make([]uint8, rows)
	for i := range a {
		a[i], b[i], c[i] = int64(i)*3, float32(i)/2, uint8(i)
	}
	path := filepath.Join(t.TempDir(), "big.dbdf")
	require.NoError(t, WriteFrame(path, &Frame{Rows: rows, Columns: []any{a, b, c}}, nil))
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	for r := uint64(0); r < rows; r += 30001 {
		end := min(r+30001, rows)
		fr, err := ReadFrameRange(f, r, end)
		require.NoError(t, err)
		assert.Equal(t, a[r:end], fr.Columns[0])
		assert.Equal(t, b[r:end], fr.Columns[1])
		assert.Equal(t, c[r:end], fr.Columns[2])
	}
	all, err := ReadFrame(f)
	require.NoError(t, err)
	assert.Equal(t, []any{a, b, c}, all.Columns)
	_, err = ReadFrameRange(f, 5, rows+1)
	assert.Error(t, err)
}

func TestSetElement(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.dbdf")
	require.NoError(t, WriteDense(path, 2, 3, []float64{1, 2, 3, 4, 5, 6}, nil))
	ro, err := Open(path, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, Set(ro, "matrix", []int64{0, 0}, 9.0), mmapfile.ErrNotWritable)
	require.NoError(t, ro.Close())

	f, err := OpenFile(path, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, Set(f, "matrix", []int64{1, 2}, -7.5))
	require.NoError(t, f.SetElement(0, 1, []byte{0, 0, 0, 0, 0, 0, 0xd0, 0x3f})) // 0.25
	assert.Error(t, Set(f, "matrix", []int64{2, 0}, 1.0))
	err = Set(f, "matrix", []int64{0, 0}, float32(1))
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	assert.ErrorContains(t, err, path)
	assert.ErrorIs(t, Set(f, "matrix", []int64{0, 0}, int16(1)), mmapfile.ErrTypeMismatch)
	require.NoError(t, f.Close())

	g, err := Open(path, nil)
	require.NoError(t, err)
	defer g.Close()
	v, err := Read[float64](g, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 0.25, 3, 4, 5, -7.5}, v)
}

func TestViewsAlias(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u8.dbdf")
	require.NoError(t, WriteDense(path, 2, 2, []uint8{1, 2, 3, 4}, nil))
	f, err := Open(path, nil)
	require.NoError(t, err)
	v, err := View[uint8](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []uint8{1, 2, 3, 4}, v)
	_, err = View[int8](f, "matrix")
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	require.NoError(t, f.Close())
	_, err = View[uint8](f, "matrix")
	assert.ErrorIs(t, err, mmapfile.ErrClosed)

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	r, err := NewReader(bytesReader(b), int64(len(b)), nil)
	require.NoError(t, err)
	_, err = View[uint8](r, "matrix")
	assert.ErrorIs(t, err, ErrNotMapped)
	assert.True(t, errors.Is(err, errors.ErrUnsupported))
	got, aliased, err := DenseValues[uint8](r)
	require.NoError(t, err)
	assert.False(t, aliased)
	assert.Equal(t, []uint8{1, 2, 3, 4}, got)
}

func TestArrays(t *testing.T) {
	f, err := open(t, unhex(t, hexCSR3x3), nil)
	require.NoError(t, err)
	a := f.arrays()
	require.Len(t, a, 1)
	assert.Equal(t, "csr", f.Kind().String())
	assert.Equal(t, KindCSR, f.Kind())
	assert.Equal(t, int64(45), a[0].Offset)
	assert.Equal(t, int64(117-45), a[0].Size)
	assert.Equal(t, []int64{3, 3}, a[0].Shape)

	f, err = open(t, unhex(t, hexDense2x3), nil)
	require.NoError(t, err)
	a = f.arrays()
	require.NoError(t, a[0].Check(93))
	assert.Equal(t, int64(45), a[0].Offset)
	assert.Equal(t, int64(48), a[0].Size)

	f, err = open(t, multiBlockFile(1), nil)
	require.NoError(t, err)
	a = f.arrays()
	assert.Equal(t, int64(-1), a[0].Offset)
	assert.Equal(t, int64(72), a[0].Size)
}

func TestCSRValidateInMemory(t *testing.T) {
	m := &CSR[float64]{Rows: 2, Cols: 2, RowOffsets: []uint64{0, 2, 1}, ColIdxs: []uint64{0, 1}, Values: []float64{1, 2}}
	err := m.Validate()
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(-1), fe.Offset, "no file offsets for an in-memory matrix")
	m = &CSR[float64]{Rows: 1, Cols: 2, RowOffsets: []uint64{1, 2}, ColIdxs: []uint64{0, 1}, Values: []float64{1, 2}}
	assert.Error(t, m.Validate(), "strict: rowOffsets[0] must be 0")
	v, err := m.At(0, 1)
	require.NoError(t, err)
	assert.Equal(t, 2.0, v)
	assert.Equal(t, uint64(1), m.NNZ())
}
