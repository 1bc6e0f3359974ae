package daphne

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadRowsDense(t *testing.T) {
	want := []float64{0, 1, 0, 0, 0, 0, 0, 0, 2}
	for name, data := range map[string][]byte{
		"current": unhex(t, hexCSR3x3), "0.1": unhex(t, hexCSR01), "doc": unhex(t, hexCSRDoc), "coo": cooFile(t, 2),
		"dense": unhex(t, hexDense2x3),
	} {
		t.Run(name, func(t *testing.T) {
			f, err := open(t, data, nil)
			require.NoError(t, err)
			w := want
			if name == "dense" {
				w = []float64{1, 2, 3, 4, 5, 6}
			}
			h := f.Header()
			for r0 := uint64(0); r0 <= h.Rows; r0++ {
				for r1 := r0; r1 <= h.Rows; r1++ {
					got, err := ReadRowsDense[float64](f, r0, r1)
					require.NoError(t, err)
					assert.Equal(t, w[r0*h.Cols:r1*h.Cols], got, "[%d,%d)", r0, r1)
					a, err := ReadRowsDenseAny(f, r0, r1)
					require.NoError(t, err)
					assert.Equal(t, got, a)
				}
			}
			_, err = ReadRowsDense[float64](f, 0, h.Rows+1)
			assert.Error(t, err)
			_, err = ReadRowsDense[int32](f, 0, 1)
			assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
		})
	}
	// Hostile entries inside the chunk are errors in both modes; ordering
	// errors in strict mode only.
	csr := unhex(t, hexCSR3x3)
	bad := append([]byte(nil), csr...)
	binary.LittleEndian.PutUint64(bad[93:], 7) // colIdxs[1] = 7 ≥ 3
	for _, o := range []*Options{nil, {Lenient: true}} {
		f, err := open(t, bad, o)
		require.NoError(t, err)
		_, err = ReadRowsDense[float64](f, 2, 3)
		var fe *FormatError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, int64(93), fe.Offset)
		got, err := ReadRowsDense[float64](f, 0, 2)
		require.NoError(t, err)
		assert.Equal(t, []float64{0, 1, 0, 0, 0, 0}, got)
	}
	dec := append([]byte(nil), csr...)
	binary.LittleEndian.PutUint64(dec[69:], 0) // rowOffsets[2] = 0 < rowOffsets[1]
	f, err := open(t, dec, &Options{Lenient: true})
	require.NoError(t, err)
	_, err = ReadRowsDense[float64](f, 1, 3)
	assert.Error(t, err)
	f, err = open(t, csr, &Options{MaxAlloc: 16})
	require.NoError(t, err)
	_, err = ReadRowsDense[float64](f, 0, 3)
	assert.ErrorIs(t, err, ErrTooLarge)
}

func TestAnyForms(t *testing.T) {
	dir := t.TempDir()
	f, err := open(t, unhex(t, hexCSR3x3), nil)
	require.NoError(t, err)
	v, err := ReadAny(f)
	require.NoError(t, err)
	m, ok := v.(*CSR[float64])
	require.True(t, ok)
	path := filepath.Join(dir, "s.dbdf")
	require.NoError(t, WriteCSRAny(path, m, nil))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, unhex(t, hexCSR3x3), got)

	f, err = open(t, unhex(t, hexDense2x3), nil)
	require.NoError(t, err)
	v, err = ReadAny(f)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, v)
	path = filepath.Join(dir, "d.dbdf")
	require.NoError(t, WriteDenseAny(path, 2, 3, v, nil))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, unhex(t, hexDense2x3), got)

	f, err = open(t, unhex(t, hexFrame), nil)
	require.NoError(t, err)
	v, err = ReadAny(f)
	require.NoError(t, err)
	assert.IsType(t, &Frame{}, v)

	for _, x := range []any{[]int16{1}, []bool{true}, "x"} {
		err := WriteDenseAny(filepath.Join(dir, "x.dbdf"), 1, 1, x, nil)
		assert.True(t, errors.Is(err, errors.ErrUnsupported), "%T", x)
	}
	assert.ErrorIs(t, WriteCSRAny(filepath.Join(dir, "x.dbdf"), []float64{}, nil), errors.ErrUnsupported)
	_, err = os.Stat(filepath.Join(dir, "x.dbdf"))
	assert.True(t, os.IsNotExist(err))
}
