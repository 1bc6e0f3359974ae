package hdf5

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Sentinel errors of this package, for errors.Is. Conditions that every
// format shares are mmapfile's sentinels, wrapped: mmapfile.ErrTruncated
// (a structure runs past the end of the file), ErrTypeMismatch,
// ErrNotWritable, ErrClosed, ErrByteOrder, ErrMisaligned, ErrInvalidBool,
// ErrOutOfRange. What this package does not read (filters it lacks,
// virtual datasets, external storage, netCDF-3) wraps
// errors.ErrUnsupported.
var (
	// ErrSignature: no HDF5 signature at offset 0, 512, 1024, 2048, …
	ErrSignature = errors.New("not an HDF5 file (no signature at 0, 512, 1024, …)")
	// ErrNotFound: no dataset, group or link of this name.
	ErrNotFound = errors.New("no such dataset")
	// ErrExternalLink: the name is an external link, which is never
	// followed. It wraps errors.ErrUnsupported.
	ErrExternalLink = fmt.Errorf("external links are not followed: %w", errors.ErrUnsupported)
	// ErrChecksum: a Jenkins lookup3 checksum does not match its bytes.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrCycle: a chain of object header blocks, links or shared
	// messages comes back to where it was.
	ErrCycle = errors.New("cycle in the file's structures")
)

// FormatError reports a problem with a file's contents, or with a request
// that the file cannot satisfy, at a byte offset of the file. Its message
// reads "hdf5: <file>: offset N: <what>".
type FormatError struct {
	File   string // the name the file was opened with; empty for NewReader
	Offset int64  // absolute file offset the error is about; -1 if none
	Msg    string // what is wrong, naming the dataset when known
	Err    error  // a sentinel or underlying error; may be nil
}

func (e *FormatError) Error() string {
	s := "hdf5: "
	if e.File != "" {
		s += e.File + ": "
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf("offset %d: ", e.Offset)
	}
	s += e.Msg
	if e.Err != nil && e.Err != ErrExternalLink { // its message says it already
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

// wrapErr turns an error of package h5 or mmapfile (each naming an offset)
// into a FormatError about file, keeping that offset; what is already a
// FormatError passes through.
func wrapErr(file string, off int64, err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		if fe.File == "" && file != "" {
			c := *fe
			c.File = file
			return &c
		}
		return err
	}
	var he *h5.Error
	if errors.As(err, &he) {
		msg := fmt.Sprintf(format, args...)
		if msg != "" {
			msg += ": "
		}
		return &FormatError{File: file, Offset: he.Offset, Msg: msg + he.Msg, Err: he.Err}
	}
	var me *mmapfile.Error
	if errors.As(err, &me) && me.Offset >= 0 {
		off = me.Offset
	}
	return errAt(file, off, err, format, args...)
}
