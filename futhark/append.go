package futhark

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Append adds v at the end of the file as a binary value, padded as
// Options.Align says; see AppendFunc.
func (f *File) Append(v Value) error {
	if err := v.check(); err != nil {
		return f.err(-1, errors.Unwrap(err), "append: %v", err)
	}
	return f.AppendFunc(func(e *Encoder) error { return e.EncodeBinary(v) })
}

// AppendFunc adds at the end of a file opened read-write the values fn
// writes through e, binary or text, whole or streamed element chunk by
// chunk (Encoder.BeginBinary, WriteElems): a value larger than memory can
// be appended. It holds the file's lock (taken by the read-write open) and
// keeps every reader of this File waiting until it is done. If fn or a
// write fails, or fn leaves a value unfinished, the file is cut back to
// its old size and nothing is added.
//
// The file is mapped anew afterwards: slices from View and Payload taken
// before must not be used any more. The appended bytes are durable after
// Sync or Close.
func (f *File) AppendFunc(fn func(e *Encoder) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.writable(); err != nil {
		return err
	}
	old := f.size
	sep, err := f.needSeparator()
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(io.NewOffsetWriter(f.mf, old), 1<<20)
	off := old
	if sep {
		bw.WriteByte('\n')
		off++
	}
	e := NewWriter(bw, off, &f.opts)
	err = fn(e)
	if err == nil {
		err = e.finish()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return f.rollback(old, errAt(f.name, -1, err, "append"))
	}
	if e.Offset() == off {
		return f.rollback(old, nil) // nothing appended: drop the separator
	}
	return f.extend(old, e.Offset())
}

// AppendArray adds at the end of a file opened read-write a binary value
// of type t and the given shape whose elements are all zero, and returns
// its index: fill it through View (numpy's open_memmap with mode "w+").
// Its payload is aligned as Options.Align says, to the element size if
// that is zero, and its disk blocks are reserved now, so that a full disk
// is an error here and not a fault when the view is written. See
// AppendFunc for what an append does to earlier views.
func (f *File) AppendArray(t layout.Type, shape []int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.writable(); err != nil {
		return -1, err
	}
	size, err := checkShape(t, shape)
	if err == nil {
		size, err = layout.ByteSize(t, shape)
	}
	if err != nil {
		return -1, f.err(-1, errors.Unwrap(err), "append: %v", err)
	}
	old := f.size
	sep, err := f.needSeparator()
	if err != nil {
		return -1, err
	}
	var head bytes.Buffer
	if sep {
		head.WriteByte('\n')
	}
	if err := writeHeader(&head, old, t, shape, f.opts.Align); err != nil {
		return -1, f.err(-1, nil, "append: %v", err)
	}
	end, ok := layout.Add(old+int64(head.Len()), size)
	if !ok {
		return -1, f.err(-1, ErrDims, "append: %s does not fit in a file", TypeString(t, shape))
	}
	if _, err := f.mf.WriteAt(head.Bytes(), old); err != nil {
		return -1, f.rollback(old, f.ioErr(old, "append", err))
	}
	if err := f.mf.Grow(end); err != nil {
		return -1, f.rollback(old, f.ioErr(old, "append: reserving the payload", err))
	}
	if err := f.extend(old, end); err != nil {
		return -1, err
	}
	return f.idx.n - 1, nil
}

// writeHeader writes the padding and header of a binary value whose first
// byte lands at offset off, aligned as align says (the element size if 0).
func writeHeader(w io.Writer, off int64, t layout.Type, shape []int64, align int) error {
	if align == AlignNone {
		align = AlignElement
	}
	e := NewWriter(w, off, &Options{Align: align})
	if err := e.BeginBinary(t, shape); err != nil {
		return err
	}
	return e.Flush()
}

// Create creates the file at path holding one binary value of type t and
// the given shape, all zeros, with its payload aligned (Options.Align, or
// the element size), and opens it read-write: numpy's open_memmap with
// mode "w+". Fill it through View, then Sync or Close. The file is made
// beside path and renamed over it only when complete (an existing file is
// replaced, keeping its permission bits; a new one gets Options.Perm), and
// the payload's disk blocks are reserved first, so that a full disk is an
// error here and not a fault when the view is written.
func Create(path string, t layout.Type, shape []int64, o *Options) (*File, error) {
	opts := o.get()
	size, err := checkShape(t, shape)
	if err == nil {
		size, err = layout.ByteSize(t, shape)
	}
	if err != nil {
		return nil, errAt(path, -1, errors.Unwrap(err), "create: "+err.Error())
	}
	tmp, err := atomicfile.Create(path, opts.Perm)
	if err != nil {
		return nil, err
	}
	defer tmp.Abort()
	var head bytes.Buffer
	if err := writeHeader(&head, 0, t, shape, opts.Align); err != nil {
		return nil, errAt(path, -1, nil, "create: "+err.Error())
	}
	if _, err := tmp.Write(head.Bytes()); err != nil {
		return nil, err
	}
	end, ok := layout.Add(int64(head.Len()), size)
	if !ok {
		return nil, errAt(path, -1, ErrDims, "create: "+TypeString(t, shape)+" does not fit in a file")
	}
	mf, err := tmp.Map(&mmapfile.Options{Lock: mmapfile.LockNone})
	if err != nil {
		return nil, err
	}
	err = mf.Grow(end)
	if cerr := mf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := tmp.Commit(); err != nil {
		return nil, err
	}
	opts.Create, opts.Truncate = false, false
	return OpenFile(path, mmapfile.ReadWrite, &opts)
}

// writable reports whether values can be appended; f.mu is held.
func (f *File) writable() error {
	if f.closed {
		return f.err(-1, mmapfile.ErrClosed, "append to a closed file")
	}
	if f.mf == nil || !f.mf.Writable() {
		return f.err(-1, mmapfile.ErrNotWritable, "append: open the file with mmapfile.ReadWrite")
	}
	if f.tail > 0 {
		return f.err(f.size-f.tail, mmapfile.ErrNotWritable, "append: the last %d bytes of the file do not hold a value (a writing open with Options.Repair cuts them)", f.tail)
	}
	return nil
}

// needSeparator reports whether appended values need a newline before
// them: after a text value that ends the file (whose last token the next
// value would continue) or an unterminated "--" comment (which would
// swallow it).
func (f *File) needSeparator() (bool, error) {
	if f.size == 0 {
		return false, nil
	}
	var lastEnd int64
	if f.idx.n > 0 {
		e := f.idx.at(f.idx.n - 1)
		if !e.bin && e.end == f.size {
			return true, nil
		}
		lastEnd = e.end
	}
	if lastEnd == f.size {
		return false, nil // a binary value ends the file: its length ends it
	}
	tail := make([]byte, f.size-lastEnd)
	if err := f.readBytes(tail, lastEnd); err != nil {
		return false, err
	}
	return tail[len(tail)-1] != '\n' && bytes.Contains(tail, []byte("--")), nil
}

// rollback cuts the file back to size old after a failed append.
func (f *File) rollback(old int64, err error) error {
	if terr := f.mf.Truncate(old); terr != nil {
		return errors.Join(err, f.ioErr(old, "append: cutting back what was written", terr))
	}
	return err
}

// extend maps the file of size end anew and indexes the values appended
// after old; if they do not parse, the file is cut back.
func (f *File) extend(old, end int64) error {
	r, err := f.mf.Map(0, end)
	if err != nil {
		return f.rollback(old, f.ioErr(old, "append: mapping", err))
	}
	m := f.idx.mark()
	var ierr error
	if gerr := r.Guard(func() { ierr = f.idx.scanBytes(r.Bytes(), int(old), f.opts) }); gerr != nil {
		ierr = gerr
	}
	if ierr != nil {
		f.idx.reset(m)
		r.Unmap()
		return f.rollback(old, withFile(ierr, f.name))
	}
	prev := f.region
	f.region, f.src, f.size = r, r, end
	f.resetFormat()
	if prev != nil {
		if err := prev.Unmap(); err != nil {
			return f.ioErr(-1, "append: unmapping the old mapping", err)
		}
	}
	return nil
}
