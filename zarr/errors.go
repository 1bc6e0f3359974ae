package zarr

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/format"
)

// Sentinel errors of this package, for errors.Is. A name that is no array
// of the store is format.ErrNoRecord. Conditions every format
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
	ErrUnsupported = fmt.Errorf("not implemented by this package: %w", errors.ErrUnsupported)
	// ErrInvalid: metadata that breaks the Zarr specification (a negative
	// shape, a zero chunk size, a dtype that does not parse, a key that
	// leaves the store).
	ErrInvalid = errors.New("invalid metadata")
	// ErrChecksum: a crc32c checksum does not match the bytes it covers.
	ErrChecksum = errors.New("crc32c checksum mismatch")
	// ErrMissingChunk: a view of a chunk that has no file (it reads as the
	// fill value through the copying calls).
	ErrMissingChunk = errors.New("chunk is missing (reads as the fill value)")
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
// store cannot satisfy, naming the store (File), the key of the file inside
// it (Key; "" for the store itself) and the byte offset in that file. It
// reads as every format's error does; see format.FileError.
type FormatError struct {
	format.FileError
}

// storeErr is an error about path, the store or a file to be written.
func storeErr(path string, err error, msg string) *FormatError {
	return &FormatError{format.FileError{Pkg: "zarr", File: path, Offset: -1, Msg: msg, Err: err}}
}
