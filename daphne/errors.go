package daphne

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// FormatError reports bad input: which file, which byte offset of it
// (-1 when the problem has no single position: a .meta key that disagrees
// with the data file, an inconsistent argument), and what is wrong there.
// It reads as every format's error does; see format.FileError.
type FormatError struct {
	format.FileError
}

// Sentinel errors, for errors.Is. Conditions every format shares are
// mmapfile's sentinels, wrapped: a file shorter than its layout is
// mmapfile.ErrTruncated, a Go type that is not the file's value type
// mmapfile.ErrTypeMismatch, a closed file mmapfile.ErrClosed, a result
// that would need more memory than Options.MaxAlloc allows (or a
// dimension beyond what the format can store) mmapfile.ErrTooLarge; a
// name the file does not have is format.ErrNoRecord.
var (
	// ErrStringType: a string value type (str, fixedstr16); DAPHNE's
	// encoding of them stores memory addresses, not characters. It wraps
	// errors.ErrUnsupported.
	ErrStringType = fmt.Errorf("string value types are not supported: DAPHNE stores std::string objects (memory addresses), not characters: %w", errors.ErrUnsupported)
	// ErrKind: the call does not match the file's data type (DAPHNE's
	// "DT mismatch"). It wraps mmapfile.ErrTypeMismatch.
	ErrKind = fmt.Errorf("data type mismatch: %w", mmapfile.ErrTypeMismatch)
	// ErrNotMapped: a view was asked of a File that is not backed by a
	// mapping (NewReader), or of a payload that is not one contiguous run.
	ErrNotMapped = fmt.Errorf("cannot alias the file's bytes: %w", errors.ErrUnsupported)
	// ErrMeta: the .meta sidecar is malformed or disagrees with the data.
	ErrMeta = errors.New("bad .meta")
)

func (f *File) errf(off int64, err error, msg string, args ...any) error {
	return errAt(f.name, off, err, fmt.Sprintf(msg, args...))
}

// errAt is an error about file at offset off (-1: none); input without a
// name reads as "<input>".
func errAt(file string, off int64, err error, msg string) *FormatError {
	if file == "" {
		file = "<input>"
	}
	return &FormatError{format.FileError{Pkg: "daphne", File: file, Offset: off, Msg: msg, Err: err}}
}
