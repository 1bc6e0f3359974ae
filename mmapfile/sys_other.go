//go:build !unix && !windows

package mmapfile

import (
	"errors"
	"os"

	"github.com/edsrzf/mmap-go"
)

func granularity() int { return os.Getpagesize() }

func lockFile(f *os.File, exclusive, wait bool) error { return errors.ErrUnsupported }

func msyncRange(raw []byte, a, b int) error { return errors.ErrUnsupported }

func advise(raw []byte, a Advice) error {
	if a == AdviceNormal {
		return nil
	}
	return errors.ErrUnsupported
}

func preallocate(f *os.File, off, n int64) error { return errors.ErrUnsupported }

// DropCache is unsupported here.
func (f *File) DropCache() error { return errors.ErrUnsupported }

// fsyncCoversMappings: here File.Sync flushes mapped views (msync,
// FlushViewOfFile) before syncing the file.
const fsyncCoversMappings = false

// reserveOver only unmaps here: there is no way to reserve the range.
func reserveOver(m mmap.MMap) (bool, error) { return false, m.Unmap() }

func releaseReservation(m mmap.MMap) error { return nil }

func unlockFile(f *os.File) error { return errors.ErrUnsupported }

func openForWriting(f *os.File) (bool, error) { return true, errors.ErrUnsupported }

func pseudoFS(f *os.File, fi os.FileInfo) string { return "" }

func fileSize(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func populateWrite(raw []byte) error { return errors.ErrUnsupported }

// fdatasync is a full sync here.
func fdatasync(f *os.File) error { return f.Sync() }
