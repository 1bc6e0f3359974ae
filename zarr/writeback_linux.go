//go:build linux

package zarr

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing f's dirty pages back without waiting
// (sync_file_range), so that the fsyncs that follow find them under way,
// several files at once. It only hurries what fsync does: errors are left
// to fsync to report.
func startWriteback(f *os.File) {
	_ = unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}
