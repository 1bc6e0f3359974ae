package daphne

import (
	"encoding/binary"
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
	assert.ErrorIs(t, err, mmapfile.ErrTooLarge)
}

// convertValue converts a block's value to the matrix's type as Go
// converts: sign-extending narrow signed values, truncating floats.
func TestConvertValue(t *testing.T) {
	le := func(size int, x uint64) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(x >> (8 * i))
		}
		return b
	}
	for _, c := range []struct {
		from, to ValueType
		src      []byte
		want     []byte
	}{
		{SI8, SI64, []byte{0xfe}, le(8, 0xfffffffffffffffe)},      // -2
		{UI8, SI64, []byte{0xfe}, le(8, 254)},                     // 254
		{SI16, SI32, []byte{0x00, 0x80}, le(4, 0xffff8000)},       // -32768
		{UI16, UI64, []byte{0x00, 0x80}, le(8, 0x8000)},           // 32768
		{SI32, F64, le(4, 0xfffffffd), le(8, 0xc008000000000000)}, // -3.0
		{F64, SI32, le(8, 0xc00c000000000000), le(4, 0xfffffffd)}, // -3.5 → -3
		{F32, UI8, le(4, 0x42c80000), []byte{100}},                // 100.0
		{UI64, F32, le(8, 1<<40), le(4, 0x53800000)},              // 2^40
	} {
		dst := make([]byte, c.to.Size())
		convertValue(dst, c.src, c.from, c.to)
		assert.Equal(t, c.want, dst, "%v → %v", c.from, c.to)
	}
}
