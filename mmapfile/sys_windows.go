//go:build windows

package mmapfile

import (
	"errors"
	"os"

	"github.com/edsrzf/mmap-go"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"golang.org/x/sys/windows"
)

// Windows maps views at multiples of the allocation granularity.
func granularity() int { return 64 << 10 }

func lockFile(f *os.File, exclusive, wait bool) error {
	var flags uint32
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return ErrLocked
	}
	return err
}

func msyncRange(raw []byte, a, b int) error {
	return windows.FlushViewOfFile(unsafeslice.Addr(raw[a:b]), uintptr(b-a))
}

func advise(raw []byte, a Advice) error {
	if a == AdviceNormal {
		return nil
	}
	return errors.ErrUnsupported
}

func preallocate(f *os.File, off, n int64) error { return errors.ErrUnsupported }

// DropCache is unsupported on Windows.
func (f *File) DropCache() error { return errors.ErrUnsupported }

// fsyncCoversMappings: here File.Sync flushes mapped views (msync,
// FlushViewOfFile) before syncing the file.
const fsyncCoversMappings = false

// reserveOver unmaps the view m and reserves its range inaccessible
// (VirtualAlloc MEM_RESERVE, PAGE_NOACCESS). Windows cannot do both in one
// call: another thread that maps memory between the two calls may take the
// range, and then there is no reservation.
func reserveOver(m mmap.MMap) (bool, error) {
	addr, n := unsafeslice.Addr(m), uintptr(len(m))
	if err := m.Unmap(); err != nil {
		return false, err
	}
	if _, err := windows.VirtualAlloc(addr, n, windows.MEM_RESERVE, windows.PAGE_NOACCESS); err != nil {
		return false, nil
	}
	return true, nil
}

func releaseReservation(m mmap.MMap) error {
	return windows.VirtualFree(unsafeslice.Addr(m), 0, windows.MEM_RELEASE)
}

func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}

// openForWriting cannot tell here; mapping a read-only handle for writing
// fails instead.
func openForWriting(f *os.File) (bool, error) { return true, errors.ErrUnsupported }

// pseudoFS: Windows has no such file systems.
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
