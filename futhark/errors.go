package futhark

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Sentinel errors of this package, for errors.Is. Text that is not a
// Futhark value is layout.ErrSyntax, an integer literal out of its type's
// range (StrictIntegers) layout.ErrRange, a value index the file does not
// have format.ErrNoRecord. Conditions every format
// shares are mmapfile's sentinels, which this package wraps:
// mmapfile.ErrTruncated (input ending inside a value),
// mmapfile.ErrTypeMismatch (a Go type that is not the value's element
// type), mmapfile.ErrMisaligned (View of an unaligned payload),
// mmapfile.ErrClosed, mmapfile.ErrNotWritable, mmapfile.ErrOutOfRange,
// mmapfile.ErrFault.
var (
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
	// ErrTextValue: View, Payload or an in-place change of a text value,
	// which has no binary payload.
	ErrTextValue = errors.New("text value has no binary payload")
	// ErrState: an Encoder call out of order (elements with no value
	// begun, more payload than the value holds, a value begun inside
	// another, a value left unfinished).
	ErrState = errors.New("encoder call out of order")
)

// errNoValue: a value index the file does not have, which is also a range
// outside the file's values.
var errNoValue = fmt.Errorf("%w: %w", format.ErrNoRecord, mmapfile.ErrOutOfRange)

// errTextInPlace: a text value cannot be changed in place.
var errTextInPlace = fmt.Errorf("%w: %w", ErrTextValue, mmapfile.ErrNotWritable)

// FormatError is the error of this package: the file (empty for input
// that has no name), the byte offset of the offending byte or field (-1
// where the error is about no place in the file), for text the 1-based line
// and column (in bytes) of that offset, what is wrong, and the sentinel or
// underlying error it wraps. It reads as every format's error does; see
// format.FileError.
type FormatError struct {
	format.FileError
}

// errAt is an error about file at offset off (-1: none).
func errAt(file string, off int64, err error, msg string) *FormatError {
	return &FormatError{format.FileError{Pkg: "futhark", File: file, Offset: off, Msg: msg, Err: err}}
}

// withFile names the file in a *FormatError that names none.
func withFile(err error, name string) error {
	var fe *FormatError
	if errors.As(err, &fe) && fe.File == "" {
		fe.File = name
	}
	return err
}
