package layout

import "fmt"

// Reorder copies src, stored in order from with the logical shape, into dst
// in the other order. For a 2-D array it is a transpose: Julia's x[i,j]
// (column-major) becomes row-major x[i-1][j-1]. Arrays of rank < 2 are
// copied unchanged. len(dst) and len(src) must equal the element count.
func Reorder[T any](dst, src []T, shape []int64, from Order) error {
	n, err := Count(shape)
	if err != nil {
		return err
	}
	if int64(len(src)) != n || int64(len(dst)) != n {
		return fmt.Errorf("layout: reorder: %d and %d elements for shape %v (%d)", len(dst), len(src), shape, n)
	}
	if len(shape) < 2 || n == 0 {
		copy(dst, src)
		return nil
	}
	if len(shape) == 2 {
		transpose2(dst, src, shape, from)
		return nil
	}
	// General rank: walk the source in its own order with a counter of
	// indices, writing each element to its position in the other order.
	rank := len(shape)
	strides := make([]int64, rank) // strides of dst in the target order
	s := int64(1)
	if from == ColMajor { // target row-major: last index fastest
		for i := rank - 1; i >= 0; i-- {
			strides[i] = s
			s *= shape[i]
		}
	} else {
		for i := 0; i < rank; i++ {
			strides[i] = s
			s *= shape[i]
		}
	}
	idx := make([]int64, rank)
	var pos int64
	for k := int64(0); k < n; k++ {
		dst[pos] = src[k]
		// Advance the source-order counter.
		if from == ColMajor {
			for i := 0; i < rank; i++ {
				idx[i]++
				pos += strides[i]
				if idx[i] < shape[i] {
					break
				}
				pos -= strides[i] * shape[i]
				idx[i] = 0
			}
		} else {
			for i := rank - 1; i >= 0; i-- {
				idx[i]++
				pos += strides[i]
				if idx[i] < shape[i] {
					break
				}
				pos -= strides[i] * shape[i]
				idx[i] = 0
			}
		}
	}
	return nil
}

// transpose2 is the 2-D case, done in cache-sized tiles.
func transpose2[T any](dst, src []T, shape []int64, from Order) {
	// View the source as an r×c row-major matrix and write its transpose.
	r, c := shape[0], shape[1]
	if from == ColMajor {
		r, c = c, r
	}
	const tile = 32
	for i0 := int64(0); i0 < r; i0 += tile {
		i1 := min(i0+tile, r)
		for j0 := int64(0); j0 < c; j0 += tile {
			j1 := min(j0+tile, c)
			for i := i0; i < i1; i++ {
				row := src[i*c : i*c+c]
				for j := j0; j < j1; j++ {
					dst[j*r+i] = row[j]
				}
			}
		}
	}
}
