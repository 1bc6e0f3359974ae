package futhark

import (
	"bufio"
	"os"
	"path/filepath"
)

// WriteFile creates or replaces the file at path with what fn encodes,
// atomically: fn writes to a temporary file beside path, which is synced
// and renamed over path only if everything succeeded. A failure leaves
// any existing file unchanged.
func WriteFile(path string, o *WriteOptions, fn func(*Encoder) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	e := NewWriter(bw, 0, o)
	if err = fn(e); err != nil {
		return err
	}
	if err = e.Flush(); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
