package mmapfile

import (
	"errors"
	"fmt"
)

// Sentinel errors, for errors.Is.
var (
	ErrClosed      = errors.New("file or region is closed")
	ErrReadOnly    = errors.New("mapping is read-only")
	ErrOutOfRange  = errors.New("range outside the mapping or file")
	ErrMisaligned  = errors.New("offset is not aligned for the element type")
	ErrByteOrder   = errors.New("data is not in the host's byte order")
	ErrInvalidBool = errors.New("byte is neither 0 nor 1 in a bool view")
	ErrFault       = errors.New("memory fault in mapping (file truncated or unwritable?)")
	ErrLocked      = errors.New("file is locked by another writer")
	ErrMapped      = errors.New("a live mapping covers the range being truncated")
	ErrTooLarge    = errors.New("range too large for this platform's address space")
)

// Error is the error type of this package: which file, which byte offset of
// it, what went wrong.
type Error struct {
	File   string
	Offset int64 // file offset the error is about; -1 if none
	Op     string
	Err    error
}

func (e *Error) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("mmapfile: %s: %s at offset %d: %v", e.File, e.Op, e.Offset, e.Err)
	}
	return fmt.Sprintf("mmapfile: %s: %s: %v", e.File, e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
