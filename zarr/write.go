package zarr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// ArraySpec describes an array for Create.
type ArraySpec struct {
	// Name is the array's path in the store ("temp", "sub/counts"); "/"
	// makes the store a root array (the only one).
	Name  string
	Type  layout.Type
	Shape []int64
	// Order is the order of the elements inside each chunk.
	Order     layout.Order
	BigEndian bool
	// TypeName keeps a NumPy datetime type: "datetime64[s]",
	// "timedelta64[ns]" (Type I64).
	TypeName string
	// Chunks and Shards override Options.Chunks and Options.Shards.
	Chunks, Shards []int64
	// FillValue is what missing chunks and the padding of edge chunks
	// hold: a number of the type, a bool, a complex128, or nil for zero.
	FillValue any
	// DimensionNames name the axes for xarray; nil: dim_0, dim_1, …
	DimensionNames []string
	// Attributes are the array's user attributes.
	Attributes map[string]any
}

// chunkTarget is the size of the chunks chosen when none are given: large
// enough that a chunk file costs little to open or fetch, small enough for
// dask to spread an array over many workers.
const chunkTarget = 8 << 20

// Write writes the records of src to a new store at path: a group holding
// one array per record (named by the record; "sub/x" makes a group sub), or
// a root array for a single record named "/". Chunks are full (the edge
// chunks padded with the fill value), in the records' byte order and
// storage order (a column-major record becomes order "F", or a transpose
// codec), raw unless o.Compress says otherwise, so that each maps as a
// typed slice. Every array gets dimension names (_ARRAY_DIMENSIONS, and
// dimension_names in version 3) so that xarray opens the store, and the
// root gets consolidated metadata.
//
// The store is written to a temporary directory beside path, chunk files
// first and metadata last, and replaces path only once complete; an
// existing path is replaced only if it is a Zarr store or an empty
// directory.
//
// Write holds at most 32 MiB of the source at a time, whatever the
// shape, and as much again of chunks being encoded (a single chunk or
// shard larger than that is held whole, one at a time). It refuses at
// once, naming the size, a store of more than 16 TiB or 2^26 chunk files
// (edge chunks' padding included), which would take hours or days to
// write, and metadata that a reader of the store would refuse (a rank
// over 32).
func Write(path string, src format.Source, o *Options) error {
	var opts Options
	if o != nil {
		opts = *o
	}
	arr, err := format.Arrays(src)
	if err != nil {
		return err
	}
	// Each record is described when its array is planned: a source of many
	// records (a group, a wide table) need not list them all at once.
	spec := func(i int) (ArraySpec, error) {
		r := format.RecordAt(arr, i)
		if r.Kind != format.KindArray && r.Kind != format.KindColumn {
			return ArraySpec{}, format.Unrepresentable(&r, "Zarr stores hold arrays, not "+r.Kind.String()+" records")
		}
		if err := representable(r.Type); err != nil {
			return ArraySpec{}, format.Unrepresentable(&r, err.Error())
		}
		sp := ArraySpec{Name: r.Name, Type: r.Type, Shape: r.Shape, Order: r.Order, BigEndian: r.BigEndian}
		if strings.HasPrefix(r.TypeName, "datetime64[") || strings.HasPrefix(r.TypeName, "timedelta64[") {
			sp.TypeName = r.TypeName
		}
		if fa := r.Facts; fa != nil {
			if raw := bytes.TrimSpace(fa.FillValue); len(raw) > 0 && string(raw) != "null" {
				sp.FillValue = fa.FillValue
			}
			sp.DimensionNames, sp.Attributes = fa.DimensionNames, fa.Attributes
		}
		return sp, nil
	}
	w, err := newWriter(path, format.NumRecords(arr), spec, &opts, true)
	if err != nil {
		return err
	}
	defer w.st.abort()
	for i := range w.arrays {
		if err := w.writeData(w.array(i), arr, i); err != nil {
			return err
		}
	}
	// The chunk files are durable before the metadata that names them is
	// written; commit syncs the metadata and the directories.
	if err := w.st.syncFiles(); err != nil {
		return err
	}
	if err := w.writeMeta(); err != nil {
		return err
	}
	return w.st.commit()
}

// Create makes a new store at path holding the arrays described, with no
// chunks yet (they read as the fill value), and opens it read-write: fill
// it chunk by chunk through the writable slices ViewChunk returns (View
// for an array of one chunk), or with Set. An existing path is replaced as
// Write replaces it.
func Create(path string, arrays []ArraySpec, o *Options) (*Store, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	for i := range arrays {
		if err := representable(arrays[i].Type); err != nil {
			return nil, storeErr(path, format.ErrNotRepresentable, fmt.Sprintf("array %q: %v", arrays[i].Name, err))
		}
	}
	w, err := newWriter(path, len(arrays), func(i int) (ArraySpec, error) { return arrays[i], nil }, &opts, false)
	if err != nil {
		return nil, err
	}
	defer w.st.abort()
	if err := w.writeMeta(); err != nil {
		return nil, err
	}
	if err := w.st.commit(); err != nil {
		return nil, err
	}
	return OpenFile(path, mmapfile.ReadWrite, o)
}

// representable says why an element type has no Zarr equivalent.
func representable(t layout.Type) error {
	switch {
	case !t.Valid():
		return fmt.Errorf("the type has no Zarr equivalent")
	case t == layout.I128 || t == layout.U128 || t == layout.JuliaChar:
		return fmt.Errorf("Zarr has no %s type", t)
	}
	return nil
}

// writer writes one store.
type writer struct {
	st      *stage
	version int
	// arrays are the arrays' paths and metas, one meta for the arrays
	// whose documents differ in nothing but their attributes.
	arrays []entry
	// docs are the arrays' metadata documents (.zarray, zarr.json), and
	// attrs their .zattrs in version 2, encoded once: as compact JSON
	// they cost a store of many arrays little memory until the
	// consolidated metadata is written. The arrays' metas keep neither
	// attributes nor dimension names.
	docs, attrs []json.RawMessage
	indented    bytes.Buffer // a document being written
	bufs        sync.Pool    // *worker: the chunk buffers, kept from slab to slab
}

// newWriter plans the n arrays of a store, spec(i) describing array i:
// names, chunks, codecs, dimension names.
func newWriter(target string, n int, spec func(i int) (ArraySpec, error), o *Options, fromSource bool) (*writer, error) {
	w := &writer{version: o.Version}
	if w.version == 0 {
		w.version = 3
	}
	fail := func(name string, err error, format string, a ...any) error {
		msg := fmt.Sprintf(format, a...)
		if name != "" {
			msg = fmt.Sprintf("array %q: ", name) + msg
		}
		return storeErr(target, err, msg)
	}
	if w.version != 2 && w.version != 3 {
		return nil, fail("", ErrUnsupported, "Zarr version %d (2 or 3)", w.version)
	}
	if w.version == 2 && o.Shards != nil {
		return nil, fail("", ErrUnsupported, "shards need Zarr version 3")
	}
	chain, err := parseCompress(o.Compress)
	if err != nil {
		return nil, fail("", ErrInvalid, "%v", err)
	}
	if n == 0 {
		return nil, fail("", format.ErrNotRepresentable, "no arrays to write")
	}
	paths := map[string]bool{}
	dims := format.Dimensions{}
	var total, totalFiles int64 // what Write writes: chunk bytes, files
	var back loader             // reads the documents back, each alike one once
	alike := map[string]*meta{} // the metas of documents apart from their attributes
	chunksFit := o.Chunks == nil
	for i := range n {
		sp, err := spec(i)
		if err != nil {
			return nil, err
		}
		chunksFit = chunksFit || len(sp.Shape) == len(o.Chunks)
		p, err := arrayPath(sp.Name, n)
		if err != nil {
			return nil, fail(sp.Name, format.ErrNotRepresentable, "%v", err)
		}
		if paths[p] {
			return nil, fail(sp.Name, format.ErrNotRepresentable, "two arrays at %q", p)
		}
		paths[p] = true
		m := &meta{version: w.version, path: p, name: "/" + p, sep: "/", defaultKeys: true,
			dt: dtype{typ: sp.Type, name: sp.TypeName, big: sp.BigEndian && sp.Type.Size() > 1}}
		if w.version == 2 {
			m.sep, m.defaultKeys = ".", false
		}
		if _, err := layout.Count(sp.Shape); err != nil {
			return nil, fail(sp.Name, ErrInvalid, "shape %v: %v", sp.Shape, err)
		}
		m.shape = slices.Clone(sp.Shape)
		if m.unit, m.grid, err = chunking(sp, o, w.version); err != nil {
			return nil, fail(sp.Name, ErrInvalid, "%v", err)
		}
		if !slices.Equal(m.unit, m.grid) {
			m.shard = &shardSpec{crc: true, perShard: make([]int64, len(m.grid)), n: 1}
			for i := range m.grid {
				m.shard.perShard[i] = m.grid[i] / m.unit[i]
				m.shard.n *= m.shard.perShard[i]
			}
		}
		m.perm = identity(len(m.shape))
		if sp.Order == layout.ColMajor && len(m.shape) >= 2 {
			m.perm = reversed(len(m.shape))
		}
		m.chain = withElementSize(chain, sp.Type.Size())
		if m.fill, err = fillOf(sp.FillValue, sp.Type, m.byteOrder()); err != nil {
			if !fromSource {
				return nil, fail(sp.Name, ErrInvalid, "%v", err)
			}
			m.fill = make([]byte, sp.Type.Size()) // a source's fill value this type cannot hold
		}
		m.noFill = fromSource && sp.FillValue == nil
		m.attrs = map[string]any{}
		for k, v := range sp.Attributes {
			m.attrs[k] = v
		}
		m.dims = dims.Name(m.path, m.shape, sp.DimensionNames)
		m.attrs["_ARRAY_DIMENSIONS"] = m.dims
		doc, attrs, merr := back.readBack(m)
		if merr != nil {
			return nil, fail(sp.Name, format.ErrNotRepresentable, "a store written with it could not be read back: %s", merr.msg)
		}
		if fromSource {
			n, files, ok := m.written()
			if ok {
				total, ok = layout.Add(total, n)
			}
			if ok {
				totalFiles, ok = layout.Add(totalFiles, files)
			}
			if !ok || total > maxWriteBytes || totalFiles > maxWriteFiles {
				return nil, fail(sp.Name, ErrUnsupported, "%s%s in chunks %v: the store would hold %s bytes in %s chunk files, past the %d bytes (16 TiB) or %d files that Write writes", m.dt.typ, layout.ShapeString(m.shape), m.grid, sizeText(total, ok), sizeText(totalFiles, ok), int64(maxWriteBytes), maxWriteFiles)
			}
		}
		m.attrs, m.dims = nil, nil // in doc and attrs
		back.key = withoutAttributes(doc, back.key[:0])
		if a := alike[string(back.key)]; a != nil {
			m = a
		} else if len(alike) < maxAlike {
			alike[string(back.key)] = m
		}
		w.arrays = append(w.arrays, entry{path: p, m: m})
		w.docs = append(w.docs, doc)
		w.attrs = append(w.attrs, attrs)
	}
	if !chunksFit {
		return nil, fail("", ErrInvalid, "chunks %v fit no array (of rank %d)", o.Chunks, len(o.Chunks))
	}
	// Each array's groups, checked against the arrays: linear in the
	// arrays (a table of many columns is many arrays).
	for q := range paths {
		for p := path.Dir(q); ; p = path.Dir(p) {
			if p == "." {
				p = ""
			}
			if paths[p] && p != q {
				return nil, fail("/"+p, format.ErrNotRepresentable, "an array cannot hold another array (%q)", "/"+q)
			}
			if p == "" {
				break
			}
		}
	}
	st, err := newStage(target, o.Perm)
	if err != nil {
		return nil, err
	}
	w.st = st
	return w, nil
}

// array returns the meta of array i, with its path and name.
func (w *writer) array(i int) *meta {
	m := *w.arrays[i].m
	m.path, m.name = w.arrays[i].path, "/"+w.arrays[i].path
	return &m
}

// maxWriteBytes and maxWriteFiles bound the store Write writes, edge
// chunks' padding included: past them (16 TiB, 2^26 chunk files) a
// conversion would run for hours or days, or exhaust the file system's
// inodes, so it is refused at once, naming the size.
const (
	maxWriteBytes = 1 << 44
	maxWriteFiles = 1 << 26
)

// written is the number of bytes and of files of the array's chunks (or
// shards) as Write writes them, every one full; ok is false on overflow.
func (m *meta) written() (bytes, files int64, ok bool) {
	files = 1
	for i := range m.shape {
		if m.shape[i] == 0 {
			return 0, 0, true
		}
		if files, ok = layout.Mul(files, ceilDiv(m.shape[i], m.grid[i])); !ok {
			return 0, 0, false
		}
	}
	per, err := layout.ByteSize(m.dt.typ, m.grid)
	if err != nil {
		return 0, 0, false
	}
	bytes, ok = layout.Mul(files, per)
	return bytes, files, ok
}

// sizeText is n, or "more than 2^63" where it overflowed (!ok).
func sizeText(n int64, ok bool) string {
	if !ok {
		return "more than 2^63"
	}
	return strconv.FormatInt(n, 10)
}

// readBack encodes the metadata document of m (.zarray or zarr.json; in
// version 2 also .zattrs) and parses it as a reader of the store will: a
// writer must not write what its own reader refuses. A document equal to
// one read back before (but for its attributes) is not parsed again.
func (l *loader) readBack(m *meta) (doc, attrs json.RawMessage, merr *metaError) {
	if m.version == 2 {
		za, zt := docV2(m)
		doc, err := json.Marshal(za)
		if err == nil {
			attrs, err = json.Marshal(zt)
		}
		if err != nil {
			return nil, nil, bad("%v", err)
		}
		_, merr := l.v2(doc)
		return doc, attrs, merr
	}
	doc, err := json.Marshal(docV3(m))
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	if _, _, ok := l.arrayV3(doc); ok {
		return doc, nil, nil
	}
	z, merr := parseNodeV3(doc)
	if merr == nil {
		_, _, merr = l.v3(doc, z)
	}
	return doc, nil, merr
}

// arrayPath is the store path of an array named name: "" for a root
// array ("/", only when it is the only one).
func arrayPath(name string, n int) (string, error) {
	if name == "/" && n == 1 {
		return "", nil
	}
	p := strings.TrimPrefix(name, "/")
	if p == "" {
		return "", fmt.Errorf("an array needs a name (only a store's single array may be the root, \"/\")")
	}
	for _, part := range strings.Split(p, "/") {
		switch {
		case part == "" || part == "." || part == "..":
			return "", fmt.Errorf("the name %q has an empty, \".\" or \"..\" part", name)
		case strings.ContainsAny(part, `\`+"\x00"):
			return "", fmt.Errorf("the name %q has a backslash or NUL", name)
		case strings.HasPrefix(part, "__") || strings.HasPrefix(part, ".z") || part == "zarr.json":
			return "", fmt.Errorf("the name %q has a part Zarr reserves (\"__…\", \".z…\", \"zarr.json\")", name)
		}
	}
	return p, nil
}
