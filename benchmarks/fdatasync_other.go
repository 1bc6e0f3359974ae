//go:build !linux

package benchmarks

import "os"

// fdatasync makes f's data durable; fsync where fdatasync is not exposed.
func fdatasync(f *os.File) error { return f.Sync() }
