// Package memsource builds in-memory format.Sources for tests: the
// records of format.Memory added one at a time, with reads that fail on
// demand (a record, or every read past an element), so that writers can
// be tested against a source that breaks part way.
//
// What is safe: reading a Source from several goroutines. What is not
// safe: adding records or failures while it is read; the data slices are
// not copied.
package memsource

import (
	"encoding/binary"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// Source is a format.Source of records held in memory, each record's data
// stored in its Order and byte order, as format.Memory reads them.
type Source struct {
	recs     []format.Record
	data     [][]byte
	failRec  int   // 1 + the record whose reads fail, or 0
	failFrom int64 // reads past this many elements fail, if > 0
	err      error
}

// Add appends record r holding data and returns s.
func (s *Source) Add(r format.Record, data []byte) *Source {
	s.recs = append(s.recs, r)
	s.data = append(s.data, data)
	return s
}

// Fail makes every read of record i return err.
func (s *Source) Fail(i int, err error) *Source {
	s.failRec, s.err = i+1, err
	return s
}

// FailFrom makes every read that reaches past element n of any record
// return err; n = 0 makes reads succeed again.
func (s *Source) FailFrom(n int64, err error) *Source {
	s.failFrom, s.err = n, err
	return s
}

// Data is the data of record i.
func (s *Source) Data(i int) []byte { return s.data[i] }

// Records returns the records added.
func (s *Source) Records() []format.Record { return s.recs }

// ReadArray reads as format.Memory does, unless a failure was asked for.
func (s *Source) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if i+1 == s.failRec {
		return s.err
	}
	if size := int64(s.recs[i].Type.Size()); s.failFrom > 0 && size > 0 && first+int64(len(dst))/size > s.failFrom {
		return s.err
	}
	// The record as it is now: tests change records between reads.
	return format.Memory(s.recs[i:i+1], s.data[i:i+1]).ReadArray(0, dst, first, order, bo)
}
