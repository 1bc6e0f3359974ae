package daphne

import (
	"fmt"

	"github.com/mmapkit/mmapkit/layout"
)

// ValueType is DAPHNE's ValueTypeCode, the byte that names an element type
// in a .dbdf file. The codes are those of DAPHNE's implementation, not of
// its draft documentation (which numbers them from 1 and starts with u8).
type ValueType uint8

// DAPHNE's value type codes. STR and FIXEDSTR16 exist upstream but are
// refused here (see ErrStringType); INVALID is a JSON-only marker.
const (
	SI8        ValueType = 0
	SI32       ValueType = 1
	SI64       ValueType = 2
	UI8        ValueType = 3
	UI32       ValueType = 4
	UI64       ValueType = 5
	F32        ValueType = 6
	F64        ValueType = 7
	STR        ValueType = 8
	FIXEDSTR16 ValueType = 9
	INVALID    ValueType = 10
	// SI16 and UI16 exist only in DAPHNE's format document (its codes 6
	// and 2); DAPHNE's code has no 16-bit value types, so files in its
	// layout never hold them. These values never appear as bytes in a
	// file.
	SI16 ValueType = 16
	UI16 ValueType = 17
)

var vtInfo = [...]struct {
	meta string
	size int
	lt   layout.Type
}{
	SI8:  {"si8", 1, layout.I8},
	SI32: {"si32", 4, layout.I32},
	SI64: {"si64", 8, layout.I64},
	UI8:  {"ui8", 1, layout.U8},
	UI32: {"ui32", 4, layout.U32},
	UI64: {"ui64", 8, layout.U64},
	F32:  {"f32", 4, layout.F32},
	F64:  {"f64", 8, layout.F64},
	SI16: {"si16", 2, layout.I16},
	UI16: {"ui16", 2, layout.U16},
}

// known reports whether v is a numeric value type of either numbering.
func (v ValueType) known() bool { return int(v) < len(vtInfo) && vtInfo[v].size > 0 }

// docCodes is the format document's numbering of value types: 0 is
// reserved, 1–10 are u8, u16, u32, u64, i8, i16, i32, i64, f32, f64.
var docCodes = [...]ValueType{1: UI8, 2: UI16, 3: UI32, 4: UI64, 5: SI8, 6: SI16, 7: SI32, 8: SI64, 9: F32, 10: F64}

// documentValueType returns the value type that code b names in the
// format document.
func documentValueType(b byte) (ValueType, bool) {
	if b == 0 || int(b) >= len(docCodes) {
		return INVALID, false
	}
	return docCodes[b], true
}

// documentCode returns v's code in the format document.
func documentCode(v ValueType) byte {
	for c, d := range docCodes {
		if c > 0 && d == v {
			return byte(c)
		}
	}
	return 0
}

// codeReading names what code b means in DAPHNE's code: a value type, a
// string type, or nothing.
func codeReading(b byte) string {
	switch v := ValueType(b); {
	case v.Numeric(), v == STR, v == FIXEDSTR16:
		return v.String()
	}
	return "no value type"
}

// documentReading names what code b means in the format document.
func documentReading(b byte) string {
	if v, ok := documentValueType(b); ok {
		return v.String()
	}
	return "no value type"
}

// Numeric reports whether v is one of the eight numeric codes (0–7).
func (v ValueType) Numeric() bool { return v <= F64 }

// Size is the element size in bytes (0 for non-numeric codes).
func (v ValueType) Size() int {
	if v.known() {
		return vtInfo[v].size
	}
	return 0
}

// Layout returns the mmapkit element type (layout.Invalid for non-numeric
// codes).
func (v ValueType) Layout() layout.Type {
	if v.known() {
		return vtInfo[v].lt
	}
	return layout.Invalid
}

// String returns the name DAPHNE's .meta uses ("si32", "f64", "str").
func (v ValueType) String() string {
	switch {
	case v.known():
		return vtInfo[v].meta
	case v == STR:
		return "str"
	case v == FIXEDSTR16:
		return "fixedstr16"
	case v == INVALID:
		return "invalid"
	}
	return fmt.Sprintf("ValueType(%d)", uint8(v))
}

// ParseValueType maps a .meta valueType name to its code. Unknown names
// give INVALID and false, as in DAPHNE.
func ParseValueType(s string) (ValueType, bool) {
	for v := range ValueType(len(vtInfo)) {
		if v.known() && vtInfo[v].meta == s {
			return v, true
		}
	}
	if s == "str" {
		return STR, true
	}
	return INVALID, false
}

// ValueTypeFor returns the value type a layout element type maps to, and
// false for types DAPHNE cannot store (i16, u16, f16, bool, …).
func ValueTypeFor(t layout.Type) (ValueType, bool) {
	for v := SI8; v <= F64; v++ {
		if vtInfo[v].lt == t {
			return v, true
		}
	}
	return INVALID, false
}

// valueTypeOf returns the value type whose Go type is T: int8 (si8),
// int16 and uint16 (the document's si16, ui16), int32, int64, uint8 (ui8),
// uint32, uint64, float32 or float64; INVALID for the other element types,
// which DAPHNE cannot store.
func valueTypeOf[T layout.Elem]() ValueType {
	return anyValueTypeFor(layout.TypeOf[T]())
}

// anyValueTypeFor is ValueTypeFor with the document's 16-bit types.
func anyValueTypeFor(t layout.Type) ValueType {
	for v := range ValueType(len(vtInfo)) {
		if v.known() && vtInfo[v].lt == t {
			return v
		}
	}
	return INVALID
}

// Kind is DAPHNE's data type code (DF_data_t): what a file holds.
type Kind uint8

const (
	KindDense Kind = 1 // DenseMatrix
	KindCSR   Kind = 2 // CSR
	KindFrame Kind = 3 // Frame
)

// String returns "dense", "csr" or "frame".
func (k Kind) String() string {
	switch k {
	case KindDense:
		return "dense"
	case KindCSR:
		return "csr"
	case KindFrame:
		return "frame"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// BodyType is the block type byte (DF_body_t).
type BodyType uint8

const (
	BodyEmpty  BodyType = 0 // no values: a block of zeros (doc only)
	BodyDense  BodyType = 1 // row-major values
	BodySparse BodyType = 2 // CSR (layout per Layout)
	BodyCOO    BodyType = 3 // coordinate list (doc only)
)

// String names the body type.
func (b BodyType) String() string {
	switch b {
	case BodyEmpty:
		return "empty"
	case BodyDense:
		return "dense"
	case BodySparse:
		return "sparse"
	case BodyCOO:
		return "coo"
	}
	return fmt.Sprintf("BodyType(%d)", uint8(b))
}

// Layout is the encoding of a sparse (CSR) block.
type Layout uint8

const (
	// LayoutDetect (the zero value) tells the layouts apart by file size.
	LayoutDetect Layout = iota
	// LayoutCurrent is DAPHNE ≥ 0.2: nnz u64, rowOffsets[R+1] u64,
	// colIdxs[nnz] u64, values[nnz]. The only layout written.
	LayoutCurrent
	// LayoutRelease01 is DAPHNE 0.1: nnz u64, then per row nnz_r u64 and
	// nnz_r × (col u64, value).
	LayoutRelease01
	// LayoutDoc is the draft documentation's: nnz u64, then per row nnz_r
	// u32 and nnz_r × (col u32, value). Never written by DAPHNE.
	LayoutDoc
)

// String names the layout.
func (l Layout) String() string {
	switch l {
	case LayoutDetect:
		return "detect"
	case LayoutCurrent:
		return "current"
	case LayoutRelease01:
		return "release-0.1"
	case LayoutDoc:
		return "doc"
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}
