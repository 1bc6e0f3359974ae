package layout

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// CheckIndex says which way an index misses its shape, naming the record
// where it is given one, and wraps the sentinel of that cause.
func TestCheckIndex(t *testing.T) {
	cases := []struct {
		name       string
		shape, idx []int64
		want       string
		kind       error
	}{
		{"x", []int64{2, 3}, []int64{1, 2}, "", nil},
		{"", nil, []int64{}, "", nil},
		{"x", []int64{2, 3}, []int64{1},
			`index [1] has 1 number, but record "x" has 2 dimensions (shape [2][3]): give one number per dimension, as [0,0]`, ErrIndexCount},
		{"", []int64{4}, []int64{1, 0, 2},
			`index [1,0,2] has 3 numbers, but the array has 1 dimension (shape [4]): give one number per dimension, as [0]`, ErrIndexCount},
		{"s", nil, []int64{0}, `record "s" is a scalar: its index is [], not [0]`, ErrIndexCount},
		{"", nil, []int64{0}, `the array is a scalar: its index is [], not [0]`, ErrIndexCount},
		{"x", []int64{2, 3}, []int64{1, 3},
			`record "x": index [1,3]: 3 is past the end of dimension 1 of shape [2][3] (0 to 2)`, ErrIndexRange},
		{"", []int64{2, 3}, []int64{0, -1}, `index [0,-1]: -1 is negative (dimension 1 of shape [2][3])`, ErrIndexRange},
		{"e", []int64{0, 2}, []int64{0, 0},
			`record "e": index [0,0]: dimension 0 of shape [0][2] is empty: the record has no elements to set`, ErrIndexRange},
	}
	for _, c := range cases {
		err := CheckIndex(c.name, c.shape, c.idx)
		if c.kind == nil {
			assert.NoError(t, err, "%v in %v", c.idx, c.shape)
			continue
		}
		if assert.Error(t, err, "%v in %v", c.idx, c.shape) {
			assert.Equal(t, c.want, err.Error())
			assert.ErrorIs(t, err, c.kind)
			other := ErrIndexRange
			if c.kind == ErrIndexRange {
				other = ErrIndexCount
			}
			assert.False(t, errors.Is(err, other), "%v wraps %v too", err, other)
		}
	}
}
