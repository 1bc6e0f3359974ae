package futhark

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Sentinel errors of this package, for errors.Is. Conditions every format
// shares are mmapfile's sentinels, which this package wraps:
// mmapfile.ErrTruncated (input ending inside a value),
// mmapfile.ErrTypeMismatch (a Go type that is not the value's element
// type), mmapfile.ErrMisaligned (View of an unaligned payload),
// mmapfile.ErrClosed, mmapfile.ErrNotWritable, mmapfile.ErrOutOfRange,
// mmapfile.ErrFault.
var (
	// ErrSyntax: text that is not a Futhark value.
	ErrSyntax = errors.New("syntax error")
	// ErrIrregular: an array whose elements differ in shape or type.
	ErrIrregular = errors.New("array is irregular or has elements of multiple types")
	// ErrVersion: a binary value whose version byte is not 2.
	ErrVersion = errors.New("unsupported binary format version")
	// ErrUnknownType: a binary value's type string names no Futhark type.
	ErrUnknownType = errors.New("unknown binary type string")
	// ErrRank: a rank above 127 (binary) or nesting deeper than 127 (text).
	ErrRank = errors.New("rank out of range")
	// ErrDims: a negative dimension or a dims product that overflows.
	ErrDims = errors.New("invalid dimensions")
	// ErrRange: an integer literal out of its type's range
	// (StrictIntegers).
	ErrRange = errors.New("integer literal out of range")
	// ErrTextValue: View, Payload or an in-place change of a text value,
	// which has no binary payload.
	ErrTextValue = errors.New("text value has no binary payload")
	// ErrState: an Encoder call out of order (elements with no value
	// begun, more payload than the value holds, a value begun inside
	// another, a value left unfinished).
	ErrState = errors.New("encoder call out of order")
)

// errTextInPlace: a text value cannot be changed in place.
var errTextInPlace = fmt.Errorf("%w: %w", ErrTextValue, mmapfile.ErrNotWritable)

// FormatError is the error of this package: the file (empty for input
// that has no name), the byte offset of the offending byte or field (-1
// where the error is about no place in the file), for text the 1-based line
// and column (in bytes) of that offset, what is wrong, and the sentinel or
// underlying error it wraps.
type FormatError struct {
	File   string
	Offset int64
	Line   int // 0 when not known (binary input)
	Col    int
	Msg    string
	Err    error
}

func (e *FormatError) Error() string {
	s := "futhark: "
	if e.File != "" {
		s += e.File + ": "
	}
	switch {
	case e.Line > 0:
		s += fmt.Sprintf("offset %d (line %d, column %d): ", e.Offset, e.Line, e.Col)
	case e.Offset >= 0:
		s += fmt.Sprintf("offset %d: ", e.Offset)
	}
	switch {
	case e.Msg == "" && e.Err != nil:
		return s + e.Err.Error()
	case e.Err != nil && !isSentinel(e.Err):
		return s + e.Msg + ": " + e.Err.Error()
	}
	return s + e.Msg
}

// Unwrap returns the sentinel or underlying error, if any.
func (e *FormatError) Unwrap() error { return e.Err }

// sentinels wraps errors for errors.Is whose meaning the message of the
// FormatError that holds them already says.
type sentinels []error

func (s sentinels) Error() string   { return s[0].Error() }
func (s sentinels) Unwrap() []error { return s }

// isSentinel reports errors whose text the message already says.
func isSentinel(err error) bool {
	if _, ok := err.(sentinels); ok {
		return true
	}
	switch err {
	case ErrSyntax, ErrIrregular, ErrVersion, ErrUnknownType, ErrRank, ErrDims, ErrRange, ErrTextValue, ErrState, errTextInPlace,
		mmapfile.ErrTruncated, mmapfile.ErrTypeMismatch, mmapfile.ErrMisaligned, mmapfile.ErrClosed,
		mmapfile.ErrNotWritable, mmapfile.ErrOutOfRange, mmapfile.ErrFault, mmapfile.ErrInvalidBool:
		return true
	}
	return false
}

// withFile names the file in a *FormatError that names none.
func withFile(err error, name string) error {
	var fe *FormatError
	if errors.As(err, &fe) && fe.File == "" {
		fe.File = name
	}
	return err
}
