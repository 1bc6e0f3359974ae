package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// DefaultMaxInflate is how many bytes a deflated .npz member may inflate
// to in memory when Options.MaxInflate is 0: 1 GiB.
const DefaultMaxInflate = 1 << 30

// Options configure Open, OpenFile, NewReader and Create. A nil *Options
// means the defaults.
type Options struct {
	// Options are the mapping's options: advice, populate, lock, wait,
	// and the permission bits of a file made by Create. Create and
	// Truncate are refused by OpenFile: use Create.
	mmapfile.Options
	// Lenient makes copying reads take bool bytes other than 0 and 1 as
	// true, as NumPy does, and conversions of such an array write them as
	// 1; by default they are an error (mmapfile.ErrInvalidBool), also in
	// a conversion to .npy or .npz, which would otherwise copy bytes that
	// the file written could not be read back with. Views are always
	// strict.
	Lenient bool
	// Salvage opens what can be read of a damaged file and says what was
	// wrong in Damage: a .npy cut short keeps the whole rows (slices of
	// its growth axis) that are there; an .npz keeps its readable
	// members, and a read-only open reports stale CRC-32s instead of
	// failing.
	Salvage bool
	// Repair lets a read-write open of an .npz finish edits that were
	// interrupted: members that carry this package's edit mark and whose
	// CRC-32 no longer matches their data get the CRC-32 of their data,
	// and the marks are cleared; Damage says what was rewritten. Without
	// it such an archive is refused (an error wrapping
	// mmapfile.ErrNeedsRepair and ErrCRC that names each member and the
	// CRC-32 a repair would record) and left as it was. Nothing else is
	// repaired: a CRC-32 that is wrong without the mark is damage that
	// only the data's owner can judge.
	Repair bool
	// MaxInflate bounds the bytes a deflated .npz member may inflate to
	// when it is read into memory (Read, ReadAt, and format reads in an
	// order other than the member's own): 0 means DefaultMaxInflate, a
	// negative value no limit. Streaming reads in storage order (what
	// conversions do) are not bounded by it.
	MaxInflate int64
	// LargeHeaders lets writers (Create, Save's kin, CreateZip, the
	// conversions) write headers longer than NumPyMaxHeader, which
	// np.load reads only when told to trust the file.
	LargeHeaders bool
}

func (o *Options) maxInflate() int64 {
	switch {
	case o.MaxInflate < 0:
		return 1<<63 - 1
	case o.MaxInflate == 0:
		return DefaultMaxInflate
	}
	return o.MaxInflate
}

// array is one array of a file: the .npy itself, or one .npz member.
type array struct {
	key  string
	h    *npyHeader
	base int64 // the .npy's first byte in the file; -1 for a deflated member
	data int64 // the data's first byte in the file; -1 for a deflated member
	m    *member
	inf  *inflater  // a deflated member's decompressor, made on first use
	idx  int        // its index in File.arrays
	face *arrayFace // what its records share, with other arrays of its type
}

func (a *array) deflated() bool { return a.data < 0 }

// File is an open .npy file or .npz archive. It is safe for concurrent
// use as format.File says: Set of a mapped element is one store into the
// mapping, as a write through a view is; Append, Sync and the changes of
// deflated members and their checksums are serialised.
type File struct {
	name     string
	opts     Options
	mf       *mmapfile.File // nil for NewReader
	ra       io.ReaderAt    // where copies read from: mf or NewReader's
	size     int64
	writable bool
	isZip    bool
	dir      *zipDir
	arrays   []*array
	keys     map[string]int
	others   []*member // .npz members that are not .npy files
	commit   *atomicfile.File
	wr       writerAt // where appends write, if not mf (tests inject faults)

	wmu    sync.Mutex                      // serialises writers; taken before mu
	mu     sync.RWMutex                    // guards everything below and the arrays' headers
	mapMu  sync.Mutex                      // serialises new mappings
	reg    atomic.Pointer[mmapfile.Region] // the newest mapping of the whole file
	closed bool
	damage error

	face // the records package format sees (format.go)
}

// Open opens a .npy file or an .npz archive for reading. Its data are
// mapped read-only; views alias the mapping.
func Open(path string, o *Options) (*File, error) {
	return OpenFile(path, mmapfile.ReadOnly, o)
}

// OpenFile opens a .npy file or an .npz archive read-only or read-write.
// A read-write open takes an exclusive lock (see mmapfile.Options). It
// refuses an .npz whose in-place edit was interrupted (stored members
// still marked, their CRC-32 stale) unless Options.Repair asks it to
// rewrite their CRC-32s, which Damage then reports. Bytes after a .npy's
// data are kept: NumPy reads such a file, and so does this package.
func OpenFile(path string, mode mmapfile.Mode, o *Options) (*File, error) {
	f := &File{name: path, writable: mode == mmapfile.ReadWrite}
	if o != nil {
		f.opts = *o
	}
	if f.opts.Create || f.opts.Truncate {
		return nil, errAt(path, -1, errors.ErrUnsupported, "OpenFile opens existing files; use Create to make a .npy, WriteFile or a ZipWriter to write one")
	}
	if f.opts.Repair && !f.writable {
		return nil, errAt(path, -1, mmapfile.ErrNotWritable, "Options.Repair needs a read-write open")
	}
	mf, err := mmapfile.OpenFile(path, mode, &f.opts.Options)
	if err != nil {
		return nil, err
	}
	f.mf, f.ra = mf, mf
	if err := f.open(); err != nil {
		mf.Close()
		return nil, err
	}
	return f, nil
}

// NewReader reads the .npy file or .npz archive of size bytes that r
// holds. The File serves copying reads only: views fail.
func NewReader(r io.ReaderAt, size int64, o *Options) (*File, error) {
	f := &File{ra: r, size: size}
	if o != nil {
		f.opts = *o
	}
	if size < 0 {
		return nil, errAt("", -1, nil, "negative size %d", size)
	}
	if err := f.parse(); err != nil {
		return nil, err
	}
	f.buildFace()
	return f, nil
}

func (f *File) errf(off int64, err error, msg string, args ...any) error {
	return errAt(f.name, off, err, msg, args...)
}

// recordErr is errf about the array, member or field name.
func (f *File) recordErr(name string, off int64, err error, msg string, args ...any) error {
	return recordErr(f.name, name, off, err, msg, args...)
}

// open parses a file opened through mmapfile, repairs what a writer
// must, and maps it.
func (f *File) open() error {
	size, err := f.mf.Size()
	if err != nil {
		return err
	}
	f.size = size
	if err := f.parse(); err != nil {
		return err
	}
	f.buildFace()
	if f.writable {
		if err := f.repair(); err != nil {
			return err
		}
	}
	if f.size > 0 {
		reg, err := f.mf.MapAll()
		if err != nil {
			return err
		}
		f.reg.Store(reg)
	}
	return nil
}

// parse reads the headers: one .npy, or every member of an .npz.
func (f *File) parse() error {
	var head [4]byte
	n, _ := f.ra.ReadAt(head[:], 0)
	f.keys = map[string]int{}
	if n >= 1 && head[0] == 'P' && (n < 2 || head[1] == 'K') {
		f.isZip = true
		return f.parseZip()
	}
	if f.size == 0 {
		return f.errf(0, mmapfile.ErrTruncated, "empty file")
	}
	h, err := readHeader(f.name, f.ra, 0, f.size)
	if err != nil {
		return err
	}
	a := &array{key: "0", h: h, base: 0, data: h.dataOff()}
	end, ok := layout.Add(a.data, h.dataSize)
	if !ok || end > f.size {
		if !f.opts.Salvage {
			return f.errf(f.size, mmapfile.ErrTruncated, "the array's %d bytes of data from offset %d need a file of %d bytes; it has %d", h.dataSize, a.data, a.data+h.dataSize, f.size)
		}
		if err := f.salvageShort(a); err != nil {
			return err
		}
	}
	f.arrays = []*array{a}
	f.keys["0"] = 0
	return nil
}

// salvageShort keeps the whole slices of a's growth axis that the file
// holds, for a .npy cut short, and records what was lost.
func (f *File) salvageShort(a *array) error {
	h := a.h
	if len(h.Shape) == 0 {
		return f.errf(f.size, mmapfile.ErrTruncated, "a 0-d array's data are cut short")
	}
	axis := h.growthAxis()
	slice := int64(h.DType.ItemSize)
	for i, d := range h.Shape {
		if i != axis {
			slice *= d // cannot overflow: the whole shape's product did not
		}
	}
	old := h.Shape[axis]
	keep := (f.size - a.data) / slice
	h.Shape[axis] = keep
	h.count, _ = layout.Count(h.Shape)
	h.dataSize = keep * slice
	f.damage = f.errf(f.size, mmapfile.ErrTruncated, "the data are cut short: kept %d of %d slices along axis %d", keep, old, axis)
	return nil
}

// growthAxis is the axis whose length an append grows: the first for C
// order, the last for Fortran order.
func (h *npyHeader) growthAxis() int {
	if h.FortranOrder {
		return len(h.Shape) - 1
	}
	return 0
}

// parseZip reads an .npz: the directory, then the header of every .npy
// member.
func (f *File) parseZip() error {
	d, err := readZip(f.name, f.ra, f.size)
	if err != nil {
		return err
	}
	f.dir = d
	var damage []error
	for _, m := range d.members {
		if !strings.HasSuffix(m.name, ".npy") || m.flags&1 != 0 || (m.method != 0 && m.method != 8) {
			f.others = append(f.others, m)
			continue
		}
		a, err := f.parseMember(m)
		if err != nil {
			if !f.opts.Salvage {
				return err
			}
			damage = append(damage, err)
			continue
		}
		if _, dup := f.keys[a.key]; dup {
			err := f.errf(m.central, ErrZip, "member %q: the key %q is given twice", m.name, a.key)
			if !f.opts.Salvage {
				return err
			}
			damage = append(damage, err)
			continue
		}
		f.keys[a.key] = len(f.arrays)
		a.idx = len(f.arrays)
		f.arrays = append(f.arrays, a)
	}
	if err := f.checkCRCs(); err != nil {
		if !f.opts.Salvage {
			return err
		}
		damage = append(damage, err)
	}
	f.damage = errors.Join(damage...)
	return nil
}

// parseMember reads the .npy header of member m.
func (f *File) parseMember(m *member) (*array, error) {
	a := &array{key: npzKey(m.name), m: m}
	if m.stored() {
		h, err := readHeader(f.name, f.ra, m.data, m.data+m.usize)
		if err != nil {
			return nil, inMember(f.name, err, m, false)
		}
		a.h, a.base, a.data = h, m.data, m.data+h.dataOff()
		if h.dataOff()+h.dataSize > m.usize {
			return nil, f.errf(m.data+m.usize, mmapfile.ErrTruncated, "member %q: %d bytes of data from offset %d run past the member's end", m.name, h.dataSize, a.data)
		}
		return a, nil
	}
	inf := &inflater{file: f.name, src: f.ra, m: m}
	h, err := readHeader("", inf, 0, m.usize)
	if err != nil {
		return nil, inMember(f.name, err, m, true)
	}
	if h.dataOff()+h.dataSize > m.usize {
		return nil, f.errf(m.data, mmapfile.ErrTruncated, "member %q: %d bytes of data after a %d-byte header do not fit its %d inflated bytes", m.name, h.dataSize, h.dataOff(), m.usize)
	}
	a.h, a.base, a.data, a.inf = h, -1, -1, inf
	return a, nil
}

// inMember names the member in an error about it. For a deflated member
// the offsets in the error count inflated bytes: they move into the
// message, and the error points at the member's compressed data.
func inMember(file string, err error, m *member, deflated bool) error {
	var fe *FormatError
	if !errors.As(err, &fe) {
		return err
	}
	e := *fe
	e.File = file
	if fe.File == "" && fe.Offset >= 0 && deflated {
		e.Msg = fmt.Sprintf("member %q (deflated), inflated byte %d: %s", m.name, e.Offset, e.Msg)
		e.Offset = m.data
	} else {
		e.Msg = fmt.Sprintf("member %q: %s", m.name, e.Msg)
	}
	return &e
}

// checkCRCs looks at the stored members that carry the edit mark: if
// their data no longer match the central directory's CRC-32, an edit was
// interrupted and the CRC is stale. A read-only open reports that; a
// read-write open refuses it, or repairs it with Options.Repair (repair).
func (f *File) checkCRCs() error {
	if f.writable {
		return nil
	}
	stale, err := f.staleMarked()
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range stale {
		errs = append(errs, f.errf(s.m.central+16, ErrCRC, "member %q was edited in place and its CRC-32 (%08x, data %08x) not yet rewritten; a read-write open with Options.Repair repairs it", s.m.name, s.m.crc, s.c))
	}
	return errors.Join(errs...)
}

// staleCRC is a marked member whose data's CRC-32 (c) is not the one the
// central directory records.
type staleCRC struct {
	m *member
	c uint32
}

// staleMarked lists the marked members whose CRC-32 is stale.
func (f *File) staleMarked() ([]staleCRC, error) {
	var out []staleCRC
	for _, a := range f.arrays {
		if !a.m.marked() {
			continue
		}
		c, err := f.memberCRC(a.m)
		if err != nil {
			return nil, err
		}
		if c != a.m.crc {
			out = append(out, staleCRC{a.m, c})
		}
	}
	return out, nil
}

// repair is what a read-write open of an .npz checks before anything is
// mapped: members whose edit was interrupted (marked, their CRC-32
// stale). Without Options.Repair such a file is refused, unchanged; with
// it their CRC-32s are rewritten and every mark cleared, and Damage says
// so. A .npy has nothing to repair: bytes after its data (an append cut
// short, or anything else) are not part of the array, and NumPy reads
// the file as it is.
func (f *File) repair() error {
	if !f.isZip {
		return nil
	}
	stale, err := f.staleMarked()
	if err != nil {
		return err
	}
	if !f.opts.Repair {
		var errs []error
		for _, s := range stale {
			errs = append(errs, f.errf(s.m.central+16, needsRepair{}, "member %q was being edited in place when its writer stopped: its data's CRC-32 is %08x, the archive records %08x; a read-write open refuses the file: a repair (Options.Repair) would record %08x as its CRC-32", s.m.name, s.c, s.m.crc, s.c))
		}
		return errors.Join(errs...)
	}
	var fixed []error
	var marked []*member
	for _, a := range f.arrays {
		m := a.m
		if !m.marked() {
			continue
		}
		marked = append(marked, m)
		i := slices.IndexFunc(stale, func(s staleCRC) bool { return s.m == m })
		if i < 0 {
			fixed = append(fixed, f.errf(m.local+10, nil, "member %q: cleared the mark of an interrupted edit (its CRC-32 was right)", m.name))
			continue
		}
		fixed = append(fixed, f.errf(m.central+16, ErrCRC, "member %q: rewrote the CRC-32 that an interrupted edit left stale (%08x, now %08x)", m.name, m.crc, stale[i].c))
		if err := f.writeCRC(m, stale[i].c); err != nil {
			return err
		}
	}
	if len(marked) == 0 {
		return nil
	}
	if err := f.mf.Sync(); err != nil {
		return err
	}
	for _, m := range marked {
		if err := f.clearMark(m); err != nil {
			return err
		}
	}
	if err := f.mf.Sync(); err != nil {
		return err
	}
	f.damage = errors.Join(append([]error{f.damage}, fixed...)...)
	return nil
}

// needsRepair is the sentinel pair of a read-write open refused for an
// interrupted edit.
type needsRepair struct{}

func (needsRepair) Error() string   { return mmapfile.ErrNeedsRepair.Error() }
func (needsRepair) Unwrap() []error { return []error{mmapfile.ErrNeedsRepair, ErrCRC} }

// memberCRC computes the CRC-32 of a stored member's data.
func (f *File) memberCRC(m *member) (uint32, error) {
	c, err := crcOf(f.ra, m.data, m.csize)
	if err != nil {
		return 0, mapErr(f.name, m.data, err, "member %q: computing its CRC-32", m.name)
	}
	return c, nil
}

// checkStored verifies, once, that a stored member's data match its
// CRC-32, before the first copying read: damaged data are an error, as
// they are for NumPy, not values. Members this File edits are not
// checked (their CRC-32 is rewritten at Sync and Close), nor are views.
func (f *File) checkStored(a *array) error {
	m := a.m
	if m == nil || a.deflated() || m.edited.Load() {
		return nil
	}
	m.checkOnce.Do(func() {
		c, err := f.memberCRC(m)
		switch {
		case err != nil:
			m.checkErr = err
		case c != m.crc && !m.edited.Load():
			// (An edit that began meanwhile, which sets edited before
			// its first byte, explains a mismatch.)
			m.checkErr = f.crcMismatch(m, c)
		}
	})
	return m.checkErr
}

// crcMismatch is the error of a stored member whose data's CRC-32 is c.
func (f *File) crcMismatch(m *member, c uint32) error {
	return f.errf(m.data, ErrCRC, "member %q: its data's CRC-32 is %08x, the archive records %08x: the data are damaged", m.name, c, m.crc)
}

// writeCRC records c as m's CRC-32 in the central directory and in its
// data descriptor, if it has one. The local header's CRC-32 is the
// mark's, written by setMark and clearMark.
func (f *File) writeCRC(m *member, c uint32) error {
	if c == m.crc {
		return nil
	}
	if err := putU32(f.mf, m.central+16, c); err != nil {
		return mapErr(f.name, m.central+16, err, "member %q: writing its CRC-32", m.name)
	}
	if m.descCRC >= 0 {
		if err := putU32(f.mf, m.descCRC, c); err != nil {
			return mapErr(f.name, m.descCRC, err, "member %q: writing its CRC-32", m.name)
		}
	}
	m.crc = c
	return nil
}

// putLocal writes the local header's time, date and CRC-32.
func (f *File) putLocal(m *member, stamp, crc uint32) error {
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:], stamp)
	binary.LittleEndian.PutUint32(b[4:], crc)
	if _, err := f.mf.WriteAt(b[:], m.local+10); err != nil {
		return mapErr(f.name, m.local+10, err, "member %q: writing its local header", m.name)
	}
	m.stamp, m.localCRC = stamp, crc
	return nil
}

// clearMark puts back the local header's time and date, and its CRC-32:
// the central one (or, with a data descriptor, what it held before).
func (f *File) clearMark(m *member) error {
	crc := m.crc
	if m.descCRC >= 0 {
		crc = m.keepCRC
	}
	return f.putLocal(m, m.keepStamp, crc)
}

// mark records, durably, that m is about to be edited in place, before
// the first byte of it changes: the edit mark (see marked) stays in its
// local header until Close (or, when no writable view was handed out,
// Sync) records the new CRC-32.
func (f *File) mark(m *member) error {
	m.edited.Store(true)
	m.dirty = true
	if m.marked() {
		return nil
	}
	if err := f.putLocal(m, editStamp, ^m.crc); err != nil {
		return err
	}
	return f.mf.Sync()
}

// syncCRCs rewrites the CRC-32 of every member this File edited since the
// last call, or viewed writably (a view may change it at any time). The
// new CRC-32s are made durable before the marks change, so that a crash
// between leaves either a whole mark or a right CRC-32. The marks are
// cleared at Close (closing), and at Sync for members that no writable
// view can change behind our back; a mark kept follows the new CRC-32.
func (f *File) syncCRCs(closing bool) error {
	if f.dir == nil || !f.writable {
		return nil
	}
	var touched []*member
	for _, a := range f.arrays {
		if m := a.m; m.dirty || m.viewed {
			touched = append(touched, m)
		}
	}
	if len(touched) == 0 {
		return nil
	}
	for _, m := range touched {
		c, err := f.memberCRC(m)
		if err != nil {
			return err
		}
		if err := f.writeCRC(m, c); err != nil {
			return err
		}
		m.dirty = false
	}
	if err := f.mf.Sync(); err != nil {
		return err
	}
	for _, m := range touched {
		if m.stamp != editStamp {
			continue
		}
		var err error
		if closing || !m.viewed {
			err = f.clearMark(m)
		} else if m.localCRC != ^m.crc {
			err = f.putLocal(m, editStamp, ^m.crc)
		}
		if err != nil {
			return err
		}
	}
	return f.mf.Sync()
}

// Verify checks the CRC-32 of every member of an .npz archive against its
// data, now: an error wrapping ErrCRC names each member whose data do not
// match. Opening checks none, so that a large archive opens without
// reading it; the first copying read of a stored member checks it, and a
// deflated member is checked when it is inflated to the end; views never
// check. A .npy has no checksum: nil.
func (f *File) Verify() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return f.errf(-1, mmapfile.ErrClosed, "verify")
	}
	if f.dir == nil {
		return nil
	}
	var errs []error
	for _, m := range f.dir.members {
		switch {
		case m.stored():
			c, err := f.memberCRC(m)
			if err != nil {
				return err
			}
			if c != m.crc {
				errs = append(errs, f.errf(m.central+16, ErrCRC, "member %q: data CRC-32 %08x, recorded %08x", m.name, c, m.crc))
			}
		case m.method == 8 && m.flags&1 == 0:
			inf := &inflater{file: f.name, src: f.ra, m: m}
			if _, err := inf.ReadAt(nil, m.usize); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Name returns the name the file was opened with ("" for NewReader).
func (f *File) Name() string { return f.name }

// IsZip reports whether the file is an .npz archive.
func (f *File) IsZip() bool { return f.isZip }

// Version returns the .npy format version ("1.0", "2.0", "3.0") of a .npy
// file, or "" for an .npz (whose members each have theirs: Arrays).
func (f *File) Version() string {
	if f.isZip {
		return ""
	}
	return f.arrays[0].h.version()
}

// Damage returns what a salvaging open skipped, or what a read-write open
// with Options.Repair repaired, or nil.
func (f *File) Damage() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.damage
}

// Sync makes changes durable: it rewrites the CRC-32 of edited .npz
// members and flushes the mapping and the file (msync, fsync). Until then
// an edited member's CRC-32 is stale: a reader that checks it (Python's
// zipfile does) fails, and a read-only open of this package reports it.
func (f *File) Sync() error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.errf(-1, mmapfile.ErrClosed, "sync")
	}
	if f.mf == nil {
		return nil
	}
	if err := f.syncCRCs(false); err != nil {
		return err
	}
	return f.mf.Sync()
}

// Close records the CRC-32 of edited .npz members, flushes changes,
// unmaps the file and releases its lock; a file made by Create is put in
// place. Every view of the file is invalid afterwards. Closing twice
// returns an error wrapping mmapfile.ErrClosed.
func (f *File) Close() error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.errf(-1, mmapfile.ErrClosed, "")
	}
	f.closed = true
	f.pays.Reset()
	if f.mf == nil {
		return nil
	}
	err := f.syncCRCs(true)
	if cerr := f.mf.Close(); err == nil {
		err = cerr
	}
	if f.commit != nil {
		return f.commit.Finish(err)
	}
	return err
}

// Array describes one array of a file: a .npy's, or an .npz member's.
type Array struct {
	// Name is "0" for a .npy file's array, the member's key (its name
	// without ".npy") for an .npz member.
	Name string
	Header
	// Version is the .npy format version: "1.0", "2.0" or "3.0".
	Version string
	// Offset is the file offset of the first data byte; -1 for a
	// deflated member.
	Offset int64
	// Size is the size of the data in bytes.
	Size int64
	// Member is the member's name in the .npz archive ("x.npy"); "" for
	// a .npy file.
	Member string
	// Compressed: a deflated .npz member, read by decompressing it.
	Compressed bool
}

func (f *File) describe(a *array) Array {
	out := Array{Name: a.key, Header: a.h.full(), Version: a.h.version(), Offset: a.data, Size: a.h.dataSize}
	out.Shape = append([]int64{}, a.h.Shape...)
	if a.m != nil {
		out.Member, out.Compressed = a.m.name, a.deflated()
	}
	return out
}

// Arrays describes every array of the file, in file order.
func (f *File) Arrays() []Array {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]Array, len(f.arrays))
	for i, a := range f.arrays {
		out[i] = f.describe(a)
	}
	return out
}

// Lookup describes the array name ("0" for a .npy file's array, a
// member's key for an .npz).
func (f *File) Lookup(name string) (Array, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	i, ok := f.keys[name]
	if !ok {
		return Array{}, false
	}
	return f.describe(f.arrays[i]), true
}

// OtherMembers lists the names of an .npz archive's members that are not
// arrays NumPy would load: files not named *.npy, encrypted members, and
// members compressed other than by deflate.
func (f *File) OtherMembers() []string {
	var out []string
	for _, m := range f.others {
		out = append(out, m.name)
	}
	return out
}
