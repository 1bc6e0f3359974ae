package futhark

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// MaxRank is the largest rank a value may have: the binary format stores
// the rank in a signed byte.
const MaxRank = 127

// binaryTypes maps element types to the 4-byte type strings of the binary
// format.
var binaryTypes = map[layout.Type]string{
	layout.I8: "  i8", layout.I16: " i16", layout.I32: " i32", layout.I64: " i64",
	layout.U8: "  u8", layout.U16: " u16", layout.U32: " u32", layout.U64: " u64",
	layout.F16: " f16", layout.F32: " f32", layout.F64: " f64", layout.Bool: "bool",
}

// primTypes lists Futhark's twelve primitive types in the order the text
// parser tries their names.
var primTypes = []layout.Type{
	layout.I8, layout.I16, layout.I32, layout.I64, layout.U8, layout.U16, layout.U32, layout.U64,
	layout.F16, layout.F32, layout.F64, layout.Bool,
}

// IsPrimType reports whether t is one of Futhark's twelve primitive types.
func IsPrimType(t layout.Type) bool { _, ok := binaryTypes[t]; return ok }

// typeFromBinary decodes a 4-byte type string (case-sensitive).
func typeFromBinary(b []byte) layout.Type {
	if len(b) != 4 {
		return layout.Invalid
	}
	for _, t := range primTypes {
		if binaryTypes[t] == string(b) {
			return t
		}
	}
	return layout.Invalid
}

// TypeString formats a value type as Futhark prints it: [2][3]i32, f16.
func TypeString(t layout.Type, shape []int64) string {
	var b strings.Builder
	for _, d := range shape {
		b.WriteByte('[')
		b.WriteString(strconv.FormatInt(d, 10))
		b.WriteByte(']')
	}
	b.WriteString(t.String())
	return b.String()
}

// Value is one Futhark value held in memory: its element type, its shape
// (empty for a scalar) and its payload, the elements in row-major order,
// each little-endian (f16 as raw bits, bool as one byte 0 or 1), exactly as
// the binary format stores them.
type Value struct {
	Type  layout.Type
	Shape []int64
	Data  []byte
}

// Len returns the number of elements (1 for a scalar).
func (v Value) Len() int64 {
	n, err := layout.Count(v.Shape)
	if err != nil {
		return -1
	}
	return n
}

// String returns the value's type, e.g. "[2][3]f32".
func (v Value) String() string { return TypeString(v.Type, v.Shape) }

// check verifies that the value is encodable.
func (v Value) check() error {
	if !IsPrimType(v.Type) {
		return fmt.Errorf("futhark: %v is not a Futhark element type: %w", v.Type, errors.ErrUnsupported)
	}
	if len(v.Shape) > MaxRank {
		return fmt.Errorf("futhark: rank %d > %d: %w", len(v.Shape), MaxRank, ErrRank)
	}
	n, err := layout.ByteSize(v.Type, v.Shape)
	if err != nil {
		return fmt.Errorf("futhark: shape %v: %w", v.Shape, ErrDims)
	}
	if int64(len(v.Data)) != n {
		return fmt.Errorf("futhark: %s needs %d payload bytes, have %d", v, n, len(v.Data))
	}
	return nil
}

// NewValue builds a Value from a shape and elements of the matching Go
// type (layout.Float16 for f16). The elements are copied; bool becomes
// bytes 0/1.
func NewValue[T layout.Elem](shape []int64, elems []T) (Value, error) {
	t := layout.TypeOf[T]()
	if !IsPrimType(t) {
		return Value{}, fmt.Errorf("futhark: %v is not a Futhark element type: %w", t, errors.ErrUnsupported)
	}
	n, err := layout.Count(shape)
	if err != nil || n != int64(len(elems)) {
		return Value{}, fmt.Errorf("futhark: shape %v does not hold %d elements: %w", shape, len(elems), ErrDims)
	}
	data := append([]byte(nil), unsafeslice.Bytes(elems)...)
	layout.SwapOrder(data, t, layout.HostOrder(), binary.LittleEndian)
	return Value{Type: t, Shape: append([]int64{}, shape...), Data: data}, nil
}

// Elems returns a copy of the value's elements as a []T. T must match the
// value's type (layout.Float16 for f16; bool or uint8 for bool).
func Elems[T layout.Elem](v Value) ([]T, error) {
	t := layout.TypeOf[T]()
	if t != v.Type && !(v.Type == layout.Bool && t == layout.U8) {
		return nil, fmt.Errorf("futhark: %v elements of a %s value: %w", t, v, mmapfile.ErrTypeMismatch)
	}
	out := make([]T, len(v.Data)/t.Size())
	b := unsafeslice.Bytes(out)
	copy(b, v.Data)
	layout.SwapOrder(b, t, binary.LittleEndian, layout.HostOrder())
	layout.CheckBools(b, t, true)
	return out, nil
}

// Entry describes one value of an indexed input.
type Entry struct {
	Binary bool        // binary encoding (else text)
	Type   layout.Type // element type
	Shape  []int64     // empty for a scalar; shared with the File, do not change it
	Start  int64       // offset of the value's first byte ('b' or the text's first byte)
	End    int64       // offset after its last byte (payload end, or end of the text token)
	Data   int64       // payload offset: Start+7+8·rank for binary, Start for text
	Line   int         // 1-based line of Start (text values; 0 for binary)
	Col    int         // 1-based byte column of Start (text values; 0 for binary)
}

// Len returns the element count.
func (e Entry) Len() int64 { n, _ := layout.Count(e.Shape); return n }

// PayloadSize returns the payload size in bytes: element count × size.
func (e Entry) PayloadSize() int64 { n, _ := layout.ByteSize(e.Type, e.Shape); return n }

// TypeString returns the entry's type as Futhark prints it.
func (e Entry) TypeString() string { return TypeString(e.Type, e.Shape) }
