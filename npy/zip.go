package npy

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// ZIP record signatures and sizes.
const (
	sigLocal     = 0x04034b50
	sigCentral   = 0x02014b50
	sigEnd       = 0x06054b50
	sigEnd64     = 0x06064b50
	sigLocator64 = 0x07064b50
	sigDesc      = 0x08074b50
	localLen     = 30
	centralLen   = 46
	endLen       = 22
	end64Len     = 56
	locator64Len = 20
	zip64ID      = 0x0001
	// paddingID is the extra field in which writers pad a local header so
	// that a member's data start at an aligned offset: the ID of Android's
	// zipalign, which every ZIP reader skips as unknown.
	paddingID = 0xd935
)

// member is one entry of an .npz archive: where its headers and data lie.
type member struct {
	name         string
	method       uint16
	flags        uint16
	crc          uint32 // the central directory's CRC-32
	csize, usize int64
	local        int64 // the local header
	central      int64 // the central directory header
	data         int64 // the member's (possibly compressed) data
	descLen      int64 // bytes of the data descriptor after the data; 0 if none
	// The local header's modification time and date (stamp) and CRC-32
	// (localCRC) as they are in the file: while this package edits the
	// member in place they hold its edit mark (see marked). keepStamp and
	// keepCRC are what clearing the mark puts back: the values before the
	// mark (the central directory's time and date where the file was found
	// marked; the central CRC-32 for a member without a data descriptor).
	stamp, localCRC    uint32
	keepStamp, keepCRC uint32
	descCRC            int64 // the data descriptor's CRC-32 field; -1 if none
	// Set in this process: edited since the last CRC update (dirty), and
	// handed out as a writable view (viewed), which may change it at
	// any time until Close.
	dirty, viewed bool
	// edited: this File has begun to change the member (set before its
	// first byte changes, read by copying reads without the write lock).
	edited atomic.Bool
	// The CRC-32 check of a stored member's data, made once, by the
	// first copying read.
	checkOnce sync.Once
	checkErr  error
}

func (m *member) stored() bool { return m.method == zip.Store }

// editStamp is the local header's modification time and date while this
// package edits a stored member in place: 0xffff, 0xffff, the time 31:63:62
// on day 31 of month 15, which no ZIP writer writes and no reader uses
// (readers take the central directory's). With the local CRC-32 set to the
// bitwise complement of the central directory's, it is the edit mark.
const editStamp = 0xffffffff

// marked reports whether the member carries this package's edit mark: the
// edit stamp and, beside it, the complement of the central CRC-32. A
// local CRC-32 that merely differs from the central one (a flipped bit,
// another writer) is not a mark, and is never written over.
func (m *member) marked() bool {
	return m.stored() && m.stamp == editStamp && m.localCRC == ^m.crc
}

// end is the extent of the member's bytes: local header to data
// descriptor.
func (m *member) end() int64 { return m.data + m.csize + m.descLen }

// zipDir is the directory of an .npz archive.
type zipDir struct {
	members []*member
	cdOff   int64 // the central directory's first byte
}

// readZip reads the central directory of the archive of size bytes in ra
// with archive/zip, then each entry's central and local headers itself
// to learn where the data lie, and checks that the two agree, that sizes
// are consistent, and that no two members overlap.
func readZip(file string, ra io.ReaderAt, size int64) (*zipDir, error) {
	bad := func(off int64, format string, args ...any) error {
		return errAt(file, off, ErrZip, format, args...)
	}
	cdOff, base, cdSize, endOff, err := findCentral(file, ra, size)
	if err != nil {
		return nil, err
	}
	d := &zipDir{cdOff: cdOff}
	// The central directory is the cdSize bytes that end where the
	// directory end record starts: Python's zipfile reads its entries
	// there, as long as they last, whatever count the end record gives
	// (archive/zip reads that count from the offset). Where the two would
	// list different members, zipfile's are the archive's: none in a
	// directory of 0 bytes; a directory elsewhere is an error.
	if cdSize == 0 {
		return d, nil
	}
	if cdOff != endOff-cdSize {
		return nil, bad(endOff, "the directory end says the central directory is the %d bytes before it, at %d; its offset field says %d", cdSize, endOff-cdSize, cdOff)
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		var me *mmapfile.Error
		if errors.As(err, &me) {
			return nil, mapErr(file, size, err, "reading the ZIP directory")
		}
		return nil, errAt(file, size, fmt.Errorf("%w: %w", ErrZip, err), "no ZIP central directory that archive/zip reads")
	}
	at := cdOff
	for i, zf := range zr.File {
		if at-cdOff >= cdSize {
			break // past the directory's declared size: zipfile reads no further
		}
		var h [centralLen]byte
		if at > size-centralLen {
			return nil, bad(at, "central directory entry %d runs past the end of the file", i)
		}
		if err := readFull(ra, h[:], at); err != nil {
			return nil, mapErr(file, at, err, "reading the ZIP directory")
		}
		le := binary.LittleEndian
		if le.Uint32(h[:]) != sigCentral {
			return nil, bad(at, "central directory entry %d has no signature", i)
		}
		nlen, elen, clen := int64(le.Uint16(h[28:])), int64(le.Uint16(h[30:])), int64(le.Uint16(h[32:]))
		next := at + centralLen + nlen + elen + clen
		if next > size {
			return nil, bad(at, "central directory entry %d runs past the end of the file", i)
		}
		name := make([]byte, nlen)
		extra := make([]byte, elen)
		if err := readFull(ra, name, at+centralLen); err != nil {
			return nil, mapErr(file, at, err, "reading the ZIP directory")
		}
		if err := readFull(ra, extra, at+centralLen+nlen); err != nil {
			return nil, mapErr(file, at, err, "reading the ZIP directory")
		}
		m := &member{name: string(name), flags: le.Uint16(h[8:]), method: le.Uint16(h[10:]), crc: le.Uint32(h[16:]),
			csize: int64(le.Uint32(h[20:])), usize: int64(le.Uint32(h[24:])), local: int64(le.Uint32(h[42:])), central: at, descCRC: -1}
		if err := m.zip64(extra); err != nil {
			return nil, bad(at, "member %q: %v", m.name, err)
		}
		m.local += base
		if m.name != zf.Name || m.method != zf.Method || m.crc != zf.CRC32 || uint64(m.csize) != zf.CompressedSize64 || uint64(m.usize) != zf.UncompressedSize64 {
			return nil, bad(at, "member %q: the central directory reads differently to archive/zip", m.name)
		}
		if m.csize < 0 || m.usize < 0 || m.local < 0 || m.local > size-localLen {
			return nil, bad(at, "member %q: local header offset %d or sizes outside the file", m.name, m.local)
		}
		// The local header: signature, the same name, sizes that agree.
		var lh [localLen]byte
		if err := readFull(ra, lh[:], m.local); err != nil {
			return nil, mapErr(file, m.local, err, "reading the ZIP local header")
		}
		if le.Uint32(lh[:]) != sigLocal {
			return nil, bad(m.local, "member %q: no local header at its offset", m.name)
		}
		lnlen, lelen := int64(le.Uint16(lh[26:])), int64(le.Uint16(lh[28:]))
		m.data = m.local + localLen + lnlen + lelen
		if m.data > size {
			return nil, bad(m.local, "member %q: local header runs past the end of the file", m.name)
		}
		lname := make([]byte, lnlen)
		if err := readFull(ra, lname, m.local+localLen); err != nil {
			return nil, mapErr(file, m.local, err, "reading the ZIP local header")
		}
		if string(lname) != m.name {
			return nil, bad(m.local+localLen, "member %q: its local header names it %q", m.name, lname)
		}
		if off, err := zf.DataOffset(); err != nil || off != m.data {
			return nil, bad(m.local, "member %q: archive/zip places its data at %d, the local header at %d", m.name, off, m.data)
		}
		m.stamp, m.localCRC = le.Uint32(lh[10:]), le.Uint32(lh[14:])
		m.keepStamp, m.keepCRC = m.stamp, m.localCRC
		if m.marked() {
			m.keepStamp, m.keepCRC = le.Uint32(h[12:]), m.crc
			if m.flags&8 != 0 {
				m.keepCRC = 0 // what a writer with a data descriptor writes
			}
		}
		if m.flags&8 != 0 {
			// A data descriptor follows the data: an optional signature,
			// the CRC, and the sizes (8 bytes each with zip64).
			lextra := make([]byte, lelen)
			if err := readFull(ra, lextra, m.local+localLen+lnlen); err != nil {
				return nil, mapErr(file, m.local, err, "reading the ZIP local header")
			}
			p := m.data + m.csize
			var sig [4]byte
			if p <= size-4 && readFull(ra, sig[:], p) == nil && le.Uint32(sig[:]) == sigDesc {
				p += 4
				m.descLen = 4
			}
			m.descLen += 12
			if hasField(lextra, zip64ID) {
				m.descLen += 8
			}
			if p > size-4 {
				return nil, bad(p, "member %q: data descriptor past the end of the file", m.name)
			}
			m.descCRC = p
		} else {
			lc, lu := int64(le.Uint32(lh[18:])), int64(le.Uint32(lh[22:]))
			if (lc != m.csize && lc != 0xffffffff) || (lu != m.usize && lu != 0xffffffff) {
				return nil, bad(m.local+18, "member %q: the local header says %d bytes (%d compressed), the central directory %d (%d)", m.name, lu, lc, m.usize, m.csize)
			}
		}
		if end, ok := layout.Add(m.data, m.csize); !ok || end+m.descLen > cdOff {
			return nil, bad(m.data, "member %q: %d bytes of data from offset %d run into the central directory at %d", m.name, m.csize, m.data, cdOff)
		}
		if m.stored() && m.csize != m.usize {
			return nil, bad(m.central+20, "member %q is stored, but its sizes differ (%d, %d)", m.name, m.csize, m.usize)
		}
		d.members = append(d.members, m)
		at = next
	}
	if at-cdOff != cdSize {
		return nil, bad(at, "the central directory's entries end at %d; the directory end says they end at %d", at, cdOff+cdSize)
	}
	// No two members may share bytes: an edit of one would change the
	// other, and overlap is how ZIP bombs multiply their output.
	byOff := append([]*member(nil), d.members...)
	sort.Slice(byOff, func(i, j int) bool { return byOff[i].local < byOff[j].local })
	for i := 1; i < len(byOff); i++ {
		if p, q := byOff[i-1], byOff[i]; q.local < p.end() {
			return nil, bad(q.local, "members %q and %q overlap (%q ends at %d)", p.name, q.name, p.name, p.end())
		}
	}
	return d, nil
}

// hasField reports whether an extra field block holds a field with id.
func hasField(extra []byte, id uint16) bool {
	for len(extra) >= 4 {
		fid, sz := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		if fid == id {
			return true
		}
		if 4+sz > len(extra) {
			break
		}
		extra = extra[4+sz:]
	}
	return false
}

// zip64 takes the 64-bit sizes and offset from a central header's zip64
// extra field, for the fields that hold 0xffffffff.
func (m *member) zip64(extra []byte) error {
	needU, needC, needO := m.usize == 0xffffffff, m.csize == 0xffffffff, m.local == 0xffffffff
	for len(extra) >= 4 {
		id, sz := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		if 4+sz > len(extra) {
			return nil // a short trailing field: archive/zip ignores it too
		}
		f := extra[4 : 4+sz]
		extra = extra[4+sz:]
		if id != zip64ID {
			continue
		}
		take := func(need *bool, v *int64) error {
			if !*need {
				return nil
			}
			if len(f) < 8 {
				return errors.New("zip64 extra field too short")
			}
			u := binary.LittleEndian.Uint64(f)
			if u > 1<<63-1 {
				return errors.New("zip64 size or offset too large")
			}
			*v, *need, f = int64(u), false, f[8:]
			return nil
		}
		if err := take(&needU, &m.usize); err != nil {
			return err
		}
		if err := take(&needC, &m.csize); err != nil {
			return err
		}
		if err := take(&needO, &m.local); err != nil {
			return err
		}
	}
	return nil
}

// findCentral locates the central directory as archive/zip does: the last
// end-of-central-directory record, the zip64 one where the record says
// so (endOff: where that record starts), and the offset of data prepended
// to the archive (base). cdLen is the directory's size as the record
// gives it.
func findCentral(file string, ra io.ReaderAt, size int64) (cdOff, base, cdLen, endOff int64, err error) {
	n := min(size, 65*1024)
	buf := make([]byte, n)
	if err := readFull(ra, buf, size-n); err != nil {
		return 0, 0, 0, 0, mapErr(file, size-n, err, "reading the ZIP directory end")
	}
	p := -1
	for i := len(buf) - endLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == sigEnd {
			if int(binary.LittleEndian.Uint16(buf[i+20:]))+endLen+i <= len(buf) {
				p = i
			}
			break
		}
	}
	if p < 0 {
		return 0, 0, 0, 0, errAt(file, size, ErrZip, "no end of central directory record")
	}
	endOff = size - n + int64(p)
	e := buf[p:]
	le := binary.LittleEndian
	records, cdSize, dirOff := uint64(le.Uint16(e[10:])), uint64(le.Uint32(e[12:])), uint64(le.Uint32(e[16:]))
	if records == 0xffff || cdSize == 0xffff || dirOff == 0xffffffff {
		if loc := endOff - locator64Len; loc >= 0 {
			var l [locator64Len]byte
			if err := readFull(ra, l[:], loc); err == nil && le.Uint32(l[:]) == sigLocator64 && le.Uint32(l[4:]) == 0 && le.Uint32(l[16:]) == 1 {
				p64 := le.Uint64(l[8:])
				var r [end64Len]byte
				if p64 > uint64(size-end64Len) {
					return 0, 0, 0, 0, errAt(file, loc, ErrZip, "zip64 end of central directory outside the file")
				}
				if err := readFull(ra, r[:], int64(p64)); err != nil || le.Uint32(r[:]) != sigEnd64 {
					return 0, 0, 0, 0, errAt(file, int64(p64), ErrZip, "no zip64 end of central directory record")
				}
				endOff = int64(p64)
				cdSize, dirOff = le.Uint64(r[40:]), le.Uint64(r[48:])
			}
		}
	}
	if cdSize > 1<<62 || dirOff > 1<<62 {
		return 0, 0, 0, 0, errAt(file, endOff, ErrZip, "central directory size or offset too large")
	}
	base = endOff - int64(cdSize) - int64(dirOff)
	if o := base + int64(dirOff); o < 0 || o >= size {
		return 0, 0, 0, 0, errAt(file, endOff, ErrZip, "central directory offset outside the file")
	}
	if base > 0 {
		var s [4]byte
		if readFull(ra, s[:], int64(dirOff)) == nil && le.Uint32(s[:]) == sigCentral {
			base = 0
		}
	}
	return base + int64(dirOff), base, int64(cdSize), endOff, nil
}

// npzKey is the name NumPy gives a member: its name without ".npy".
func npzKey(name string) string { return strings.TrimSuffix(name, ".npy") }

// crcOf computes the CRC-32 of n bytes at off.
func crcOf(ra io.ReaderAt, off, n int64) (uint32, error) {
	buf := make([]byte, min(n, 1<<20))
	var c uint32
	for n > 0 {
		k := min(n, int64(len(buf)))
		if err := readFull(ra, buf[:k], off); err != nil {
			return 0, err
		}
		c = crc32.Update(c, crc32.IEEETable, buf[:k])
		off += k
		n -= k
	}
	return c, nil
}

// putU32 writes v little-endian at off of w.
func putU32(w io.WriterAt, off int64, v uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	_, err := w.WriteAt(b[:], off)
	return err
}
