package layout

import (
	"errors"
	"fmt"
	"math/bits"
)

// ErrOverflow reports a size computation that does not fit in int64.
var ErrOverflow = errors.New("size overflows int64")

// ErrNegative reports a negative dimension, size or offset.
var ErrNegative = errors.New("negative size")

// Add returns a+b for non-negative a and b, or ok=false if the sum overflows
// int64 or either operand is negative.
func Add(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	s := a + b
	if s < 0 {
		return 0, false
	}
	return s, true
}

// Mul returns a*b for non-negative a and b, or ok=false on overflow or a
// negative operand.
func Mul(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > 1<<63-1 {
		return 0, false
	}
	return int64(lo), true
}

// Count returns the number of elements of an array of the given shape, the
// product of its dimensions (1 for a 0-d array). A negative dimension gives
// ErrNegative; a product that overflows int64 gives ErrOverflow — unless a
// dimension is 0, which makes the product 0 whatever the others are.
func Count(shape []int64) (int64, error) {
	n := int64(1)
	overflow := false
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("layout: dimension %d is %d: %w", i, d, ErrNegative)
		}
		if d == 0 {
			return 0, nil
		}
		if !overflow {
			var ok bool
			if n, ok = Mul(n, d); !ok {
				overflow = true
			}
		}
	}
	if overflow {
		return 0, fmt.Errorf("layout: shape %v: element count %w", shape, ErrOverflow)
	}
	return n, nil
}

// ByteSize returns Count(shape)·t.Size(), checked for overflow.
func ByteSize(t Type, shape []int64) (int64, error) {
	if !t.Valid() {
		return 0, fmt.Errorf("layout: invalid element type %v", t)
	}
	n, err := Count(shape)
	if err != nil {
		return 0, err
	}
	b, ok := Mul(n, int64(t.Size()))
	if !ok {
		return 0, fmt.Errorf("layout: shape %v of %v: byte size %w", shape, t, ErrOverflow)
	}
	return b, nil
}

// AlignUp returns the smallest multiple of a that is ≥ x. a must be ≥ 1;
// x must be ≥ 0. Overflow is an error.
func AlignUp(x, a int64) (int64, error) {
	if a < 1 {
		return 0, fmt.Errorf("layout: alignment %d is not positive", a)
	}
	if x < 0 {
		return 0, fmt.Errorf("layout: offset %d: %w", x, ErrNegative)
	}
	r := x % a
	if r == 0 {
		return x, nil
	}
	y, ok := Add(x, a-r)
	if !ok {
		return 0, fmt.Errorf("layout: aligning %d to %d: %w", x, a, ErrOverflow)
	}
	return y, nil
}
