package daphne

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// FormatError reports bad input: which file, which byte offset of it, and
// what is wrong there. Offset is -1 when the problem has no single position
// (a .meta key that disagrees with the data file, an inconsistent argument).
type FormatError struct {
	File   string
	Offset int64
	Msg    string
	Err    error // the sentinel or underlying error, if any
}

func (e *FormatError) Error() string {
	file := e.File
	if file == "" {
		file = "<input>"
	}
	if e.Offset >= 0 {
		return fmt.Sprintf("daphne: %s: offset %d: %s", file, e.Offset, e.Msg)
	}
	return fmt.Sprintf("daphne: %s: %s", file, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// Sentinel errors, for errors.Is. Conditions every format shares are
// mmapfile's sentinels, wrapped: a file shorter than its layout is
// mmapfile.ErrTruncated, a Go type that is not the file's value type
// mmapfile.ErrTypeMismatch, a closed file mmapfile.ErrClosed.
var (
	// ErrStringType: a string value type (str, fixedstr16); DAPHNE's
	// encoding of them stores memory addresses, not characters. It wraps
	// errors.ErrUnsupported.
	ErrStringType = fmt.Errorf("string value types are not supported: DAPHNE stores std::string objects (memory addresses), not characters: %w", errors.ErrUnsupported)
	// ErrKind: the call does not match the file's data type (DAPHNE's
	// "DT mismatch"). It wraps mmapfile.ErrTypeMismatch.
	ErrKind = fmt.Errorf("data type mismatch: %w", mmapfile.ErrTypeMismatch)
	// ErrTooLarge: a result would need more memory than Options.MaxAlloc
	// allows, or a dimension exceeds what the format can store.
	ErrTooLarge = errors.New("too large")
	// ErrNotMapped: a view was asked of a File that is not backed by a
	// mapping (NewReader), or of a payload that is not one contiguous run.
	ErrNotMapped = fmt.Errorf("cannot alias the file's bytes: %w", errors.ErrUnsupported)
	// ErrMeta: the .meta sidecar is malformed or disagrees with the data.
	ErrMeta = errors.New("bad .meta")
)

func (f *File) errf(off int64, err error, format string, args ...any) error {
	return &FormatError{File: f.name, Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}
