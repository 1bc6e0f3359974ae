package layout

import "github.com/mmapkit/mmapkit/internal/unsafeslice"

// Elem is the set of Go types that can stand for one element of an array in
// a file. Every one is fixed-size and pointer-free, so a []T of them may
// alias file bytes. bool is included; views of bool must check that every
// byte is 0 or 1, since any other byte in Go bool memory is undefined.
type Elem interface {
	int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 |
		float32 | float64 | bool | Float16 | Char | Int128 | Uint128 |
		complex64 | complex128
}

// TypeOf returns the element type that T stands for. uint8 is U8 and
// uint32 is U32; use [Char] for Julia Chars and [Float16] for f16.
func TypeOf[T Elem]() Type {
	// Switching on a nil *T never boxes a value, so this does not allocate.
	switch any((*T)(nil)).(type) {
	case *int8:
		return I8
	case *int16:
		return I16
	case *int32:
		return I32
	case *int64:
		return I64
	case *uint8:
		return U8
	case *uint16:
		return U16
	case *uint32:
		return U32
	case *uint64:
		return U64
	case *Float16:
		return F16
	case *float32:
		return F32
	case *float64:
		return F64
	case *bool:
		return Bool
	case *Int128:
		return I128
	case *Uint128:
		return U128
	case *Char:
		return JuliaChar
	case *complex64:
		return C64
	case *complex128:
		return C128
	}
	return Invalid
}

// SliceOf returns b, host-order elements of type t, as the Go slice that
// stands for them ([]float64 for F64, []Char for JuliaChar, …), aliasing b.
// b must be aligned for t and hold a whole number of elements; it returns
// nil for Invalid.
func SliceOf(t Type, b []byte) any {
	switch t {
	case I8:
		return unsafeslice.Cast[int8](b)
	case I16:
		return unsafeslice.Cast[int16](b)
	case I32:
		return unsafeslice.Cast[int32](b)
	case I64:
		return unsafeslice.Cast[int64](b)
	case U8:
		return unsafeslice.Cast[uint8](b)
	case U16:
		return unsafeslice.Cast[uint16](b)
	case U32:
		return unsafeslice.Cast[uint32](b)
	case U64:
		return unsafeslice.Cast[uint64](b)
	case F16:
		return unsafeslice.Cast[Float16](b)
	case F32:
		return unsafeslice.Cast[float32](b)
	case F64:
		return unsafeslice.Cast[float64](b)
	case Bool:
		return unsafeslice.Cast[bool](b)
	case I128:
		return unsafeslice.Cast[Int128](b)
	case U128:
		return unsafeslice.Cast[Uint128](b)
	case JuliaChar:
		return unsafeslice.Cast[Char](b)
	case C64:
		return unsafeslice.Cast[complex64](b)
	case C128:
		return unsafeslice.Cast[complex128](b)
	}
	return nil
}

// MakeSlice allocates n zeroed elements of type t and returns them as
// the Go slice that stands for them (as SliceOf) and as its bytes; nil,
// nil for Invalid.
func MakeSlice(t Type, n int) (any, []byte) {
	if !t.Valid() {
		return nil, nil
	}
	b := unsafeslice.AlignedBytes(int64(n) * int64(t.Size()))
	return SliceOf(t, b), b
}

// BytesOf is the inverse of SliceOf: the element type of a slice of one of
// the Elem types and its memory, aliased. ok is false for any other value.
func BytesOf(v any) (t Type, b []byte, ok bool) {
	switch v := v.(type) {
	case []int8:
		return I8, unsafeslice.Bytes(v), true
	case []int16:
		return I16, unsafeslice.Bytes(v), true
	case []int32:
		return I32, unsafeslice.Bytes(v), true
	case []int64:
		return I64, unsafeslice.Bytes(v), true
	case []uint8:
		return U8, unsafeslice.Bytes(v), true
	case []uint16:
		return U16, unsafeslice.Bytes(v), true
	case []uint32:
		return U32, unsafeslice.Bytes(v), true
	case []uint64:
		return U64, unsafeslice.Bytes(v), true
	case []Float16:
		return F16, unsafeslice.Bytes(v), true
	case []float32:
		return F32, unsafeslice.Bytes(v), true
	case []float64:
		return F64, unsafeslice.Bytes(v), true
	case []bool:
		return Bool, unsafeslice.Bytes(v), true
	case []Int128:
		return I128, unsafeslice.Bytes(v), true
	case []Uint128:
		return U128, unsafeslice.Bytes(v), true
	case []Char:
		return JuliaChar, unsafeslice.Bytes(v), true
	case []complex64:
		return C64, unsafeslice.Bytes(v), true
	case []complex128:
		return C128, unsafeslice.Bytes(v), true
	}
	return Invalid, nil, false
}
