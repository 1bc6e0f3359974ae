package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lister is a memSource that also describes records one at a time and
// refuses to build the list.
type lister struct {
	memSource
	calls int
}

func (l *lister) Records() []Record { panic("Records called") }
func (l *lister) NumRecords() int   { return len(l.recs) }
func (l *lister) Record(i int) Record {
	l.calls++
	return l.recs[i]
}

func TestEachRecord(t *testing.T) {
	var recs []Record
	for _, name := range []string{"a", "/b", "c"} {
		recs = append(recs, Record{Array: layout.Array{Name: name, Type: layout.I8, Shape: []int64{}}})
	}
	plain := &memSource{recs: recs}
	lazy := &lister{memSource: memSource{recs: recs}}
	for _, src := range []Source{plain, lazy} {
		assert.Equal(t, 3, NumRecords(src))
		assert.Equal(t, "/b", RecordAt(src, 1).Name)
		var names []string
		require.NoError(t, EachRecord(src, func(i int, r *Record) error {
			assert.Equal(t, recs[i].Name, r.Name)
			names = append(names, r.Name)
			return nil
		}))
		assert.Equal(t, []string{"a", "/b", "c"}, names)
		boom := errors.New("boom")
		seen := 0
		assert.Equal(t, boom, EachRecord(src, func(i int, r *Record) error {
			seen++
			return boom
		}))
		assert.Equal(t, 1, seen)
		i, err := Find(src, "b")
		require.NoError(t, err)
		assert.Equal(t, 1, i)
		i, err = Find(src, "/c")
		require.NoError(t, err)
		assert.Equal(t, 2, i)
		_, err = Find(src, "d")
		assert.ErrorIs(t, err, ErrNoRecord)
	}
	assert.Positive(t, lazy.calls)
}

// countingLister is a lister that counts the reads of each record.
type countingLister struct {
	lister
	reads map[int]int
}

func (c *countingLister) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	c.reads[i]++
	return c.lister.ReadArray(i, dst, first, order, bo)
}

// A table is scanned, and its columns described, one record at a time: a
// RecordLister's list is never built (lister panics if it is), nulls are
// folded as from a list, a batch holds at most 8 MiB of a wide table's
// rows, and a selection reads its own columns only.
func TestScanTableRecordByRecord(t *testing.T) {
	const cols, rows = 2000, 1200 // rows of 17,000 bytes, nulls included: 493 to a batch
	src := &countingLister{reads: map[int]int{}}
	for c := range cols {
		v := make([]byte, 8*rows)
		for r := range rows {
			binary.LittleEndian.PutUint64(v[8*r:], uint64(c*rows+r))
		}
		name := fmt.Sprint("c", c)
		src.recs = append(src.recs, Record{Array: layout.Array{Name: name, Type: layout.U64, Shape: []int64{rows}, Size: 8 * rows}})
		src.data = append(src.data, v)
		if c%2 == 1 { // every other column nullable, the last one too
			reason := bytes.Repeat([]byte{0xff}, rows)
			reason[c%rows] = 3
			src.recs = append(src.recs, Record{Array: layout.Array{Name: name + ".reason", Type: layout.I8, Shape: []int64{rows}, Size: rows}})
			src.data = append(src.data, reason)
		}
	}
	require.True(t, IsTable(src))
	var names []string
	require.NoError(t, EachTableColumn(src, func(r *Record) error {
		assert.Equal(t, len(names)%2 == 1, r.Nullable, r.Name)
		names = append(names, r.Name)
		return nil
	}))
	require.Len(t, names, cols)
	assert.Equal(t, "c1999", names[cols-1])
	assert.Len(t, TableColumns(src), cols)

	var batches []int
	require.NoError(t, ScanTable(src, 1<<14, func(first int64, cs []Column) error {
		require.Len(t, cs, cols)
		n := len(cs[0].Values.([]uint64))
		batches = append(batches, n)
		for c, col := range cs {
			v := col.Values.([]uint64)
			require.Len(t, v, n)
			assert.Equal(t, uint64(c*rows+int(first)), v[0])
			assert.Equal(t, uint64(c*rows+int(first)+n-1), v[n-1])
			if c%2 == 1 {
				require.Len(t, col.Reason, n)
				for k, x := range col.Reason {
					want := int8(-1)
					if int(first)+k == c%rows {
						want = 3
					}
					require.Equal(t, want, x, "column %d row %d", c, int(first)+k)
				}
			} else {
				assert.Nil(t, col.Reason)
			}
		}
		return nil
	}))
	assert.Equal(t, []int{493, 493, 214}, batches)

	// A selection of two columns reads those two records and no other (the
	// nulls of c7, a record of their own, are not selected).
	sel, err := Select(src, "c7", "c2")
	require.NoError(t, err)
	clear(src.reads)
	var got [][]uint64
	require.NoError(t, ScanTable(sel, 1<<14, func(first int64, cs []Column) error {
		for _, col := range cs {
			got = append(got, append([]uint64(nil), col.Values.([]uint64)...))
		}
		return nil
	}))
	require.Len(t, got, 2)
	assert.Equal(t, uint64(7*rows), got[0][0])
	assert.Equal(t, uint64(2*rows+rows-1), got[1][rows-1])
	c7, c2 := 7+3, 2+1 // records: c0 c1 c1.reason c2 c3 c3.reason …
	assert.Equal(t, map[int]int{c7: 1, c2: 1}, src.reads)
}

// TestRenameDescribesOnDemand: a renamed source describes its records
// from the source's own, one at a time, and never asks for the list
// (lister panics if it is asked), so renaming a file of many records
// holds no second list of them; the names given are its own copy.
func TestRenameDescribesOnDemand(t *testing.T) {
	var recs []Record
	for _, name := range []string{"a", "/b", "c"} {
		recs = append(recs, Record{Array: layout.Array{Name: name, Type: layout.I16, Shape: []int64{2}}})
	}
	src := &lister{memSource: memSource{recs: recs}}
	names := []string{"x", "y", "z"}
	r, err := Rename(src, names)
	require.NoError(t, err)
	names[1] = "changed"
	assert.Equal(t, 3, NumRecords(r))
	got := RecordAt(r, 1)
	assert.Equal(t, "y", got.Name)
	assert.Equal(t, layout.I16, got.Type)
	assert.Equal(t, []int64{2}, got.Shape)
	i, err := Find(r, "z")
	require.NoError(t, err)
	assert.Equal(t, 2, i)
	assert.Equal(t, "/b", src.recs[1].Name, "the source's records are left as they were")

	rooted := rootRelative(src)
	assert.Equal(t, []string{"a", "b", "c"}, []string{RecordAt(rooted, 0).Name, RecordAt(rooted, 1).Name, RecordAt(rooted, 2).Name})

	_, err = Rename(src, []string{"x", "y"})
	assert.ErrorContains(t, err, "2 names for 3 records")
	_, err = Rename(src, []string{"x", "y", "x"})
	assert.ErrorContains(t, err, `the name "x" is given twice`)

	plain, err := Rename(&memSource{recs: recs}, []string{"p", "q", "r"})
	require.NoError(t, err)
	listed := plain.Records()
	require.Len(t, listed, 3)
	assert.Equal(t, "q", listed[1].Name)
	assert.Equal(t, listed[2], RecordAt(plain, 2))
}
