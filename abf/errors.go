package abf

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/layout"
)

// Sentinel errors, for errors.Is.
var (
	ErrDuplicateKey = errors.New("duplicate key in file")
	ErrKeyExists    = errors.New("key already exists")
	ErrNotFound     = errors.New("no such key")
	ErrTypeMismatch = errors.New("element type does not match the record")
	ErrByteOrder    = errors.New("record is not in the host's byte order")
	ErrNotReadable  = errors.New("file is not open for reading")
	ErrNotWritable  = errors.New("file is not open for writing")
	ErrTruncated    = errors.New("truncated")
	// ErrInvalidChar is layout's: a Julia Char that encodes no code point,
	// or a rune that no Char encodes.
	ErrInvalidChar = layout.ErrInvalidChar
	// ErrUnsupported wraps errors.ErrUnsupported.
	ErrUnsupported = fmt.Errorf("abf: %w", errors.ErrUnsupported)
)

// FormatError reports a problem with a file's contents, or with a request
// that the file cannot satisfy, at a byte offset of the file.
type FormatError struct {
	File   string // name the file was opened with; empty for NewReader
	Offset int64  // file offset the error is about; -1 if none
	Msg    string // what is wrong, naming the record's key when known
	Err    error  // a sentinel of this package or an underlying error; may be nil
}

func (e *FormatError) Error() string {
	s := "abf: "
	if e.File != "" {
		s += e.File + ": "
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf("offset %d: ", e.Offset)
	}
	s += e.Msg
	if e.Err != nil && !isSentinel(e.Err) {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

func isSentinel(err error) bool {
	switch err {
	case ErrDuplicateKey, ErrKeyExists, ErrNotFound, ErrTypeMismatch, ErrByteOrder,
		ErrNotReadable, ErrNotWritable, ErrTruncated, ErrInvalidChar, ErrUnsupported:
		return true
	}
	return false
}
