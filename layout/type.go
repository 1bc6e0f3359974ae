package layout

import "fmt"

// Type is an element type. The zero value is Invalid.
type Type uint8

// The element types. Names are Futhark's, plus i128, u128 and char for
// AlignedBinaryFormat.jl and c64, c128 for NumPy and Zarr.
const (
	Invalid Type = iota
	I8
	I16
	I32
	I64
	U8
	U16
	U32
	U64
	F16
	F32
	F64
	Bool
	I128
	U128
	JuliaChar // Julia's 32-bit Char, named "char" (see [Char])
	C64       // complex64: two f32, real part first (NumPy's complex64)
	C128      // complex128: two f64, real part first (NumPy's complex128)
)

var typeInfo = [...]struct {
	name string
	size int
}{
	Invalid:   {"invalid", 0},
	I8:        {"i8", 1},
	I16:       {"i16", 2},
	I32:       {"i32", 4},
	I64:       {"i64", 8},
	U8:        {"u8", 1},
	U16:       {"u16", 2},
	U32:       {"u32", 4},
	U64:       {"u64", 8},
	F16:       {"f16", 2},
	F32:       {"f32", 4},
	F64:       {"f64", 8},
	Bool:      {"bool", 1},
	I128:      {"i128", 16},
	U128:      {"u128", 16},
	JuliaChar: {"char", 4},
	C64:       {"c64", 8},
	C128:      {"c128", 16},
}

// Types lists every valid element type in declaration order.
func Types() []Type {
	return []Type{I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, Bool, I128, U128, JuliaChar, C64, C128}
}

// String returns the type's name ("f64", "i128", "char"), or "invalid".
func (t Type) String() string {
	if int(t) < len(typeInfo) {
		return typeInfo[t].name
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Size is the element size in bytes; 0 for Invalid.
func (t Type) Size() int {
	if int(t) < len(typeInfo) {
		return typeInfo[t].size
	}
	return 0
}

// Align is the natural alignment of the element type: its size, as in
// AlignedBinaryFormat.jl and C on 64-bit hosts (16 for 128-bit integers),
// except for complex numbers, which align as their parts do (4 for c64,
// 8 for c128), as in C and Go.
func (t Type) Align() int {
	if t.IsComplex() {
		return t.Size() / 2
	}
	return t.Size()
}

// SwapSize is the size of the units that a change of byte order reverses:
// the element size, or the size of one part of a complex number.
func (t Type) SwapSize() int { return t.Align() }

// Valid reports whether t is one of the defined element types.
func (t Type) Valid() bool { return t > Invalid && int(t) < len(typeInfo) }

// IsSigned reports whether t is a signed integer type.
func (t Type) IsSigned() bool {
	switch t {
	case I8, I16, I32, I64, I128:
		return true
	}
	return false
}

// IsUnsigned reports whether t is an unsigned integer type.
func (t Type) IsUnsigned() bool {
	switch t {
	case U8, U16, U32, U64, U128:
		return true
	}
	return false
}

// IsInteger reports whether t is a signed or unsigned integer type.
func (t Type) IsInteger() bool { return t.IsSigned() || t.IsUnsigned() }

// IsFloat reports whether t is f16, f32 or f64.
func (t Type) IsFloat() bool { return t == F16 || t == F32 || t == F64 }

// IsComplex reports whether t is c64 or c128.
func (t Type) IsComplex() bool { return t == C64 || t == C128 }

// Part is the type of each half of a complex type (f32 for c64, f64 for
// c128), and t itself for every other type.
func (t Type) Part() Type {
	switch t {
	case C64:
		return F32
	case C128:
		return F64
	}
	return t
}

// ParseType returns the type named s ("i8" … "f64", "bool", "i128",
// "u128", "char", "c64", "c128").
func ParseType(s string) (Type, error) {
	for _, t := range Types() {
		if typeInfo[t].name == s {
			return t, nil
		}
	}
	return Invalid, fmt.Errorf("layout: unknown element type %q", s)
}
