package hdf5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// meta reads the metadata of one file through h5.Reader, which checks
// every address, overflow included, against the readable end before
// anything is read or allocated; errors name the file.
type meta struct {
	name string
	r    *h5.Reader
	so   int // size of offsets (addresses)
	sl   int // size of lengths
	// writable: the file is open for writing (some unknown messages are
	// refused then).
	writable bool
}

func (m *meta) errf(off int64, err error, format string, args ...any) error {
	return errAt(m.name, off, err, format, args...)
}

// undefined reports whether addr is the "undefined address" (all ones).
func (m *meta) undefined(addr uint64) bool { return h5.IsUndefined(addr, m.so) }

// abs is the absolute offset of the n bytes at relative address addr,
// checked to lie within the readable end.
func (m *meta) abs(addr, n uint64, what string) (int64, error) {
	at, err := m.r.Abs(addr, n)
	if err != nil {
		return -1, wrapErr(m.name, -1, err, "%s", what)
	}
	return at, nil
}

// read returns the n bytes at relative address addr and their absolute
// offset.
func (m *meta) read(addr, n uint64, what string) ([]byte, int64, error) {
	at, err := m.abs(addr, n, what)
	if err != nil {
		return nil, -1, err
	}
	b := make([]byte, n)
	if err := m.readAt(b, at, what); err != nil {
		return nil, -1, err
	}
	return b, at, nil
}

// readAt fills b from absolute offset at.
func (m *meta) readAt(b []byte, at int64, what string) error {
	k, err := m.r.R.ReadAt(b, at)
	if k == len(b) {
		return nil
	}
	if err == nil || err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return m.errf(at+int64(k), mmapfile.ErrTruncated, "%s: the file ends inside it", what)
	}
	return wrapErr(m.name, at+int64(k), err, "%s", what)
}

// cursor decodes little-endian fields of a structure, keeping the first
// error: a field past the end of the bytes is an error at the absolute
// offset where it would start.
type cursor struct {
	m    *meta
	b    []byte
	pos  int
	at   int64 // absolute offset of b[0]
	what string
	err  error
}

func (m *meta) cursor(b []byte, at int64, what string) *cursor {
	return &cursor{m: m, b: b, at: at, what: what}
}

// here is the absolute offset of the next field.
func (c *cursor) here() int64 { return c.at + int64(c.pos) }

func (c *cursor) fail(err error, format string, args ...any) {
	if c.err == nil {
		c.err = c.m.errf(c.here(), err, "%s: %s", c.what, fmt.Sprintf(format, args...))
	}
}

// take returns the next n bytes, or nil after an error.
func (c *cursor) take(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > len(c.b)-c.pos {
		c.fail(mmapfile.ErrTruncated, "%d bytes needed, %d left", n, len(c.b)-c.pos)
		return nil
	}
	b := c.b[c.pos : c.pos+n]
	c.pos += n
	return b
}

func (c *cursor) skip(n int) { c.take(n) }

// uint reads an n-byte unsigned integer (n from 1 to 8).
func (c *cursor) uint(n int) uint64 {
	b := c.take(n)
	if b == nil {
		return 0
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func (c *cursor) u8() uint8   { return uint8(c.uint(1)) }
func (c *cursor) u16() uint16 { return uint16(c.uint(2)) }
func (c *cursor) u32() uint32 { return uint32(c.uint(4)) }
func (c *cursor) addr() uint64 {
	return c.uint(c.m.so)
}
func (c *cursor) length() uint64 { return c.uint(c.m.sl) }

// rest is what is left of the bytes.
func (c *cursor) rest() []byte {
	if c.err != nil {
		return nil
	}
	return c.b[c.pos:]
}

// cstring reads a NUL-terminated string (the NUL consumed).
func (c *cursor) cstring() string {
	if c.err != nil {
		return ""
	}
	for i := c.pos; i < len(c.b); i++ {
		if c.b[i] == 0 {
			s := string(c.b[c.pos:i])
			c.pos = i + 1
			return s
		}
	}
	c.fail(mmapfile.ErrTruncated, "a name without its terminating NUL")
	return ""
}

// align8 skips to the next multiple of 8 bytes from start.
func (c *cursor) align8(start int) {
	if k := (c.pos - start) % 8; k != 0 {
		c.skip(8 - k)
	}
}

var le = binary.LittleEndian
