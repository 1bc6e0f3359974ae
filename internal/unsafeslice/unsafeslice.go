// Package unsafeslice is the one place in mmapkit that imports unsafe. It
// reinterprets byte slices as slices of fixed-size, pointer-free element
// types and back, without copying.
//
// Callers must check bounds, length and alignment first (Aligned, and
// len(b) a multiple of the element size); the functions here panic on a
// misaligned or ragged input instead of producing an invalid slice. The
// resulting slices alias the input: they live exactly as long as the memory
// behind it, which for a mapping ends at munmap.
package unsafeslice

import (
	"fmt"
	"unsafe"
)

// SizeOf returns the size in bytes of T.
func SizeOf[T any]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// AlignOf returns the alignment Go requires for T.
func AlignOf[T any]() int {
	var z T
	return int(unsafe.Alignof(z))
}

// Aligned reports whether b's first byte is aligned for T. An empty slice is
// always aligned.
func Aligned[T any](b []byte) bool {
	if len(b) == 0 {
		return true
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(AlignOf[T]()) == 0
}

// Cast returns b reinterpreted as []T, aliasing b. len(b) must be a
// multiple of SizeOf[T] and b must be Aligned for T. An empty b gives an
// empty non-nil slice.
func Cast[T any](b []byte) []T {
	size := SizeOf[T]()
	if len(b)%size != 0 {
		panic(fmt.Sprintf("unsafeslice: %d bytes is not a multiple of the element size %d", len(b), size))
	}
	if len(b) == 0 {
		return []T{}
	}
	if !Aligned[T](b) {
		panic("unsafeslice: misaligned cast")
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
}

// AlignedBytes allocates n zeroed bytes whose first byte is aligned for
// every element type Go has, so that Cast works on any prefix of a whole
// number of elements.
func AlignedBytes(n int64) []byte {
	return Bytes(make([]uint64, (n+7)/8))[:n]
}

// Bytes returns the memory of s as a []byte, aliasing s.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*SizeOf[T]())
}

// Addr returns the address of b's first byte (0 for an empty slice), for
// tests that prove a slice aliases a mapping and for fault-address checks.
func Addr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}

// AddrOf returns the address of s's first element (0 if empty).
func AddrOf[T any](s []T) uintptr {
	if len(s) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(s)))
}

// Pointer returns the address of b's first byte as an unsafe.Pointer (nil
// for an empty slice), for system calls that take one, such as mmap placing
// a reservation exactly over an existing mapping.
func Pointer(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}
