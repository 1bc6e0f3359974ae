//go:build linux

package zarr

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing f's dirty pages back without waiting
// (sync_file_range), so that the fsyncs that follow find them under way,
// several files at once. It only hurries what fsync does: errors are left
// to fsync to report. It may run while f is being closed: the descriptor
// stays f's until it returns.
func startWriteback(f *os.File) {
	c, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = c.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
	})
}
