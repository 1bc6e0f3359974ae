package h5

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Error is a structural error at an absolute file offset. Package hdf5 wraps it into its
// FormatError, adding the file name. Err may wrap mmapfile sentinels (ErrTruncated, ...)
// or errors.ErrUnsupported for refused features.
type Error struct {
	Offset int64
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("offset %d: %s", e.Offset, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// errorf makes an *Error at offset at.
func errorf(at int64, format string, args ...any) *Error {
	return &Error{Offset: at, Msg: fmt.Sprintf(format, args...)}
}

// wrapf makes an *Error at offset at that wraps err.
func wrapf(at int64, err error, format string, args ...any) *Error {
	return &Error{Offset: at, Msg: fmt.Sprintf(format, args...), Err: err}
}

// unsupported makes an *Error wrapping errors.ErrUnsupported.
func unsupported(at int64, format string, args ...any) *Error {
	return wrapf(at, errors.ErrUnsupported, format, args...)
}

// Reader reads structures of one HDF5 file. All addresses passed in are relative to Base
// (as stored in the file); every Offset reported (errors, Chunk.Addr) is absolute.
// Every address + size is checked against End (the smaller of the file size and base +
// the superblock's end-of-file address), overflow-checked, before any read or
// allocation; undefined addresses (all ones) mean absent. Safe for concurrent use: it
// only calls R.ReadAt.
type Reader struct {
	R          io.ReaderAt
	Base       int64 // absolute offset of the superblock's base address
	End        int64 // absolute end of readable bytes
	OffsetSize int   // 2, 4 or 8
	LengthSize int   // 2, 4 or 8
}

// IsUndefined reports whether addr is HDF5's undefined address (all ones in offsetSize
// bytes), which marks storage that was never allocated.
func IsUndefined(addr uint64, offsetSize int) bool {
	if addr == math.MaxUint64 {
		return true
	}
	return offsetSize > 0 && offsetSize < 8 && addr == 1<<(8*uint(offsetSize))-1
}

// span returns the absolute offset of [addr, addr+size), checking that it lies within
// [Base, End). at is where the address was read, for the error.
func (r *Reader) span(addr, size uint64, what string) (int64, error) {
	if IsUndefined(addr, r.OffsetSize) {
		return 0, errorf(r.Base, "%s has an undefined address", what)
	}
	if addr > math.MaxInt64 || size > math.MaxInt64 || int64(addr) > math.MaxInt64-r.Base {
		return 0, wrapf(r.Base, mmapfile.ErrOutOfRange, "%s at address %#x, %d bytes", what, addr, size)
	}
	abs := r.Base + int64(addr)
	if abs > r.End || int64(size) > r.End-abs {
		return 0, wrapf(abs, mmapfile.ErrTruncated, "%s of %d bytes ends beyond the end of the file at %d", what, size, r.End)
	}
	return abs, nil
}

// Abs returns the absolute offset of the size bytes at relative address addr, after
// checking that they lie within the readable bytes.
func (r *Reader) Abs(addr, size uint64) (int64, error) { return r.span(addr, size, "block") }

// read reads size bytes at relative address addr after checking them against End.
func (r *Reader) read(addr, size uint64, what string) ([]byte, int64, error) {
	abs, err := r.span(addr, size, what)
	if err != nil {
		return nil, 0, err
	}
	b := make([]byte, size)
	if err := r.readAt(b, abs, what); err != nil {
		return nil, 0, err
	}
	return b, abs, nil
}

// readAt fills b from absolute offset abs, which the caller has checked.
func (r *Reader) readAt(b []byte, abs int64, what string) error {
	n, err := r.R.ReadAt(b, abs)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = mmapfile.ErrTruncated
	}
	return wrapf(abs, err, "reading %s (%d bytes)", what, len(b))
}

// ReadAt reads size bytes at relative address addr, checked against End.
func (r *Reader) ReadAt(addr, size uint64) ([]byte, error) {
	b, _, err := r.read(addr, size, "block")
	return b, err
}

// available returns how many bytes lie between relative address addr and End (0 when
// addr is outside).
func (r *Reader) available(addr uint64) uint64 {
	if IsUndefined(addr, r.OffsetSize) || addr > math.MaxInt64 || int64(addr) > r.End-r.Base {
		return 0
	}
	return uint64(r.End - r.Base - int64(addr))
}

// block reads a signed block of size bytes at addr: it checks the 4-byte signature and,
// when checksummed, the lookup3 checksum in the block's last 4 bytes.
func (r *Reader) block(addr, size uint64, sig string, checksummed bool) ([]byte, int64, error) {
	b, abs, err := r.read(addr, size, sig)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < len(sig) || string(b[:len(sig)]) != sig {
		return nil, 0, errorf(abs, "expected signature %q, found %q", sig, b[:min(len(b), len(sig))])
	}
	if checksummed {
		if err := verifyChecksum(b, abs, sig); err != nil {
			return nil, 0, err
		}
	}
	return b, abs, nil
}

// verifyChecksum checks the lookup3 checksum in the last 4 bytes of b against the rest.
func verifyChecksum(b []byte, abs int64, what string) error {
	if len(b) < 4 {
		return errorf(abs, "%s is too short for its checksum", what)
	}
	n := len(b) - 4
	stored := uint32(b[n]) | uint32(b[n+1])<<8 | uint32(b[n+2])<<16 | uint32(b[n+3])<<24
	if got := Checksum(b[:n]); got != stored {
		return errorf(abs, "%s checksum mismatch: stored %#08x, computed %#08x", what, stored, got)
	}
	return nil
}

// decoder reads little-endian fields from a byte slice that came from absolute offset
// at. The first read past the end records an error; later reads return zero, so a
// parser checks d.err once after a group of fields.
type decoder struct {
	b   []byte
	pos int
	at  int64
	err error
	// offsetSize and lengthSize are the widths of addr() and length().
	offsetSize, lengthSize int
}

func (r *Reader) decoder(b []byte, at int64) *decoder {
	return &decoder{b: b, at: at, offsetSize: r.OffsetSize, lengthSize: r.LengthSize}
}

func (d *decoder) offset() int64 { return d.at + int64(d.pos) }

// take returns the next n bytes, or nil after recording a truncation error.
func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.pos {
		d.err = wrapf(d.offset(), mmapfile.ErrTruncated, "%s (%d bytes) runs past the end of its %d-byte block", what, n, len(d.b))
		return nil
	}
	s := d.b[d.pos : d.pos+n]
	d.pos += n
	return s
}

func (d *decoder) skip(n int, what string) { d.take(n, what) }

// uint reads an n-byte little-endian unsigned integer (n ≤ 8).
func (d *decoder) uint(n int, what string) uint64 {
	if n > 8 {
		d.err = errorf(d.offset(), "%s has width %d, more than 8 bytes", what, n)
		return 0
	}
	s := d.take(n, what)
	var v uint64
	for i := len(s) - 1; i >= 0; i-- {
		v = v<<8 | uint64(s[i])
	}
	return v
}

func (d *decoder) u8(what string) uint8   { return uint8(d.uint(1, what)) }
func (d *decoder) u16(what string) uint16 { return uint16(d.uint(2, what)) }
func (d *decoder) u32(what string) uint32 { return uint32(d.uint(4, what)) }
func (d *decoder) addr(what string) uint64 {
	v := d.uint(d.offsetSize, what)
	if d.offsetSize < 8 && IsUndefined(v, d.offsetSize) {
		return math.MaxUint64
	}
	return v
}
func (d *decoder) length(what string) uint64 { return d.uint(d.lengthSize, what) }

// undefinedAddr is how decoders hand out an undefined address, whatever the offset size.
const undefinedAddr = math.MaxUint64
