package hdf5

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/format"

	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Sentinel errors of this package, for errors.Is. A name that is no
// dataset, group or link is format.ErrNoRecord. Conditions that every
// format shares are mmapfile's sentinels, wrapped: mmapfile.ErrTruncated
// (a structure runs past the end of the file), ErrTypeMismatch,
// ErrNotWritable, ErrClosed, ErrByteOrder, ErrMisaligned, ErrInvalidBool,
// ErrOutOfRange. What this package does not read (filters it lacks,
// virtual datasets, external storage, netCDF-3) wraps
// errors.ErrUnsupported.
var (
	// ErrSignature: no HDF5 signature at offset 0, 512, 1024, 2048, …
	ErrSignature = errors.New("not an HDF5 file (no signature at 0, 512, 1024, …)")
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
// that the file cannot satisfy, at a byte offset of the file. It reads as
// every format's error does; see format.FileError.
type FormatError struct {
	format.FileError
}

// errAt builds a FormatError.
func errAt(file string, off int64, err error, msgf string, args ...any) *FormatError {
	return &FormatError{format.FileError{Pkg: "hdf5", File: file, Offset: off, Msg: fmt.Sprintf(msgf, args...), Err: err}}
}

// wrapErr turns an error of package h5 or mmapfile (each naming an offset)
// into a FormatError about file, keeping that offset; what is already a
// FormatError passes through.
func wrapErr(file string, off int64, err error, msgf string, args ...any) error {
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
		msg := fmt.Sprintf(msgf, args...)
		if msg != "" {
			msg += ": "
		}
		return &FormatError{format.FileError{Pkg: "hdf5", File: file, Offset: he.Offset, Msg: msg + he.Msg, Err: he.Err}}
	}
	var me *mmapfile.Error
	if errors.As(err, &me) && me.Offset >= 0 {
		off = me.Offset
	}
	return errAt(file, off, err, msgf, args...)
}
