//go:build !linux

package benchmarks

import (
	"errors"
	"os"
)

// fdatasync makes f's data durable; fsync where fdatasync is not exposed.
func fdatasync(f *os.File) error { return f.Sync() }

// dropRange cannot drop pages here.
func dropRange(*os.File, int64, int64) error { return errors.ErrUnsupported }
