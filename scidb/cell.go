package scidb

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Options configures Open, OpenFile, NewReader, NewDecoder, Decode and
// DecodeFile. A nil *Options has no Format, which every reader needs.
type Options struct {
	// Options are the mapping's options (advice, populate, lock, wait).
	// Create and Truncate are refused by OpenFile: SciDB files are
	// written by EncodeFile, the encoders and Create. Perm is the
	// permission bits of a file Create makes.
	mmapfile.Options
	// Format describes the cells (SciDB files have no header); required.
	Format *Schema
	// Lenient reads what SciDB's load() accepts but save() never writes:
	// null prefixes 0x80–0xFE (as present), bool bytes other than 00/01
	// (as true), strings with length 0, without a final NUL or with an
	// embedded NUL, string(N) values without a NUL, and null
	// variable-size values with a payload. By default they are errors.
	// Payload bytes of null fixed-size values are never checked.
	Lenient bool
	// Salvage keeps the cells before the first damaged one (a cell cut
	// short by the end of the file, or one a strict read refuses) instead
	// of failing: the File holds those cells, and Damage reports the error
	// a plain open gives, naming the cell and its byte offset. Nothing is
	// written to the file, also when it is opened read-write. Only Open,
	// OpenFile and NewReader salvage: Decode, DecodeFile and NewDecoder,
	// which have no Damage to report it in, refuse it (an error wrapping
	// errors.ErrUnsupported); a Decoder yields the cells before damage
	// anyway.
	Salvage bool
	// NoOpaqueCheck reads input that starts like an opaque backup file
	// (which is refused with ErrOpaque by default) as template data.
	NoOpaqueCheck bool
}

// format returns o's Format, prepared, or an error wrapping ErrNoFormat
// that names the file.
func (o *Options) format(file string) (*Schema, error) {
	if o == nil || o.Format == nil {
		return nil, fileError(file, -1, ErrNoFormat, "")
	}
	f, err := o.Format.prepare()
	if err != nil {
		return nil, fileError(file, -1, err, "%v", err)
	}
	return f, nil
}

func (o *Options) strict() bool { return o == nil || !o.Lenient }

func (o *Options) salvage() bool { return o != nil && o.Salvage }

// noSalvage refuses Salvage in the calls that cannot report damage.
func (o *Options) noSalvage(file string) error {
	if o.salvage() {
		return fileError(file, -1, errors.ErrUnsupported, "Options.Salvage needs Open, OpenFile or NewReader, whose File reports the damage (Damage)")
	}
	return nil
}

func (o *Options) opaqueCheck() bool { return o == nil || !o.NoOpaqueCheck }

// span locates one entry of one cell in the input.
type span struct {
	prefix int8 // missing reason 0..127 of a null; -1 for present (or no prefix)
	start  int  // stored bytes of the value, after any length word
	end    int
}

// scanCell parses the cell that starts at data[pos], filling spans (one per
// entry), and returns the offset past it. base is the input offset of
// data[0], for error offsets. The caller has checked that pos < len(data).
func (f *Schema) scanCell(data []byte, pos int, cell int64, base int64, strict bool, spans []span) (int, error) {
	for i := range f.Columns {
		c := &f.Columns[i]
		sp := span{prefix: -1}
		if c.Nullable {
			if pos >= len(data) {
				return 0, f.dataError(cell, i, base+int64(pos), mmapfile.ErrTruncated, "input ends before the null prefix")
			}
			p := int8(data[pos])
			if c.Type != TypeSkip {
				if p >= 0 {
					sp.prefix = p
				} else if strict && p != -1 {
					return 0, f.dataError(cell, i, base+int64(pos), ErrPrefix, fmt.Sprintf("null prefix 0x%02x", data[pos]))
				}
			}
			pos++
		}
		if vs := c.valueSize(); vs > 0 {
			if left := len(data) - pos; left < vs {
				return 0, f.dataError(cell, i, base+int64(pos), mmapfile.ErrTruncated, fmt.Sprintf("%d-byte value, input ends after %d", vs, left))
			}
			sp.start, sp.end = pos, pos+vs
		} else {
			if left := len(data) - pos; left < 4 {
				return 0, f.dataError(cell, i, base+int64(pos), mmapfile.ErrTruncated, fmt.Sprintf("4-byte length, input ends after %d", left))
			}
			l := uint64(le32(data[pos:]))
			pos += 4
			if left := uint64(len(data) - pos); l > left {
				return 0, f.dataError(cell, i, base+int64(pos), errLengthCut, "length "+strconv.FormatUint(l, 10)+" exceeds "+bytesLeft(int64(left)))
			}
			sp.start, sp.end = pos, pos+int(l)
		}
		if strict {
			if err := f.checkStrict(data, sp, cell, i, base); err != nil {
				return 0, err
			}
		}
		pos = sp.end
		spans[i] = sp
	}
	return pos, nil
}

// checkStrict applies the strict checks to one scanned entry.
func (f *Schema) checkStrict(data []byte, sp span, cell int64, col int, base int64) error {
	c := &f.Columns[col]
	b := data[sp.start:sp.end]
	off := base + int64(sp.start)
	if sp.prefix >= 0 {
		if c.Width == 0 && c.Type.Size() == 0 && len(b) != 0 {
			return f.dataError(cell, col, off, ErrNull, fmt.Sprintf("null value with a %d-byte payload", len(b)))
		}
		return nil
	}
	switch c.Type {
	case TypeBool:
		if b[0] > 1 {
			return f.dataError(cell, col, off, ErrBool, fmt.Sprintf("bool byte 0x%02x", b[0]))
		}
	case TypeString:
		if c.Width > 0 {
			if bytes.IndexByte(b, 0) < 0 {
				return f.dataError(cell, col, off, ErrString, fmt.Sprintf("string(%d) without a NUL", c.Width))
			}
			return nil
		}
		switch i := bytes.IndexByte(b, 0); {
		case len(b) == 0:
			return f.dataError(cell, col, off-4, ErrString, "string of length 0 (no NUL)")
		case i < 0:
			return f.dataError(cell, col, off, ErrString, "string without its terminating NUL")
		case i < len(b)-1:
			return f.dataError(cell, col, off+int64(i), ErrString, "string with an embedded NUL")
		}
	}
	return nil
}

// stored returns the value bytes of a present entry: a string without its
// terminator (or, for string(N), up to the first NUL); everything else as
// stored.
func stored(c *Column, b []byte) []byte {
	if c.Type != TypeString {
		return b
	}
	if c.Width > 0 {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return b[:i]
		}
		return b
	}
	if n := len(b); n > 0 && b[n-1] == 0 {
		return b[:n-1]
	}
	return b
}
