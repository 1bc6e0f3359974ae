package zarr

// permStrides are the strides of a unit of shape unit stored in C order
// over the axes perm[0], perm[1], … (perm[last] fastest).
func permStrides(unit []int64, perm []int) []int64 {
	st := make([]int64, len(unit))
	s := int64(1)
	for j := len(perm) - 1; j >= 0; j-- {
		st[perm[j]] = s
		s *= unit[perm[j]]
	}
	return st
}
