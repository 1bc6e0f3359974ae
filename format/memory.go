package format

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Memory returns a Source of records held in memory: data[i] holds the
// values of recs[i] as a file's payload would, in the record's Order and
// byte order. It is how a program writes arrays it made with any format
// (Write(path, Memory(recs, data), o)), reading them as a file's records
// are read: reordered and swapped as the reader asks. The slices are not
// copied and must not change while the Source is read.
func Memory(recs []Record, data [][]byte) Source {
	m := &memory{recs: recs, pays: make([]*Payload, len(recs))}
	for i := range recs {
		var b []byte
		if i < len(data) {
			b = data[i]
		}
		m.pays[i] = &Payload{Array: recs[i].Array, Data: bytes.NewReader(b)}
		m.pays[i].Array.Offset = -1 // not in a file: no offset to name
	}
	return m
}

type memory struct {
	recs []Record
	pays []*Payload
}

func (m *memory) Records() []Record { return m.recs }

func (m *memory) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if i < 0 || i >= len(m.recs) {
		return fmt.Errorf("memory: record %d of %d: %w", i, len(m.recs), mmapfile.ErrOutOfRange)
	}
	return m.pays[i].ReadArray(dst, first, order, bo)
}
