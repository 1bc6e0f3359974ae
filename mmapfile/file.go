package mmapfile

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	"github.com/edsrzf/mmap-go"
)

// Mode says whether a file is opened for reading only or for reading and
// writing.
type Mode int

const (
	ReadOnly Mode = iota
	ReadWrite
)

// LockMode selects the advisory lock an open takes.
type LockMode int

const (
	// LockDefault: exclusive for ReadWrite, none for ReadOnly.
	LockDefault LockMode = iota
	LockNone
	LockShared
	LockExclusive
)

// Advice is access advice for a mapping (madvise).
type Advice int

const (
	AdviceNormal Advice = iota
	AdviceSequential
	AdviceRandom
	AdviceWillNeed
	AdviceDontNeed
	AdviceHugePage // transparent huge pages, where the OS has them
)

// Options configures OpenFile. A nil *Options means the defaults.
type Options struct {
	Create   bool        // ReadWrite: create the file if it does not exist
	Truncate bool        // ReadWrite: truncate the file to 0 bytes
	Perm     os.FileMode // permissions of a created file; 0 means 0644
	Lock     LockMode    // see LockMode
	Wait     bool        // wait for a held lock instead of failing with ErrLocked
	Advice   Advice      // advice applied to every new mapping
	// Populate faults every page of each new mapping in at map time, for
	// reading: on a writable mapping it does not dirty pages (see
	// Region.PopulateWrite for a region about to be filled).
	Populate bool

	// File, if set, is an already open file to use instead of opening the
	// path again, so that what a caller examined (fstat, the first bytes)
	// is what gets mapped even if the path is replaced meanwhile (NewFile
	// is the same call). It must have been opened for reading and, for
	// ReadWrite, for writing; Create is ignored, Truncate and the lock
	// options apply. On success the File owns it and closes it on Close;
	// on error it stays open and the caller's. An Options with File set
	// serves one open only: do not pass it on to open another path.
	File *os.File
}

// File is an open file whose contents can be mapped.
type File struct {
	mu       sync.Mutex
	f        *os.File
	name     string
	writable bool
	opts     Options
	closed   bool
	regions  map[*Region]struct{}
	// syncedSize is the size the last Sync left durable (or the size at
	// open): while the size stays, Sync need not commit metadata.
	syncedSize int64
}

// Open opens name read-only, with no lock.
func Open(name string) (*File, error) { return OpenFile(name, ReadOnly, nil) }

// Create creates or truncates name and opens it read-write with an
// exclusive lock.
func Create(name string) (*File, error) {
	return OpenFile(name, ReadWrite, &Options{Create: true, Truncate: true})
}

// OpenFile opens name in the given mode. A ReadWrite open takes an exclusive
// advisory lock unless opt says otherwise; when another holder has it the
// open fails with ErrLocked, or waits if opt.Wait is set. A lock is taken
// on the file that name names when the lock is granted: if the path was
// replaced (renamed over) while the open waited, the new file is opened
// and locked instead, so that edits never go to a file no longer there.
//
// Only regular files can be opened: a directory, FIFO, device, socket or a
// file of /proc, /sys and similar pseudo file systems is refused with an
// error wrapping ErrNotRegular. Symbolic links are followed.
func OpenFile(name string, mode Mode, opt *Options) (*File, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.File != nil {
		if name == "" {
			name = o.File.Name()
		}
		return adopt(o.File, name, mode, o)
	}
	flag := os.O_RDONLY
	if mode == ReadWrite {
		flag = os.O_RDWR
		if o.Create {
			flag |= os.O_CREATE
		}
	} else if o.Create || o.Truncate {
		return nil, &Error{File: name, Offset: -1, Op: "open", Err: errors.New("Create and Truncate need ReadWrite")}
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	// Refuse what is not a regular file before opening it: opening a FIFO
	// blocks, and opening some devices has effects of its own.
	if fi, err := os.Stat(name); err == nil {
		if err := checkRegular(name, fi, nil); err != nil {
			return nil, err
		}
	}
	for try := 0; ; try++ {
		osf, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		f, err := setUp(osf, name, mode, o, true)
		if err == errReplaced {
			osf.Close()
			if try < 100 {
				continue
			}
			return nil, &Error{File: name, Offset: -1, Op: "lock", Err: err}
		}
		if err != nil {
			osf.Close()
			return nil, err
		}
		return f, nil
	}
}

// errReplaced: the path was replaced while the open waited for its lock.
var errReplaced = errors.New("replaced while waiting for the lock")

// NewFile maps the already open file f, as OpenFile with Options.File
// does: what the caller examined is what gets mapped, even if f's path was
// replaced since. f must have been opened for reading and, for ReadWrite,
// for writing. On success the File owns f and closes it on Close; on error
// f stays open and the caller's.
func NewFile(f *os.File, mode Mode, opt *Options) (*File, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	return adopt(f, f.Name(), mode, o)
}

func adopt(osf *os.File, name string, mode Mode, o Options) (*File, error) {
	if mode != ReadWrite && o.Truncate {
		return nil, &Error{File: name, Offset: -1, Op: "open", Err: errors.New("Truncate needs ReadWrite")}
	}
	if mode == ReadWrite {
		if w, err := openForWriting(osf); err == nil && !w {
			return nil, &Error{File: name, Offset: -1, Op: "open", Err: fmt.Errorf("the descriptor is open read-only: %w", ErrNotWritable)}
		}
	}
	return setUp(osf, name, mode, o, false)
}

// setUp checks that osf is a regular file, takes the lock the options ask
// for and truncates if asked. byName says osf was opened by name here: then
// a path replaced while the lock was awaited gives errReplaced.
func setUp(osf *os.File, name string, mode Mode, o Options, byName bool) (*File, error) {
	fi, err := osf.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkRegular(name, fi, osf); err != nil {
		return nil, err
	}
	lock := o.Lock
	if lock == LockDefault {
		lock = LockNone
		if mode == ReadWrite {
			lock = LockExclusive
		}
	}
	if lock == LockShared || lock == LockExclusive {
		if err := lockFile(osf, lock == LockExclusive, o.Wait); err != nil {
			return nil, &Error{File: name, Offset: -1, Op: "lock", Err: err}
		}
		if byName {
			now, err := os.Stat(name)
			if err != nil || !os.SameFile(now, fi) {
				return nil, errReplaced
			}
		}
	}
	// Truncate only after the lock is ours, so that a second writer's open
	// cannot clobber the first writer's file.
	size := fi.Size()
	if mode == ReadWrite && o.Truncate {
		if err := osf.Truncate(0); err != nil {
			if !byName && (lock == LockShared || lock == LockExclusive) {
				// The caller keeps the descriptor, not the lock.
				_ = unlockFile(osf)
			}
			return nil, err
		}
		size = -1 // a truncation to make durable
	}
	return &File{f: osf, name: name, writable: mode == ReadWrite, opts: o, regions: map[*Region]struct{}{}, syncedSize: size}, nil
}

// CheckRegular refuses, with an error wrapping ErrNotRegular, what cannot
// be mapped: anything but a regular file, and regular-looking files of
// pseudo file systems (/proc, /sys, …) when f, the file open, is given. It
// is the check OpenFile and NewFile make, for programs that examine a
// path before they open it (opening a FIFO blocks) and then hand the open
// file to NewFile or Options.File.
func CheckRegular(name string, fi os.FileInfo, f *os.File) error {
	return checkRegular(name, fi, f)
}

// checkRegular refuses what cannot be mapped: anything but a regular file,
// and regular-looking files of pseudo file systems (osf, when given, is
// asked for its file system).
func checkRegular(name string, fi os.FileInfo, osf *os.File) error {
	what := ""
	switch m := fi.Mode(); {
	case m.IsRegular():
		if osf != nil {
			if fs := pseudoFS(osf, fi); fs != "" {
				what = "a file of " + fs
			}
		}
	case m.IsDir():
		what = "a directory"
	case m&os.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&os.ModeCharDevice != 0:
		what = "a character device"
	case m&os.ModeDevice != 0:
		what = "a block device"
	case m&os.ModeSocket != 0:
		what = "a socket"
	default:
		what = "of type " + m.Type().String()
	}
	if what == "" {
		return nil
	}
	return &Error{File: name, Offset: -1, Op: "open", Err: fmt.Errorf("%s: %w", what, ErrNotRegular)}
}

// Name returns the name the file was opened with.
func (f *File) Name() string { return f.name }

// Advice returns the access advice the file's mappings get (Options.Advice).
func (f *File) Advice() Advice { return f.opts.Advice }

// Writable reports whether the file was opened read-write.
func (f *File) Writable() bool { return f.writable }

// Size returns the file's current size.
func (f *File) Size() (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, f.errf(-1, "size", ErrClosed)
	}
	fi, err := f.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (f *File) errf(off int64, op string, err error) error {
	return &Error{File: f.name, Offset: off, Op: op, Err: err}
}

// OpenMapped opens path as OpenFile does and maps the whole file
// (MapAll): what a reader of a file that is parsed whole needs. On error
// nothing stays open.
func OpenMapped(path string, mode Mode, o *Options) (*File, *Region, error) {
	f, err := OpenFile(path, mode, o)
	if err != nil {
		return nil, nil, err
	}
	r, err := f.MapAll()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, r, nil
}

// MapAll maps the whole file as it is now. For an empty file it returns an
// empty region without calling mmap.
func (f *File) MapAll() (*Region, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	return f.Map(0, size)
}

// Map maps length bytes of the file starting at byte offset off, which may
// be any offset: it is rounded down to the mapping granularity internally.
// The range must lie within the file (grow the file first to map beyond
// its end). A zero length gives an empty region and no mmap call. The
// region is writable if the file is.
func (f *File) Map(off, length int64) (*Region, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, f.errf(off, "map", ErrClosed)
	}
	if off < 0 || length < 0 {
		return nil, f.errf(off, "map", fmt.Errorf("negative offset or length %d: %w", length, ErrOutOfRange))
	}
	fi, err := f.f.Stat()
	if err != nil {
		return nil, err
	}
	end := off + length
	if end < off || end > fi.Size() {
		return nil, f.errf(off, "map", fmt.Errorf("%d bytes wanted, file has %d: %w", length, fi.Size(), ErrOutOfRange))
	}
	r := &Region{f: f, off: off, writable: f.writable}
	if length == 0 {
		r.data = []byte{}
		f.regions[r] = struct{}{}
		return r, nil
	}
	g := int64(granularity())
	base := off - off%g
	delta := off - base
	total := delta + length
	if total > math.MaxInt || total < 0 {
		return nil, f.errf(off, "map", fmt.Errorf("%d bytes exceed this platform's address space: %w", length, ErrTooLarge))
	}
	prot := mmap.RDONLY
	if f.writable {
		prot = mmap.RDWR
	}
	m, err := mmap.MapRegion(f.f, int(total), prot, 0, base)
	if err != nil {
		return nil, f.errf(off, "map", err)
	}
	r.raw = m
	r.data = m[delta:total:total]
	f.regions[r] = struct{}{}
	if f.opts.Advice != AdviceNormal {
		if err := advise(r.raw, f.opts.Advice); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			r.unmapLocked()
			return nil, f.errf(off, "madvise", err)
		}
	}
	if f.opts.Populate {
		if err := r.populate(); err != nil {
			r.unmapLocked()
			return nil, err
		}
	}
	return r, nil
}

// ReadAt reads from the file with pread, not through a mapping.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if f.isClosed() {
		return 0, f.errf(off, "read", ErrClosed)
	}
	return f.f.ReadAt(p, off)
}

// WriteAt writes to the file with pwrite, not through a mapping. Mapped
// regions of the file see the bytes at once (one page cache).
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if !f.writable {
		return 0, f.errf(off, "write", ErrNotWritable)
	}
	if f.isClosed() {
		return 0, f.errf(off, "write", ErrClosed)
	}
	return f.f.WriteAt(p, off)
}

// OSFile returns the underlying *os.File for writers that stream data. Do
// not close it, truncate it below a live mapping, or unlock it.
func (f *File) OSFile() *os.File { return f.f }

func (f *File) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// Grow extends a read-write file to size bytes (a smaller or equal size does
// nothing). Where the OS can preallocate (fallocate on Linux) the blocks are
// reserved now, so a full disk is an error here rather than a SIGBUS when
// the new pages are first written. Existing regions stay mapped and valid;
// map the new space with Map or MapAll.
func (f *File) Grow(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkWritable("grow"); err != nil {
		return err
	}
	return f.growLocked(size)
}

func (f *File) growLocked(size int64) error {
	fi, err := f.f.Stat()
	if err != nil {
		return err
	}
	cur := fi.Size()
	if size <= cur {
		return nil
	}
	if err := preallocate(f.f, cur, size-cur); err != nil {
		if !errors.Is(err, errors.ErrUnsupported) {
			// Give back what a partial preallocation took.
			_ = f.f.Truncate(cur)
			return f.errf(cur, "grow", err)
		}
	}
	if err := f.f.Truncate(size); err != nil {
		_ = f.f.Truncate(cur)
		return f.errf(cur, "grow", err)
	}
	return nil
}

// Truncate sets the size of a read-write file. Shrinking below the end of a
// live region fails with ErrMapped: pages beyond the new end would fault
// (SIGBUS) on the next access. Unmap those regions first.
func (f *File) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkWritable("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return f.errf(size, "truncate", ErrOutOfRange)
	}
	fi, err := f.f.Stat()
	if err != nil {
		return err
	}
	if size < fi.Size() {
		for r := range f.regions {
			if r.off+int64(len(r.data)) > size {
				return f.errf(size, "truncate", ErrMapped)
			}
		}
		return f.f.Truncate(size)
	}
	return f.growLocked(size)
}

func (f *File) checkWritable(op string) error {
	if f.closed {
		return f.errf(-1, op, ErrClosed)
	}
	if !f.writable {
		return f.errf(-1, op, ErrNotWritable)
	}
	return nil
}

// Sync makes every change made through the File durable — data written
// through its mappings and with WriteAt, and the file's size: when Sync
// returns they survive a crash of the machine or a power loss. Only the
// pages that changed are written.
//
// On Linux one system call does it (the page cache holds the mapped pages
// too): fdatasync while the file's size is what the last Sync (or the
// open) left, which skips the journal commit that the modification time
// alone would cost — after a power loss the time may be older than the
// data — and fsync when the size changed. Elsewhere each writable region
// is flushed (msync, FlushViewOfFile) and the file fsynced.
func (f *File) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.errf(-1, "sync", ErrClosed)
	}
	return f.syncLocked(false)
}

// SyncData is Sync without the metadata: the data and the size are made
// durable (fdatasync on Linux, fsync elsewhere), the timestamps not
// necessarily. It is what an in-place edit needs.
func (f *File) SyncData() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.errf(-1, "sync", ErrClosed)
	}
	return f.syncLocked(true)
}

// syncDataCall and syncAllCall are fdatasync and fsync; variables so that
// tests can see which one a Sync chose.
var (
	syncDataCall = fdatasync
	syncAllCall  = (*os.File).Sync
)

func (f *File) syncLocked(dataOnly bool) error {
	if !f.writable {
		return nil
	}
	var first error
	if !fsyncCoversMappings {
		for r := range f.regions {
			if err := r.flush(); err != nil && first == nil {
				first = f.errf(r.off, "msync", err)
			}
		}
	}
	size, err := fileSize(f.f)
	if err != nil {
		size = -1
	}
	if dataOnly || (size >= 0 && size == f.syncedSize) {
		err = syncDataCall(f.f)
	} else {
		err = syncAllCall(f.f)
	}
	if err != nil {
		if first == nil {
			first = f.errf(-1, "sync", err)
		}
	} else if first == nil {
		f.syncedSize = size
	}
	return first
}

// Close syncs a writable file, unmaps every region, releases the lock and
// closes the file. Every slice obtained from the file's regions is invalid
// afterwards. Closing twice returns ErrClosed.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return f.errf(-1, "close", ErrClosed)
	}
	first := f.syncLocked(false)
	for r := range f.regions {
		if err := r.unmapLocked(); err != nil && first == nil {
			first = err
		}
	}
	f.closed = true
	// Closing the descriptor releases flock and LockFileEx locks.
	if err := f.f.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

var _ io.ReaderAt = (*File)(nil)
var _ io.WriterAt = (*File)(nil)
