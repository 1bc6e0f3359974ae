package abf

import (
	"fmt"

	"github.com/mmapkit/mmapkit/layout"
)

// MaxDims is the largest number of dimensions this package accepts (an
// mmapkit limit; Julia has none).
const MaxDims = 1024

// Format is one of the three on-disk formats.
type Format uint8

const (
	// FormatC is v0.5–v0.7: no file header, 4×nchars string prefixes, one
	// type string per record. It is the default for new files.
	FormatC Format = iota
	// FormatA is v0.1–v0.3: a 22-byte "LITTLE" header with a record count.
	FormatA
	// FormatB is v0.4: Format A records with a byte-order flag and no
	// header. It is read only.
	FormatB
)

// String returns the format's letter: "A", "B" or "C".
func (f Format) String() string {
	switch f {
	case FormatA:
		return "A"
	case FormatB:
		return "B"
	case FormatC:
		return "C"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Kind is what a record holds.
type Kind uint8

const (
	KindArray      Kind = iota // Array{T,N}: Entry.Elem says T
	KindBitArray               // BitArray{N}: packed bits in 64-bit words
	KindString                 // String: UTF-8 text
	KindDataType               // DataType: opaque Serialization output
	KindSerialized             // AbfSerializer{…}: opaque Serialization output
)

// String names the kind: "array", "bits" (BitArray), "string",
// "datatype" or "serialized".
func (k Kind) String() string {
	switch k {
	case KindArray:
		return "array"
	case KindBitArray:
		return "bits"
	case KindString:
		return "string"
	case KindDataType:
		return "datatype"
	case KindSerialized:
		return "serialized"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ElemType is an array's element type.
type ElemType = layout.Type

// Elem is the set of Go element types of arrays: layout's.
type Elem = layout.Elem

// Entry describes one record of a file: its payload as layout describes
// arrays, and what ABF adds.
type Entry struct {
	// Array is the payload: Name the stored key; Type the element type
	// (KindArray only, layout.Invalid otherwise); Shape Julia's size(x),
	// column-major (Order is always layout.ColMajor; a String's is
	// [nchars], a serialized record's nil); BigEndian for a record whose
	// integers and payload are big-endian; Offset and Size the payload's
	// offset (aligned for arrays) and bytes (a String's UTF-8 bytes).
	layout.Array
	Kind       Kind   // what the record holds
	TypeString string // C: as stored; A/B: the canonical C spelling

	Start    int64 // offset of the record's first byte
	End      int64 // offset just past the record; the next record starts here
	Unpadded bool  // an empty array whose padding upstream never wrote: the next record starts at the end of its header
}

// Len returns the number of elements: prod(Shape) for arrays and BitArrays
// (1 for 0-d), the character count for Strings, the byte count for
// serialized records.
func (r *Entry) Len() int64 {
	switch r.Kind {
	case KindArray, KindBitArray:
		n, err := layout.Count(r.Shape)
		if err != nil {
			return 0 // cannot happen for a parsed record
		}
		return n
	case KindString:
		return r.Shape[0]
	}
	return r.Size
}

// Index returns the linear (column-major) position of the 0-based index
// idx, checking each component: Julia's x[i,j] is Index(i-1, j-1).
func (r *Entry) Index(idx ...int64) (int64, error) {
	if r.Kind != KindArray && r.Kind != KindBitArray {
		return 0, fmt.Errorf("abf: record %q is a %v, not an array", r.Name, r.Kind)
	}
	p, err := layout.Index(r.Shape, layout.ColMajor, idx...)
	if err != nil {
		return 0, fmt.Errorf("abf: record %q: %w", r.Name, err)
	}
	return p, nil
}

// TypeName names the record's type in one word: the element type's name
// for arrays ("f64", "char", …), else the Kind's ("bits", "string", …).
func (r *Entry) TypeName() string {
	if r.Kind == KindArray {
		return r.Type.String()
	}
	return r.Kind.String()
}

// juliaNames maps element types to Julia's names, as type strings hold them.
var juliaNames = map[layout.Type]string{
	layout.F16: "Float16", layout.F32: "Float32", layout.F64: "Float64",
	layout.Bool: "Bool", layout.JuliaChar: "Char",
	layout.I8: "Int8", layout.I16: "Int16", layout.I32: "Int32", layout.I64: "Int64",
	layout.U8: "UInt8", layout.U16: "UInt16", layout.U32: "UInt32", layout.U64: "UInt64",
	layout.I128: "Int128", layout.U128: "UInt128",
}

var juliaTypes = func() map[string]layout.Type {
	m := make(map[string]layout.Type, len(juliaNames))
	for t, s := range juliaNames {
		m[s] = t
	}
	return m
}()

// JuliaName returns the Julia name of an element type ("Float64"), or "".
func JuliaName(t ElemType) string { return juliaNames[t] }
