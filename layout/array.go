package layout

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
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

// ErrIndexCount is wrapped by an index with a different number of
// components than its array has dimensions; ErrIndexRange by one with a
// component outside its dimension. Both say which, so that a caller's
// message names the real cause rather than a range of bytes.
var (
	ErrIndexCount = errors.New("wrong number of indices")
	ErrIndexRange = errors.New("index outside its dimension")
)

// indexError prints only its message: the sentinel it wraps is for
// errors.Is, and its text would repeat what the message says.
type indexError struct {
	msg  string
	kind error
}

func (e *indexError) Error() string { return e.msg }
func (e *indexError) Unwrap() error { return e.kind }

// CheckIndex refuses a 0-based index idx that does not fit an array of the
// given shape, saying whether it has the wrong number of components (an
// error wrapping ErrIndexCount) or which component is outside its
// dimension (ErrIndexRange). name is the record's name, or "" where the
// caller names it itself.
func CheckIndex(name string, shape, idx []int64) error {
	text := IndexString(idx)
	subject, prefix := "the array", ""
	if name != "" {
		subject = fmt.Sprintf("record %q", name)
		prefix = subject + ": "
	}
	if len(idx) != len(shape) {
		if len(shape) == 0 {
			return &indexError{fmt.Sprintf("%s is a scalar: its index is [], not %s", subject, text), ErrIndexCount}
		}
		return &indexError{fmt.Sprintf("index %s has %s, but %s has %s (shape %s): give one number per dimension, as %s",
			text, plural(len(idx), "number"), subject, plural(len(shape), "dimension"), ShapeString(shape), IndexString(make([]int64, len(shape)))), ErrIndexCount}
	}
	for d, x := range idx {
		switch {
		case x < 0:
			return &indexError{fmt.Sprintf("%sindex %s: %d is negative (dimension %d of shape %s)", prefix, text, x, d, ShapeString(shape)), ErrIndexRange}
		case x >= shape[d] && shape[d] == 0:
			return &indexError{fmt.Sprintf("%sindex %s: dimension %d of shape %s is empty: the record has no elements to set", prefix, text, d, ShapeString(shape)), ErrIndexRange}
		case x >= shape[d]:
			return &indexError{fmt.Sprintf("%sindex %s: %d is past the end of dimension %d of shape %s (0 to %d)", prefix, text, x, d, ShapeString(shape), shape[d]-1), ErrIndexRange}
		}
	}
	return nil
}

// IndexString writes idx as the command line takes it: [2,3].
func IndexString(idx []int64) string {
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = strconv.FormatInt(x, 10)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// plural is "1 number", "2 numbers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Index returns the linear position of the 0-based index idx in an array of
// the given shape and order, after checking it with CheckIndex.
func Index(shape []int64, order Order, idx ...int64) (int64, error) {
	if err := CheckIndex("", shape, idx); err != nil {
		return 0, err
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
