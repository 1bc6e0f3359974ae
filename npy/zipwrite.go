package npy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// ZipWriter writes an .npz archive whose members are stored, not
// compressed, each padded (in its local header's extra field, with the
// ID Android's zipalign uses, which ZIP readers skip) so that its data
// start at a multiple of 64: every member can then be viewed in place.
// NumPy and Python's zipfile read such archives unchanged. CRC-32s are
// exact, and zip64 records are written where sizes, offsets or the member
// count need them. The archive is built beside its path and put in place
// by Close.
type ZipWriter struct {
	path    string
	tmp     *atomicfile.File
	bw      *bufio.Writer
	off     int64
	entries []zipEntry
	names   map[string]bool
	cw      crcWriter
	scratch []byte // a member's local header and extra field, or a directory entry
	err     error
	done    bool
	// largeHeaders: Options.LargeHeaders.
	largeHeaders bool
}

type zipEntry struct {
	name  string
	crc   uint32
	size  int64
	local int64
}

// forceZip64 makes the writer use zip64 fields for every member and the
// directory end, so that tests can check readers on small archives.
var forceZip64 = false

// CreateZip starts an .npz archive at path.
func CreateZip(path string, o *Options) (*ZipWriter, error) {
	var perm os.FileMode
	if o != nil {
		perm = o.Perm
	}
	tmp, err := atomicfile.Create(path, perm)
	if err != nil {
		return nil, err
	}
	return &ZipWriter{path: path, tmp: tmp, bw: bufio.NewWriterSize(tmp, 1<<20), names: map[string]bool{}, largeHeaders: o != nil && o.LargeHeaders}, nil
}

// Add appends the member key.npy: header h and the data read from data
// (exactly h's data size, stored as h says).
func (z *ZipWriter) Add(key string, h Header, data io.Reader) error {
	size, err := h.DataSize()
	if err != nil {
		return z.fail(fmt.Errorf("member %q: %w", key, err))
	}
	return z.addNPY(key, h, func(w io.Writer) error {
		n, err := io.Copy(w, io.LimitReader(data, size))
		if err == nil && n < size {
			err = fmt.Errorf("member %q: %w: %d of %d data bytes", key, io.ErrUnexpectedEOF, n, size)
		}
		return err
	})
}

// AddArray appends the member key.npy holding values (in storage order)
// with the given shape, little-endian, C order or (order ColMajor and a
// shape that is not trivially both) Fortran order.
func AddArray[T layout.Elem](z *ZipWriter, key string, shape []int64, order layout.Order, values []T) error {
	dt, err := DTypeOf(layout.TypeOf[T]())
	if err != nil {
		return z.fail(fmt.Errorf("member %q: %w", key, err))
	}
	h := Header{DType: dt, Shape: shape, FortranOrder: order == layout.ColMajor && !layout.Trivial(shape)}
	n, err := h.Count()
	if err != nil || n != int64(len(values)) {
		return z.fail(fmt.Errorf("member %q: %d values for shape %s: %w", key, len(values), shapeRepr(shape), mmapfile.ErrOutOfRange))
	}
	return z.addNPY(key, h, func(w io.Writer) error {
		b := unsafeslice.Bytes(values)
		if !layout.IsHostOrder(dt.byteOrder()) {
			b = append([]byte(nil), b...)
			layout.SwapOrder(b, dt.Type(), layout.HostOrder(), dt.byteOrder())
		}
		_, err := w.Write(b)
		return err
	})
}

// addNPY appends a member holding a .npy file: h's header, then data.
func (z *ZipWriter) addNPY(key string, h Header, data func(io.Writer) error) error {
	hdr, err := h.Encode()
	if err != nil {
		return z.fail(fmt.Errorf("member %q: %w", key, err))
	}
	size, _ := h.DataSize()
	return z.addEncoded(key, hdr, size, data)
}

// addEncoded is addNPY of the encoded header hdr and size bytes of data.
func (z *ZipWriter) addEncoded(key string, hdr []byte, size int64, data func(io.Writer) error) error {
	if err := checkHeaderLen(hdr, z.largeHeaders); err != nil {
		return z.fail(fmt.Errorf("member %q: %w", key, err))
	}
	total, ok := layout.Add(int64(len(hdr)), size)
	if !ok {
		return z.fail(fmt.Errorf("member %q: %w", key, layout.ErrOverflow))
	}
	return z.addMember(key+".npy", total, func(w io.Writer) error {
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		return data(w)
	})
}

func (z *ZipWriter) fail(err error) error {
	if z.err == nil {
		z.err = err
	}
	return errAt(z.path, -1, err, "writing the archive")
}

// addMember appends a stored member of size bytes that write produces.
func (z *ZipWriter) addMember(name string, size int64, write func(io.Writer) error) error {
	if z.err != nil {
		return errAt(z.path, -1, z.err, "an earlier write failed")
	}
	if z.done {
		return z.fail(fmt.Errorf("the archive is closed"))
	}
	if z.names[name] {
		return z.fail(fmt.Errorf("member %q is added twice", name))
	}
	if len(name) > 0xffff {
		return z.fail(fmt.Errorf("member name of %d bytes", len(name)))
	}
	z.names[name] = true
	big := size >= 0xffffffff || forceZip64
	// The extra field (zip64 sizes, padding of at most 69 bytes) and the
	// header are built in buffers that every member reuses: an archive
	// of a million members makes no garbage of a million headers.
	var extraBuf [96]byte
	extra := extraBuf[:0]
	if big {
		extra = binary.LittleEndian.AppendUint16(extra, zip64ID)
		extra = binary.LittleEndian.AppendUint16(extra, 16)
		extra = binary.LittleEndian.AppendUint64(extra, uint64(size))
		extra = binary.LittleEndian.AppendUint64(extra, uint64(size))
	}
	// Pad so that the data start at a multiple of 64; a padding field
	// takes at least 6 bytes (ID, size, alignment).
	at := z.off + localLen + int64(len(name)) + int64(len(extra))
	pad := (64 - at%64) % 64
	if pad > 0 && pad < 6 {
		pad += 64
	}
	if pad > 0 {
		extra = binary.LittleEndian.AppendUint16(extra, paddingID)
		extra = binary.LittleEndian.AppendUint16(extra, uint16(pad-4))
		extra = binary.LittleEndian.AppendUint16(extra, 64)
		extra = append(extra, zeros[:pad-6]...)
	}
	local := z.off
	h := localHeader(z.scratch[:0], name, extra, size, big)
	z.scratch = h[:0]
	cw := &z.cw
	*cw = crcWriter{w: z.bw}
	if _, err := cw.Write(h); err != nil {
		return z.fail(err)
	}
	cw.n, cw.crc = 0, 0
	if err := write(cw); err != nil {
		return z.fail(fmt.Errorf("member %q: %w", name, err))
	}
	if cw.n != size {
		return z.fail(fmt.Errorf("member %q: %d bytes written, %d announced", name, cw.n, size))
	}
	// The CRC is known only now: patch the local header.
	if err := z.bw.Flush(); err != nil {
		return z.fail(err)
	}
	if err := putU32(z.tmp, local+14, cw.crc); err != nil {
		return z.fail(err)
	}
	if len(z.entries) == cap(z.entries) {
		// Doubling: append's quarter steps past a few hundred entries
		// would leave four times the list behind.
		z.entries = slices.Grow(z.entries, max(cap(z.entries), 64))
	}
	z.entries = append(z.entries, zipEntry{name: name, crc: cw.crc, size: size, local: local})
	z.off = local + int64(len(h)) + size
	return nil
}

// zeros pads extra fields.
var zeros [128]byte

// localHeader appends to dst a stored member's local header, its CRC-32
// zero.
func localHeader(dst []byte, name string, extra []byte, size int64, big bool) []byte {
	le := binary.LittleEndian
	h := append(dst, zeros[:localLen]...)
	le.PutUint32(h, sigLocal)
	le.PutUint16(h[4:], versionNeeded(big))
	le.PutUint16(h[6:], nameFlags(name))
	le.PutUint16(h[8:], 0)     // stored
	le.PutUint16(h[10:], 0)    // 00:00:00
	le.PutUint16(h[12:], 0x21) // 1980-01-01, as np.savez writes
	sz := uint32(size)
	if big {
		sz = 0xffffffff
	}
	le.PutUint32(h[18:], sz)
	le.PutUint32(h[22:], sz)
	le.PutUint16(h[26:], uint16(len(name)))
	le.PutUint16(h[28:], uint16(len(extra)))
	h = append(h, name...)
	return append(h, extra...)
}

func versionNeeded(big bool) uint16 {
	if big {
		return 45
	}
	return 20
}

// nameFlags sets the UTF-8 flag for names that are not ASCII.
func nameFlags(name string) uint16 {
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			if utf8.ValidString(name) {
				return 0x800
			}
			break
		}
	}
	return 0
}

// crcWriter counts and checksums what passes through it.
type crcWriter struct {
	w   io.Writer
	n   int64
	crc uint32
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc = crc32.Update(c.crc, crc32.IEEETable, p[:n])
	c.n += int64(n)
	return n, err
}

// Close writes the central directory and puts the archive in place.
func (z *ZipWriter) Close() error {
	if z.done {
		return errAt(z.path, -1, mmapfile.ErrClosed, "")
	}
	z.done = true
	if z.err != nil {
		z.tmp.Abort()
		return errAt(z.path, -1, z.err, "an earlier write failed; nothing was written")
	}
	if err := z.finish(); err != nil {
		z.tmp.Abort()
		return errAt(z.path, -1, err, "writing the central directory")
	}
	return z.tmp.Commit()
}

// Abort drops the archive, leaving path as it was.
func (z *ZipWriter) Abort() {
	z.done = true
	z.tmp.Abort()
}

// finish writes the central directory and its end records.
func (z *ZipWriter) finish() error {
	le := binary.LittleEndian
	cdOff := z.off
	for _, e := range z.entries {
		needSize := e.size >= 0xffffffff || forceZip64
		needOff := e.local >= 0xffffffff || forceZip64
		var extra []byte
		if needSize || needOff {
			n := 0
			if needSize {
				n += 16
			}
			if needOff {
				n += 8
			}
			extra = le.AppendUint16(extra, zip64ID)
			extra = le.AppendUint16(extra, uint16(n))
			if needSize {
				extra = le.AppendUint64(extra, uint64(e.size))
				extra = le.AppendUint64(extra, uint64(e.size))
			}
			if needOff {
				extra = le.AppendUint64(extra, uint64(e.local))
			}
		}
		h := append(z.scratch[:0], zeros[:centralLen]...)
		le.PutUint32(h, sigCentral)
		le.PutUint16(h[4:], 3<<8|versionNeeded(needSize || needOff)) // made by: Unix
		le.PutUint16(h[6:], versionNeeded(needSize || needOff))
		le.PutUint16(h[8:], nameFlags(e.name))
		le.PutUint16(h[14:], 0x21)
		le.PutUint32(h[16:], e.crc)
		sz, off := uint32(e.size), uint32(e.local)
		if needSize {
			sz = 0xffffffff
		}
		if needOff {
			off = 0xffffffff
		}
		le.PutUint32(h[20:], sz)
		le.PutUint32(h[24:], sz)
		le.PutUint16(h[28:], uint16(len(e.name)))
		le.PutUint16(h[30:], uint16(len(extra)))
		le.PutUint32(h[38:], 0o600<<16) // rw------- as Python's zipfile
		le.PutUint32(h[42:], off)
		h = append(append(h, e.name...), extra...)
		z.scratch = h
		if _, err := z.bw.Write(h); err != nil {
			return err
		}
		z.off += int64(len(h))
	}
	cdSize := z.off - cdOff
	count := int64(len(z.entries))
	if count >= 0xffff || cdSize >= 0xffffffff || cdOff >= 0xffffffff || forceZip64 {
		end64 := z.off
		r := make([]byte, end64Len)
		le.PutUint32(r, sigEnd64)
		le.PutUint64(r[4:], end64Len-12)
		le.PutUint16(r[12:], 3<<8|45)
		le.PutUint16(r[14:], 45)
		le.PutUint64(r[24:], uint64(count))
		le.PutUint64(r[32:], uint64(count))
		le.PutUint64(r[40:], uint64(cdSize))
		le.PutUint64(r[48:], uint64(cdOff))
		l := make([]byte, locator64Len)
		le.PutUint32(l, sigLocator64)
		le.PutUint64(l[8:], uint64(end64))
		le.PutUint32(l[16:], 1)
		if _, err := z.bw.Write(append(r, l...)); err != nil {
			return err
		}
		z.off += end64Len + locator64Len
		count, cdSize, cdOff = min(count, 0xffff), min(cdSize, 0xffffffff), min(cdOff, 0xffffffff)
		if forceZip64 {
			count, cdSize, cdOff = 0xffff, 0xffffffff, 0xffffffff
		}
	}
	e := make([]byte, endLen)
	le.PutUint32(e, sigEnd)
	le.PutUint16(e[8:], uint16(count))
	le.PutUint16(e[10:], uint16(count))
	le.PutUint32(e[12:], uint32(cdSize))
	le.PutUint32(e[16:], uint32(cdOff))
	if _, err := z.bw.Write(e); err != nil {
		return err
	}
	return z.bw.Flush()
}
