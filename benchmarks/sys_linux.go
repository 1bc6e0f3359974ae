package benchmarks

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync makes f's data durable without its timestamps.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// dropRange drops bytes [off, off+n) of f from the page cache (clean
// pages only).
func dropRange(f *os.File, off, n int64) error {
	return unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED)
}
