package layout

import (
	"encoding/binary"
	"math"
)

// PutUint stores the low len(b) bytes of x in b, in byte order bo: one
// element of an integer (or bool, or a float's bits) of size len(b), which
// must be 1, 2, 4 or 8.
func PutUint(b []byte, bo binary.ByteOrder, x uint64) {
	switch len(b) {
	case 1:
		b[0] = byte(x)
	case 2:
		bo.PutUint16(b, uint16(x))
	case 4:
		bo.PutUint32(b, uint32(x))
	default:
		bo.PutUint64(b, x)
	}
}

// Uint reads the element of size len(b) (1, 2, 4 or 8) in byte order bo,
// zero-extended: the inverse of PutUint.
func Uint(b []byte, bo binary.ByteOrder) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(bo.Uint16(b))
	case 4:
		return uint64(bo.Uint32(b))
	}
	return bo.Uint64(b)
}

// Int reads the signed integer element of size len(b) (1, 2, 4 or 8) in
// byte order bo, sign-extended.
func Int(b []byte, bo binary.ByteOrder) int64 {
	shift := 64 - 8*uint(len(b))
	return int64(Uint(b, bo)<<shift) >> shift
}

// PutFloat stores x as an element of the float type t (F16, F32 or F64,
// rounding to the nearest) in b, in byte order bo.
func PutFloat(b []byte, bo binary.ByteOrder, t Type, x float64) {
	switch t {
	case F16:
		bo.PutUint16(b, uint16(Float16FromFloat64(x)))
	case F32:
		bo.PutUint32(b, math.Float32bits(float32(x)))
	default:
		bo.PutUint64(b, math.Float64bits(x))
	}
}

// Float reads the element of the float type t (F16, F32 or F64) in b, in
// byte order bo: the inverse of PutFloat.
func Float(b []byte, bo binary.ByteOrder, t Type) float64 {
	u := Uint(b, bo)
	switch t {
	case F16:
		return Float16(u).Float64()
	case F32:
		return float64(math.Float32frombits(uint32(u)))
	}
	return math.Float64frombits(u)
}
