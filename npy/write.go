package npy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Create makes a new .npy file for an array of h's type, shape and order
// with every element zero, and opens it read-write, as NumPy's
// open_memmap(mode="w+") does: fill it through View (or Set), then Close.
// The file is built beside path and put in place by Close, replacing
// what was there; until then path is untouched, and a failure leaves it
// as it was. The header is the one np.save writes, so the data start at
// a multiple of 64 and views of every element type alias the mapping.
func Create(path string, h Header, o *Options) (*File, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	hdr, err := h.Encode()
	if err == nil {
		err = checkHeaderLen(hdr, opts.LargeHeaders)
	}
	if err != nil {
		return nil, errAt(path, -1, err, "header")
	}
	size, _ := h.DataSize()
	total, ok := layout.Add(int64(len(hdr)), size)
	if !ok {
		return nil, errAt(path, -1, layout.ErrOverflow, "file size")
	}
	tmp, err := atomicfile.Create(path, opts.Perm)
	if err != nil {
		return nil, err
	}
	if _, err := tmp.WriteAt(hdr, 0); err != nil {
		tmp.Abort()
		return nil, err
	}
	mf, err := tmp.Map(&opts.Options)
	if err != nil {
		tmp.Abort()
		return nil, err
	}
	if err := mf.Grow(total); err != nil {
		mf.Close()
		tmp.Abort()
		return nil, err
	}
	f := &File{name: path, opts: opts, mf: mf, ra: mf, writable: true, commit: tmp}
	if err := f.open(); err != nil {
		mf.Close()
		tmp.Abort()
		return nil, err
	}
	return f, nil
}

// Append adds values at the end of a .npy file's growth axis (the first
// axis for C order, the last for Fortran order), in place: the data go
// after the existing data, then the header's shape is rewritten within
// the room NumPy (since 1.23) and this package leave in it. values must
// be whole slices of the growth axis (a multiple of the product of the
// other dimensions), of the array's element type. If anything fails, the
// file is left as it was; a process killed between the two writes leaves
// bytes after the data, which readers ignore (NumPy does too) and the
// next append writes over. Views taken before an append stay valid and keep their length;
// take a new view to see the new elements.
func Append[T layout.Elem](f *File, values []T) error {
	return f.append(layout.TypeOf[T](), unsafeslice.Bytes(values))
}

// AppendBytes is Append for data given as stored: whole elements in the
// array's byte order (for structured arrays, whole records).
func (f *File) AppendBytes(b []byte) error {
	return f.append(layout.Invalid, b)
}

// writerAt is where appends write: the file, or a fault injector in
// tests.
type writerAt interface {
	WriteAt(p []byte, off int64) (int, error)
}

func (f *File) append(lt layout.Type, b []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return f.errf(-1, mmapfile.ErrClosed, "append")
	case !f.writable:
		return f.errf(-1, mmapfile.ErrNotWritable, "append: the file is open read-only")
	case f.isZip:
		return f.errf(-1, errors.ErrUnsupported, "append: .npz members cannot grow in place")
	}
	a := f.arrays[0]
	h := a.h
	t := target{name: a.key, a: a}
	if lt != layout.Invalid {
		if err := f.typeCheck(&t, lt); err != nil {
			return err
		}
	}
	if len(h.Shape) == 0 {
		return f.errf(a.base+h.textOff, errors.ErrUnsupported, "append: a 0-d array has no axis to grow")
	}
	axis := h.growthAxis()
	slice := int64(h.DType.ItemSize)
	for i, d := range h.Shape {
		if i != axis {
			slice *= d
		}
	}
	if len(b) == 0 {
		return nil
	}
	if slice == 0 || int64(len(b))%slice != 0 {
		return f.errf(-1, mmapfile.ErrOutOfRange, "append: %d bytes are not whole slices of %d bytes along axis %d of shape %s", len(b), slice, axis, shapeRepr(h.Shape))
	}
	shape := append([]int64{}, h.Shape...)
	var ok bool
	if shape[axis], ok = layout.Add(shape[axis], int64(len(b))/slice); !ok {
		return f.errf(-1, layout.ErrOverflow, "append: the shape grows past int64")
	}
	grown := Header{DType: h.DType, Shape: shape, FortranOrder: h.FortranOrder}
	size, err := grown.DataSize()
	if err != nil {
		return f.errf(-1, err, "append")
	}
	textAt := a.base + h.textOff
	old := make([]byte, h.textLen)
	if err := readFull(f.ra, old, textAt); err != nil {
		return mapErr(f.name, textAt, err, "append: reading the header")
	}
	text, err := h.regrow(old, shape)
	if err != nil {
		return f.errf(textAt, err, "append")
	}
	if lt != layout.Invalid && h.DType.BigEndian {
		b = append([]byte(nil), b...)
		layout.SwapOrder(b, lt, layout.HostOrder(), h.DType.byteOrder())
	}
	w := writerAt(f.mf)
	if f.wr != nil {
		w = f.wr
	}
	end := a.data + h.dataSize
	// Bytes after the data (what an append cut short leaves, or anything
	// else: NumPy ignores them) are written over, and put back if the
	// append fails.
	over := make([]byte, max(min(f.size, end+int64(len(b)))-end, 0))
	if err := readFull(f.ra, over, end); err != nil {
		return mapErr(f.name, end, err, "append: reading the bytes after the data")
	}
	restore := func(cause error, headerWritten bool) error {
		errs := []error{cause}
		if headerWritten {
			if _, err := f.mf.WriteAt(old, textAt); err != nil {
				errs = append(errs, err)
			}
		}
		if _, err := f.mf.WriteAt(over, end); err != nil {
			errs = append(errs, err)
		}
		if end+int64(len(b)) > f.size {
			if err := f.mf.Truncate(f.size); err != nil {
				errs = append(errs, err)
			}
		}
		return f.errf(end, errors.Join(errs...), "append failed; the file is as it was")
	}
	if _, err := w.WriteAt(b, end); err != nil {
		return restore(err, false)
	}
	if _, err := w.WriteAt(text, textAt); err != nil {
		return restore(err, true)
	}
	h.Shape = shape
	h.count, _ = grown.Count()
	h.dataSize = size
	h.shapeEnd = h.shapePos + len(shapeRepr(shape))
	f.size = max(f.size, end+int64(len(b)))
	f.buildFace()
	return nil
}

// Save writes values, given in storage order, as a .npy file of the
// given shape: little-endian, in C order, or in Fortran order when order
// is layout.ColMajor and more than one dimension exceeds 1 (NumPy then
// calls the array Fortran-contiguous). The bytes are those np.save writes
// for the same array. path is replaced only once the file is complete.
func Save[T layout.Elem](path string, shape []int64, order layout.Order, values []T) error {
	dt, err := DTypeOf(layout.TypeOf[T]())
	if err != nil {
		return errAt(path, -1, err, "save")
	}
	h := Header{DType: dt, Shape: shape, FortranOrder: order == layout.ColMajor && !layout.Trivial(shape)}
	n, err := h.Count()
	if err != nil {
		return errAt(path, -1, err, "save")
	}
	if n != int64(len(values)) {
		return errAt(path, -1, mmapfile.ErrOutOfRange, "save: %d values for shape %s (%d elements)", len(values), shapeRepr(shape), n)
	}
	b := unsafeslice.Bytes(values)
	if !layout.IsHostOrder(dt.byteOrder()) {
		b = append([]byte(nil), b...)
		layout.SwapOrder(b, dt.Type(), layout.HostOrder(), dt.byteOrder())
	}
	return WriteFile(path, h, bytes.NewReader(b), nil)
}

// WriteFile writes a .npy file with header h and the data read from
// data: exactly the data size h describes, stored as h says (byte order,
// C or Fortran order). path is replaced only once the file is complete
// and synced.
func WriteFile(path string, h Header, data io.Reader, o *Options) error {
	var perm os.FileMode
	if o != nil {
		perm = o.Perm
	}
	return atomicfile.Write(path, perm, func(w *os.File) error {
		return writeNPY(path, w, h, nil, func(out io.Writer) error {
			size, _ := h.DataSize()
			n, err := io.Copy(out, io.LimitReader(data, size))
			if err == nil && n < size {
				err = fmt.Errorf("%w: %d of %d data bytes", io.ErrUnexpectedEOF, n, size)
			}
			return err
		})
	})
}

// writeNPY writes the header and then what data writes, which must be
// exactly the data size.
func writeNPY(path string, w io.Writer, h Header, o *Options, data func(io.Writer) error) error {
	hdr, err := h.Encode()
	if err != nil {
		return errAt(path, -1, err, "header")
	}
	size, _ := h.DataSize()
	return writeEncoded(path, w, hdr, size, o, data)
}

// writeEncoded is writeNPY of the encoded header hdr and size bytes of
// data.
func writeEncoded(path string, w io.Writer, hdr []byte, size int64, o *Options, data func(io.Writer) error) error {
	if err := checkHeaderLen(hdr, o != nil && o.LargeHeaders); err != nil {
		return errAt(path, -1, err, "header")
	}
	bw := bufio.NewWriterSize(&fileWriter{path: path, w: w}, 1<<20)
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	cw := &countWriter{w: bw}
	if err := data(cw); err != nil {
		return err
	}
	if cw.n != size {
		return errAt(path, int64(len(hdr))+cw.n, mmapfile.ErrOutOfRange, "%d data bytes written for a header that says %d", cw.n, size)
	}
	return bw.Flush()
}

// fileWriter writes to the file at path, and says so in its errors (a
// full disk): where, and that it was writing.
type fileWriter struct {
	path string
	w    io.Writer
	n    int64
}

func (f *fileWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil {
		err = errAt(f.path, f.n+int64(n), err, "writing the file")
	}
	f.n += int64(n)
	return n, err
}

// countWriter counts what passes through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
