package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// Locator is implemented by files that can say where a record's bytes
// lie, so that other programs can read them in place: a reference set
// (kerchunk's "virtual Zarr") or a server handing out byte ranges.
type Locator interface {
	// Locate describes record i's bytes. A record whose bytes cannot be
	// described as a contiguous payload or a chunk grid of byte ranges
	// (packed bits, text, strided fields, compressed members, codecs
	// without a Zarr v2 form) gives an error wrapping
	// errors.ErrUnsupported that says why.
	Locate(i int) (*Location, error)
}

// Location is where an array record's bytes are: one contiguous payload
// (Grid nil: bytes [Offset, Offset+Length) of Path) or a grid of chunks,
// each stored in its own byte range and encoded by a codec chain. Paths
// are relative to the file that was opened: "" is that file itself, else
// a slash-separated path inside a store (a directory).
type Location struct {
	// Shape is the array's logical shape; Order its storage order (of
	// each chunk, for a grid).
	Shape []int64
	Order layout.Order
	// DType is the element type as NumPy and Zarr v2 write it, byte
	// order included: "<f8", ">i4", "|b1", "<M8[s]", "|S5".
	DType string

	// The contiguous payload.
	Path           string
	Offset, Length int64

	// Grid describes a chunked array; nil for a contiguous payload.
	Grid *ChunkGrid

	// Attributes are the record's own attributes (nil if none);
	// DimensionNames its axes' own names, nil if the source has none.
	Attributes     map[string]any
	DimensionNames []string
}

// ChunkGrid is a chunked array in Zarr v2 terms.
type ChunkGrid struct {
	// Chunks is the shape of every chunk (edge chunks are stored whole).
	Chunks []int64
	// Separator joins a chunk's indices in its key: "." or "/".
	Separator string
	// Compressor, Filters and FillValue are JSON as Zarr v2's .zarray
	// holds them ("null" where there is none).
	Compressor, Filters, FillValue []byte
	// Stored are the chunks that are stored, in row-major order of their
	// grid index; a chunk not listed is missing and reads as FillValue.
	Stored []Chunk
}

// Chunk is the place of one stored chunk.
type Chunk struct {
	Index          []int64
	Path           string
	Offset, Length int64
}

// Key is the chunk's Zarr v2 key in a grid with separator sep ("0" for a
// 0-d array).
func (c *Chunk) Key(sep string) string {
	if len(c.Index) == 0 {
		return "0"
	}
	var b strings.Builder
	for i, x := range c.Index {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	return b.String()
}

// Unlocatable returns an error wrapping errors.ErrUnsupported saying why
// a record's bytes cannot be described.
func Unlocatable(why string, a ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(why, a...), errors.ErrUnsupported)
}

// PayloadLocation describes a payload whose bytes are those of the
// opened file at Array.Offset: the location of every Payloader's
// contiguous records. dtype is the element type's text where the type's
// name says more than layout's (a datetime); "" derives it from the type
// and byte order. A payload that is not the file's bytes as they stand
// (a deflated member, decoded text: NoView says why) cannot be described.
func PayloadLocation(p *Payload, dtype string) (*Location, error) {
	a := &p.Array
	if p.NoView != nil && a.Offset < 0 {
		return nil, Unlocatable("%v", p.NoView)
	}
	if a.Offset < 0 {
		return nil, Unlocatable("the values are not one run of the file")
	}
	switch a.Type {
	case layout.Invalid, layout.I128, layout.U128, layout.JuliaChar:
		return nil, Unlocatable("type %v has no NumPy form", a.Type)
	}
	if dtype == "" {
		dtype = NumPyDType(a.Type, "", a.BigEndian)
	}
	return &Location{Shape: a.Shape, Order: a.Order, DType: dtype, Offset: a.Offset, Length: a.Size}, nil
}

// NumPyDType is NumPy's (and Zarr v2's) text for elements of type t, in
// big-endian byte order if big: "<f8", ">i2", "|b1", "<c16". A typeName
// "datetime64[UNIT]" or "timedelta64[UNIT]" (NumPy's, for int64
// elements) gives "<M8[UNIT]" or "<m8[UNIT]".
func NumPyDType(t layout.Type, typeName string, big bool) string {
	order := "<"
	if big {
		order = ">"
	}
	if t.Size() == 1 {
		order = "|"
	}
	if strings.HasPrefix(typeName, "datetime64[") {
		return order + "M8" + strings.TrimPrefix(typeName, "datetime64")
	}
	if strings.HasPrefix(typeName, "timedelta64[") {
		return order + "m8" + strings.TrimPrefix(typeName, "timedelta64")
	}
	kind := "u"
	switch {
	case t == layout.Bool:
		kind = "b"
	case t.IsFloat():
		kind = "f"
	case t.IsComplex():
		kind = "c"
	case t.IsSigned():
		kind = "i"
	}
	return order + kind + strconv.Itoa(t.Size())
}

// Attributed is implemented by files that carry attributes of their own,
// beside their records' (a Zarr store's root group): a reference set
// keeps them.
type Attributed interface {
	// Attributes returns the file's own attributes, nil if none.
	Attributes() (map[string]any, error)
}

// FillJSON is the JSON form of the element b of type t in byte order bo,
// as Zarr writes fill values: numbers, true or false, "NaN", "Infinity",
// "-Infinity", [re, im] for complex numbers.
func FillJSON(b []byte, t layout.Type, bo binary.ByteOrder) any {
	if t.IsComplex() {
		half := t.Size() / 2
		return []any{FillJSON(b[:half], t.Part(), bo), FillJSON(b[half:], t.Part(), bo)}
	}
	switch {
	case t == layout.Bool:
		return b[0] != 0
	case t.IsSigned():
		return layout.Int(b, bo)
	case t.IsUnsigned():
		return layout.Uint(b, bo)
	}
	f := layout.Float(b, bo, t)
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}
