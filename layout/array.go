package layout

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Order is the storage order of a multi-dimensional array.
type Order uint8

const (
	// RowMajor: the last index varies fastest (C, Futhark, DAPHNE, SciDB).
	RowMajor Order = iota
	// ColMajor: the first index varies fastest (Julia, Fortran).
	ColMajor
)

// String returns "row" or "col".
func (o Order) String() string {
	if o == ColMajor {
		return "col"
	}
	return "row"
}

// Array describes one array stored in a file: what its elements are, its
// logical shape, the order and byte order they are stored in, and where the
// payload lies. Shape is always the logical shape (Julia's size(x) for a
// column-major ABF array; never reversed).
type Array struct {
	Name      string
	Type      Type
	Shape     []int64
	Order     Order
	BigEndian bool  // the payload's elements are big-endian (complex: each part)
	Offset    int64 // payload offset in the file; -1 if not one contiguous run
	Size      int64 // payload size in bytes
}

// ByteOrder returns the byte order of the payload's elements.
func (a *Array) ByteOrder() binary.ByteOrder {
	if a.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Len returns the element count, checked for overflow.
func (a *Array) Len() (int64, error) { return Count(a.Shape) }

// Check verifies that the descriptor is self-consistent: a valid type, no
// negative dimension, no overflow, Size equal to Len()·Type.Size(), and a
// payload that lies within a file of fileSize bytes (pass fileSize < 0 to
// skip that check).
func (a *Array) Check(fileSize int64) error {
	want, err := ByteSize(a.Type, a.Shape)
	if err != nil {
		return fmt.Errorf("array %q: %w", a.Name, err)
	}
	if a.Size != want {
		return fmt.Errorf("layout: array %q: size %d, want %d for %v%v", a.Name, a.Size, want, ShapeString(a.Shape), a.Type)
	}
	if fileSize >= 0 && a.Offset >= 0 {
		end, ok := Add(a.Offset, a.Size)
		if !ok || end > fileSize {
			return fmt.Errorf("layout: array %q: payload [%d, +%d) exceeds file size %d", a.Name, a.Offset, a.Size, fileSize)
		}
	}
	return nil
}

// Index returns the linear position of the 0-based index idx in an array of
// the given shape and order, after checking every index against its
// dimension.
func Index(shape []int64, order Order, idx ...int64) (int64, error) {
	if len(idx) != len(shape) {
		return 0, fmt.Errorf("layout: index has %d components, array has rank %d", len(idx), len(shape))
	}
	for i, x := range idx {
		if x < 0 || x >= shape[i] {
			return 0, fmt.Errorf("layout: index %d out of range [0,%d) in dimension %d", x, shape[i], i)
		}
	}
	var pos int64
	if order == RowMajor {
		for i := range idx {
			pos = pos*shape[i] + idx[i]
		}
	} else {
		for i := len(idx) - 1; i >= 0; i-- {
			pos = pos*shape[i] + idx[i]
		}
	}
	return pos, nil
}

// ShapeString formats a shape as Futhark writes types: [2][3].
func ShapeString(shape []int64) string {
	var b strings.Builder
	for _, d := range shape {
		fmt.Fprintf(&b, "[%d]", d)
	}
	return b.String()
}
