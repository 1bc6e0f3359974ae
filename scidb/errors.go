package scidb

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Data error kinds, for errors.Is on a *FormatError. Conditions every
// format shares are mmapfile's sentinels, wrapped: input that ends inside
// a cell (a prefix, length word or fixed-size value cut short) is
// mmapfile.ErrTruncated, a Go type that is not an attribute's
// mmapfile.ErrTypeMismatch, a closed file mmapfile.ErrClosed, a fault
// in the mapping mmapfile.ErrFault.
var (
	// ErrLength: a length word exceeds the bytes left (reading; the error
	// also wraps mmapfile.ErrTruncated, since the input ends before the
	// value it announces) or a value is longer than 2³²−1 bytes (writing).
	ErrLength = errors.New("length exceeds the input")
	// ErrPrefix: strict reading, a null prefix byte 0x80–0xFE (load() reads
	// them as present; save() writes only 0xFF).
	ErrPrefix = errors.New("null prefix byte is neither 0xff nor a reason 0..127")
	// ErrBool: strict reading, a bool byte other than 00 and 01. It wraps
	// mmapfile.ErrInvalidBool, the condition every format shares.
	ErrBool = fmt.Errorf("bool byte is neither 0 nor 1: %w", mmapfile.ErrInvalidBool)
	// ErrString: a string without its terminating NUL, with length 0 or an
	// embedded NUL (strict reading), or a string to write that contains a
	// NUL.
	ErrString = errors.New("malformed string")
	// ErrNull: a null value for an entry without "null" (writing), or a
	// null variable-size value with a payload (strict reading).
	ErrNull = errors.New("bad null value")
	// ErrReason: a missing reason outside 0..127 (writing).
	ErrReason = errors.New("missing reason outside 0..127")
	// ErrWidth: a value that does not fit its entry: longer than N for
	// string(N)/binary(N), or a fixed-size value of the wrong byte size.
	ErrWidth = errors.New("value does not fit the entry")
	// ErrNotFixed: an operation that needs fixed-size cells (strided
	// columns, in-place changes, views) on a format with variable-size
	// entries.
	ErrNotFixed = errors.New("format has variable-size entries")
	// ErrNoFormat: Options.Format is missing; SciDB files carry no
	// description of their cells.
	ErrNoFormat = errors.New("no format string: SciDB files need one (Options.Format)")
)

// errNoAttr: an attribute index the format does not have, which is also a
// range outside the file's attributes.
var errNoAttr = fmt.Errorf("%w: %w", format.ErrNoRecord, mmapfile.ErrOutOfRange)

// errLengthCut is ErrLength when reading: the input ends inside the value
// a length word announces.
var errLengthCut = fmt.Errorf("%w: %w", ErrLength, mmapfile.ErrTruncated)

// FormatError reports bad input (or a bad value to write): which file,
// which byte offset, which cell and entry, and what is wrong. Offsets are
// SciDB's: the start of the failing read (the prefix, the length word or
// the data). It reads as every format's error does (see
// format.FileError), its message starting with the cell: "scidb: FILE:
// offset N: cell C, attribute A (NAME): MSG: CAUSE"; writers' errors,
// which have no offset, "scidb: FILE: row R, attribute A (NAME): MSG:
// CAUSE".
type FormatError struct {
	format.FileError
	Cell   int64  // 0-based cell (SciDB's line − 1); the row for writers
	Attr   int    // 0-based attribute; -1 for a skip entry (or none)
	Column int    // 0-based entry index in the format (skips counted); -1 if none
	Name   string // attribute name and entry, e.g. "c: string null"
}

// Error returns the message described on FormatError.
func (e *FormatError) Error() string {
	fe := e.withCell()
	return fe.Error()
}

// Detail is the message without "scidb: FILE: ".
func (e *FormatError) Detail() string {
	fe := e.withCell()
	return fe.Detail()
}

// withCell is the shared error with the cell and entry leading the message.
func (e *FormatError) withCell() format.FileError {
	fe := e.FileError
	if e.Column < 0 && e.Attr < 0 {
		return fe
	}
	var b strings.Builder
	if e.Offset >= 0 {
		b.WriteString("cell ")
	} else {
		b.WriteString("row ")
	}
	b.WriteString(strconv.FormatInt(e.Cell, 10))
	if e.Attr >= 0 {
		b.WriteString(", attribute ")
		b.WriteString(strconv.Itoa(e.Attr))
	} else {
		b.WriteString(", entry ")
		b.WriteString(strconv.Itoa(e.Column))
	}
	if e.Name != "" {
		b.WriteString(" (")
		b.WriteString(e.Name)
		b.WriteString(")")
	}
	if fe.Msg != "" {
		b.WriteString(": ")
		b.WriteString(fe.Msg)
	}
	fe.Msg = b.String()
	return fe
}

// newError is a FormatError about no cell.
func newError(file string, off int64, err error, msg string) *FormatError {
	return &FormatError{FileError: format.FileError{Pkg: "scidb", File: file, Offset: off, Msg: msg, Err: err}, Attr: -1, Column: -1}
}

// fileError is a FormatError about a whole file or call, not a cell.
func fileError(file string, off int64, err error, msg string, args ...any) *FormatError {
	return newError(file, off, err, fmt.Sprintf(msg, args...))
}

// dataError builds a FormatError for entry col of f.
func (f *Schema) dataError(cell int64, col int, off int64, kind error, msg string) *FormatError {
	a := f.attrOf(col)
	name := f.Columns[col].String()
	if a >= 0 {
		name = f.name(a) + ": " + name
	}
	e := newError("", off, kind, msg)
	e.Cell, e.Attr, e.Column, e.Name = cell, a, col, name
	return e
}

func bytesLeft(n int64) string {
	if n == 1 {
		return "the 1 byte left"
	}
	return "the " + strconv.FormatInt(n, 10) + " bytes left"
}

// OpaqueError reports input in SciDB's opaque backup format, which this
// package does not read. It unwraps to ErrOpaque.
type OpaqueError struct {
	File    string
	Magic   uint32
	Version uint32
}

func (e *OpaqueError) Error() string {
	var b strings.Builder
	b.WriteString("scidb: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	b.WriteString("opaque SciDB file (magic 0x")
	b.WriteString(strings.ToUpper(strconv.FormatUint(uint64(e.Magic), 16)))
	b.WriteString(", version ")
	b.WriteString(strconv.FormatUint(uint64(e.Version), 10))
	b.WriteString("), not a binary template file; re-save with save(A, f, -2, '(…)')")
	return b.String()
}

// Unwrap returns ErrOpaque.
func (e *OpaqueError) Unwrap() error { return ErrOpaque }

const (
	opaqueMagic    = 0x5AC00E
	opaqueMagicOld = 0x0AECAC
	opaqueHeader   = 32
)

// detectOpaque reports whether b (the first bytes of the input) starts with
// an opaque chunk header. size is the input's size, or -1 if unknown.
func detectOpaque(b []byte, size int64) *OpaqueError {
	if len(b) < opaqueHeader {
		return nil
	}
	magic := le32(b)
	if magic != opaqueMagic && magic != opaqueMagicOld {
		return nil
	}
	version := le32(b[4:])
	if version != 1 && version != 2 {
		return nil
	}
	if b[25]&0x08 == 0 {
		return nil
	}
	if size >= 0 && int64(le32(b[8:])) > size-opaqueHeader {
		return nil
	}
	return &OpaqueError{Magic: magic, Version: version}
}

func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
