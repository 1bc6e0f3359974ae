package hdf5

import (
	"errors"
	"io"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Filter is one stage of a chunked dataset's filter pipeline.
type Filter struct {
	ID     int
	Name   string // "deflate", "shuffle", "fletcher32", "lzf", … where known
	Params []uint32
}

// Dataset describes one dataset of a file.
type Dataset struct {
	// Name is the dataset's path ("/g/x"), the first the walk meets.
	Name string
	// Type is the element type, Invalid where it has none (strings,
	// opaque bytes, compounds that are tables, types that cannot be
	// read); TypeName names it either way ("f64", "bytes<8>", "string",
	// "compound", "time").
	Type     layout.Type
	TypeName string
	// Shape is the logical shape: the dataspace's, then an array
	// datatype's dimensions.
	Shape     []int64
	BigEndian bool
	// Offset is the absolute file offset of contiguous allocated data
	// (h5py's ds.id.get_offset()), else -1.
	Offset int64
	// Size is the number of bytes of the values (count × element size),
	// -1 for variable-length strings.
	Size int64
	// Layout is "contiguous", "compact", "chunked" or "virtual".
	Layout string
	// Chunks and Filters: a chunked dataset's chunk shape and filter
	// pipeline, in pipeline order.
	Chunks  []int64
	Filters []Filter
	// Fill is the fill value's bytes in the file's byte order, nil for
	// zeros.
	Fill []byte
	// Fields are a compound dataset's members, in member order.
	Fields []Field
	// Dims are netCDF dimension names, where the file says them.
	Dims []string
	// Attributes are the dataset's attributes: numbers, bools, strings,
	// nested lists; NaN and infinities as "nan", "inf", "-inf"; nil for
	// other types.
	Attributes map[string]any
	// Unreadable says why the values cannot be read (a filter this
	// package lacks, external storage, a virtual dataset, a type it
	// cannot read), or nil.
	Unreadable error
}

// Field is one member of a compound datatype.
type Field struct {
	Name     string
	Type     layout.Type // Invalid for strings, nested compounds, …
	TypeName string
	Offset   int     // byte offset within the compound element
	Shape    []int64 // an array member's dimensions
}

// Datasets describes every dataset, in walk order (netCDF dimensions
// that are not variables left out).
func (f *File) Datasets() []Dataset {
	var out []Dataset
	for _, d := range f.datasets {
		if d.listed {
			out = append(out, f.describe(d))
		}
	}
	return out
}

// Lookup describes the dataset name ("/x" or "x", or a path through
// links).
func (f *File) Lookup(name string) (Dataset, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	d, err := f.resolve(name)
	if err != nil {
		return Dataset{}, err
	}
	return f.describe(d), nil
}

func (f *File) describe(d *dataset) Dataset {
	t := d.typ.innermost()
	out := Dataset{Name: d.path, Type: t.elem, TypeName: d.typ.typeName(), Shape: append([]int64(nil), d.shape...),
		BigEndian: t.bigEndian && t.elem.Size() > 1, Offset: d.data, Size: d.nbytes, Layout: d.lay.Class.String(),
		Fill: d.fill, Dims: d.dims, Unreadable: d.unreadable, Attributes: map[string]any{}}
	if t.class == classCompound && !t.elem.Valid() {
		for _, mb := range t.members {
			mt := mb.typ.innermost()
			out.Fields = append(out.Fields, Field{Name: mb.name, Type: mt.elem, TypeName: mb.typ.typeName(), Offset: int(mb.offset), Shape: mb.typ.arrayDims()})
		}
	}
	if d.lay.Class == h5.Chunked {
		for _, c := range d.lay.ChunkDims {
			out.Chunks = append(out.Chunks, int64(c))
		}
		out.Filters = []Filter{}
		if d.pipe != nil {
			for _, fl := range d.pipe.Filters {
				out.Filters = append(out.Filters, Filter{ID: int(fl.ID), Name: fl.Name, Params: append([]uint32{}, fl.Params...)})
			}
		}
	}
	for _, a := range d.attrs {
		out.Attributes[a.name] = f.attrValue(a)
	}
	return out
}

// readElems copies dataset elements [first, first+n) (whole elements of
// the datatype, row-major, in the file's byte order) into dst.
func (f *File) readElems(d *dataset, dst []byte, first, n int64) error {
	if d.unreadable != nil {
		return d.unreadable
	}
	size := int64(d.typ.size)
	if end, ok := layout.Add(first, n); first < 0 || !ok || end > d.count || int64(len(dst)) != n*size {
		return errAt(f.name, d.at, mmapfile.ErrOutOfRange, "dataset %s: elements [%d, %d+%d) outside [0, %d)", d.path, first, first, n, d.count)
	}
	if n == 0 {
		return nil
	}
	l := d.lay
	switch l.Class {
	case h5.Compact:
		copy(dst, l.Compact[first*size:])
	case h5.Contiguous:
		if d.stored < 0 {
			fillWith(dst, d.fill)
			return nil
		}
		var src io.ReaderAt = f.ra
		if f.reg != nil {
			src = f.reg
		}
		k, err := src.ReadAt(dst, d.stored+first*size)
		if k < len(dst) {
			if err == nil || err == io.EOF {
				err = mmapfile.ErrTruncated
			}
			return wrapErr(f.name, d.stored+first*size+int64(k), err, "dataset %s: reading its data", d.path)
		}
	case h5.Chunked:
		t, err := d.chunkTable(f.m.r)
		if err == nil {
			err = f.m.r.ReadChunkTable(t, d.pipe, int(size), d.fill, dst, first, n)
		}
		if err != nil {
			return wrapErr(f.name, d.at, err, "dataset %s", d.path)
		}
	default:
		return errAt(f.name, d.at, errors.ErrUnsupported, "dataset %s: %s storage", d.path, l.Class)
	}
	return nil
}

// chunkTable returns the dataset's allocated chunks, collected from its
// index on the first read, so that a dataset read a piece at a time (as
// cat and conversions read) walks its index once.
func (d *dataset) chunkTable(r *h5.Reader) (*h5.ChunkTable, error) {
	d.tableOnce.Do(func() {
		d.table, d.tableErr = r.ChunkTable(d.lay, d.space.dims, d.space.maxDims, d.pipe != nil && len(d.pipe.Filters) > 0)
	})
	return d.table, d.tableErr
}

// fillWith repeats fill over dst (zeros for nil).
func fillWith(dst, fill []byte) {
	if len(fill) == 0 {
		clear(dst)
		return
	}
	for i := 0; i < len(dst); i += len(fill) {
		copy(dst[i:], fill)
	}
}

// readBytes copies bytes [off, off+len(dst)) of the dataset's row-major
// values (file byte order) into dst: whole dataset elements straight,
// parts of an element (an array datatype's elements) through a buffer.
func (f *File) readBytes(d *dataset, dst []byte, off int64) error {
	size := int64(d.typ.size)
	if size == 0 || len(dst) == 0 {
		return nil
	}
	if head := off % size; head != 0 {
		buf := make([]byte, size)
		if err := f.readElems(d, buf, off/size, 1); err != nil {
			return err
		}
		k := copy(dst, buf[head:])
		dst, off = dst[k:], off+int64(k)
	}
	whole := int64(len(dst)) / size
	if err := f.readElems(d, dst[:whole*size], off/size, whole); err != nil {
		return err
	}
	if tail := dst[whole*size:]; len(tail) > 0 {
		buf := make([]byte, size)
		if err := f.readElems(d, buf, off/size+whole, 1); err != nil {
			return err
		}
		copy(tail, buf)
	}
	return nil
}

// typed resolves name and checks that T is its element type.
func (f *File) typed(name string, lt layout.Type) (*dataset, error) {
	d, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	t := d.typ.innermost()
	if t.elem != lt || t.class == classCompound && !t.elem.Valid() {
		return nil, errAt(f.name, d.at, mmapfile.ErrTypeMismatch, "dataset %s holds %s, not %s", d.path, d.typ.typeName(), lt)
	}
	return d, nil
}

// recordOf resolves name to its record after checking that lt is its
// element type: the file the typed calls hand to package format, and the
// record's index there.
func (f *File) recordOf(name string, lt layout.Type) (allDatasets, int, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	d, err := f.typed(name, lt)
	if err != nil {
		return allDatasets{}, 0, err
	}
	return allDatasets{f}, d.rec, nil
}

// logical is the number of logical elements (an array datatype's
// included).
func (d *dataset) logical() int64 {
	n, _ := layout.Count(d.shape) // checked when the file was opened
	return n
}

// View returns the dataset name as a slice that aliases the file's
// mapping: no copy is made (the bytes h5py's ds.id.get_offset() points
// at). T must be the element type. View fails, naming Read, where the
// bytes cannot be aliased: data not in the host's byte order
// (mmapfile.ErrByteOrder), at an offset not aligned for T
// (mmapfile.ErrMisaligned: HDF5 aligns nothing unless asked), chunked,
// compact or never-written storage, files read through NewReader.
//
// In a file opened read-write, writing to the slice changes the file.
// The slice is valid until Close.
func View[T layout.Elem](f *File, name string) ([]T, error) {
	a, i, err := f.recordOf(name, layout.TypeOf[T]())
	if err != nil {
		return nil, err
	}
	return format.View[T](a, i)
}

// Read returns a copy of the dataset name in logical (row-major) order,
// in the host's byte order: contiguous and compact data copied, chunks
// decoded in parallel, unallocated storage read as the fill value. T must
// be the element type.
func Read[T layout.Elem](f *File, name string) ([]T, error) {
	a, i, err := f.recordOf(name, layout.TypeOf[T]())
	if err != nil {
		return nil, err
	}
	return format.Read[T](a, i)
}

// ReadAt copies len(dst) elements of the dataset name, from logical
// element start on, into dst: part of a large dataset in bounded memory.
func ReadAt[T layout.Elem](f *File, name string, start int64, dst []T) error {
	a, i, err := f.recordOf(name, layout.TypeOf[T]())
	if err != nil {
		return err
	}
	return format.ReadAt(a, i, start, dst)
}

// Set changes the element of the dataset name at the 0-based logical
// (row-major) index idx to v, in place, in the file's byte order: in
// contiguous allocated data, or in an allocated chunk of a dataset without
// filters. Anything else (compact data, never-written storage, filtered
// chunks, strings, compound fields) is refused with an error wrapping
// errors.ErrUnsupported, the file unchanged. The change is visible to
// every reader at once and durable after Close.
func Set[T layout.Elem](f *File, name string, idx []int64, v T) error {
	a, i, err := f.recordOf(name, layout.TypeOf[T]())
	if err != nil {
		return err
	}
	return format.Set(a, i, idx, v)
}

// setRaw writes one logical element's bytes (file byte order) at idx;
// settable has checked the file and the record.
func (f *File) setRaw(d *dataset, idx []int64, b []byte) error {
	k, err := layout.Index(d.shape, layout.RowMajor, idx...)
	if err != nil {
		return errAt(f.name, d.at, format.IndexError(err), "dataset %s", d.path)
	}
	t := d.typ.innermost()
	if t.elem == layout.Bool && b[0] > 1 {
		return errAt(f.name, d.at, mmapfile.ErrInvalidBool, "dataset %s: bool byte 0x%02x", d.path, b[0])
	}
	at, err := f.elementAt(d, k*int64(len(b)))
	if err != nil {
		return err
	}
	if _, err := f.reg.WriteAt(b, at); err != nil {
		return wrapErr(f.name, at, err, "dataset %s: writing the element", d.path)
	}
	return nil
}

// elementAt is the absolute offset of byte off of the dataset's
// row-major values, where they are stored as they are read: contiguous
// allocated data, or an allocated chunk without filters.
func (f *File) elementAt(d *dataset, off int64) (int64, error) {
	switch d.lay.Class {
	case h5.Contiguous:
		if d.data < 0 {
			return -1, errAt(f.name, d.at, errors.ErrUnsupported, "dataset %s was never written: it has no storage to change in place; the file is unchanged", d.path)
		}
		return d.data + off, nil
	case h5.Chunked:
		if d.pipe != nil && len(d.pipe.Filters) > 0 {
			return -1, errAt(f.name, d.at, errors.ErrUnsupported, "dataset %s: its chunks are filtered (%s), and cannot be changed in place; the file is unchanged", d.path, d.pipe.Filters[0].Name)
		}
		return f.chunkElement(d, off)
	}
	return -1, errAt(f.name, d.at, errors.ErrUnsupported, "dataset %s: %s storage cannot be changed in place; the file is unchanged", d.path, d.lay.Class)
}

// chunkElement finds the allocated chunk that holds byte off of an
// unfiltered chunked dataset and the absolute offset of that byte in it.
func (f *File) chunkElement(d *dataset, off int64) (int64, error) {
	size := int64(d.typ.size)
	elem, inner := off/size, off%size
	rank := len(d.space.dims)
	coord := make([]uint64, rank)
	for i := rank - 1; i >= 0; i-- {
		n := int64(d.space.dims[i])
		coord[i] = uint64(elem % n)
		elem /= n
	}
	found := int64(-1)
	stop := errors.New("found")
	err := f.m.r.Chunks(d.lay, d.space.dims, d.space.maxDims, false, func(c h5.Chunk) error {
		var pos int64
		for i := 0; i < rank; i++ {
			cd := d.lay.ChunkDims[i]
			if coord[i] < c.Offset[i] || coord[i] >= c.Offset[i]+cd {
				return nil
			}
			pos = pos*int64(cd) + int64(coord[i]-c.Offset[i])
		}
		found = c.Addr + pos*size + inner
		return stop
	})
	if err != nil && err != stop {
		return -1, wrapErr(f.name, d.at, err, "dataset %s", d.path)
	}
	if found < 0 {
		return -1, errAt(f.name, d.at, errors.ErrUnsupported, "dataset %s: the chunk that holds the element was never written; the file is unchanged", d.path)
	}
	return found, nil
}
