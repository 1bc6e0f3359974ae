package hdf5

import (
	"bytes"
	"errors"
	"io"

	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// signature starts every HDF5 superblock.
const signature = "\x89HDF\r\n\x1a\n"

// superblock is what a file's superblock says.
type superblock struct {
	version int
	at      int64  // absolute offset of the signature (the user block's size)
	eof     uint64 // end-of-file address
	root    uint64 // the root group's object header address
	ext     uint64 // superblock extension address (versions 2 and 3)
}

// netCDF3 reports whether head starts like a netCDF-3 file (classic,
// 64-bit offset or CDF-5).
func netCDF3(head []byte) bool {
	return len(head) >= 4 && string(head[:3]) == "CDF" && (head[3] == 1 || head[3] == 2 || head[3] == 5)
}

// matlabHeader starts the 512-byte user block of MATLAB's v7.3 MAT-files,
// which are HDF5 files.
const matlabHeader = "MATLAB 7.3 MAT-file"

// sniff recognises the signature at offset 0, the only place within the
// bytes a registry hands over, and MATLAB v7.3's user block; probe finds
// the signature after other user blocks.
func sniff(head []byte) bool {
	return bytes.HasPrefix(head, []byte(signature)) || bytes.HasPrefix(head, []byte(matlabHeader))
}

// probe reports whether the signature lies at 0, 512, 1024, … of a file
// of size bytes: one 8-byte read per power of two.
func probe(r io.ReaderAt, size int64) bool {
	_, err := findSignature("", r, size)
	return err == nil
}

// findSignature looks for the signature at 0, 512, 1024, 2048, … below
// size.
func findSignature(name string, ra io.ReaderAt, size int64) (int64, error) {
	var b [8]byte
	if size >= 4 {
		if n, _ := ra.ReadAt(b[:4], 0); n == 4 && netCDF3(b[:4]) {
			return -1, errAt(name, 0, errors.ErrUnsupported, "netCDF-3 file (CDF\\x%02x) is not HDF5", b[3])
		}
	}
	for at := int64(0); at+8 <= size; {
		if n, _ := ra.ReadAt(b[:], at); n == 8 && string(b[:]) == signature {
			return at, nil
		}
		if at == 0 {
			at = 512
		} else {
			at *= 2
		}
	}
	return -1, errAt(name, 0, ErrSignature, "%d bytes", size)
}

// readSuperblock parses the superblock at absolute offset at and sets up
// m (base, end, sizes) from it.
func readSuperblock(m *meta, at, size int64) (superblock, error) {
	sb := superblock{at: at}
	head := make([]byte, min(size-at, 256))
	if err := m.readAt(head, at, "superblock"); err != nil {
		return sb, err
	}
	c := m.cursor(head, at, "superblock")
	c.skip(8)
	sb.version = int(c.u8())
	switch sb.version {
	case 0, 1:
		c.skip(3) // free-space, root entry and reserved
		c.skip(1) // shared header message format
		m.so, m.sl = int(c.u8()), int(c.u8())
		c.skip(1)
		c.skip(4) // group leaf and internal node K
		c.skip(4) // consistency flags
		if sb.version == 1 {
			c.skip(4) // indexed storage K, reserved
		}
	case 2, 3:
		m.so, m.sl = int(c.u8()), int(c.u8())
		c.skip(1) // consistency flags
	default:
		return sb, m.errf(at+8, errors.ErrUnsupported, "superblock version %d", sb.version)
	}
	if c.err != nil {
		return sb, c.err
	}
	sizesAt := at + 9
	if sb.version < 2 {
		sizesAt = at + 13
	}
	for k, s := range []struct {
		what string
		v    int
	}{{"size of offsets", m.so}, {"size of lengths", m.sl}} {
		if s.v != 2 && s.v != 4 && s.v != 8 {
			return sb, m.errf(sizesAt+int64(k), errors.ErrUnsupported, "superblock: %s %d (2, 4 or 8)", s.what, s.v)
		}
	}
	base := c.addr()
	if sb.version < 2 {
		c.addr() // free space info
		sb.eof = c.addr()
		c.addr() // driver info
		e, err := parseEntry(c)
		if err != nil {
			return sb, err
		}
		sb.root = e.header
	} else {
		sb.ext = c.addr()
		sb.eof = c.addr()
		sb.root = c.addr()
		sum := c.here()
		stored := c.u32()
		if c.err != nil {
			return sb, c.err
		}
		if got := h5.Checksum(head[:sum-at]); got != stored {
			return sb, m.errf(sum, ErrChecksum, "superblock: checksum %08x, computed %08x", stored, got)
		}
	}
	if c.err != nil {
		return sb, c.err
	}
	if base > uint64(size) {
		return sb, m.errf(at+12, mmapfile.ErrTruncated, "superblock: base address %d past the end of the file (%d bytes)", base, size)
	}
	m.r.Base, m.r.End = int64(base), size
	m.r.OffsetSize, m.r.LengthSize = m.so, m.sl
	// The end-of-file address counts from the start of the file, user
	// block included (as the HDF5 library compares it with the file's
	// size): a file shorter than it was cut.
	if !m.undefined(sb.eof) {
		if sb.eof > uint64(size) {
			return sb, m.errf(size, mmapfile.ErrTruncated, "the file has %d bytes, its superblock says %d", size, sb.eof)
		}
		m.r.End = int64(sb.eof)
	}
	if !m.undefined(sb.ext) && sb.ext != 0 {
		if err := checkExtension(m, sb.ext); err != nil {
			return sb, err
		}
	}
	return sb, nil
}

// checkExtension refuses a superblock extension holding a shared object
// header message table: messages stored there are not read.
func checkExtension(m *meta, addr uint64) error {
	oh, err := readObjectHeader(m, addr)
	if err != nil {
		return err
	}
	for _, msg := range oh.msgs {
		if msg.typ == msgSharedTable {
			return m.errf(msg.at, errors.ErrUnsupported, "superblock extension: shared object header messages (a shared message table) are not supported")
		}
	}
	return nil
}

// entry is a symbol table entry: a link in an old-style group.
type entry struct {
	nameOff uint64
	header  uint64
	cache   uint32
	scratch []byte // 16 bytes
	at      int64
}

func parseEntry(c *cursor) (entry, error) {
	e := entry{at: c.here()}
	e.nameOff = c.addr()
	e.header = c.addr()
	e.cache = c.u32()
	c.skip(4)
	e.scratch = c.take(16)
	return e, c.err
}
