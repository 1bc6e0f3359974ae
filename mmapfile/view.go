package mmapfile

import (
	"encoding/binary"
	"fmt"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
)

// View returns n elements of type T starting at region offset off, as a
// slice that aliases the mapping: no copy is made, and writes to the slice
// (in a writable region) change the file. order is the byte order of the
// data in the file.
//
// View fails, with an error naming the file offset, if the range is outside
// the region (ErrOutOfRange), if the address is not a multiple of T's size
// (ErrMisaligned), if T is wider than a byte and order is not the host's
// (ErrByteOrder), or, for bool, if a byte is neither 0 nor 1
// (ErrInvalidBool). Use Copy where View cannot alias.
//
// The slice is valid until the region is unmapped or the file closed; see
// the package documentation for what is unsafe.
func View[T layout.Elem](r *Region, off int64, n int, order binary.ByteOrder) ([]T, error) {
	size := int64(unsafeslice.SizeOf[T]())
	nb, ok := layout.Mul(int64(n), size)
	if !ok {
		return nil, r.errf(r.off+off, "view", fmt.Errorf("%d elements of %d bytes: %w", n, size, ErrOutOfRange))
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	lo, hi, err := r.check(off, nb, "view")
	if err != nil {
		return nil, err
	}
	t := layout.TypeOf[T]()
	if size > 1 && !layout.IsHostOrder(order) {
		return nil, r.errf(r.off+off, "view", fmt.Errorf("%v data in %v order: %w", t, order, ErrByteOrder))
	}
	b := r.data[lo:hi:hi]
	if unsafeslice.Addr(b)%uintptr(size) != 0 {
		return nil, r.errf(r.off+off, "view", fmt.Errorf("%v needs a multiple of %d: %w", t, size, ErrMisaligned))
	}
	if t == layout.Bool {
		var bad = -1
		if err := r.guardLocked(func() { bad = layout.CheckBools(b, t, false) }); err != nil {
			return nil, err
		}
		if bad >= 0 {
			return nil, r.errf(r.off+off+int64(bad), "view", fmt.Errorf("byte 0x%02x: %w", b[bad], ErrInvalidBool))
		}
	}
	return unsafeslice.Cast[T](b), nil
}

// Copy copies len(dst) elements from region offset off into dst, swapping
// bytes when order is not the host's (bool bytes other than 0/1 become
// true). It always copies — one bulk memmove, then an in-place swap — and
// works at any alignment. A fault is an error wrapping ErrFault.
func Copy[T layout.Elem](dst []T, r *Region, off int64, order binary.ByteOrder) error {
	out := unsafeslice.Bytes(dst)
	if _, err := r.ReadAt(out, off); err != nil {
		return err
	}
	t := layout.TypeOf[T]()
	layout.SwapOrder(out, t, order, layout.HostOrder())
	layout.CheckBools(out, t, true)
	return nil
}
