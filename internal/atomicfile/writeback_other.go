//go:build !linux

package atomicfile

import "os"

// startWriteback does nothing where the system has no sync_file_range.
func startWriteback(f *os.File, off, n int64) {}
