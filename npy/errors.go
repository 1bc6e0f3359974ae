package npy

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Sentinel errors of this package, for errors.Is. A name that is no array
// or field of the file is format.ErrNoRecord. Conditions shared by
// every format are mmapfile's sentinels (mmapfile.ErrTruncated,
// mmapfile.ErrTypeMismatch, mmapfile.ErrMisaligned, mmapfile.ErrByteOrder,
// mmapfile.ErrNotWritable, mmapfile.ErrClosed, mmapfile.ErrInvalidBool,
// mmapfile.ErrOutOfRange), wrapped by the errors of this package; shapes
// whose size overflows wrap layout.ErrOverflow, negative dimensions
// layout.ErrNegative.
var (
	// ErrMagic: the file does not start with NumPy's magic "\x93NUMPY".
	ErrMagic = errors.New("not a NumPy .npy file (no \\x93NUMPY magic)")
	// ErrHeader: the header is not a Python literal that NumPy would
	// read as an array header (syntax, keys, value types, nesting).
	ErrHeader = errors.New("invalid .npy header")
	// ErrObject: the array holds pickled Python objects (descr 'O'). They
	// are never unpickled: unpickling runs code chosen by the file. It
	// wraps errors.ErrUnsupported.
	ErrObject = fmt.Errorf("array of pickled Python objects, which are never unpickled: %w", errors.ErrUnsupported)
	// ErrNoRoom: the header has no spare room for the grown shape (files
	// written by NumPy before 1.23 may have none); rewrite the file.
	ErrNoRoom = errors.New("no room in the header for the grown shape")
	// ErrZip: the .npz archive is not a ZIP archive this package reads
	// (sizes that disagree, members that overlap, data outside the file).
	ErrZip = errors.New("invalid .npz archive")
	// ErrCRC: a member's CRC-32 does not match its data: the data are
	// damaged, or the member was edited in place by a writer that has not
	// closed it, or that was killed before it could record the new CRC
	// (a read-write open with Options.Repair finishes such an edit).
	ErrCRC = errors.New("CRC-32 does not match the member's data")
	// ErrInflateLimit: a deflated member would inflate to more bytes than
	// Options.MaxInflate allows in memory.
	ErrInflateLimit = errors.New("deflated member is larger than Options.MaxInflate")
)

// FormatError reports a problem with a file's contents, or a request the
// file cannot satisfy, at a byte offset of the file (File is "" for
// NewReader), naming the array or member where known. It reads as every
// format's error does; see format.FileError.
type FormatError struct {
	format.FileError
}

// errAt builds a FormatError.
func errAt(file string, off int64, err error, msg string, args ...any) *FormatError {
	return &FormatError{format.FileError{Pkg: "npy", File: file, Offset: off, Msg: fmt.Sprintf(msg, args...), Err: err}}
}

// recordErr is an error about the record name at file offset off.
func recordErr(file, name string, off int64, err error, msg string, args ...any) *FormatError {
	e := errAt(file, off, err, msg, args...)
	e.Record = name
	return e
}

// mapErr turns an error of mmapfile (which names the offset) into a
// FormatError about file, keeping the offset it names.
func mapErr(file string, off int64, err error, msg string, args ...any) error {
	return mapRecordErr(file, "", off, err, msg, args...)
}

// mapRecordErr is mapErr about the record name.
func mapRecordErr(file, name string, off int64, err error, msg string, args ...any) error {
	var me *mmapfile.Error
	if errors.As(err, &me) && me.Offset >= 0 {
		off = me.Offset
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	return recordErr(file, name, off, err, msg, args...)
}
