package abf

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Sentinel errors of this package, for errors.Is. Conditions that every
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
	// ErrNotFound: the file has no record with this key.
	ErrNotFound = errors.New("no such key")
	// ErrNotReadable: the file was opened in a mode that cannot read
	// ("w", "a").
	ErrNotReadable = errors.New("file is not open for reading")
)

// FormatError reports a problem with a file's contents, or with a request
// that the file cannot satisfy, at a byte offset of the file. Its message
// reads "abf: <file>: offset N: <what>".
type FormatError struct {
	File   string // name the file was opened with; for NewReader, the reader's Name() if it has one
	Offset int64  // file offset the error is about; -1 if none
	Msg    string // what is wrong, naming the record's key when known
	Err    error  // a sentinel (of this package or mmapfile) or an underlying error; may be nil
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

// sentinels wraps errors for errors.Is whose meaning the message of the
// FormatError that holds them already says.
type sentinels []error

func (s sentinels) Error() string   { return s[0].Error() }
func (s sentinels) Unwrap() []error { return s }

// isSentinel reports whether err is a bare sentinel, whose text the
// message already says in its own words.
func isSentinel(err error) bool {
	if _, ok := err.(sentinels); ok {
		return true
	}
	switch err {
	case ErrDuplicateKey, ErrKeyExists, ErrNotFound, ErrNotReadable,
		mmapfile.ErrTruncated, mmapfile.ErrTypeMismatch, mmapfile.ErrNotWritable,
		mmapfile.ErrClosed, mmapfile.ErrByteOrder, mmapfile.ErrInvalidBool,
		mmapfile.ErrOutOfRange, errors.ErrUnsupported:
		return true
	}
	return false
}
