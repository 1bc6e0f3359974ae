package npy

import (
	"slices"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// blockBytes bounds the blocks a gather reads from a file or an inflated
// stream: large enough that each read is long, small enough to stay in
// the cache while its elements are taken out.
const blockBytes = 1 << 20

// gather copies the target's elements [first, first+len(dst)/size), as
// they are stored (the file's byte order, bools unchecked), listed in
// order over the target's logical shape, or, with storage, in storage
// order (the array's order, a subarray field's own dimensions fastest).
// The listing is cut into boxes, each one strided copy: straight from the
// mapping when there is one, else from blocks read from the file or the
// inflated member.
func (f *File) gather(t *target, dst []byte, first int64, order layout.Order, storage bool) error {
	a := t.a
	item, size, off := int64(a.h.DType.ItemSize), int64(t.dtype().ItemSize), int64(0)
	var sub []int64
	if t.field != nil {
		off, sub = int64(t.field.Offset), t.field.Shape
	}
	n := int64(len(dst)) / size
	if n == 0 {
		return nil
	}
	errOff := f.elemOffset(t, 0)
	if storage {
		errOff = f.elemOffset(t, first)
	}
	fail := func(err error) error { return mapRecordErr(f.name, t.name, errOff, err, "reading its data") }
	// The copy moves units of u bytes: the element, or a divisor of it
	// where a field's offset or its record's size is no multiple of it.
	u := gcd(gcd(item, size), off)
	w := size / u // units per element
	outer := a.h.Shape
	shape := t.shape()
	k := len(shape)
	// Per axis: its stride in the source (units) and in the listing
	// (elements), and a last axis for the units of one element.
	src := make([]int64, k+1)
	list := make([]int64, k)
	subN := int64(1)
	for _, d := range sub {
		subN *= d
	}
	for i, s := range layout.Strides(outer, a.h.Order()) {
		src[i] = s * item / u
		list[i] = s * subN
	}
	for i, s := range layout.Strides(sub, layout.RowMajor) {
		src[len(outer)+i] = s * size / u
		list[len(outer)+i] = s
	}
	if !storage {
		list = layout.Strides(shape, order)
	}
	dstSt := make([]int64, k+1)
	for i, s := range list {
		dstSt[i] = s * w
	}
	src[k], dstSt[k] = 1, 1
	// The listing is row-major over the axes sorted by listing stride.
	perm := make([]int, k)
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(x, y int) int { return int(min(1, max(-1, list[y]-list[x]))) })
	q := make([]int64, k)
	for j, ax := range perm {
		q[j] = shape[ax]
	}
	count := make([]int64, k+1)
	count[k] = w
	var c layout.StridedCopy
	// plan plans the box at start (listing axes), returning its first
	// source and destination units and the source units it spans.
	plan := func(start, cnt []int64) (s0, d0, span int64) {
		s0, d0, span = off/u, -first*w, w
		for j, ax := range perm {
			count[ax] = cnt[j]
			s0 += start[j] * src[ax]
			d0 += start[j] * dstSt[ax]
			span += (cnt[j] - 1) * src[ax]
		}
		c.Plan(count, src, dstSt, int(u))
		return s0, d0, span
	}
	data, base, err := f.source(a)
	if err != nil {
		return err
	}
	if reg, ok := data.(*mmapfile.Region); ok {
		b := reg.Bytes()
		if base < 0 || base+a.h.dataSize > int64(len(b)) {
			return fail(mmapfile.ErrTruncated)
		}
		view := b[base : base+a.h.dataSize]
		lo, hi := int64(len(view)), int64(0)
		if err := reg.Guard(func() {
			_ = layout.LinearBoxes(q, first, first+n, func(start, cnt []int64) error {
				s0, d0, span := plan(start, cnt)
				c.Copy(dst, d0, view, s0)
				lo, hi = min(lo, s0*u), max(hi, (s0+span)*u)
				return nil
			})
		}); err != nil {
			return fail(err)
		}
		if err := reg.InFile(base+lo, hi-lo); err != nil {
			return fail(err)
		}
		return nil
	}
	buf := make([]byte, max(item, min(blockBytes, a.h.dataSize)))
	read := func(b []byte, o int64) error {
		if err := readFull(data, b, base+o); err != nil {
			return fail(err)
		}
		if o+int64(len(b)) > a.h.dataSize-item {
			// The last record is read: a deflated member's stream is
			// checked to its end.
			return a.checkEnd(base + a.h.dataSize)
		}
		return nil
	}
	return layout.LinearBoxes(q, first, first+n, func(start, cnt []int64) error {
		s0, d0, _ := plan(start, cnt)
		return c.CopyFrom(dst, d0, s0, buf, read)
	})
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
