package futhark

import (
	"bufio"
	"os"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
)

// WriteFile creates or replaces the file at path with what fn encodes,
// atomically: fn writes to a temporary file beside path, which is synced
// and renamed over path only if everything succeeded. A failure leaves
// any existing file unchanged. A replaced file keeps its permission bits;
// a new one gets 0644 less the umask.
func WriteFile(path string, o *WriteOptions, fn func(*Encoder) error) error {
	return atomicfile.Write(path, 0, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		e := NewWriter(bw, 0, o)
		if err := fn(e); err != nil {
			return err
		}
		if err := e.Flush(); err != nil {
			return err
		}
		return bw.Flush()
	})
}
