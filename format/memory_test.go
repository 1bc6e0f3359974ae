package format

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func TestMemoryReadsAsAFileDoes(t *testing.T) {
	// A 2×3 u16 array stored column-major and big-endian: logical rows
	// [1 2 3] [4 5 6].
	colBig := []byte{0, 1, 0, 4, 0, 2, 0, 5, 0, 3, 0, 6}
	src := Memory([]Record{
		{Array: layout.Array{Name: "m", Type: layout.U16, Shape: []int64{2, 3}, Order: layout.ColMajor, BigEndian: true, Size: 12}},
		{Array: layout.Array{Name: "b", Type: layout.Bool, Shape: []int64{3}, Size: 3}},
	}, [][]byte{colBig, {1, 0, 1}})
	require.Len(t, src.Records(), 2)
	for _, tc := range []struct {
		name  string
		first int64
		n     int
		order layout.Order
		bo    binary.ByteOrder
		want  []byte
	}{
		{"row-major little", 0, 6, layout.RowMajor, binary.LittleEndian, []byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}},
		{"storage order as stored", 0, 6, layout.ColMajor, binary.BigEndian, colBig},
		{"part of a row", 2, 3, layout.RowMajor, binary.BigEndian, []byte{0, 3, 0, 4, 0, 5}},
	} {
		dst := make([]byte, 2*tc.n)
		require.NoError(t, src.ReadArray(0, dst, tc.first, tc.order, tc.bo), tc.name)
		assert.Equal(t, tc.want, dst, tc.name)
	}
	b, err := ReadAll(src, 1, layout.RowMajor, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 0, 1}, b)
	assert.ErrorIs(t, src.ReadArray(2, make([]byte, 1), 0, layout.RowMajor, binary.LittleEndian), mmapfile.ErrOutOfRange)
	assert.Error(t, src.ReadArray(0, make([]byte, 14), 0, layout.RowMajor, binary.LittleEndian), "beyond the record")
	assert.True(t, bytes.Equal(colBig, []byte{0, 1, 0, 4, 0, 2, 0, 5, 0, 3, 0, 6}), "the data are not changed")
}
