package hdf5

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Options configure Open, OpenFile and NewReader. A nil *Options means the
// defaults.
type Options struct {
	// Options are the mapping's options: advice, populate, lock, wait.
	// Create and Truncate are refused: OpenFile opens existing files
	// (the package's Create and Write make new ones).
	mmapfile.Options
	// Lenient makes copying reads take bool bytes other than 0 and 1 as
	// true, as h5py does (it hands out the enum's bytes); by default they
	// are an error (mmapfile.ErrInvalidBool).
	Lenient bool
}

// maxGroupDepth bounds how deep groups nest (the walk recurses).
const maxGroupDepth = 1024

// maxSoftHops bounds the soft links followed to resolve one name.
const maxSoftHops = 16

// File is an open HDF5 (or netCDF-4) file. It is safe for concurrent use
// as format.File says: Set of a contiguous or unfiltered chunked element
// is one store into the mapping, as a write through a view is.
type File struct {
	name     string
	opts     Options
	mf       *mmapfile.File // nil for NewReader
	ra       io.ReaderAt
	size     int64
	writable bool
	m        *meta
	sb       superblock

	datasets []*dataset
	byPath   map[string]*dataset // first paths
	objects  map[uint64]string   // object header address -> first path
	groupAt  map[string][]link   // group path -> its links, by name
	links    []Link
	groups   []Group
	types    map[uint64]*dtype // committed datatypes by address

	heapMu sync.Mutex
	heaps  map[uint64]*h5.GlobalHeap // global heap collections read

	wmu    sync.Mutex   // serialises Set
	mu     sync.RWMutex // guards closed and reg
	reg    *mmapfile.Region
	closed bool
	commit *atomicfile.File // Create's file, put in place by Close

	face
}

// dataset is one dataset of the file.
type dataset struct {
	path   string
	addr   uint64
	at     int64 // absolute offset of its object header
	space  *dataspace
	typ    *dtype
	lay    *h5.Layout
	pipe   *h5.Pipeline
	fill   []byte // nil: zeros
	attrs  []*attribute
	shape  []int64 // dataspace dims, then an array datatype's
	count  int64   // elements of the dataspace
	nbytes int64   // count × element size; -1 for variable-length strings
	data   int64   // absolute offset of allocated contiguous values, -1 otherwise
	stored int64   // absolute offset of allocated contiguous storage, -1 otherwise
	// why its values cannot be read, or nil
	unreadable error
	// elsewhere says where values stored outside the file are, for a
	// listing ("external file 'x.bin'", "virtual"), or "".
	elsewhere string
	// listed is false for a netCDF dimension that is not a variable.
	listed bool
	dims   []string // netCDF dimension names, where known
	rec    int      // its record, a table's first column's; -1 for none

	tableOnce sync.Once
	table     *h5.ChunkTable // a chunked dataset's chunks, once read
	tableErr  error
}

// Link is a link that is not the first path of a dataset: a soft link, a
// second hard link, an external link, or a user-defined one.
type Link struct {
	Name string // the link's path ("/s")
	// Soft is a soft link's target path, as stored (relative to the
	// link's group unless it starts with "/").
	Soft string
	// Hard is the first path of the object a second hard link points at.
	Hard string
	// ExternalFile and ExternalPath: an external link's target, never
	// followed.
	ExternalFile, ExternalPath string
	// Type is the link type of a user-defined link (64 and above other
	// than external), 0 otherwise.
	Type int
}

// Group is a group of the file, in walk order.
type Group struct {
	Name       string         // "/" for the root
	Attributes map[string]any // decoded as Dataset.Attributes
}

// Open opens an HDF5 file for reading. Its data are mapped read-only;
// views alias the mapping.
func Open(path string, o *Options) (*File, error) {
	return OpenFile(path, mmapfile.ReadOnly, o)
}

// OpenFile opens an HDF5 file read-only or read-write. A read-write open
// takes an exclusive lock (see mmapfile.Options) and allows Set and
// writable views; nothing else of the file changes.
func OpenFile(path string, mode mmapfile.Mode, o *Options) (*File, error) {
	f := &File{name: path, writable: mode == mmapfile.ReadWrite}
	if o != nil {
		f.opts = *o
	}
	if f.opts.Create || f.opts.Truncate {
		return nil, errAt(path, -1, errors.ErrUnsupported, "OpenFile opens existing HDF5 files; Create and Write make new ones")
	}
	mf, err := mmapfile.OpenFile(path, mode, &f.opts.Options)
	if err != nil {
		return nil, err
	}
	if err := f.load(mf); err != nil {
		return nil, err
	}
	return f, nil
}

// load reads the file mf maps; on error mf is closed.
func (f *File) load(mf *mmapfile.File) error {
	f.mf, f.ra = mf, mf
	size, err := mf.Size()
	if err == nil {
		f.size = size
		err = f.parse()
	}
	if err == nil && size > 0 {
		f.reg, err = mf.MapAll()
	}
	if err != nil {
		mf.Close()
	}
	return err
}

// NewReader reads the HDF5 file of size bytes that r holds. The File
// serves copying reads only: views and Set fail.
func NewReader(r io.ReaderAt, size int64, o *Options) (*File, error) {
	f := &File{ra: r, size: size}
	if o != nil {
		f.opts = *o
	}
	if size < 0 {
		return nil, errAt("", -1, nil, "negative size %d", size)
	}
	if err := f.parse(); err != nil {
		return nil, err
	}
	return f, nil
}

// parse reads the superblock and walks the groups.
func (f *File) parse() error {
	at, err := findSignature(f.name, f.ra, f.size)
	if err != nil {
		return err
	}
	f.m = &meta{name: f.name, r: &h5.Reader{R: f.ra}, writable: f.writable}
	if f.sb, err = readSuperblock(f.m, at, f.size); err != nil {
		return err
	}
	f.byPath = map[string]*dataset{}
	f.objects = map[uint64]string{}
	f.groupAt = map[string][]link{}
	f.types = map[uint64]*dtype{}
	root, err := readObjectHeader(f.m, f.sb.root)
	if err != nil {
		return err
	}
	f.objects[f.sb.root] = "/"
	if err := f.walkGroup("/", root, 0); err != nil {
		return err
	}
	f.netCDFDims()
	f.buildFace()
	return nil
}

// walkGroup lists the group at path, depth first, its links in byte
// order of their names: datasets reached for the first time become
// datasets, groups are walked once, everything else is a Link.
func (f *File) walkGroup(gpath string, oh *objectHeader, depth int) error {
	if depth > maxGroupDepth {
		return f.m.errf(oh.at, nil, "groups nested more than %d deep", maxGroupDepth)
	}
	attrs, err := f.attributes(oh)
	if err != nil {
		return err
	}
	g := Group{Name: gpath, Attributes: map[string]any{}}
	for _, a := range attrs {
		g.Attributes[a.name] = f.attrValue(a)
	}
	f.groups = append(f.groups, g)
	links, err := groupLinks(f.m, oh)
	if err != nil {
		return err
	}
	f.groupAt[gpath] = links
	for _, l := range links {
		full := path.Join(gpath, l.name)
		switch l.typ {
		case linkHard:
		case linkSoft:
			f.links = append(f.links, Link{Name: full, Soft: l.target})
			continue
		case linkExternal:
			f.links = append(f.links, Link{Name: full, ExternalFile: l.file, ExternalPath: l.target})
			continue
		default:
			f.links = append(f.links, Link{Name: full, Type: l.typ})
			continue
		}
		if first, ok := f.objects[l.addr]; ok {
			f.links = append(f.links, Link{Name: full, Hard: first})
			continue
		}
		f.objects[l.addr] = full
		child, err := readObjectHeader(f.m, l.addr)
		if err != nil {
			return err
		}
		switch {
		case child.find(msgLayout) != nil:
			if err := f.addDataset(full, child); err != nil {
				return err
			}
		case child.find(msgSymbolTable) != nil || child.find(msgLinkInfo) != nil || child.find(msgLink) != nil || child.find(msgGroupInfo) != nil:
			if err := f.walkGroup(full, child, depth+1); err != nil {
				return err
			}
		}
		// Anything else (a committed datatype) is no record.
	}
	return nil
}

// datatype parses a datatype message, following a shared one to the
// committed datatype it names (once: that one must not be shared again).
func (f *File) datatype(msg *message) (*dtype, error) {
	if msg.flags&flagShared == 0 {
		return parseDatatype(f.m, msg.body, msg.at)
	}
	addr, err := sharedAddr(f.m, msg)
	if err != nil {
		return nil, err
	}
	if d, ok := f.types[addr]; ok {
		return d, nil
	}
	oh, err := readObjectHeader(f.m, addr)
	if err != nil {
		return nil, err
	}
	tm := oh.find(msgDatatype)
	if tm == nil {
		return nil, f.m.errf(msg.at, nil, "shared datatype: the object at address %d holds no datatype", addr)
	}
	if tm.flags&flagShared != 0 {
		return nil, f.m.errf(tm.at, ErrCycle, "shared datatype pointing at another shared datatype")
	}
	d, err := parseDatatype(f.m, tm.body, tm.at)
	if err != nil {
		return nil, err
	}
	f.types[addr] = d
	return d, nil
}

// attributes reads an object's attributes: attribute messages in its
// header, then those of its dense storage.
func (f *File) attributes(oh *objectHeader) ([]*attribute, error) {
	var out []*attribute
	for i := range oh.msgs {
		msg := &oh.msgs[i]
		if msg.typ != msgAttribute {
			continue
		}
		if msg.flags&flagShared != 0 {
			return nil, f.m.errf(msg.at, errors.ErrUnsupported, "a shared attribute message")
		}
		a, err := parseAttribute(f.m, msg.body, msg.at, f.datatype)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if msg := oh.find(msgAttrInfo); msg != nil {
		ai, err := parseDenseIndex(f.m, msg, 2)
		if err != nil {
			return nil, err
		}
		if !f.m.undefined(ai.heap) && !f.m.undefined(ai.nameIndex) {
			dense, err := denseAttributes(f.m, ai, f.datatype)
			if err != nil {
				return nil, err
			}
			out = append(out, dense...)
		}
	}
	return out, nil
}

// netCDFDimension marks a dimension scale that is not a netCDF variable.
const netCDFDimension = "This is a netCDF dimension but not a netCDF variable"

// addDataset reads a dataset's messages: its dataspace, datatype, fill
// value, layout and filters, and checks where its data lie.
func (f *File) addDataset(p string, oh *objectHeader) error {
	m := f.m
	d := &dataset{path: p, addr: oh.addr, at: oh.at, data: -1, stored: -1, listed: true}
	sm, tm, lm := oh.find(msgDataspace), oh.find(msgDatatype), oh.find(msgLayout)
	if sm == nil || tm == nil {
		return m.errf(oh.at, nil, "dataset %s: no dataspace or datatype message", p)
	}
	var err error
	if d.space, err = parseDataspace(m, sm.body, sm.at); err != nil {
		return err
	}
	if d.typ, err = f.datatype(tm); errors.Is(err, errors.ErrUnsupported) {
		// A datatype this package does not read: listed, refused when read.
		d.typ = &dtype{class: classUnknown, unsupported: unreadableText(err)}
		if len(tm.body) >= 8 && tm.flags&flagShared == 0 {
			d.typ.size = le.Uint32(tm.body[4:])
		}
	} else if err != nil {
		return err
	}
	if fm := oh.find(msgFill); fm != nil {
		d.fill, err = parseFill(m, fm)
	} else if fm := oh.find(msgFillOld); fm != nil {
		d.fill, err = parseFill(m, fm)
	}
	if err != nil {
		return err
	}
	if d.fill != nil && uint32(len(d.fill)) != d.typ.size {
		d.fill = nil // a fill value of another size is not this type's: zeros, as h5py reads it
	}
	if d.lay, err = h5.ParseLayout(lm.body, lm.at, len(d.space.dims), m.so, m.sl); err != nil {
		return wrapErr(m.name, lm.at, err, "dataset %s: layout message", p)
	}
	if pm := oh.find(msgPipeline); pm != nil {
		if d.pipe, err = h5.ParsePipeline(pm.body, pm.at); err != nil {
			return wrapErr(m.name, pm.at, err, "dataset %s: filter pipeline message", p)
		}
	}
	if d.attrs, err = f.attributes(oh); err != nil {
		return err
	}
	for _, a := range d.attrs {
		if a.name == "NAME" {
			if s, ok := f.attrValue(a).(string); ok && strings.HasPrefix(s, netCDFDimension) {
				d.listed = false
			}
		}
	}
	if err := f.measure(d, sm.at); err != nil {
		return err
	}
	// What this package does not read leaves the dataset listed and
	// unreadable; anything else wrong with its storage is damage.
	if d.unreadable = f.storage(d, oh); d.unreadable != nil && !errors.Is(d.unreadable, errors.ErrUnsupported) {
		return d.unreadable
	}
	f.datasets = append(f.datasets, d)
	f.byPath[p] = d
	return nil
}

// measure works out the dataset's logical shape, element count and bytes,
// overflow-checked.
func (f *File) measure(d *dataset, at int64) error {
	for _, n := range d.space.dims {
		d.shape = append(d.shape, int64(n))
	}
	var err error
	if d.count, err = layout.Count(d.shape); err != nil {
		return f.m.errf(at, err, "dataset %s: dataspace %v", d.path, d.space.dims)
	}
	if d.space.null {
		// No elements at all (h5py's Empty): listed as an empty array.
		d.count = 0
		d.shape = []int64{0}
	}
	d.shape = append(d.shape, d.typ.arrayDims()...)
	if _, err := layout.Count(d.shape); err != nil {
		return f.m.errf(at, err, "dataset %s: shape %v", d.path, d.shape)
	}
	d.nbytes = -1
	if d.typ.class != classVlen {
		n, ok := layout.Mul(d.count, int64(d.typ.size))
		if !ok {
			return f.m.errf(at, layout.ErrOverflow, "dataset %s: %d elements of %d bytes", d.path, d.count, d.typ.size)
		}
		d.nbytes = n
	}
	return nil
}

// storage checks where the dataset's values are and returns why they
// cannot be read, or nil.
func (f *File) storage(d *dataset, oh *objectHeader) error {
	m := f.m
	if em := oh.find(msgExternal); em != nil {
		name := externalFile(m, em)
		d.elsewhere = "external file '" + name + "'"
		return m.errf(em.at, errors.ErrUnsupported, "dataset %s: data in external file '%s': external storage is not supported", d.path, name)
	}
	if d.typ.unsupported != "" {
		return m.errf(d.at, errors.ErrUnsupported, "dataset %s: %s cannot be read", d.path, d.typ.unsupported)
	}
	stored := int64(d.typ.size) * d.count // no overflow: nbytes did not, or vlen's 16 bytes are fewer
	if d.nbytes < 0 {
		var ok bool
		if stored, ok = layout.Mul(d.count, int64(d.typ.size)); !ok {
			return m.errf(d.at, layout.ErrOverflow, "dataset %s", d.path)
		}
	}
	l := d.lay
	switch l.Class {
	case h5.Virtual:
		d.elsewhere = "virtual"
		return m.errf(d.at, errors.ErrUnsupported, "dataset %s: virtual dataset: not supported", d.path)
	case h5.Compact:
		if int64(len(l.Compact)) < stored {
			return m.errf(l.CompactAt, mmapfile.ErrTruncated, "dataset %s: %d bytes of compact data for %d", d.path, len(l.Compact), stored)
		}
	case h5.Contiguous:
		if m.undefined(l.Addr) {
			return nil
		}
		size := l.Size
		if l.Version < 3 {
			size = uint64(stored)
		}
		if size < uint64(stored) {
			return m.errf(d.at, mmapfile.ErrTruncated, "dataset %s: %d bytes of contiguous data for %d", d.path, size, stored)
		}
		at, err := m.abs(l.Addr, uint64(stored), "dataset "+d.path+": contiguous data")
		if err != nil {
			return err
		}
		if stored > 0 {
			d.stored = at
		}
		if stored > 0 && d.typ.class != classVlen {
			// Variable-length elements are heap IDs, not the values.
			d.data = at
		}
	case h5.Chunked:
		if len(l.ChunkDims) != len(d.space.dims) {
			return m.errf(d.at, nil, "dataset %s: chunks of rank %d for a dataspace of rank %d", d.path, len(l.ChunkDims), len(d.space.dims))
		}
		if l.ElemSize != d.typ.size {
			return m.errf(d.at, nil, "dataset %s: chunks of %d-byte elements for a datatype of %d bytes", d.path, l.ElemSize, d.typ.size)
		}
		if d.pipe != nil {
			if err := d.pipe.Supported(); err != nil {
				return wrapErr(m.name, d.at, err, "dataset %s", d.path)
			}
		}
	}
	return nil
}

// Name returns the name the file was opened with ("" for NewReader).
func (f *File) Name() string { return f.name }

// Version returns the superblock's version, "0" to "3".
func (f *File) Version() string { return fmt.Sprint(f.sb.version) }

// UserBlock returns the size of the user block before the superblock.
func (f *File) UserBlock() int64 { return f.sb.at }

// Links lists the links that are not a dataset's or group's first path, in
// walk order.
func (f *File) Links() []Link { return append([]Link(nil), f.links...) }

// Groups lists the groups in walk order, the root ("/") first.
func (f *File) Groups() []Group { return append([]Group(nil), f.groups...) }

// Close unmaps the file and releases its lock. Every view of the file is
// invalid afterwards. Closing twice returns an error wrapping
// mmapfile.ErrClosed.
func (f *File) Close() error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errAt(f.name, -1, mmapfile.ErrClosed, "")
	}
	f.closed = true
	if f.mf == nil {
		return nil
	}
	err := f.mf.Close()
	if f.commit != nil {
		return f.commit.Finish(err)
	}
	return err
}
