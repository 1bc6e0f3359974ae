package layout

import (
	"fmt"
	"runtime"

	"github.com/mmapkit/mmapkit/internal/parallel"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
)

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
	return ReorderBytes(unsafeslice.Bytes(dst), unsafeslice.Bytes(src), unsafeslice.SizeOf[T](), shape, from)
}

// ReorderBytes is Reorder on raw bytes: src holds the elements of size
// bytes of an array of the given logical shape in order from; dst receives
// them in the other order. Every rank is one pass of cache-sized tiles.
func ReorderBytes(dst, src []byte, size int, shape []int64, from Order) error {
	nb, err := Count(shape)
	if err == nil {
		var ok bool
		if nb, ok = Mul(nb, int64(size)); !ok {
			err = ErrOverflow
		}
	}
	if err != nil {
		return err
	}
	if size <= 0 || int64(len(src)) != nb || int64(len(dst)) != nb {
		return fmt.Errorf("layout: reorder: %d and %d bytes for shape %v of %d-byte elements", len(dst), len(src), shape, size)
	}
	if Trivial(shape) {
		copy(dst, src)
		return nil
	}
	// Order from of shape s is row-major of p (s itself, or reversed for
	// column-major); the other order is row-major of p reversed. So the
	// job is always: reverse the axes of a row-major array of shape p.
	p := append([]int64(nil), shape...)
	if from == ColMajor {
		reverse(p)
	}
	ReverseAxes(dst, src, size, p)
	return nil
}

// Trivial reports whether row-major and column-major order list the
// elements of an array of this shape the same way: at most one dimension
// is larger than 1 (or the array is empty).
func Trivial(shape []int64) bool {
	big := 0
	for _, d := range shape {
		if d == 0 {
			return true
		}
		if d > 1 {
			big++
		}
	}
	return big <= 1
}

// ReverseAxes writes into dst the row-major array of shape reverse(p)
// whose element [i_{k-1}, …, i_0] is src's [i_0, …, i_{k-1}], src being
// row-major with shape p: the transpose of every rank, in one pass of
// cache-sized tiles, on every core for large arrays. len(src) and len(dst)
// must be prod(p)·size.
func ReverseAxes(dst, src []byte, size int, p []int64) {
	if len(p) < 2 {
		copy(dst, src)
		return
	}
	n := int64(size)
	for _, d := range p {
		n *= d
	}
	_ = Split(p[0], tileFor(size), n, func(r0, r1 int64) error {
		ReverseAxesRows(dst, src, size, p, p[len(p)-1], r0, r1)
		return nil
	})
}

// ReverseAxesRows is ReverseAxes for the rows [r0, r1) of src's first
// axis only, and for a source whose last axis holds srcLast ≥ p[k-1]
// elements of which the first p[k-1] are taken (a band of a larger
// array). dst and src are the whole target and source; only the target
// elements of those rows are written. It is the kernel for callers that
// split the work themselves, for instance to guard each part against
// faults in a mapping.
func ReverseAxesRows(dst, src []byte, size int, p []int64, srcLast, r0, r1 int64) {
	k := len(p)
	if k < 2 || r0 >= r1 {
		if k < 2 {
			copy(dst, src)
		}
		return
	}
	first, last := p[0], p[k-1]
	mid := p[1 : k-1]
	var m int64 = 1
	for _, d := range mid {
		m *= d
	}
	sz := int64(size)
	// Each combination of the middle indices is one strided 2-D transpose
	// of the first and last axes. Source offsets of the middle indices
	// step row-major over mid; the target holds them reversed, so its
	// offset is row-major over the reversed mid: walk an odometer over
	// mid, tracking both.
	srcStride := m * srcLast // elements between src[i_0] and src[i_0+1]
	dstStride := m * first
	idx := make([]int64, len(mid))
	// dstMid[j] is the target stride of mid index j: the product of the
	// mid dims before it (they come after it in the target), times first.
	dstMid := make([]int64, len(mid))
	s := int64(1)
	for j := range mid {
		dstMid[j] = s * first
		s *= mid[j]
	}
	var dOff int64
	for sm := int64(0); sm < m; sm++ {
		so := (r0*srcStride + sm*srcLast) * sz
		do := (dOff + r0) * sz
		transposeStrided(dst[do:], dstStride, src[so:], srcStride, r1-r0, last, size)
		for j := len(mid) - 1; j >= 0; j-- {
			idx[j]++
			dOff += dstMid[j]
			if idx[j] < mid[j] {
				break
			}
			dOff -= dstMid[j] * mid[j]
			idx[j] = 0
		}
	}
}

// Transpose writes dst[j·dstStride + i] = src[i·srcStride + j] for i in
// [0, rows) and j in [0, cols), strides and indexes counted in elements of
// size bytes: the transpose of a rows×cols block of a row-major matrix
// into a cols×rows block of another, in cache-sized tiles, on the calling
// goroutine. Split rows with Split to use every core.
func Transpose(dst []byte, dstStride int64, src []byte, srcStride int64, rows, cols int64, size int) {
	transposeStrided(dst, dstStride, src, srcStride, rows, cols, size)
}

// Split calls fn for consecutive ranges [r0, r1) covering [0, rows), one
// per core and concurrently when the work (bytes in all) is large enough
// to pay for goroutines, else once on the calling goroutine. Each range is
// a multiple of unit rows but the last. It returns the first error.
func Split(rows, unit, bytes int64, fn func(r0, r1 int64) error) error {
	workers := int64(runtime.GOMAXPROCS(0))
	if bytes < parallelBytes || workers < 2 || rows < 2*unit {
		return fn(0, rows)
	}
	per := (rows/workers + unit - 1) / unit * unit
	parts := int((rows + per - 1) / per)
	return parallel.For(parts, parts, func(j int) error {
		r0 := int64(j) * per
		return fn(r0, min(r0+per, rows))
	})
}

// parallelBytes is the amount of work from which Split uses more than one
// core: below it, starting goroutines costs more than it saves.
const parallelBytes = 4 << 20

// TileRows is the tile edge Transpose uses for elements of size bytes; a
// range of rows handed to separate cores is best a multiple of it.
func TileRows(size int) int64 { return tileFor(size) }

// tileFor is the tile edge for elements of size bytes: a tile row of
// 64–128 bytes, so that a source and a target tile stay in L1.
func tileFor(size int) int64 {
	switch {
	case size <= 2:
		return 32
	case size <= 8:
		return 16
	}
	return 8
}

func transposeStrided(dst []byte, dstStride int64, src []byte, srcStride int64, rows, cols int64, size int) {
	if rows == 0 || cols == 0 {
		return
	}
	// The slices cover exactly the touched range, so that the casts below
	// (and the element loops) stay inside the caller's buffers.
	srcLen := ((rows-1)*srcStride + cols) * int64(size)
	dstLen := ((cols-1)*dstStride + rows) * int64(size)
	src, dst = src[:srcLen], dst[:dstLen]
	switch {
	case size == 1:
		tiles(dst, dstStride, src, srcStride, rows, cols, 32)
		return
	case size == 2 && aligned[uint16](dst, src):
		tiles(unsafeslice.Cast[uint16](dst), dstStride, unsafeslice.Cast[uint16](src), srcStride, rows, cols, 32)
		return
	case size == 4 && aligned[uint32](dst, src):
		tiles(unsafeslice.Cast[uint32](dst), dstStride, unsafeslice.Cast[uint32](src), srcStride, rows, cols, 16)
		return
	case size == 8 && aligned[uint64](dst, src):
		tiles(unsafeslice.Cast[uint64](dst), dstStride, unsafeslice.Cast[uint64](src), srcStride, rows, cols, 16)
		return
	case size == 16 && aligned[uint64](dst, src):
		tiles(unsafeslice.Cast[[2]uint64](dst), dstStride, unsafeslice.Cast[[2]uint64](src), srcStride, rows, cols, 8)
		return
	}
	// Any other size or alignment: byte copies per element, same tiling.
	t := tileFor(size)
	sz := int64(size)
	for i0 := int64(0); i0 < rows; i0 += t {
		i1 := min(i0+t, rows)
		for j0 := int64(0); j0 < cols; j0 += t {
			j1 := min(j0+t, cols)
			for i := i0; i < i1; i++ {
				for j := j0; j < j1; j++ {
					copy(dst[(j*dstStride+i)*sz:(j*dstStride+i+1)*sz], src[(i*srcStride+j)*sz:])
				}
			}
		}
	}
}

func tiles[T any](dst []T, dstStride int64, src []T, srcStride int64, rows, cols, t int64) {
	for i0 := int64(0); i0 < rows; i0 += t {
		i1 := min(i0+t, rows)
		for j0 := int64(0); j0 < cols; j0 += t {
			j1 := min(j0+t, cols)
			for i := i0; i < i1; i++ {
				row := src[i*srcStride+j0 : i*srcStride+j1]
				d := j0*dstStride + i
				for _, v := range row {
					dst[d] = v
					d += dstStride
				}
			}
		}
	}
}

func aligned[T any](a, b []byte) bool { return unsafeslice.Aligned[T](a) && unsafeslice.Aligned[T](b) }

func reverse(p []int64) {
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
}
