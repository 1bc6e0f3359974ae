//go:build unix

package serve

import (
	"os"
	"syscall"
)

// oNonblock opens a FIFO without waiting for a writer; the descriptor is
// checked to be a regular file before anything is read.
const oNonblock = syscall.O_NONBLOCK

// clearNonblock puts a regular file's descriptor back in blocking mode.
func clearNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) })
	if err != nil {
		return err
	}
	return serr
}

func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

func device(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}
