package zarr

import (
	"errors"
	"fmt"
)

// Sentinel errors of this package, for errors.Is. Conditions every format
// shares are mmapfile's sentinels, which this package wraps:
// mmapfile.ErrTruncated (a chunk or metadata document cut short),
// mmapfile.ErrTypeMismatch (a Go type that is not the array's),
// mmapfile.ErrMisaligned and mmapfile.ErrByteOrder (a view that cannot
// alias its chunk), mmapfile.ErrNotWritable, mmapfile.ErrClosed,
// mmapfile.ErrOutOfRange, mmapfile.ErrInvalidBool, mmapfile.ErrFault and
// mmapfile.ErrLocked.
var (
	// ErrUnsupported wraps errors.ErrUnsupported: a codec, data type or
	// feature of the store that this package does not implement. The
	// error's message names it.
	ErrUnsupported = fmt.Errorf("zarr: %w", errors.ErrUnsupported)
	// ErrInvalid: metadata that breaks the Zarr specification (a negative
	// shape, a zero chunk size, a dtype that does not parse, a key that
	// leaves the store).
	ErrInvalid = errors.New("invalid metadata")
	// ErrChecksum: a crc32c checksum does not match the bytes it covers.
	ErrChecksum = errors.New("crc32c checksum mismatch")
	// ErrMissingChunk: a view of a chunk that has no file (it reads as the
	// fill value through the copying calls).
	ErrMissingChunk = errors.New("chunk is missing (reads as the fill value)")
	// ErrNotFound: no array of that name in the store.
	ErrNotFound = errors.New("no such array")
	// ErrCorrupt: a chunk whose bytes do not decode to one chunk (too
	// short, too long, inflating past its size, a shard index pointing
	// outside its file or at overlapping ranges).
	ErrCorrupt = errors.New("chunk does not decode to one chunk")
	// ErrReplaced: the store's directory was replaced (by a conversion
	// written over it) or removed since the store was opened, so that its
	// chunks are gone: they do not read as the fill value.
	ErrReplaced = errors.New("store replaced or removed since it was opened")
)

// FormatError reports a problem with a store's contents, or a request the
// store cannot satisfy, naming the store, the key of the file inside it
// and the byte offset in that file.
type FormatError struct {
	File   string // the store's path as opened
	Key    string // the key of the file in the store ("temp/c/0/1", ".zarray"); "" for the store itself
	Offset int64  // byte offset in that file; -1 if none
	Msg    string // what is wrong, naming the array where known
	Err    error  // a sentinel of this package or an underlying error; may be nil
}

func (e *FormatError) Error() string {
	s := "zarr: "
	if e.File != "" {
		s += e.File + ": "
	}
	if e.Key != "" {
		s += e.Key + ": "
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
