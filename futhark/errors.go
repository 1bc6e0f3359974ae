package futhark

import (
	"errors"
	"fmt"
)

// Sentinel errors, usable with errors.Is on the errors of this package.
var (
	// ErrSyntax: text that is not a Futhark value.
	ErrSyntax = errors.New("syntax error")
	// ErrIrregular: an array whose elements differ in shape or type.
	ErrIrregular = errors.New("array is irregular or has elements of multiple types")
	// ErrVersion: a binary value whose version byte is not 2.
	ErrVersion = errors.New("unsupported binary format version")
	// ErrType: an unknown binary type string.
	ErrType = errors.New("unknown element type")
	// ErrRank: a rank above 127 (binary) or nesting deeper than 127 (text).
	ErrRank = errors.New("rank out of range")
	// ErrDims: a negative dimension or a dims product that overflows.
	ErrDims = errors.New("invalid dimensions")
	// ErrTruncated: input ends inside a value.
	ErrTruncated = errors.New("unexpected end of input")
	// ErrRange: an integer literal out of its type's range (StrictIntegers).
	ErrRange = errors.New("integer literal out of range")
	// ErrMisaligned: View of a payload whose offset is not a multiple of
	// the element size.
	ErrMisaligned = errors.New("payload is not aligned for a zero-copy view")
	// ErrTextValue: View of a text value, which has no payload to alias.
	ErrTextValue = errors.New("text value has no binary payload")
	// ErrElemType: the Go element type does not match the value's type.
	ErrElemType = errors.New("element type mismatch")
	// ErrState: an Encoder call out of order (elements with no value
	// begun, more payload than the value holds, a value begun inside
	// another).
	ErrState = errors.New("encoder call out of order")
)

// FormatError reports bad input: the file (empty for in-memory input or
// streams), the byte offset of the offending byte or field, for text the
// 1-based line and column (in bytes) of that offset, and what is wrong.
type FormatError struct {
	File   string
	Offset int64
	Line   int // 0 when not known (binary input)
	Col    int
	Msg    string
	Err    error // a sentinel of this package, or nil
}

func (e *FormatError) Error() string {
	var loc string
	if e.Line > 0 {
		loc = fmt.Sprintf("offset %d (line %d, column %d)", e.Offset, e.Line, e.Col)
	} else {
		loc = fmt.Sprintf("offset %d", e.Offset)
	}
	msg := e.Msg
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.File == "" {
		return "futhark: " + loc + ": " + msg
	}
	return "futhark: " + e.File + ": " + loc + ": " + msg
}

// Unwrap returns the sentinel error, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// lineCol returns the 1-based line and byte column of offset off in b.
func lineCol(b []byte, off int) (int, int) {
	if off > len(b) {
		off = len(b)
	}
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if b[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, off - start + 1
}
