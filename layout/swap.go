package layout

import (
	"encoding/binary"
	"math/bits"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
)

// hostOrder is the byte order of this machine.
var hostOrder binary.ByteOrder = binary.LittleEndian

// hostLittle reports whether this machine is little-endian.
var hostLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func init() {
	if !hostLittle {
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
		return hostLittle
	case binary.BigEndian:
		return !hostLittle
	case binary.NativeEndian:
		return true
	}
	var b [2]byte
	b[0] = 1
	return order.Uint16(b[:]) == hostOrder.Uint16(b[:])
}

// SwapOrder converts b, elements of type t in byte order from, to byte
// order to, in place: nothing when the orders agree, else each element
// (each part of a complex number) reversed. 128-bit integers are reversed
// whole, which turns big-endian bytes into the little-endian {Lo, Hi}
// layout and back. len(b) must be a multiple of t's size.
func SwapOrder(b []byte, t Type, from, to binary.ByteOrder) {
	if t.SwapSize() <= 1 || IsHostOrder(from) == IsHostOrder(to) {
		return
	}
	SwapBytes(b, t.SwapSize())
}

// ElemBytes returns a new slice holding the bytes of v in byte order bo:
// what a typed Set writes into a file.
func ElemBytes[T Elem](v T, bo binary.ByteOrder) []byte {
	b := append([]byte(nil), unsafeslice.Bytes([]T{v})...)
	SwapOrder(b, TypeOf[T](), hostOrder, bo)
	return b
}

// CheckBools checks that every byte of b, the bytes of a bool array, is 0
// or 1, as Go requires of bool memory. It returns the index of the first
// other byte, or -1. With fix set it makes every other byte 1 (true, as
// NumPy and Julia read it) and returns -1. For other types it does
// nothing and returns -1.
func CheckBools(b []byte, t Type, fix bool) int {
	if t != Bool {
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

// SwapBytes reverses the byte order of each size-byte element of b in place
// (size 2, 4, 8 or 16; 16-byte elements are reversed whole, so a big-endian
// 128-bit integer becomes little-endian). Other sizes are left unchanged.
// len(b) must be a multiple of size.
func SwapBytes(b []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+1 < len(b); i += 2 {
			b[i], b[i+1] = b[i+1], b[i]
		}
	case 4:
		for i := 0; i+3 < len(b); i += 4 {
			v := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
			v = bits.ReverseBytes32(v)
			b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		}
	case 8, 16:
		for i := 0; i+size-1 < len(b); i += size {
			s := b[i : i+size]
			for l, r := 0, size-1; l < r; l, r = l+1, r-1 {
				s[l], s[r] = s[r], s[l]
			}
		}
	}
}
