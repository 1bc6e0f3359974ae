package futhark

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// File is an indexed input of Futhark values: a mapped file (Open,
// OpenFile) or bytes in memory (NewReader). Its methods are safe for
// concurrent use; SetElement writers must not race with readers of the
// same element.
type File struct {
	name    string
	mf      *mmapfile.File
	region  *mmapfile.Region
	data    []byte
	entries []Entry
	opts    ReadOptions

	closed   bool
	tailErr  error
	mu       sync.Mutex // guards the decoded-text cache
	kept     [][]byte   // text payloads decoded while indexing, by entry; nil: not kept
	cacheIdx int
	cache    Value
}

// Open maps the file at path read-only and indexes every value in it
// without decoding binary payloads. Text values must be parsed to be
// validated, so their decoded payloads are kept for later reads, up to
// 64 MiB per File; larger ones are decoded again when read. Bad input
// gives a *FormatError and no File.
func Open(path string, o *ReadOptions) (*File, error) {
	return OpenFile(path, mmapfile.ReadOnly, o)
}

// OpenFile is Open with a mode: mmapfile.ReadWrite maps the file writable
// (taking mmapfile's exclusive lock) so that SetElement can change binary
// elements in place.
func OpenFile(path string, mode mmapfile.Mode, o *ReadOptions) (*File, error) {
	mf, err := mmapfile.OpenFile(path, mode, nil)
	if err != nil {
		return nil, err
	}
	r, err := mf.MapAll()
	if err != nil {
		mf.Close()
		return nil, err
	}
	f := &File{name: path, mf: mf, region: r, opts: o.get(), cacheIdx: -1}
	var entries []Entry
	if gerr := r.Guard(func() { entries, f.kept, err = index(r.Bytes(), f.opts) }); gerr != nil {
		mf.Close()
		return nil, gerr
	}
	if err = f.salvage(withFile(err, path)); err != nil {
		mf.Close()
		return nil, err
	}
	f.data, f.entries = r.Bytes(), entries
	return f, nil
}

// NewReader indexes the values in data, which the File then reads from
// (views alias data).
func NewReader(data []byte, o *ReadOptions) (*File, error) {
	f := &File{data: data, opts: o.get(), cacheIdx: -1}
	entries, kept, err := index(data, f.opts)
	if err = f.salvage(err); err != nil {
		return nil, err
	}
	f.entries, f.kept = entries, kept
	return f, nil
}

// salvage keeps an indexing error as the tail error under Lenient.
func (f *File) salvage(err error) error {
	var fe *FormatError
	if err != nil && f.opts.Lenient && errors.As(err, &fe) {
		f.tailErr = err
		return nil
	}
	return err
}

// TailError returns the error that ended indexing under
// ReadOptions.Lenient (the values before it are in Entries), or nil.
func (f *File) TailError() error { return f.tailErr }

func withFile(err error, name string) error {
	var fe *FormatError
	if errors.As(err, &fe) && fe.File == "" {
		fe.File = name
	}
	return err
}

// Close unmaps and closes the file. Views die here.
func (f *File) Close() error {
	if f.mf == nil {
		return nil
	}
	mf := f.mf
	f.closed = true
	f.mf, f.region, f.data = nil, nil, nil
	return mf.Close()
}

// Name returns the path the File was opened with ("" for NewReader).
func (f *File) Name() string { return f.name }

// Size returns the input's size in bytes.
func (f *File) Size() int64 { return int64(len(f.data)) }

// Entries returns the index: one Entry per value, in input order. The
// slice is shared; do not modify it.
func (f *File) Entries() []Entry { return f.entries }

// Arrays returns one layout descriptor per value, named "0", "1", …, in
// row-major order. For binary values Offset is the payload offset and Size
// the payload size; for text values (which have no payload in the file)
// Offset is the value's Start and Size its length in bytes, End − Start.
func (f *File) Arrays() []layout.Array {
	out := make([]layout.Array, len(f.entries))
	for i, e := range f.entries {
		a := layout.Array{Name: strconv.Itoa(i), Type: e.Type, Shape: e.Shape, Order: layout.RowMajor, Offset: e.Data}
		if e.Binary {
			a.Size = e.PayloadSize()
		} else {
			a.Size = e.End - e.Start
		}
		out[i] = a
	}
	return out
}

func (f *File) entry(i int) (Entry, error) {
	if f.closed {
		return Entry{}, fmt.Errorf("futhark: %s: %w", f.name, mmapfile.ErrClosed)
	}
	if i < 0 || i >= len(f.entries) {
		return Entry{}, fmt.Errorf("futhark: %s: value %d out of range [0,%d)", f.name, i, len(f.entries))
	}
	return f.entries[i], nil
}

func (f *File) errAt(off int64, sen error, format string, args ...any) error {
	return &FormatError{File: f.name, Offset: off, Msg: fmt.Sprintf(format, args...), Err: sen}
}

// copyOut copies payload bytes [off, off+len(dst)) into dst, guarded
// against faults when mapped.
func (f *File) copyOut(dst []byte, off int64) error {
	if f.region != nil {
		_, err := f.region.ReadAt(dst, off)
		return err
	}
	copy(dst, f.data[off:])
	return nil
}

// Value decodes value i into memory (a copy).
func (f *File) Value(i int) (Value, error) {
	e, err := f.entry(i)
	if err != nil {
		return Value{}, err
	}
	if !e.Binary {
		v, err := f.textValue(i, e)
		v.Data = bytes.Clone(v.Data) // the cache stays the File's
		return v, err
	}
	data := make([]byte, e.PayloadSize())
	if err := f.copyOut(data, e.Data); err != nil {
		return Value{}, err
	}
	if e.Type == layout.Bool {
		normBool(data)
	}
	return Value{Type: e.Type, Shape: append([]int64{}, e.Shape...), Data: data}, nil
}

func (f *File) textValue(i int, e Entry) (Value, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i < len(f.kept) && f.kept[i] != nil {
		return Value{Type: e.Type, Shape: append([]int64{}, e.Shape...), Data: f.kept[i]}, nil
	}
	if f.cacheIdx == i {
		return f.cache, nil
	}
	var v Value
	var err error
	decode := func() { v, err = decodeText(f.data, int(e.Start), int(e.End), f.opts, e.PayloadSize()) }
	if f.region != nil {
		if gerr := f.region.Guard(decode); gerr != nil {
			return Value{}, gerr
		}
	} else {
		decode()
	}
	if err != nil {
		return Value{}, withFile(err, f.name)
	}
	f.cacheIdx, f.cache = i, v
	return v, nil
}

func checkElem[T layout.Elem](e Entry, allowBool bool) error {
	t := layout.TypeOf[T]()
	if e.Type == layout.Bool && t == layout.Bool && !allowBool {
		return fmt.Errorf("futhark: bool values are viewed as []uint8: %w", ErrElemType)
	}
	if t == e.Type || e.Type == layout.Bool && t == layout.U8 {
		return nil
	}
	return fmt.Errorf("futhark: %v elements requested of a %s value: %w", t, e.TypeString(), ErrElemType)
}

// View returns the payload of binary value i as a []T aliasing the
// mapping (or the NewReader bytes): no copy. T must be the value's type
// (layout.Float16 for f16, uint8 for bool, whose bytes are returned raw).
// It fails, naming the offset, for text values (ErrTextValue) and for
// payloads not aligned for T (ErrMisaligned); use Read then. The slice
// dies at Close; see the package documentation.
func View[T layout.Elem](f *File, i int) ([]T, error) {
	e, err := f.entry(i)
	if err != nil {
		return nil, err
	}
	if err := checkElem[T](e, false); err != nil {
		return nil, err
	}
	if !e.Binary {
		return nil, f.errAt(e.Start, ErrTextValue, "value %d is text: decode it with Read", i)
	}
	n := e.Len()
	size := int64(e.Type.Size())
	if size > 1 && (e.Data%size != 0 || !hostLittle) {
		return nil, f.errAt(e.Data, ErrMisaligned, "payload of %s at offset %d is not a multiple of %d", e.TypeString(), e.Data, size)
	}
	if n == 0 {
		return []T{}, nil
	}
	if f.region != nil {
		v, err := mmapfile.View[T](f.region, e.Data, int(n), binary.LittleEndian)
		if err != nil {
			if errors.Is(err, mmapfile.ErrMisaligned) {
				return nil, f.errAt(e.Data, ErrMisaligned, "payload of %s at offset %d is not aligned: %v", e.TypeString(), e.Data, err)
			}
			return nil, err
		}
		return v, nil
	}
	b := f.data[e.Data : e.Data+n*size]
	if !unsafeslice.Aligned[T](b) {
		return nil, f.errAt(e.Data, ErrMisaligned, "payload of %s at offset %d is not aligned in memory", e.TypeString(), e.Data)
	}
	return unsafeslice.Cast[T](b), nil
}

// Read returns a copy of value i's elements as a []T: one bulk copy of a
// binary payload, or the decoded text. T must be the value's type
// (layout.Float16 for f16; bool or uint8 for bool, where []bool maps
// nonzero bytes to true).
func Read[T layout.Elem](f *File, i int) ([]T, error) {
	e, err := f.entry(i)
	if err != nil {
		return nil, err
	}
	if err := checkElem[T](e, true); err != nil {
		return nil, err
	}
	if !e.Binary {
		v, err := f.textValue(i, e)
		if err != nil {
			return nil, err
		}
		return Elems[T](v)
	}
	out := make([]T, e.Len())
	if _, err := ReadAt(f, i, 0, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadAt copies elements of value i, from linear (row-major) element start
// on, into dst, and returns how many it copied: min(len(dst), Len−start).
// Binary payloads are copied straight from the mapping, so a huge value
// can be read in bounded memory; text values are decoded once and cached.
func ReadAt[T layout.Elem](f *File, i int, start int64, dst []T) (int, error) {
	e, err := f.entry(i)
	if err != nil {
		return 0, err
	}
	if err := checkElem[T](e, true); err != nil {
		return 0, err
	}
	n := e.Len()
	if start < 0 || start > n {
		return 0, fmt.Errorf("futhark: element %d out of range [0,%d]", start, n)
	}
	k := min(int64(len(dst)), n-start)
	dst = dst[:k]
	size := int64(e.Type.Size())
	b := unsafeslice.Bytes(dst)
	if !e.Binary {
		v, err := f.textValue(i, e)
		if err != nil {
			return 0, err
		}
		copy(b, v.Data[start*size:])
	} else if err := f.copyOut(b, e.Data+start*size); err != nil {
		return 0, err
	}
	if e.Type == layout.Bool {
		normBool(b)
	} else if !hostLittle {
		layout.SwapBytes(b, int(size))
	}
	return int(k), nil
}

// SetElement overwrites element linear (row-major) of binary value i with
// the little-endian bytes le, through the read-write mapping (OpenFile
// with mmapfile.ReadWrite). Aligned or not, the write is a guarded copy.
// The change reaches the file at Sync or Close.
func (f *File) SetElement(i int, linear int64, le []byte) error {
	e, err := f.entry(i)
	if err != nil {
		return err
	}
	if !e.Binary {
		return f.errAt(e.Start, ErrTextValue, "value %d is text: it cannot be changed in place", i)
	}
	if f.region == nil || !f.region.Writable() {
		return fmt.Errorf("futhark: %s: %w", f.name, mmapfile.ErrNotWritable)
	}
	size := e.Type.Size()
	if len(le) != size {
		return fmt.Errorf("futhark: %s element needs %d bytes, got %d", e.Type, size, len(le))
	}
	if e.Type == layout.Bool && le[0] > 1 {
		return fmt.Errorf("futhark: bool byte 0x%02x is neither 0 nor 1", le[0])
	}
	if linear < 0 || linear >= e.Len() {
		return fmt.Errorf("futhark: element %d out of range [0,%d)", linear, e.Len())
	}
	if _, err := f.region.WriteAt(le, e.Data+linear*int64(size)); err != nil {
		return err
	}
	f.mu.Lock()
	if f.cacheIdx == i {
		f.cacheIdx = -1
	}
	f.mu.Unlock()
	return nil
}

// Sync flushes in-place changes to the file.
func (f *File) Sync() error {
	if f.region == nil {
		return nil
	}
	return f.region.Sync()
}

// Payload returns the raw payload bytes of binary value i (little-endian
// elements, bool bytes as stored), aliasing the mapping or the NewReader
// bytes with no alignment requirement. Like a View it dies at Close. Text
// values have no payload (ErrTextValue).
func (f *File) Payload(i int) ([]byte, error) {
	e, err := f.entry(i)
	if err != nil {
		return nil, err
	}
	if !e.Binary {
		return nil, f.errAt(e.Start, ErrTextValue, "value %d is text: decode it with Value", i)
	}
	return f.data[e.Data:e.End:e.End], nil
}

// Encode writes value i to e, as binary or as text, streaming a binary
// payload straight from the mapping in chunks (no copy of the whole
// value). A mapped file truncated meanwhile may fault; see the package
// documentation.
func (f *File) Encode(e *Encoder, i int, binaryOut bool) error {
	ent, err := f.entry(i)
	if err != nil {
		return err
	}
	if !ent.Binary {
		v, err := f.Value(i)
		if err != nil {
			return err
		}
		if binaryOut {
			return e.EncodeBinary(v)
		}
		return e.EncodeText(v)
	}
	if binaryOut {
		err = e.BeginBinary(ent.Type, ent.Shape)
	} else {
		err = e.BeginText(ent.Type, ent.Shape)
	}
	if err != nil {
		return err
	}
	p, err := f.Payload(i)
	if err != nil {
		return err
	}
	chunk := (1 << 20) / ent.Type.Size() * ent.Type.Size()
	for len(p) > 0 {
		k := min(len(p), chunk)
		if err := e.WriteElems(p[:k]); err != nil {
			return err
		}
		p = p[k:]
	}
	return nil
}
