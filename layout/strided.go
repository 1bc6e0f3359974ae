package layout

// A StridedCopy copies a box of elements between two arrays whose axes
// step by given strides (in elements): a chunk into its place in an array,
// part of an array into a chunk, with any order of axes on either side.
//
// Axes are sorted by destination stride, fastest first, and merged where
// both sides are contiguous across them, so that the copy moves long runs:
// runs where both sides are contiguous, a cache-blocked transpose where
// their fastest axes differ, a strided gather in typed loads where only the
// destination is contiguous, element by element otherwise. Callers check
// that every element of the box lies inside both slices. A StridedCopy
// keeps scratch memory: one goroutine uses it at a time, planning it again
// for each box (Plan), which allocates nothing once it has seen the rank.
type StridedCopy struct {
	cnt, src, dst []int64
	size          int64
	axes          []int // scratch of walk
	idx           []int64
	ord           []int        // scratch of CopyFrom: axes by source stride
	subCnt        []int64      // scratch of CopyFrom: a sub-box's counts
	sub           *StridedCopy // a sub-box of CopyFrom
}

// NewStridedCopy plans the copy of a box of count elements of size bytes
// whose axes step by srcStrides elements in the source and dstStrides in
// the destination.
func NewStridedCopy(count, srcStrides, dstStrides []int64, size int) *StridedCopy {
	c := new(StridedCopy)
	c.Plan(count, srcStrides, dstStrides, size)
	return c
}

// Plan plans c again, as NewStridedCopy does, reusing its memory.
func (c *StridedCopy) Plan(count, srcStrides, dstStrides []int64, size int) {
	c.size = int64(size)
	c.cnt, c.src, c.dst = c.cnt[:0], c.src[:0], c.dst[:0]
	for i := range count {
		if count[i] <= 1 {
			continue
		}
		// Insert by destination stride (stable: after equal strides).
		k := len(c.cnt)
		c.cnt, c.src, c.dst = append(c.cnt, 0), append(c.src, 0), append(c.dst, 0)
		for ; k > 0 && c.dst[k-1] > dstStrides[i]; k-- {
			c.cnt[k], c.src[k], c.dst[k] = c.cnt[k-1], c.src[k-1], c.dst[k-1]
		}
		c.cnt[k], c.src[k], c.dst[k] = count[i], srcStrides[i], dstStrides[i]
	}
	for i := 0; i+1 < len(c.cnt); {
		if c.src[i+1] == c.src[i]*c.cnt[i] && c.dst[i+1] == c.dst[i]*c.cnt[i] {
			c.cnt[i] *= c.cnt[i+1]
			c.cnt = append(c.cnt[:i+1], c.cnt[i+2:]...)
			c.src = append(c.src[:i+1], c.src[i+2:]...)
			c.dst = append(c.dst[:i+1], c.dst[i+2:]...)
			continue
		}
		i++
	}
}

// Elems is the number of elements the copy moves.
func (p *StridedCopy) Elems() int64 {
	n := int64(1)
	for _, c := range p.cnt {
		n *= c
	}
	return n
}

// Contiguous reports whether the box is one run in both source and
// destination.
func (p *StridedCopy) Contiguous() bool {
	return len(p.cnt) == 0 || len(p.cnt) == 1 && p.src[0] == 1 && p.dst[0] == 1
}

// walk calls fn with the element offsets of every combination of the
// indices of the axes other than skip1 and skip2, starting from d0, s0.
func (p *StridedCopy) walk(skip1, skip2 int, d0, s0 int64, fn func(d, s int64)) {
	axes := p.axes[:0]
	for i := range p.cnt {
		if i != skip1 && i != skip2 {
			axes = append(axes, i)
		}
	}
	p.axes = axes
	if cap(p.idx) < len(axes) {
		p.idx = make([]int64, len(p.cnt))
	}
	idx := p.idx[:len(axes)]
	clear(idx)
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

// Copy copies the box from src (its first element at element s0) into
// dst (its first element at element d0).
func (p *StridedCopy) Copy(dst []byte, d0 int64, src []byte, s0 int64) {
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
			Transpose(dst[d*sz:], p.dst[j], src[s*sz:], p.src[0], rows, cols, int(sz))
		})
	case p.dst[0] == 1:
		// A strided gather into runs (a field out of records): a
		// transpose of one column, in typed loads.
		rows := p.cnt[0]
		p.walk(0, -1, d0, s0, func(d, s int64) {
			Transpose(dst[d*sz:], 1, src[s*sz:], p.src[0], rows, 1, int(sz))
		})
	default:
		p.walk(-1, -1, d0, s0, func(d, s int64) {
			copy(dst[d*sz:(d+1)*sz], src[s*sz:(s+1)*sz])
		})
	}
}

// CopyFrom is Copy from a source that is not in memory (a file read with
// ReadAt, a stream being inflated): read(b, off) fills b with the source's
// bytes from byte off, counted from the source's element 0. The box is
// cut along the axes that are slowest in the source into sub-boxes whose
// bytes, from first to last, fit in buf; each is read with one call, in
// increasing offsets, and copied from buf. Elements far apart (a single
// step of an axis longer than buf) are read apart rather than with the
// bytes between them. len(buf) must be at least the element size.
func (p *StridedCopy) CopyFrom(dst []byte, d0, s0 int64, buf []byte, read func(b []byte, off int64) error) error {
	sz := p.size
	if len(p.cnt) == 0 {
		if err := read(buf[:sz], s0*sz); err != nil {
			return err
		}
		copy(dst[d0*sz:(d0+1)*sz], buf)
		return nil
	}
	// Axes from slowest to fastest in the source.
	p.ord = p.ord[:0]
	for a := range p.cnt {
		k := len(p.ord)
		p.ord = append(p.ord, a)
		for ; k > 0 && p.src[p.ord[k-1]] < p.src[a]; k-- {
			p.ord[k] = p.ord[k-1]
		}
		p.ord[k] = a
	}
	if cap(p.subCnt) < len(p.cnt) {
		p.subCnt = make([]int64, len(p.cnt))
	}
	p.subCnt = p.subCnt[:len(p.cnt)]
	if p.sub == nil {
		p.sub = new(StridedCopy)
	}
	return p.copyFrom(0, dst, d0, s0, buf, read)
}

// copyFrom copies the sub-box of axes ord[level:] (the slower ones at
// the index that d and s reach) for CopyFrom.
func (p *StridedCopy) copyFrom(level int, dst []byte, d, s int64, buf []byte, read func(b []byte, off int64) error) error {
	sz := p.size
	inner := sz // bytes from the first to the last element of one step of ax
	for _, a := range p.ord[level+1:] {
		inner += (p.cnt[a] - 1) * p.src[a] * sz
	}
	ax := p.ord[level]
	if inner > int64(len(buf)) {
		for i := range p.cnt[ax] {
			if err := p.copyFrom(level+1, dst, d+i*p.dst[ax], s+i*p.src[ax], buf, read); err != nil {
				return err
			}
		}
		return nil
	}
	step := p.src[ax] * sz
	per := 1 + (int64(len(buf))-inner)/step
	for i := int64(0); i < p.cnt[ax]; i += per {
		m := min(per, p.cnt[ax]-i)
		if err := read(buf[:(m-1)*step+inner], (s+i*p.src[ax])*sz); err != nil {
			return err
		}
		for j, a := range p.ord {
			switch {
			case j < level:
				p.subCnt[a] = 1
			case j == level:
				p.subCnt[a] = m
			default:
				p.subCnt[a] = p.cnt[a]
			}
		}
		p.sub.Plan(p.subCnt, p.src, p.dst, int(sz))
		p.sub.Copy(dst, d+i*p.dst[ax], buf, 0)
	}
	return nil
}

// contig is the axis along which the source is contiguous, or 0.
func (p *StridedCopy) contig() int {
	for j := 1; j < len(p.src); j++ {
		if p.src[j] == 1 {
			return j
		}
	}
	return 0
}

// Fill writes elem (one element's bytes) into every destination position
// of the box, its first at element d0.
func (p *StridedCopy) Fill(dst []byte, d0 int64, elem []byte) {
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

// Strides are the strides, in elements, of an array of shape stored in
// order.
func Strides(shape []int64, order Order) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	if order == RowMajor {
		for i := len(shape) - 1; i >= 0; i-- {
			st[i] = s
			s *= shape[i]
		}
		return st
	}
	for i := range shape {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// LinearBoxes splits the elements [lo, hi) of a row-major array of shape
// into at most 2·rank−1 boxes, in order, calling fn with each box's start
// and count: a linear range as the boxes a StridedCopy moves.
func LinearBoxes(shape []int64, lo, hi int64, fn func(start, count []int64) error) error {
	if lo >= hi {
		return nil
	}
	if len(shape) == 0 {
		return fn(nil, nil)
	}
	inner := int64(1)
	for _, d := range shape[1:] {
		inner *= d
	}
	pre := func(i, n int64, rest []int64, restCount []int64) error {
		return fn(append([]int64{i}, rest...), append([]int64{n}, restCount...))
	}
	sub := func(i, a, b int64) error {
		return LinearBoxes(shape[1:], a, b, func(s, c []int64) error { return pre(i, 1, s, c) })
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
		zero := make([]int64, len(shape)-1)
		if err := pre(i0, i1-i0+1, zero, shape[1:]); err != nil {
			return err
		}
	}
	if last {
		return sub(i1+1, 0, r1)
	}
	return nil
}
