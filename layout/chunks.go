package layout

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseShape parses a shape given on a command line, "512,1024"; "" is
// nil. what names the option in errors.
func ParseShape(what, s string) ([]int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int64
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%s %q: %q is not a positive integer", what, s, p)
		}
		out = append(out, v)
	}
	return out, nil
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0, without overflowing.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// ChooseChunks picks chunks of about target bytes for an array of shape
// and elements of size bytes: whole along the fastest axes of the storage
// order, split evenly along the first axis that does not fit. Every chunk
// dimension is at least 1.
func ChooseChunks(shape []int64, order Order, size int, target int64) []int64 {
	k := len(shape)
	c := make([]int64, k)
	axis := func(j int) int { // j-th fastest axis
		if order == ColMajor {
			return j
		}
		return k - 1 - j
	}
	inner := int64(size)
	for j := 0; j < k; j++ {
		i := axis(j)
		d := max(shape[i], 1)
		if b, ok := Mul(inner, d); ok && b <= target {
			c[i] = d
			inner = b
			continue
		}
		// Without overflow: a dimension near 2^63 splits too.
		rows := max(1, target/inner)
		n := ceilDiv(d, rows)
		c[i] = ceilDiv(d, n)
		for jj := j + 1; jj < k; jj++ {
			c[axis(jj)] = 1
		}
		break
	}
	return c
}
