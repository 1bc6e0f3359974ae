package mmapfile

import (
	"encoding/binary"
	"fmt"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
)

// hostOrder is the byte order of this machine.
var hostOrder binary.ByteOrder = binary.LittleEndian

func init() {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		hostOrder = binary.BigEndian
	}
}

// HostOrder returns the byte order of this machine (LittleEndian or
// BigEndian).
func HostOrder() binary.ByteOrder { return hostOrder }

// IsHostOrder reports whether order is this machine's byte order.
func IsHostOrder(order binary.ByteOrder) bool {
	// Comparing with the known orders keeps the view path free of
	// allocations; the probe handles any other implementation.
	switch order {
	case binary.LittleEndian:
		return hostOrder == binary.ByteOrder(binary.LittleEndian)
	case binary.BigEndian:
		return hostOrder == binary.ByteOrder(binary.BigEndian)
	case binary.NativeEndian:
		return true
	}
	var b [2]byte
	b[0] = 1
	return order.Uint16(b[:]) == hostOrder.Uint16(b[:])
}

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
	if size > 1 && !IsHostOrder(order) {
		return nil, r.errf(r.off+off, "view", fmt.Errorf("%v data in %v order: %w", t, order, ErrByteOrder))
	}
	b := r.data[lo:hi:hi]
	if unsafeslice.Addr(b)%uintptr(size) != 0 {
		return nil, r.errf(r.off+off, "view", fmt.Errorf("%v needs a multiple of %d: %w", t, size, ErrMisaligned))
	}
	if t == layout.Bool {
		var bad = -1
		if err := r.guardLocked(func() {
			for i, c := range b {
				if c > 1 {
					bad = i
					return
				}
			}
		}); err != nil {
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
	SwapOrder(out, t, order, hostOrder)
	CheckBools(out, t, true)
	return nil
}

// SwapOrder converts b, elements of type t in byte order from, to byte
// order to, in place: nothing when the orders agree, else each element
// (each part of a complex number) reversed. 128-bit integers are reversed
// whole, which turns big-endian bytes into the little-endian {Lo, Hi}
// layout and back. len(b) must be a multiple of t's size.
func SwapOrder(b []byte, t layout.Type, from, to binary.ByteOrder) {
	if t.SwapSize() <= 1 || sameOrder(from, to) {
		return
	}
	layout.SwapBytes(b, t.SwapSize())
}

func sameOrder(a, b binary.ByteOrder) bool {
	return IsHostOrder(a) == IsHostOrder(b)
}

// CheckBools checks that every byte of b, the bytes of a bool array, is 0
// or 1, as Go requires of bool memory. It returns the index of the first
// other byte, or -1. With fix set it makes every other byte 1 (true, as
// NumPy and Julia read it) and returns -1. For other types it does
// nothing and returns -1.
func CheckBools(b []byte, t layout.Type, fix bool) int {
	if t != layout.Bool {
		return -1
	}
	for i, c := range b {
		if c > 1 {
			if !fix {
				return i
			}
			b[i] = 1
		}
	}
	return -1
}
