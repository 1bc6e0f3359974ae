package abf

import (
	"errors"

	"github.com/mmapkit/mmapkit/format"
)

// Sentinel errors of this package, for errors.Is. A key the file does not
// have is format.ErrNoRecord. Conditions that every
// format shares are mmapfile's sentinels, wrapped: mmapfile.ErrTruncated
// (a header or payload runs past the end of the file), ErrTypeMismatch
// (the Go type is not the record's element type), ErrNotWritable,
// ErrClosed, ErrByteOrder (a view of a big-endian record), ErrInvalidBool,
// ErrOutOfRange, ErrLocked and ErrFault. What this package does not
// support wraps errors.ErrUnsupported.
var (
	// ErrDuplicateKey: two records of the file have the same key.
	ErrDuplicateKey = errors.New("duplicate key in file")
	// ErrKeyExists: a write names a key the file already has.
	ErrKeyExists = errors.New("key already exists")
	// ErrNotReadable: the file was opened in a mode that cannot read
	// ("w", "a").
	ErrNotReadable = errors.New("file is not open for reading")
)

// FormatError reports a problem with a file's contents, or with a request
// that the file cannot satisfy, at a byte offset of the file. It reads as
// every format's error does; see format.FileError.
type FormatError struct {
	format.FileError
}

// errAt is an error about file at offset off (-1: none).
func errAt(file string, off int64, err error, msg string) *FormatError {
	return &FormatError{format.FileError{Pkg: "abf", File: file, Offset: off, Msg: msg, Err: err}}
}
