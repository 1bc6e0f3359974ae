package daphne

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// withRange hands fn the file bytes [off, off+n): a temporary mapping,
// unmapped afterwards, for mapped files (faults become errors), or a
// buffer filled with ReadAt otherwise. Only those bytes are mapped or
// read.
func (f *File) withRange(off, n int64, fn func(src []byte)) error {
	if n == 0 {
		fn(nil)
		return nil
	}
	end, ok := layout.Add(off, n)
	if !ok || end > f.size {
		return f.errf(off, mmapfile.ErrTruncated, "%d bytes at offset %d beyond the file's %d", n, off, f.size)
	}
	if f.mf != nil {
		r, err := f.mf.Map(off, n)
		if err != nil {
			return f.errf(off, err, "map: %v", err)
		}
		defer r.Unmap()
		if err := r.Guard(func() { fn(r.Bytes()) }); err != nil {
			return f.errf(off, err, "%v", err)
		}
		return nil
	}
	buf := make([]byte, n)
	if err := f.readAt(buf, off); err != nil {
		return err
	}
	fn(buf)
	return nil
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
	if f.mf != nil {
		r, err := f.mf.Map(off, int64(len(dst)))
		if err != nil {
			return f.errf(off, err, "map: %v", err)
		}
		defer r.Unmap()
		if err := mmapfile.Copy(dst, r, 0, binary.LittleEndian); err != nil {
			return f.errf(off, err, "%v", err)
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
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return f.errf(off+int64(n), err, "read: %v", err)
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
