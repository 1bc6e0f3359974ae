package zarr

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS makes every file and directory of the file system holding dir
// durable (syncfs): for a store of thousands of small files, one call
// instead of an fsync, and its wait for the journal, per file. It reports
// whether it can do that here.
func syncFS(dir string) (bool, error) {
	d, err := os.Open(dir)
	if err != nil {
		return true, err
	}
	defer d.Close()
	for {
		err := unix.Syncfs(int(d.Fd()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return true, &os.PathError{Op: "syncfs", Path: dir, Err: err}
		}
		return true, nil
	}
}
