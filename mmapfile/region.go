package mmapfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/edsrzf/mmap-go"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
)

// Region is one mapping of a byte range of a File.
type Region struct {
	f        *File
	raw      mmap.MMap // the granularity-aligned mapping; nil if empty
	data     []byte    // the requested range within raw
	off      int64     // file offset of data[0]
	writable bool
	mu       sync.RWMutex // guards unmapping against concurrent copies
	closed   bool
}

// Bytes returns the mapped bytes. The slice aliases the mapping: it must not
// be used after Unmap or the File's Close, and must not be written unless
// the region is writable. It is empty and non-nil for an empty region.
func (r *Region) Bytes() []byte {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return nil
	}
	return r.data
}

// Offset returns the file offset of the region's first byte.
func (r *Region) Offset() int64 { return r.off }

// Len returns the region's length in bytes.
func (r *Region) Len() int { return len(r.data) }

// Writable reports whether the region may be written.
func (r *Region) Writable() bool { return r.writable }

// File returns the file the region maps.
func (r *Region) File() *File { return r.f }

func (r *Region) errf(off int64, op string, err error) error {
	return &Error{File: r.f.name, Offset: off, Op: op, Err: err}
}

// check validates a region-relative range [off, off+n) and returns it as
// ints.
func (r *Region) check(off, n int64, op string) (int, int, error) {
	if r.closed {
		return 0, 0, r.errf(r.off+off, op, ErrClosed)
	}
	end := off + n
	if off < 0 || n < 0 || end < off || end > int64(len(r.data)) {
		return 0, 0, r.errf(r.off+off, op, fmt.Errorf("%d bytes from region offset %d, region has %d: %w", n, off, len(r.data), ErrOutOfRange))
	}
	return int(off), int(end), nil
}

// ReadAt copies len(p) bytes from region offset off into p. A range that
// is no longer in the file (another process truncated it) is an error
// wrapping ErrFault that names the first offset missing, not a crash and
// not zeros. It implements io.ReaderAt on the region.
func (r *Region) ReadAt(p []byte, off int64) (int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	lo, hi, err := r.check(off, int64(len(p)), "read")
	if err != nil {
		return 0, err
	}
	inFile := true
	if err := r.guardLocked(func() {
		copy(p, r.data[lo:hi])
		inFile = len(p) == 0 || p[len(p)-1] != 0 || r.nonZeroAfter(hi)
	}); err != nil {
		return 0, err
	}
	if !inFile {
		if err := r.checkEnd(lo, hi); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// A copy from a file truncated under its mapping faults in the pages wholly
// past the new end, but the page the end falls in stays mapped and reads
// as zeros past it. So a copy that ended in a non-zero byte ended inside
// the file; one that ended in a zero did too if a later byte of the same
// page is not zero. Only when both fail is the file's size asked (fstat,
// about half a microsecond): for a read that ends in zeros up to a page
// boundary, or in a page of zeros.

// zeroPage is one page of zeros to compare with.
var zeroPage = make([]byte, os.Getpagesize())

// nonZeroAfter reports whether a byte after region byte hi-1, in the same
// page and within the mapping, is not zero. r.mu must be held; it reads the
// mapping, so run it guarded.
func (r *Region) nonZeroAfter(hi int) bool {
	delta := len(r.raw) - len(r.data)
	ps := len(zeroPage)
	a := hi + delta
	pageEnd := min((a-1)/ps*ps+ps, len(r.raw))
	return a < pageEnd && !bytes.Equal(r.raw[a:pageEnd], zeroPage[:pageEnd-a])
}

// checkEnd fails with ErrFault if region bytes [lo, hi) are no longer all
// in the file. r.mu must be held.
func (r *Region) checkEnd(lo, hi int) error {
	size, err := fileSize(r.f.f)
	if err != nil {
		return r.errf(r.off+int64(lo), "fstat", err)
	}
	if end := r.off + int64(hi); size < end {
		first := max(size, r.off+int64(lo))
		return r.errf(first, "access", fmt.Errorf("the file now ends at %d: %w", size, ErrFault))
	}
	return nil
}

// InFile fails, with an error wrapping ErrFault that names the first
// offset missing, when region bytes [off, off+n) are no longer all in the
// file (another process truncated it). ReadAt checks this after its copy;
// a caller that reads the mapping itself (Bytes, inside Guard) calls
// InFile after reading, since in the page the file's end falls in the
// mapping reads zeros past the end instead of faulting.
func (r *Region) InFile(off, n int64) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	lo, hi, err := r.check(off, n, "read")
	if err != nil {
		return err
	}
	inFile := true
	if err := r.guardLocked(func() {
		inFile = lo == hi || r.data[hi-1] != 0 || r.nonZeroAfter(hi)
	}); err != nil {
		return err
	}
	if !inFile {
		return r.checkEnd(lo, hi)
	}
	return nil
}

// WriteAt copies p into the region at region offset off. It fails with
// ErrNotWritable on a read-only region (instead of the SIGSEGV a direct write
// would raise) and with ErrFault if the range is no longer in the file
// (another process truncated it): nothing is written then.
//
// The bytes go through the file descriptor (pwrite), not a store into the
// mapping: every mapping of the file sees them at once, and Sync writes
// only the blocks they touched. That makes WriteAt the cheap way to change
// a few elements and sync: a store through a view dirties its whole page,
// which the kernel may hold as one large folio of up to a few megabytes.
func (r *Region) WriteAt(p []byte, off int64) (int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.writable {
		return 0, r.errf(r.off+off, "write", ErrNotWritable)
	}
	lo, hi, err := r.check(off, int64(len(p)), "write")
	if err != nil {
		return 0, err
	}
	// Bytes written past the end of a truncated file, in the page the end
	// falls in, would be lost without a fault: check first, as ReadAt does
	// after its copy (the bytes there now are what it would have read).
	// If the check itself faults, the copy below faults too and reports
	// the first page that does.
	inFile := true
	faulted := r.guardLocked(func() {
		inFile = lo == hi || r.data[hi-1] != 0 || r.nonZeroAfter(hi)
	}) != nil
	if !faulted && !inFile {
		if err := r.checkEnd(lo, hi); err != nil {
			return 0, err
		}
	}
	if !faulted {
		// Through the descriptor: the mapping sees the bytes at once
		// (one page cache), and only the file blocks written become
		// dirty, where a store into the mapping dirties the whole page
		// — with large folios up to megabytes — for Sync to write.
		if _, err := r.f.f.WriteAt(p, r.off+int64(lo)); err != nil {
			return 0, r.errf(r.off+int64(lo), "write", err)
		}
		return len(p), nil
	}
	if err := r.guardLocked(func() { copy(r.data[lo:hi], p) }); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Guard runs fn, turning a memory fault inside this region's mapping into
// an error wrapping ErrFault. Faults at other addresses are re-raised.
// The region stays mapped while fn runs.
func (r *Region) Guard(fn func()) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return r.errf(r.off, "guard", ErrClosed)
	}
	return r.guardLocked(fn)
}

// Sync flushes the region's changes to the file (msync, synchronous).
func (r *Region) Sync() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return r.errf(r.off, "sync", ErrClosed)
	}
	if err := r.flush(); err != nil {
		return r.errf(r.off, "msync", err)
	}
	return nil
}

// SyncRange flushes region bytes [off, off+n) (rounded out to whole pages).
func (r *Region) SyncRange(off, n int64) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	lo, hi, err := r.check(off, n, "sync")
	if err != nil {
		return err
	}
	if !r.writable || lo == hi {
		return nil
	}
	// Translate to raw coordinates and round to pages.
	delta := len(r.raw) - len(r.data)
	ps := os.Getpagesize()
	a := (lo + delta) / ps * ps // msync wants a page-aligned start
	b := hi + delta
	if err := msyncRange(r.raw, a, b); err != nil {
		return r.errf(r.off+off, "msync", err)
	}
	return nil
}

func (r *Region) flush() error {
	if !r.writable || r.closed || len(r.raw) == 0 {
		return nil
	}
	return r.raw.Flush()
}

// Advise gives the OS access advice for the whole region.
func (r *Region) Advise(a Advice) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return r.errf(r.off, "madvise", ErrClosed)
	}
	if len(r.raw) == 0 {
		return nil
	}
	if err := advise(r.raw, a); err != nil {
		return r.errf(r.off, "madvise", err)
	}
	return nil
}

// Populate faults every page of the region in now (after will-need advice),
// so later scans do not stall on page faults. Faults become errors.
func (r *Region) Populate() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return r.errf(r.off, "populate", ErrClosed)
	}
	return r.populate()
}

func (r *Region) populate() error {
	if len(r.raw) == 0 {
		return nil
	}
	_ = advise(r.raw, AdviceWillNeed)
	ps := os.Getpagesize()
	var sink byte
	err := r.guardLocked(func() {
		for i := 0; i < len(r.raw); i += ps {
			sink += r.raw[i]
		}
	})
	populateSink = sink
	return err
}

// populateSink keeps the page-touching loop from being optimised away: it
// is written, never read, on purpose.
//
//lint:ignore U1000 a sink for the loop's loads
var populateSink byte

// PopulateWrite prepares a writable region that is about to be written
// whole, such as the payload of a file just created and grown: it asks
// for large pages (transparent huge pages, where the kernel has them for
// the file system, so that one fault maps 2 MiB instead of 4 KiB), then
// makes every page present and writable now, in one system call
// (MADV_POPULATE_WRITE on Linux 5.14 and later; elsewhere by touching each
// page with an atomic add of zero, which leaves the data as it was). A page
// that cannot be provided (the file was truncated under the region) is an
// error wrapping ErrFault, not a SIGBUS later.
//
// It marks every page of the region dirty, in units as large as the pages
// it got: Sync then writes the whole region. Do not call it before sparse
// edits of an existing file.
func (r *Region) PopulateWrite() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return r.errf(r.off, "populate", ErrClosed)
	}
	if !r.writable {
		return r.errf(r.off, "populate", ErrNotWritable)
	}
	if len(r.raw) == 0 {
		return nil
	}
	_ = advise(r.raw, AdviceHugePage)
	err := populateWrite(r.raw)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		return r.errf(r.off, "populate", err)
	}
	// Touch each page for writing without changing it.
	ps := os.Getpagesize()
	return r.guardLocked(func() {
		for i := 0; i < len(r.raw); i += ps {
			atomic.AddUint32(&unsafeslice.Cast[uint32](r.raw[i : i+4])[0], 0)
		}
	})
}

// Unmap releases the region. Slices of it must not be used afterwards.
// Unmapping twice returns ErrClosed.
func (r *Region) Unmap() error {
	r.f.mu.Lock()
	defer r.f.mu.Unlock()
	if r.closed {
		return r.errf(r.off, "unmap", ErrClosed)
	}
	return r.unmapLocked()
}

// unmapLocked needs f.mu held; it waits for running copies to finish.
func (r *Region) unmapLocked() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	var err error
	if len(r.raw) > 0 {
		// Where fsync does not write back mapped pages, they are flushed
		// before the view goes; on Linux the page cache keeps them dirty
		// after munmap and the next File.Sync or Close writes them.
		if r.writable && !fsyncCoversMappings {
			err = r.raw.Flush()
		}
		if e := retire(r.raw); e != nil && err == nil {
			err = e
		}
	}
	r.closed = true
	r.raw = nil
	r.data = nil
	delete(r.f.regions, r)
	if err != nil {
		return r.errf(r.off, "unmap", err)
	}
	return nil
}

// AdviseRange gives access advice for region bytes [off, off+n), rounded
// out to whole pages. AdviceDontNeed behind a sequential reader lets the
// kernel drop pages already read, so a scan of a huge file keeps a small
// resident set.
func (r *Region) AdviseRange(off, n int64, a Advice) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	lo, hi, err := r.check(off, n, "madvise")
	if err != nil {
		return err
	}
	if lo == hi {
		return nil
	}
	delta := len(r.raw) - len(r.data)
	ps := os.Getpagesize()
	a0 := (lo + delta) / ps * ps
	if err := advise(r.raw[a0:hi+delta], a); err != nil {
		return r.errf(r.off+off, "madvise", err)
	}
	return nil
}
