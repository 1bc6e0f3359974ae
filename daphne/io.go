package daphne

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// smallRead is the size below which a range of a mapped file is read with
// pread rather than mapped: a mapping costs an mmap, an unmap (which
// flushes the TLB of every core the process ran on) and a fault per page,
// tens of microseconds, where a pread of a few KiB costs one. A frame of
// a million narrow columns is read a column at a time.
const smallRead = 64 << 10

// smallBufs holds the buffers of withRange's small reads.
var smallBufs = sync.Pool{New: func() any { return new([]byte) }}

// withRange hands fn the file bytes [off, off+n): a mapping for ranges of
// 64 KiB or more of mapped files (see withWindow; faults become errors),
// or a buffer filled with ReadAt otherwise. Only those bytes are mapped or
// read. fn must not keep src.
func (f *File) withRange(off, n int64, fn func(src []byte)) error {
	if n == 0 {
		fn(nil)
		return nil
	}
	end, ok := layout.Add(off, n)
	if !ok || end > f.size {
		return f.errf(off, mmapfile.ErrTruncated, "%d bytes at offset %d beyond the file's %d", n, off, f.size)
	}
	if n < smallRead {
		bp := smallBufs.Get().(*[]byte)
		defer smallBufs.Put(bp)
		if int64(cap(*bp)) < n {
			*bp = make([]byte, smallRead)
		}
		buf := (*bp)[:n]
		if err := f.readAt(buf, off); err != nil {
			return err
		}
		fn(buf)
		return nil
	}
	if f.mf != nil {
		return f.withWindow(off, n, fn)
	}
	buf := make([]byte, n)
	if err := f.readAt(buf, off); err != nil {
		return err
	}
	fn(buf)
	return nil
}

// withWindow is withRange for a mapped file: the range is read through
// the window, the last range mapped, kept mapped for the reads after it
// that fall inside it (a frame's columns are read one after another over
// the same rows) and replaced by a mapping of [off, off+n) otherwise. A
// range over frameChunk is mapped for this read only, so that what stays
// mapped between reads is bounded.
func (f *File) withWindow(off, n int64, fn func(src []byte)) error {
	use := func(w *mmapfile.Region) error {
		lo := off - w.Offset()
		err := w.Guard(func() { fn(w.Bytes()[lo : lo+n]) })
		if err == nil {
			// A truncation inside the last page reads as zeros, not a
			// fault.
			err = w.InFile(lo, n)
		}
		if err != nil {
			return f.errf(off, err, "")
		}
		return nil
	}
	f.winMu.RLock()
	if w := f.window; w != nil && off >= w.Offset() && off+n <= w.Offset()+int64(w.Len()) {
		defer f.winMu.RUnlock()
		return use(w)
	}
	f.winMu.RUnlock()
	f.winMu.Lock()
	defer f.winMu.Unlock()
	if f.window != nil {
		f.window.Unmap()
		f.window = nil
	}
	w, err := f.mf.Map(off, n)
	if err != nil {
		return f.errf(off, err, "map")
	}
	if n > frameChunk {
		defer w.Unmap()
	} else {
		f.window = w
	}
	return use(w)
}

// copyBytes fills dst with the file bytes at off: one bulk memmove out of a
// temporary mapping, or one ReadAt.
func (f *File) copyBytes(dst []byte, off int64) error {
	if len(dst) == 0 {
		return nil
	}
	end, ok := layout.Add(off, int64(len(dst)))
	if !ok || end > f.size {
		return f.errf(off, mmapfile.ErrTruncated, "%d bytes at offset %d beyond the file's %d", len(dst), off, f.size)
	}
	if f.mf != nil && len(dst) >= smallRead {
		r, err := f.mf.Map(off, int64(len(dst)))
		if err != nil {
			return f.errf(off, err, "map")
		}
		defer r.Unmap()
		if err := mmapfile.Copy(dst, r, 0, binary.LittleEndian); err != nil {
			return f.errf(off, err, "")
		}
		return nil
	}
	return f.readAt(dst, off)
}

func (f *File) readAt(dst []byte, off int64) error {
	n, err := f.ra.ReadAt(dst, off)
	if n == len(dst) {
		return nil
	}
	if f.mf != nil && (err == nil || errors.Is(err, io.EOF)) {
		// The file was cut under the open file, whose size was checked
		// when it was opened: the error a read through its mapping gives.
		end := off + int64(n)
		return f.errf(end, fmt.Errorf("the file now ends at %d: %w", end, mmapfile.ErrFault), "read: the file now ends at %d", end)
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return f.errf(off+int64(n), err, "read")
}

// copyRows copies rows of rowBytes bytes, srcStride apart in the file from
// srcOff, to dst, dstStride apart. Contiguous rows take one copy; others
// map the covering range once and copy row by row.
func (f *File) copyRows(dst []byte, srcOff int64, rows, srcStride, rowBytes, dstStride int64) error {
	if rows == 0 || rowBytes == 0 {
		return nil
	}
	if srcStride == rowBytes && dstStride == rowBytes {
		return f.copyBytes(dst[:rows*rowBytes], srcOff)
	}
	if f.mf == nil {
		for i := int64(0); i < rows; i++ {
			if err := f.readAt(dst[i*dstStride:i*dstStride+rowBytes], srcOff+i*srcStride); err != nil {
				return err
			}
		}
		return nil
	}
	span := (rows-1)*srcStride + rowBytes
	return f.withRange(srcOff, span, func(src []byte) {
		for i := int64(0); i < rows; i++ {
			copy(dst[i*dstStride:i*dstStride+rowBytes], src[i*srcStride:])
		}
	})
}

// alloc returns a zeroed []T of n elements and its bytes.
func alloc[T any](n int) ([]T, []byte) {
	s := make([]T, n)
	return s, unsafeslice.Bytes(s)
}
