package npy

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Sentinel errors of this package, for errors.Is. Conditions shared by
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
	// ErrNoArray: the file has no array or field of this name.
	ErrNoArray = errors.New("no such array")
)

// FormatError reports a problem with a file's contents, or a request the
// file cannot satisfy, at a byte offset of the file.
type FormatError struct {
	File   string // the name the file was opened with; empty for NewReader
	Offset int64  // file offset the error is about; -1 if none
	Msg    string // what is wrong, naming the array or member when known
	Err    error  // a sentinel or underlying error; may be nil
}

func (e *FormatError) Error() string {
	s := "npy: "
	if e.File != "" {
		s += e.File + ": "
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf("offset %d: ", e.Offset)
	}
	s += e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// errAt builds a FormatError.
func errAt(file string, off int64, err error, format string, args ...any) *FormatError {
	return &FormatError{File: file, Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

// mapErr turns an error of mmapfile (which names the offset) into a
// FormatError about file, keeping the offset it names.
func mapErr(file string, off int64, err error, format string, args ...any) error {
	var me *mmapfile.Error
	if errors.As(err, &me) && me.Offset >= 0 {
		off = me.Offset
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	return errAt(file, off, err, format, args...)
}
