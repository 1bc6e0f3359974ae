//go:build linux

package mmapfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

func hugePageAdvice() (int, bool) { return unix.MADV_HUGEPAGE, true }

// mapNoReserve keeps a reservation out of the kernel's commit accounting.
const mapNoReserve = unix.MAP_NORESERVE

// preallocate reserves [off, off+n) with fallocate, so that a full disk is
// reported now. File systems without fallocate report ErrUnsupported and
// the caller falls back to ftruncate.
func preallocate(f *os.File, off, n int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), 0, off, n)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
			return errors.ErrUnsupported
		}
		return err
	}
}

// DropCache asks the kernel to drop the file's pages from the page cache
// (posix_fadvise DONTNEED), for cold-read measurements.
func (f *File) DropCache() error {
	if err := f.f.Sync(); err != nil && f.writable {
		return err
	}
	return unix.Fadvise(int(f.f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// fsyncCoversMappings: on Linux a shared mapping's pages are the page
// cache's, marked dirty when written (write-notify faults), so fsync
// writes them back; msync(MS_SYNC) is itself an fsync of the range. File.Sync
// therefore skips msync, which would commit the journal a second time.
const fsyncCoversMappings = true
