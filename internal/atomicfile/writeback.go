package atomicfile

import (
	"io"
	"os"
)

// Writeback returns a writer that writes to f and, every WritebackBytes
// written, asks the kernel to start writing the bytes written since to
// disk (sync_file_range with SYNC_FILE_RANGE_WRITE on Linux; nothing
// elsewhere). A large file written through it then reaches the disk while
// the writer is still producing it, and the final Sync (Commit) has only
// the tail left to wait for. It changes no guarantee: Commit still syncs
// the file. f's offset must be where the writer starts (0 for a file
// from Create); writes through f itself are not counted.
func Writeback(f *os.File) io.Writer {
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return f
	}
	return &writeback{f: f, off: off, done: off}
}

// WritebackBytes is how much a Writeback writer lets accumulate before it
// starts writing it to disk: large enough for long sequential disk
// writes, small enough to keep the disk busy from early on.
const WritebackBytes = 8 << 20

type writeback struct {
	f         *os.File
	off, done int64
}

func (w *writeback) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if w.off-w.done >= WritebackBytes {
		startWritebackCall(w.f, w.done, w.off-w.done) // advisory: Commit's Sync reports errors
		w.done = w.off
	}
	return n, err
}

// WritebackAt is Writeback for a writer that writes at offsets, mostly in
// order (a file laid out record by record, with small patches behind):
// every WritebackBytes written through w, the kernel is asked to start
// writing the range of f those writes covered. f is the file w writes.
func WritebackAt(w io.WriterAt, f *os.File) io.WriterAt {
	return &writebackAt{w: w, f: f, lo: -1}
}

type writebackAt struct {
	w      io.WriterAt
	f      *os.File
	lo, hi int64 // the range written since the last start; lo < 0: none
	n      int64 // bytes written since the last start
}

func (w *writebackAt) WriteAt(p []byte, off int64) (int, error) {
	n, err := w.w.WriteAt(p, off)
	if n > 0 {
		end := off + int64(n)
		if w.lo < 0 || off < w.lo {
			w.lo = off
		}
		w.hi = max(w.hi, end)
		w.n += int64(n)
		if w.n >= WritebackBytes {
			startWritebackCall(w.f, w.lo, w.hi-w.lo) // advisory: Commit's Sync reports errors
			w.lo, w.hi, w.n = -1, 0, 0
		}
	}
	return n, err
}

// startWritebackCall is StartWriteback; a variable so that tests can see
// the ranges started.
var startWritebackCall = StartWriteback
