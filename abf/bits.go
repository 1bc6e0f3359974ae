package abf

import (
	"fmt"
	"slices"

	"github.com/mmapkit/mmapkit/layout"
)

// BitArray is Julia's BitArray: element i (0-based, column-major) is bit
// i&63 of Chunks[i>>6], counted from the least significant bit. The unused
// high bits of the last word are zero.
type BitArray struct {
	Dims   []int64
	Chunks []uint64
}

// PackBits packs v, column-major with the given dims, into a BitArray.
func PackBits(dims []int64, v []bool) (BitArray, error) {
	n, err := layout.Count(dims)
	if err != nil {
		return BitArray{}, fmt.Errorf("abf: %w", err)
	}
	if int64(len(v)) != n {
		return BitArray{}, fmt.Errorf("abf: %d values for dims %v (%d elements)", len(v), dims, n)
	}
	b := BitArray{Dims: slices.Clone(dims), Chunks: make([]uint64, (n+63)/64)}
	for i, x := range v {
		if x {
			b.Chunks[i>>6] |= 1 << (i & 63)
		}
	}
	return b, nil
}

// Len returns the number of bits, prod(Dims) (1 for 0-d).
func (b BitArray) Len() int64 {
	n, err := layout.Count(b.Dims)
	if err != nil {
		return 0
	}
	return n
}

// At returns bit i (0-based, column-major). It panics if i is out of range,
// as indexing a slice does.
func (b BitArray) At(i int64) bool {
	if i < 0 || i >= b.Len() {
		panic(fmt.Sprintf("abf: BitArray index %d out of range [0,%d)", i, b.Len()))
	}
	return b.Chunks[i>>6]>>(i&63)&1 != 0
}

// Set sets bit i. On a view it changes the file (in "r+" and "w+").
func (b BitArray) Set(i int64, v bool) {
	if i < 0 || i >= b.Len() {
		panic(fmt.Sprintf("abf: BitArray index %d out of range [0,%d)", i, b.Len()))
	}
	if v {
		b.Chunks[i>>6] |= 1 << (i & 63)
	} else {
		b.Chunks[i>>6] &^= 1 << (i & 63)
	}
}

// Bools unpacks the bits, column-major.
func (b BitArray) Bools() []bool {
	n := b.Len()
	out := make([]bool, n)
	for i := range out {
		out[i] = b.Chunks[i>>6]>>(i&63)&1 != 0
	}
	return out
}

// unusedMask is the mask of the unused bits of the last word of n bits
// (0 when n is a multiple of 64).
func unusedMask(n int64) uint64 {
	if n%64 == 0 {
		return 0
	}
	return ^uint64(0) << (n % 64)
}
