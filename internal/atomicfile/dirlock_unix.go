//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive advisory lock (flock) on directory dir,
// waiting for it, and returns what releases it. flock locks belong to the
// open descriptor, so two commits of one process exclude each other as
// two processes do. A directory that cannot be opened for reading (write
// and search permission only) is not locked, as a target that cannot be
// read is replaced without its lock.
func lockDir(dir string) (func(), error) {
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrPermission) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(d.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		d.Close()
		return nil, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	return func() { d.Close() }, nil
}
