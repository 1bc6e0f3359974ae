package format

import (
	"errors"
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
