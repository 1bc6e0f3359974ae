package benchmarks

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync makes f's data durable without its timestamps.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
