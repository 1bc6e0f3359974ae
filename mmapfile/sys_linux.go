//go:build linux

package mmapfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func hugePageAdvice() (int, bool) { return unix.MADV_HUGEPAGE, true }

// pseudoFS names the file system of f (whose fstat is fi) if it is one
// whose files report sizes that do not describe their contents (/proc,
// /sys, …), else "".
func pseudoFS(f *os.File, fi os.FileInfo) string {
	// Those file systems have no device: their device numbers are
	// anonymous (major 0). A file on a block device is not on one, and
	// needs no statfs: a store of many chunk files opens each.
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && unix.Major(uint64(st.Dev)) != 0 {
		return ""
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return ""
	}
	switch uint32(st.Type) { // magic numbers are 32 bits; Type is signed on some platforms
	case unix.PROC_SUPER_MAGIC:
		return "proc"
	case unix.SYSFS_MAGIC:
		return "sysfs"
	case unix.DEBUGFS_MAGIC:
		return "debugfs"
	case unix.TRACEFS_MAGIC:
		return "tracefs"
	case unix.SECURITYFS_MAGIC:
		return "securityfs"
	case unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC:
		return "cgroupfs"
	case 0x62656570: // CONFIGFS_MAGIC, which x/sys lacks
		return "configfs"
	case unix.EFIVARFS_MAGIC:
		return "efivarfs"
	case unix.PSTOREFS_MAGIC:
		return "pstore"
	case unix.BPF_FS_MAGIC:
		return "bpffs"
	}
	return ""
}

// populateWriteCall is madvise(MADV_POPULATE_WRITE); a variable so that
// tests can take the fallback.
var populateWriteCall = func(raw []byte) error { return unix.Madvise(raw, unix.MADV_POPULATE_WRITE) }

// populateWrite faults raw in writable in one call. Kernels before 5.14 do
// not know the advice (EINVAL): ErrUnsupported, and the caller touches the
// pages instead.
func populateWrite(raw []byte) error {
	for {
		err := populateWriteCall(raw)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EINVAL):
			return errors.ErrUnsupported
		case errors.Is(err, unix.EFAULT), errors.Is(err, unix.EHWPOISON):
			return fmt.Errorf("%v: %w", err, ErrFault)
		}
		return err
	}
}

// fdatasync makes f's data durable, and its size, but not its timestamps.
func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

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
