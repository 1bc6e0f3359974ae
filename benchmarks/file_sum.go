package benchmarks

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/parallel"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
)

// viewBytes is format.View of record i with the record's own element
// type, as the bytes the view aliases: the one place that turns a
// layout.Type into the Go type a program would view the record as.
func viewBytes(f format.File, i int, t layout.Type) ([]byte, error) {
	switch t {
	case layout.I8:
		return viewAs[int8](f, i)
	case layout.I16:
		return viewAs[int16](f, i)
	case layout.I32:
		return viewAs[int32](f, i)
	case layout.I64:
		return viewAs[int64](f, i)
	case layout.U8:
		return viewAs[uint8](f, i)
	case layout.U16:
		return viewAs[uint16](f, i)
	case layout.U32:
		return viewAs[uint32](f, i)
	case layout.U64:
		return viewAs[uint64](f, i)
	case layout.F16:
		return viewAs[layout.Float16](f, i)
	case layout.F32:
		return viewAs[float32](f, i)
	case layout.F64:
		return viewAs[float64](f, i)
	case layout.Bool:
		return viewAs[bool](f, i)
	case layout.I128:
		return viewAs[layout.Int128](f, i)
	case layout.U128:
		return viewAs[layout.Uint128](f, i)
	case layout.JuliaChar:
		return viewAs[layout.Char](f, i)
	case layout.C64:
		return viewAs[complex64](f, i)
	case layout.C128:
		return viewAs[complex128](f, i)
	}
	return nil, fmt.Errorf("type %s: %w", t, errors.ErrUnsupported)
}

func viewAs[T layout.Elem](f format.File, i int) ([]byte, error) {
	v, err := format.View[T](f, i)
	if err != nil {
		return nil, err
	}
	return unsafeslice.Bytes(v), nil
}

// typedSum adds up b, host-order elements of type t (whole elements,
// aligned for t), as a program summing the record would: floats with the
// scan kernel, integers as integers, bools as counts, complex numbers by
// their parts, 128-bit integers by their low words.
func typedSum(t layout.Type, b []byte) float64 {
	switch xs := layout.SliceOf(t, b).(type) {
	case []float64:
		return sumF64(xs)
	case []float32:
		return sumF32(xs)
	case []int8:
		return float64(sumInts(xs))
	case []int16:
		return float64(sumInts(xs))
	case []int32:
		return float64(sumInts(xs))
	case []int64:
		return float64(sumInts(xs))
	case []uint8:
		return float64(sumInts(xs))
	case []uint16:
		return float64(sumInts(xs))
	case []uint32:
		return float64(sumInts(xs))
	case []uint64:
		return float64(sumInts(xs))
	case []layout.Char:
		return float64(sumInts(xs))
	case []bool:
		n := 0
		for _, x := range xs {
			if x {
				n++
			}
		}
		return float64(n)
	case []layout.Float16:
		s := 0.0
		for _, x := range xs {
			s += x.Float64()
		}
		return s
	case []complex64:
		var s complex128
		for _, x := range xs {
			s += complex128(x)
		}
		return real(s) + imag(s)
	case []complex128:
		var s complex128
		for _, x := range xs {
			s += x
		}
		return real(s) + imag(s)
	case []layout.Int128:
		var s uint64
		for _, x := range xs {
			s += x.Lo
		}
		return float64(s)
	case []layout.Uint128:
		var s uint64
		for _, x := range xs {
			s += x.Lo
		}
		return float64(s)
	}
	return 0
}

// sumInts adds integers in their own type with wrap-around, eight
// chains at a time, as a program's integer sum would.
func sumInts[T ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64](xs []T) uint64 {
	var a [8]uint64
	n := len(xs) / 8 * 8
	for i := 0; i < n; i += 8 {
		x := xs[i : i+8 : i+8]
		a[0] += uint64(x[0])
		a[1] += uint64(x[1])
		a[2] += uint64(x[2])
		a[3] += uint64(x[3])
		a[4] += uint64(x[4])
		a[5] += uint64(x[5])
		a[6] += uint64(x[6])
		a[7] += uint64(x[7])
	}
	s := a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7]
	for _, x := range xs[n:] {
		s += uint64(x)
	}
	return s
}

// typedSumParallel is typedSum with workers goroutines, each summing one
// contiguous part of whole pages (so that no two fault the same one).
func typedSumParallel(t layout.Type, b []byte, workers int) float64 {
	size := t.Size()
	unit := 4096 * size // whole pages, whole elements
	part := (len(b)/workers + unit - 1) / unit * unit
	sums := make([]float64, workers)
	_ = parallel.For(workers, workers, func(w int) error {
		lo := min(w*part, len(b))
		sums[w] = typedSum(t, b[lo:min(lo+part, len(b))])
		return nil
	})
	s := 0.0
	for _, x := range sums {
		s += x
	}
	return s
}

// elemsAt sums the elements of b (host-order elements of type t) at the
// given indexes.
func elemsAt(t layout.Type, b []byte, idx []int) float64 {
	size := t.Size()
	s := 0.0
	for _, i := range idx {
		s += typedSum(t, b[i*size:(i+1)*size])
	}
	return s
}
