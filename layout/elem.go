package layout

// Elem is the set of Go types that can stand for one element of an array in
// a file. Every one is fixed-size and pointer-free, so a []T of them may
// alias file bytes. bool is included; views of bool must check that every
// byte is 0 or 1, since any other byte in Go bool memory is undefined.
type Elem interface {
	int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 |
		float32 | float64 | bool | Float16 | Char | Int128 | Uint128
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
	}
	return Invalid
}
