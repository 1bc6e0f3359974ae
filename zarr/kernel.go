package zarr

import (
	"sort"

	"github.com/mmapkit/mmapkit/layout"
)

// plan is a strided copy between two boxes of elements: count elements
// along each (merged) axis, at strides src and dst elements apart. Axes
// are sorted by destination stride, fastest first, and merged where both
// sides are contiguous across them, so that the copy moves long runs.
type plan struct {
	cnt, src, dst []int64
	size          int64
}

// makePlan plans the copy of a box of count elements whose axes step by
// sstride elements in the source and dstride in the destination.
func makePlan(count, sstride, dstride []int64, size int) plan {
	type axis struct{ n, s, d int64 }
	var ax []axis
	for i := range count {
		if count[i] > 1 {
			ax = append(ax, axis{count[i], sstride[i], dstride[i]})
		}
	}
	sort.SliceStable(ax, func(i, j int) bool { return ax[i].d < ax[j].d })
	for i := 0; i+1 < len(ax); {
		if ax[i+1].s == ax[i].s*ax[i].n && ax[i+1].d == ax[i].d*ax[i].n {
			ax[i].n *= ax[i+1].n
			ax = append(ax[:i+1], ax[i+2:]...)
			continue
		}
		i++
	}
	p := plan{size: int64(size)}
	for _, a := range ax {
		p.cnt = append(p.cnt, a.n)
		p.src = append(p.src, a.s)
		p.dst = append(p.dst, a.d)
	}
	return p
}

// elems is the number of elements the plan copies.
func (p *plan) elems() int64 {
	n := int64(1)
	for _, c := range p.cnt {
		n *= c
	}
	return n
}

// contiguous reports whether the plan is one run in both source and
// destination.
func (p *plan) contiguous() bool {
	return len(p.cnt) == 0 || len(p.cnt) == 1 && p.src[0] == 1 && p.dst[0] == 1
}

// walk calls fn with the element offsets of every combination of the
// indices of the axes other than skip1 and skip2, starting from d0, s0.
func (p *plan) walk(skip1, skip2 int, d0, s0 int64, fn func(d, s int64)) {
	var axes []int
	for i := range p.cnt {
		if i != skip1 && i != skip2 {
			axes = append(axes, i)
		}
	}
	idx := make([]int64, len(axes))
	d, s := d0, s0
	for {
		fn(d, s)
		k := 0
		for ; k < len(axes); k++ {
			a := axes[k]
			idx[k]++
			d += p.dst[a]
			s += p.src[a]
			if idx[k] < p.cnt[a] {
				break
			}
			d -= p.dst[a] * p.cnt[a]
			s -= p.src[a] * p.cnt[a]
			idx[k] = 0
		}
		if k == len(axes) {
			return
		}
	}
}

// copy runs the plan from src (starting at element s0) into dst
// (starting at element d0): runs where both sides are contiguous, a
// cache-blocked transpose where their fastest axes differ, element by
// element otherwise.
func (p *plan) copy(dst []byte, d0 int64, src []byte, s0 int64) {
	sz := p.size
	switch {
	case len(p.cnt) == 0:
		copy(dst[d0*sz:(d0+1)*sz], src[s0*sz:(s0+1)*sz])
	case p.src[0] == 1 && p.dst[0] == 1:
		run := p.cnt[0] * sz
		p.walk(0, -1, d0, s0, func(d, s int64) {
			copy(dst[d*sz:d*sz+run], src[s*sz:s*sz+run])
		})
	case p.dst[0] == 1 && p.contig() > 0:
		j := p.contig()
		rows, cols := p.cnt[0], p.cnt[j]
		p.walk(0, j, d0, s0, func(d, s int64) {
			layout.Transpose(dst[d*sz:], p.dst[j], src[s*sz:], p.src[0], rows, cols, int(sz))
		})
	default:
		p.walk(-1, -1, d0, s0, func(d, s int64) {
			copy(dst[d*sz:(d+1)*sz], src[s*sz:(s+1)*sz])
		})
	}
}

// contig is the axis along which the source is contiguous, or 0.
func (p *plan) contig() int {
	for j := 1; j < len(p.src); j++ {
		if p.src[j] == 1 {
			return j
		}
	}
	return 0
}

// fill writes the element pattern (one element, repeated) into every
// destination position of the plan, starting at element d0.
func (p *plan) fill(dst []byte, d0 int64, elem []byte) {
	sz := p.size
	zero := true
	for _, c := range elem {
		zero = zero && c == 0
	}
	run := sz
	if len(p.cnt) > 0 && p.dst[0] == 1 {
		run = p.cnt[0] * sz
	}
	var pat []byte
	if !zero {
		pat = make([]byte, min(run, 64<<10/sz*sz+sz))
		for i := int64(0); i < int64(len(pat)); i += sz {
			copy(pat[i:], elem)
		}
	}
	put := func(b []byte) {
		if zero {
			clear(b)
			return
		}
		for len(b) > 0 {
			n := copy(b, pat)
			b = b[n:]
		}
	}
	if len(p.cnt) > 0 && p.dst[0] == 1 {
		p.walk(0, -1, d0, 0, func(d, _ int64) { put(dst[d*sz : d*sz+run]) })
		return
	}
	p.walk(-1, -1, d0, 0, func(d, _ int64) { put(dst[d*sz : (d+1)*sz]) })
}

// rowStrides are the strides, in elements, of a C-order array of shape.
func rowStrides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// orderStrides are the strides of an array of shape stored in order.
func orderStrides(shape []int64, order layout.Order) []int64 {
	if order == layout.RowMajor {
		return rowStrides(shape)
	}
	st := make([]int64, len(shape))
	s := int64(1)
	for i := range shape {
		st[i] = s
		s *= shape[i]
	}
	return st
}

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

// linearBoxes splits the elements [lo, hi) of a row-major array of shape
// q into at most 2·rank−1 boxes, in order, calling fn with each box's
// start and count.
func linearBoxes(q []int64, lo, hi int64, fn func(start, count []int64) error) error {
	if lo >= hi {
		return nil
	}
	if len(q) == 0 {
		return fn(nil, nil)
	}
	inner := int64(1)
	for _, d := range q[1:] {
		inner *= d
	}
	pre := func(i, n int64, rest []int64, restCount []int64) error {
		return fn(append([]int64{i}, rest...), append([]int64{n}, restCount...))
	}
	sub := func(i, a, b int64) error {
		return linearBoxes(q[1:], a, b, func(s, c []int64) error { return pre(i, 1, s, c) })
	}
	i0, i1 := lo/inner, (hi-1)/inner
	r0, r1 := lo%inner, (hi-1)%inner+1
	if i0 == i1 {
		return sub(i0, r0, r1)
	}
	if r0 != 0 {
		if err := sub(i0, r0, inner); err != nil {
			return err
		}
		i0++
	}
	last := r1 != inner
	if last {
		i1--
	}
	if i0 <= i1 {
		zero := make([]int64, len(q)-1)
		if err := pre(i0, i1-i0+1, zero, q[1:]); err != nil {
			return err
		}
	}
	if last {
		return sub(i1+1, 0, r1)
	}
	return nil
}
