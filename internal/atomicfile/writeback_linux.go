package atomicfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// StartWriteback asks the kernel to start writing bytes [off, off+n) of f
// to disk (n = 0: to the end of the file) without waiting for them
// (sync_file_range with SYNC_FILE_RANGE_WRITE), so that a later fsync
// finds them under way, several files at once. It only hurries what fsync
// does, and errors are left to fsync to report. It may run while f is
// being closed: the descriptor stays f's until it returns.
func StartWriteback(f *os.File, off, n int64) {
	c, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = c.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
