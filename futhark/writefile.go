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
// a new one gets o.Perm (0644 if zero) less the umask. o.Align pads binary
// values.
func WriteFile(path string, o *Options, fn func(*Encoder) error) error {
	opts := o.get()
	return atomicfile.Write(path, opts.Perm, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		e := NewWriter(bw, 0, &opts)
		if err := fn(e); err != nil {
			return err
		}
		if err := e.finish(); err != nil {
			return err
		}
		return bw.Flush()
	})
}
