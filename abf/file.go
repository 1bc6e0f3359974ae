package abf

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Options configures Open, OpenFile and NewReader. A nil *Options means
// the zero value: the defaults.
type Options struct {
	// Options are the mapping's options: access advice and populate for
	// every mapping, the lock a read-write open takes (exclusive by
	// default) and whether to wait for it, and the permission bits of a
	// created file. A ReadWrite open without Mode opens "r+", creating
	// the file if Create is set, or "w+" if Truncate is set.
	mmapfile.Options
	// Mode is one of Julia's modes, the way AlignedBinaryFormat.jl's
	// abfopen takes them; "" means "r" for mmapfile.ReadOnly and "r+"
	// (see above) for mmapfile.ReadWrite:
	//
	//	"r"   read; the file must exist (mmapfile.ReadOnly)
	//	"r+"  read, edit in place and append; the file must exist
	//	"w"   create or truncate; append only
	//	"w+"  create or truncate; read, edit in place and append
	//	"a"   create if missing; append only (the file is scanned first)
	//
	// Every mode but "r" needs mmapfile.ReadWrite.
	Mode string
	// Format is the format of a new or empty file: FormatC (the zero
	// value) or FormatA. For a file that has contents it must be 0 or the
	// file's own format.
	Format Format
	// Salvage keeps the records before a damaged record instead of
	// failing; Damage reports the error. A writing open ("r+", "a") with
	// Salvage but not Repair changes nothing: the records before the
	// damage can be edited in place, and appends fail while the damaged
	// bytes are there.
	Salvage bool
	// Repair lets a writing open ("r+", "a") repair a damaged file: it
	// cuts the first record that does not parse and everything after it
	// (what a process killed while appending leaves, but also what a
	// corrupted length looks like), and Format A's bytes after the
	// counted records, rewriting the count; Damage says what was cut.
	// Without Repair (or Salvage) a writing open refuses a damaged file
	// with an error wrapping mmapfile.ErrNeedsRepair that says what a
	// repair would cut, and leaves it as it was. A Format B or C file of
	// which not one record parses is never cut, unless it ends inside its
	// first record (a torn first append): it may be no ABF file at all. Format A's bytes after the counted records are not damage: upstream ignores them, edits in
	// place work, and appends fail while they are there.
	Repair bool
	// Lenient accepts what AlignedBinaryFormat.jl accepts: copying reads
	// mask off BitArray unused bits that are set and read Bool bytes other
	// than 0 and 1 as true (views stay strict), and a string whose last
	// character is cut short by the end of the file reads as Julia reads
	// it, one character, where a strict open reports the torn record.
	Lenient bool
}

// writerAt is where appends go: the file, or a fault injector in tests.
type writerAt interface {
	WriteAt(p []byte, off int64) (int, error)
}

// File is an open ABF file. It is safe for concurrent use as format.File
// says: Set of a mapped element is one store into the mapping, as a write
// through a view is; appends and BitArray bits (whose words are read,
// changed and written back) are serialised.
type File struct {
	name     string
	mode     string
	readable bool
	writable bool
	lenient  bool
	regular  bool
	mf       *mmapfile.File // nil for NewReader
	ra       io.ReaderAt    // NewReader's source

	wmu sync.Mutex   // serialises writers; taken before mu
	mu  sync.RWMutex // guards tab, closed

	// The file is mapped once as it is at open, and records appended
	// since are mapped when first viewed, all that was appended by then
	// in one more mapping: never a mapping per record.
	mapMu sync.Mutex
	wins  atomic.Pointer[[]*mmapfile.Region] // in file order, contiguous from offset 0

	format   Format
	tab      table
	end      int64 // where the next record starts
	size     int64 // the file's size as the writer knows it
	count    int64 // Format A's record count
	trailing int64
	damage   error
	closed   bool

	wr writerAt
	// discarded, for the temporary file of a writer that replaces its
	// target only when complete, says what a failed write leaves of the
	// target, which the errors name.
	discarded string

	face // the records package format sees (format.go)
}

// Open opens the file at path read-only (mode "r").
func Open(path string, opt *Options) (*File, error) {
	return OpenFile(path, mmapfile.ReadOnly, opt)
}

// modes are Julia's modes, as an error lists them.
const modes = "r, r+, w, w+, a"

// OpenFile opens the file at path read-only (mmapfile.ReadOnly) or
// read-write; opt.Mode chooses among Julia's modes (see Options.Mode).
// A read-write open takes an exclusive advisory lock: a second writer
// fails with mmapfile.ErrLocked unless opt.Wait is set. Format B files and
// files with big-endian records cannot be opened for writing
// (mmapfile.ErrNotWritable).
func OpenFile(path string, mode mmapfile.Mode, opt *Options) (*File, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	f := &File{name: path, lenient: o.Lenient}
	jm := o.Mode
	if jm == "" {
		jm = "r"
		if mode == mmapfile.ReadWrite {
			jm = "r+"
			if o.Truncate {
				jm = "w+"
			}
		}
	}
	f.mode = jm
	switch {
	case o.Format > FormatB:
		return nil, f.errf(-1, nil, "unknown format %v", o.Format)
	case jm != "r" && jm != "r+" && jm != "w" && jm != "w+" && jm != "a":
		return nil, f.errf(-1, nil, "mode %q is not one of %s", jm, modes)
	case mode != mmapfile.ReadOnly && mode != mmapfile.ReadWrite:
		return nil, f.errf(-1, nil, "unknown mmapfile.Mode %d", mode)
	case jm == "r" && mode != mmapfile.ReadOnly:
		return nil, f.errf(-1, nil, "mode \"r\" reads only: open with mmapfile.ReadOnly")
	case jm != "r" && mode != mmapfile.ReadWrite:
		return nil, f.errf(-1, mmapfile.ErrNotWritable, "mode %q writes: open with mmapfile.ReadWrite", jm)
	case o.Repair && jm != "r+" && jm != "a":
		return nil, f.errf(-1, mmapfile.ErrNotWritable, "Options.Repair repairs a file opened \"r+\" or \"a\", not %q", jm)
	}
	mo := o.Options
	mo.Truncate = false // "w" and "w+" truncate once the lock is theirs
	mo.Create = jm == "w" || jm == "w+" || jm == "a" || (jm == "r+" && o.Create)
	f.readable = jm == "r" || jm == "r+" || jm == "w+"
	f.writable = jm != "r"
	var err error
	if f.mf, err = mmapfile.OpenFile(path, mode, &mo); err != nil {
		return nil, f.errf(-1, err, "cannot open")
	}
	if err := f.open(o); err != nil {
		f.mf.Close()
		return nil, err
	}
	f.wr = f.mf
	return f, nil
}

func (f *File) open(o Options) error {
	fi, err := f.mf.OSFile().Stat()
	if err != nil {
		return f.errf(-1, err, "cannot stat")
	}
	f.regular = fi.Mode().IsRegular()
	if f.mode == "w" || f.mode == "w+" {
		if f.regular && fi.Size() > 0 {
			// Truncate only now that the lock is ours.
			if err := f.mf.Truncate(0); err != nil {
				return f.errf(0, err, "cannot truncate")
			}
		}
		return f.create(o.Format)
	}
	size, err := f.mf.Size()
	if err != nil {
		return f.errf(-1, err, "cannot stat")
	}
	if size == 0 {
		if o.Format != FormatC && f.mode == "r" {
			return f.errf(0, nil, "empty file is Format C, not %v", o.Format)
		}
		if f.writable {
			return f.create(o.Format)
		}
		return nil
	}
	// The headers are read with pread, a window at a time, not through
	// the mapping: listing a file of many records then keeps none of its
	// pages resident, and a file cut short meanwhile is an error, not a
	// fault. Writers parse salvaging so that they can say what a repair
	// would cut, and cut it if asked.
	in := &input{name: f.name, lenient: o.Lenient, size: size, ra: f.mf}
	res, err := parseFile(in, o.Salvage || f.writable)
	if err != nil {
		return err
	}
	if f.writable && res.damage != nil && res.tab.len() == 0 && res.format != FormatA && errors.Is(res.damage, mmapfile.ErrTruncated) {
		res.notTorn = whyNotTorn(in, res)
	}
	if res.damage != nil && (!o.Salvage && !o.Repair || o.Repair && !repairable(res)) {
		return needsRepair(f.name, res, size)
	}
	if o.Format != FormatC && o.Format != res.format {
		return f.errf(0, errors.ErrUnsupported, "file is Format %v; Options.Format asks for %v", res.format, o.Format)
	}
	f.adopt(res, size)
	if f.writable {
		if res.format == FormatB {
			return f.errf(0, mmapfile.ErrNotWritable, "Format B files are read only")
		}
		for i := range res.tab.len() {
			if e := res.tab.at(i); e.bigEndian() {
				return f.errf(e.start, mmapfile.ErrNotWritable, "record %s is big-endian; big-endian files are read only", keyOf(&e))
			}
		}
		if o.Repair && (res.damage != nil || (res.format == FormatA && res.end < size)) {
			// A record that does not parse, or Format A's bytes after the
			// counted records, such as a record written but not yet
			// counted: what a crash mid-append leaves. Cut it away before
			// anything maps it, and say so in Damage.
			f.damage = cutError(f.name, res, size)
			if res.end < size {
				if err := f.mf.Truncate(res.end); err != nil {
					return f.errf(res.end, err, "cannot cut the damaged tail")
				}
			}
			f.size = res.end
			if res.format == FormatA {
				f.count = int64(res.tab.len())
				if err := f.putCount(f.count); err != nil {
					return err
				}
			}
			f.trailing = 0
			size = res.end
		}
	}
	if !f.readable {
		return nil
	}
	// One mapping of the file as parsed serves every record it holds.
	whole, err := f.mf.Map(0, size)
	if err != nil {
		return f.errf(0, err, "cannot map the %d bytes parsed", size)
	}
	f.wins.Store(&[]*mmapfile.Region{whole})
	return nil
}

// cutError says what a writing open cut off the end of the file and why.
func cutError(name string, res *parsed, size int64) *FormatError {
	why, cause := damageOf(res)
	msg := fmt.Sprintf("cut %d bytes after the last complete record (%s)", size-res.end, why)
	if res.format == FormatA && res.count != int64(res.tab.len()) {
		msg += fmt.Sprintf("; the record count is now %d, was %d", res.tab.len(), res.count)
	}
	return errAt(name, res.end, cause, msg)
}

// damageOf describes what ended the parse, and the error it wraps.
func damageOf(res *parsed) (string, error) {
	var fe *FormatError
	switch {
	case errors.As(res.damage, &fe):
		return fmt.Sprintf("offset %d: %s", fe.Offset, fe.Msg), fe.Err
	case res.damage != nil:
		return res.damage.Error(), res.damage
	}
	return "a record after the counted ones, written but not counted", nil
}

// needsRepair is the error of a writing open that found damage: what is
// damaged, and what a repair would cut.
func needsRepair(name string, res *parsed, size int64) error {
	off, why, cause := res.end, "", error(nil)
	var fe *FormatError
	if errors.As(res.damage, &fe) {
		off, why, cause = fe.Offset, fe.Msg, fe.Err
	} else {
		why, cause = damageOf(res)
	}
	err := error(mmapfile.ErrNeedsRepair)
	if cause != nil {
		err = fmt.Errorf("%w: %w", mmapfile.ErrNeedsRepair, cause)
	}
	msg := fmt.Sprintf("%s; a writing open refuses the damaged file: a repair (Options.Repair) would cut its last %d bytes, from offset %d (the record there and everything after it), and keep the %s before them",
		why, size-res.end, res.end, plural(res.tab.len(), "record"))
	switch {
	case !repairable(res) && res.notTorn != "":
		err = cause
		msg = fmt.Sprintf("%s; %s; not one record parses, so this may not be an ABF file: a writing open refuses it, and no repair cuts it", why, res.notTorn)
	case !repairable(res):
		err = cause
		msg = fmt.Sprintf("%s; not one record parses, so this may not be an ABF file: a writing open refuses it, and no repair cuts it", why)
	case size == res.end:
		// Format A counting records that are not there: nothing to cut.
		msg = fmt.Sprintf("%s; a writing open refuses the damaged file: a repair (Options.Repair) would keep the %s there are", why, plural(res.tab.len(), "record"))
	}
	if res.format == FormatA && res.count != int64(res.tab.len()) {
		msg += fmt.Sprintf(", rewriting the record count from %d to %d", res.count, res.tab.len())
	}
	return errAt(name, off, err, msg)
}

// repairable reports whether a repair may cut the damage res found: not
// where no record parses and the bytes are not what a torn first append
// leaves, since the file may be no ABF file at all.
func repairable(res *parsed) bool {
	return res.format == FormatA || res.tab.len() > 0 || errors.Is(res.damage, mmapfile.ErrTruncated) && res.notTorn == ""
}

// plural is "1 record", "2 records".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// create starts a new, empty file: nothing for C, the 22-byte header for A.
func (f *File) create(format Format) error {
	switch format {
	case FormatC:
		return nil
	case FormatA:
		hdr := append(append([]byte{}, headerALE...), make([]byte, 8)...)
		if _, err := f.mf.WriteAt(hdr, 0); err != nil {
			return f.errf(0, err, "writing the Format A header")
		}
		f.format, f.end, f.size = FormatA, headerASize, headerASize
		return nil
	}
	return f.errf(-1, errors.ErrUnsupported, "Format %v cannot be written", format)
}

func (f *File) adopt(res *parsed, size int64) {
	f.format, f.tab = res.format, res.tab
	f.end, f.size, f.count = res.end, size, res.count
	f.trailing, f.damage = res.trailing, res.damage
	if res.format == FormatA && res.damage != nil {
		f.count = int64(res.tab.len())
	}
}

// NewReader parses the ABF file of size bytes that r holds, for files
// that are not on disk or not to be mapped. The File it returns serves
// copying reads only (Read, ReadAt, ReadBits, ReadBytes, ReadString);
// views fail. Errors name the file by r's Name method, if it has one
// (*os.File does). opt.Mode must be "" or "r"; Salvage and Lenient apply.
func NewReader(r io.ReaderAt, size int64, opt *Options) (*File, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	f := &File{mode: "r", readable: true, ra: r, lenient: o.Lenient}
	if n, ok := r.(interface{ Name() string }); ok {
		f.name = n.Name()
	}
	switch {
	case o.Mode != "" && o.Mode != "r":
		return nil, f.errf(-1, mmapfile.ErrNotWritable, "mode %q: a NewReader file is read only", o.Mode)
	case size < 0:
		return nil, f.errf(-1, nil, "negative size %d", size)
	}
	res, err := parseFile(&input{name: f.name, lenient: o.Lenient, size: size, ra: r}, o.Salvage)
	if err != nil {
		return nil, err
	}
	f.adopt(res, size)
	return f, nil
}

func (f *File) errf(off int64, err error, format string, args ...any) error {
	return errAt(f.name, off, err, fmt.Sprintf(format, args...))
}

// Version returns the letter of the file's format version: "A", "B" or
// "C" (see Format).
func (f *File) Version() string { return f.version().String() }

// version returns the file's format version.
func (f *File) version() Format {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.format
}

// Name returns the name the file was opened with ("" for NewReader).
func (f *File) Name() string { return f.name }

// Entries returns a description of every record, in file order. The
// entries are built for the call: the File keeps its records compactly.
func (f *File) Entries() []Entry {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]Entry, f.tab.len())
	f.tab.each(len(out), func(e *entry, key string) {
		out[e.i] = e.record(key)
	})
	return out
}

// Len returns the number of records.
func (f *File) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.tab.len()
}

// Lookup returns the record with the given key.
func (f *File) Lookup(key string) (Entry, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	i := f.tab.find(key)
	if i < 0 {
		return Entry{}, false
	}
	e := f.tab.at(i)
	return e.record(key), true
}

// TrailingBytes returns the number of bytes after the last record that
// belong to no record: Format A files may have them (upstream reads only
// `count` records), and so may a salvaged file.
func (f *File) TrailingBytes() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.trailing
}

// Damage returns the error that ended a salvaged parse (Options.Salvage),
// or what a writing open cut off the end of the file, or nil.
func (f *File) Damage() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.damage
}

// Sync makes changes made through views and appends durable (msync, fsync).
func (f *File) Sync() error {
	f.mu.RLock()
	closed := f.closed
	f.mu.RUnlock()
	if closed {
		return f.errf(-1, mmapfile.ErrClosed, "")
	}
	if f.mf == nil {
		return nil
	}
	if err := f.mf.Sync(); err != nil {
		return f.errf(-1, err, "sync failed")
	}
	return nil
}

// Close flushes changes, unmaps the file and releases its lock. Every view
// of the file is invalid afterwards.
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
	if err := f.mf.Close(); err != nil {
		return f.errf(-1, err, "close failed")
	}
	return nil
}

// readEntry finds key for reading. f.mu must be read-locked.
func (f *File) readEntry(key string, e *entry) error {
	if f.closed {
		return f.errf(-1, mmapfile.ErrClosed, "")
	}
	if !f.readable {
		return f.errf(-1, ErrNotReadable, "mode %q cannot read", f.mode)
	}
	if !f.tab.lookup(key, e) {
		return f.errf(-1, format.NoRecord(key), "")
	}
	return nil
}

// keyOf returns e's key, quoted, for a message.
func keyOf(e *entry) string { return quote64(string(e.key)) }

// mapped returns the mapping that holds e's payload, or nil if the
// payload lies beyond what is mapped (a record appended since).
func (f *File) mapped(e *entry) *mmapfile.Region {
	wp := f.wins.Load()
	if wp == nil {
		return nil
	}
	ws := *wp
	// The last mapping that starts at or before the payload.
	lo, hi := 0, len(ws)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ws[m].Offset() <= e.data {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return nil
	}
	w := ws[lo-1]
	if e.data+e.dataLen > w.Offset()+int64(w.Len()) {
		return nil
	}
	return w
}

// region returns the mapping that holds e's payload, mapping on first
// use everything appended since the last mapping was made. f.mu must be
// read-locked.
func (f *File) region(e *entry) (*mmapfile.Region, error) {
	if r := f.mapped(e); r != nil {
		return r, nil
	}
	f.mapMu.Lock()
	defer f.mapMu.Unlock()
	if r := f.mapped(e); r != nil {
		return r, nil
	}
	var ws []*mmapfile.Region
	var from int64
	if wp := f.wins.Load(); wp != nil {
		ws = *wp
		if n := len(ws); n > 0 {
			from = ws[n-1].Offset() + int64(ws[n-1].Len())
		}
	}
	// Up to the end of the last record's bytes (an empty array's padding
	// may never have been written, so its header's end for it).
	last := f.tab.last()
	to := last.data + last.dataLen
	if last.dataLen == 0 {
		to = last.hdrEnd()
	}
	to = max(to, e.data+e.dataLen)
	if from > e.data {
		// Only a record that straddles what was mapped gets here, which
		// appends never make; map the record alone.
		from = e.data
	}
	r, err := f.mf.Map(from, to-from)
	if err != nil {
		return nil, f.errf(e.data, err, "record %s: cannot map [%d, %d)", keyOf(e), from, to)
	}
	ws = append(slices.Clone(ws), r)
	slices.SortStableFunc(ws, func(a, b *mmapfile.Region) int { return cmp.Compare(a.Offset(), b.Offset()) })
	f.wins.Store(&ws)
	return r, nil
}

// readRaw copies the payload bytes at file offset off into dst, guarded
// against faults. f.mu must be read-locked.
func (f *File) readRaw(e *entry, dst []byte, off int64) error {
	if len(dst) == 0 {
		return nil
	}
	if f.mf == nil {
		n, err := f.ra.ReadAt(dst, off)
		if n == len(dst) {
			return nil
		}
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return f.errf(off+int64(n), err, "record %s: read failed", keyOf(e))
	}
	r := f.mapped(e)
	if r == nil {
		// A record appended after open and never viewed: pread it rather
		// than map it.
		n, err := f.mf.ReadAt(dst, off)
		if n == len(dst) {
			return nil
		}
		if err == nil || err == io.EOF {
			err = mmapfile.ErrTruncated
		}
		return f.readErr(keyOf(e), e.data, e.dataLen, off+int64(n), err)
	}
	if _, err := r.ReadAt(dst, off-r.Offset()); err != nil {
		return f.readErr(keyOf(e), e.data, e.dataLen, off, err)
	}
	return nil
}

// checkOpen fails once the file is closed.
func (f *File) checkOpen() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return f.errf(-1, mmapfile.ErrClosed, "")
	}
	return nil
}

// putCount writes Format A's record count.
func (f *File) putCount(n int64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	w := f.wr
	if w == nil {
		w = f.mf
	}
	if _, err := w.WriteAt(b[:], countOffset); err != nil {
		return f.errf(countOffset, err, "writing the record count")
	}
	return nil
}
