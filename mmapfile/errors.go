package mmapfile

import (
	"errors"
	"fmt"
	"io"
)

// Sentinel errors, for errors.Is. They are defined once here and wrapped by
// every format package, so that one errors.Is test works for every format.
var (
	// ErrClosed: the file, region or format-level file was closed.
	ErrClosed = errors.New("file is closed")
	// ErrNotWritable: a write to a file or mapping opened read-only, or to a
	// record that cannot be changed in place.
	ErrNotWritable = errors.New("file is not open for writing")
	// ErrTruncated: the file ends before what its headers describe. It
	// wraps io.ErrUnexpectedEOF.
	ErrTruncated = fmt.Errorf("file is truncated: %w", io.ErrUnexpectedEOF)
	// ErrTypeMismatch: the Go type asked for is not the element type of the
	// record.
	ErrTypeMismatch = errors.New("Go type does not match the element type")
	// ErrMisaligned: a view was asked for data whose address is not a
	// multiple of the element's alignment; copy it instead.
	ErrMisaligned = errors.New("offset is not aligned for the element type")
	// ErrByteOrder: a view was asked for data that is not in the host's
	// byte order; copy it instead (copies swap).
	ErrByteOrder = errors.New("data is not in the host's byte order")
	// ErrInvalidBool: a bool byte is neither 0 nor 1.
	ErrInvalidBool = errors.New("byte is neither 0 nor 1 in a bool")
	// ErrOutOfRange: a range outside the mapping, the file or the array.
	ErrOutOfRange = errors.New("range outside the mapping or file")
	// ErrFault: a memory fault inside a mapping, turned into an error (the
	// file was truncated under it, or a page could not be written).
	ErrFault = errors.New("memory fault in mapping (file truncated or unwritable?)")
	// ErrLocked: another writer holds the file's lock.
	ErrLocked = errors.New("file is locked by another writer")
	// ErrMapped: a live mapping covers the range being truncated.
	ErrMapped = errors.New("a live mapping covers the range being truncated")
	// ErrTooLarge: a size beyond what can be held: a range too large for
	// this platform's address space, a result beyond a format's memory
	// bound (such as Options.MaxAlloc) or a dimension beyond what a
	// format's fields can store. The error that wraps it says which.
	ErrTooLarge = errors.New("too large")
	// ErrNotRegular: the path names a directory, FIFO, device, socket or a
	// file of a pseudo file system such as /proc, whose size does not
	// describe its contents; such files cannot be mapped or replaced.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNeedsRepair: a read-write open found damage that only cutting
	// or rewriting bytes would get past (a record that does not parse, an
	// interrupted edit); the error says what a repair would change, and
	// the format's Repair option asks for it.
	ErrNeedsRepair = errors.New("file needs repair")
)

// Error is the error type of this package: which file, which byte offset of
// it, what went wrong.
type Error struct {
	File   string
	Offset int64 // file offset the error is about; -1 if none
	Op     string
	Err    error
}

func (e *Error) Error() string { return "mmapfile: " + e.File + ": " + e.Detail() }

// Detail is the message without "mmapfile: <file>: ".
func (e *Error) Detail() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s at offset %d: %v", e.Op, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Op, e.Err)
}

// Where returns the file and the byte offset (-1: none) the error is
// about, as format.Located asks of every error about a file.
func (e *Error) Where() (file string, offset int64) { return e.File, e.Offset }

func (e *Error) Unwrap() error { return e.Err }
