package memsource

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func TestSourceReadsAndFails(t *testing.T) {
	errBoom := errors.New("boom")
	s := new(Source).
		Add(format.Record{Array: layout.Array{Name: "m", Type: layout.U8, Shape: []int64{2, 3}, Order: layout.ColMajor}}, []byte{1, 4, 2, 5, 3, 6}).
		Add(format.Record{Array: layout.Array{Name: "v", Type: layout.U16, Shape: []int64{3}, BigEndian: true}}, []byte{0, 1, 0, 2, 1, 0})
	for _, tc := range []struct {
		src   *Source
		i     int
		first int64
		n     int
		want  []byte
		err   error
	}{
		{s, 0, 0, 6, []byte{1, 2, 3, 4, 5, 6}, nil}, // reordered
		{s, 1, 1, 4, []byte{2, 0, 0, 1}, nil},       // swapped to little-endian
		{s, 0, 5, 2, nil, mmapfile.ErrOutOfRange},   // past the end
		{new(Source).Add(s.recs[0], s.data[0]).Fail(0, errBoom), 0, 0, 1, nil, errBoom},
		{new(Source).Add(s.recs[0], s.data[0]).FailFrom(4, errBoom), 0, 0, 4, []byte{1, 2, 3, 4}, nil},
		{new(Source).Add(s.recs[0], s.data[0]).FailFrom(4, errBoom), 0, 3, 2, nil, errBoom},
	} {
		dst := make([]byte, tc.n)
		err := tc.src.ReadArray(tc.i, dst, tc.first, layout.RowMajor, binary.LittleEndian)
		switch {
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("record %d [%d, +%d): error %v, want %v", tc.i, tc.first, tc.n, err, tc.err)
		case tc.err == nil && (err != nil || string(dst) != string(tc.want)):
			t.Errorf("record %d [%d, +%d): %v, %v; want %v", tc.i, tc.first, tc.n, dst, err, tc.want)
		}
	}
	if s.Data(1)[3] != 2 || len(s.Records()) != 2 {
		t.Errorf("Data and Records do not give what was added")
	}
}
