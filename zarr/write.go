package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/parallel"
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
	recs := arr.Records()
	specs := make([]ArraySpec, len(recs))
	for i := range recs {
		r := &recs[i]
		if r.Kind != format.KindArray && r.Kind != format.KindColumn {
			return format.Unrepresentable(r, "Zarr stores hold arrays, not "+r.Kind.String()+" records")
		}
		if err := representable(r.Type); err != nil {
			return format.Unrepresentable(r, err.Error())
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
		specs[i] = sp
	}
	w, err := newWriter(path, specs, &opts, true)
	if err != nil {
		return err
	}
	defer w.st.abort()
	for i, m := range w.arrays {
		if err := w.writeData(m, arr, i); err != nil {
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
	w, err := newWriter(path, arrays, &opts, false)
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
	arrays  []*meta
	// docs are the arrays' metadata documents (.zarray, zarr.json),
	// encoded once: as compact JSON they cost a store of many arrays
	// little memory until the consolidated metadata is written.
	docs []json.RawMessage
	bufs sync.Pool // *worker: the chunk buffers, kept from slab to slab
}

// newWriter plans the arrays of a store: names, chunks, codecs, dimension
// names.
func newWriter(target string, specs []ArraySpec, o *Options, fromSource bool) (*writer, error) {
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
	if len(specs) == 0 {
		return nil, fail("", format.ErrNotRepresentable, "no arrays to write")
	}
	if o.Chunks != nil && !slices.ContainsFunc(specs, func(s ArraySpec) bool { return len(s.Shape) == len(o.Chunks) }) {
		return nil, fail("", ErrInvalid, "chunks %v fit no array (of rank %d)", o.Chunks, len(o.Chunks))
	}
	paths := map[string]bool{}
	dims := format.Dimensions{}
	var total, totalFiles int64 // what Write writes: chunk bytes, files
	for _, sp := range specs {
		p, err := arrayPath(sp.Name, len(specs))
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
		doc, merr := readBack(m)
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
		w.arrays = append(w.arrays, m)
		w.docs = append(w.docs, doc)
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

// readBack encodes the metadata document of m (.zarray or zarr.json) and
// parses it as a reader of the store will: a writer must not write what
// its own reader refuses.
func readBack(m *meta) (json.RawMessage, *metaError) {
	if m.version == 2 {
		za, zt := docV2(m)
		doc, err := json.Marshal(za)
		if err != nil {
			return nil, bad("%v", err)
		}
		_, merr := parseV2(doc, zt)
		return doc, merr
	}
	doc, err := json.Marshal(docV3(m))
	if err != nil {
		return nil, bad("%v", err)
	}
	z, merr := parseNodeV3(doc)
	if merr == nil {
		_, merr = parseV3(z)
	}
	return doc, merr
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

// chunking returns the chunk (unit) shape and the grid's chunk shape (the
// shard shape, or the chunk shape again) of an array.
func chunking(sp ArraySpec, o *Options, version int) (unit, grid []int64, err error) {
	k := len(sp.Shape)
	chunks, shards := sp.Chunks, sp.Shards
	if chunks == nil && len(o.Chunks) == k {
		chunks = o.Chunks
	}
	if shards == nil && len(o.Shards) == k && k > 0 {
		shards = o.Shards
	}
	if shards != nil && version != 3 {
		return nil, nil, fmt.Errorf("shards need Zarr version 3")
	}
	clampTo := func(c []int64, what string) ([]int64, error) {
		if len(c) != k {
			return nil, fmt.Errorf("%s %v for rank %d", what, c, k)
		}
		out := make([]int64, k)
		for i := range c {
			if c[i] <= 0 {
				return nil, fmt.Errorf("%s %v: dimension %d is not positive", what, c, i)
			}
			out[i] = min(c[i], max(sp.Shape[i], 1))
		}
		return out, nil
	}
	if shards != nil {
		if grid, err = clampTo(shards, "shards"); err != nil {
			return nil, nil, err
		}
	}
	if chunks != nil {
		if unit, err = clampTo(chunks, "chunks"); err != nil {
			return nil, nil, err
		}
	} else {
		unit = chooseChunks(sp.Shape, sp.Order, sp.Type.Size())
		if grid != nil { // inner chunks dividing the shards
			for i := range unit {
				for grid[i]%unit[i] != 0 {
					unit[i]--
				}
			}
		}
	}
	if grid == nil {
		return unit, slices.Clone(unit), nil
	}
	for i := range grid {
		if grid[i]%unit[i] != 0 {
			return nil, nil, fmt.Errorf("shards %v are not a multiple of the chunks %v", grid, unit)
		}
	}
	if _, err := layout.ByteSize(layout.C128, grid); err != nil {
		return nil, nil, fmt.Errorf("shards %v: a shard's size overflows", grid)
	}
	return unit, grid, nil
}

// chooseChunks picks chunks of about chunkTarget bytes (see
// layout.ChooseChunks).
func chooseChunks(shape []int64, order layout.Order, size int) []int64 {
	return layout.ChooseChunks(shape, order, size, chunkTarget)
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0, without overflowing.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// fillOf encodes a fill value given as a Go value or as JSON.
func fillOf(v any, t layout.Type, bo binary.ByteOrder) ([]byte, error) {
	var raw []byte
	switch x := v.(type) {
	case nil:
		return make([]byte, t.Size()), nil
	case json.RawMessage:
		raw = x
	case float64:
		raw = floatJSON(x)
	case float32:
		raw = floatJSON(float64(x))
	case complex128:
		raw = []byte("[" + string(floatJSON(real(x))) + "," + string(floatJSON(imag(x))) + "]")
	case complex64:
		raw = []byte("[" + string(floatJSON(float64(real(x)))) + "," + string(floatJSON(float64(imag(x)))) + "]")
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("fill value %v: %v", v, err)
		}
	}
	return parseFill(raw, t, bo)
}

func floatJSON(f float64) []byte {
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`)
	case math.IsInf(f, 1):
		return []byte(`"Infinity"`)
	case math.IsInf(f, -1):
		return []byte(`"-Infinity"`)
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64)
}

// parseCompress parses "none", "zlib", "gzip" or "zstd", with an optional
// ":LEVEL", or "blosc[:CNAME[:LEVEL]]".
func parseCompress(s string) ([]codec, error) {
	name, lv, hasLevel := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	if name == "blosc" {
		return parseBloscCompress(s, lv)
	}
	if name == "" || name == "none" {
		if hasLevel {
			return nil, fmt.Errorf("compress %q: none takes no level", s)
		}
		return nil, nil
	}
	c := codec{name: name, level: 1}
	lo, hi := -1, 9
	switch name {
	case "zlib", "gzip":
	case "zstd":
		lo, hi = 1, 22
	default:
		return nil, fmt.Errorf("compress %q: not one of none, zlib, gzip, zstd, blosc", s)
	}
	if hasLevel {
		l, err := strconv.Atoi(lv)
		if err != nil || l < lo || l > hi {
			return nil, fmt.Errorf("compress %q: the level of %s is %d to %d", s, name, lo, hi)
		}
		c.level = l
	}
	return []codec{c}, nil
}

// writeData writes the chunk files of array i: pulled from src in its
// storage order one row of chunks (of shards) at a time, each row cut
// into chunks that are encoded and written on every core.
func (w *writer) writeData(m *meta, src format.Source, i int) error {
	k := len(m.shape)
	size := int64(m.dt.typ.Size())
	n, _ := layout.Count(m.shape)
	if n == 0 {
		return nil
	}
	order := layout.RowMajor
	if !m.rowMajor() {
		order = layout.ColMajor
	}
	if k == 0 {
		buf := make([]byte, size)
		if err := src.ReadArray(i, buf, 0, order, m.byteOrder()); err != nil {
			return err
		}
		enc, err := encodeChain(m.chain, nil, buf)
		if err != nil {
			return err
		}
		return w.st.write(m.chunkKey(nil), enc)
	}
	// Storage space: the shape, grid and units with axes in storage
	// order, slowest first; there every unit is a C-order block.
	q, qg, qu := permute(m.shape, m.perm), permute(m.grid, m.perm), permute(m.unit, m.perm)
	if m.shard == nil && len(m.chain) == 0 && slices.Equal(qu[1:], q[1:]) {
		return w.writeRuns(m, src, i, order, q, qu)
	}
	return w.writeBoxes(m, src, i, order, q, qg, qu)
}

// writeBudget bounds the bytes of a source's array that the writer holds
// at once (the slab cut into chunks), and, apart, the chunks being encoded
// from it, whatever the array's shape. A single chunk (shard) larger than
// it is held whole, one at a time.
var writeBudget int64 = 32 << 20 // a variable so that tests can lower it

// writeBoxes writes the chunk files (shards) of array i a slab at a time:
// a box of the array in storage space, cut along grid lines, at most
// writeBudget bytes (or one chunk, where a chunk is larger), read from src
// run by run and cut into chunks that are encoded and written on every
// core. The boxes are whole along the fastest axes that fit: an array
// whose rows of chunks fit is read from its first element to its last.
func (w *writer) writeBoxes(m *meta, src format.Source, i int, order layout.Order, q, qg, qu []int64) error {
	k := len(q)
	size := int64(m.dt.typ.Size())
	ext := make([]int64, k) // a grid unit's extent along each axis, clipped to the array
	for j := range k {
		ext[j] = min(qg[j], q[j])
	}
	// The slab: one grid unit along axes [0, j), band units along j,
	// whole along the rest.
	j, band := k-1, int64(1)
	for a := range k {
		b := size
		for x := range k {
			switch {
			case x <= a:
				b *= ext[x]
			default:
				b *= q[x]
			}
		}
		if b <= writeBudget {
			j, band = a, max(1, writeBudget/b)
			break
		}
	}
	box := make([]int64, k) // the slab's extent, before clipping at the edge
	slabBytes := size
	for x := range k {
		switch {
		case x < j:
			box[x] = ext[x]
		case x == j:
			box[x] = min(band, ceilDiv(q[x], qg[x])) * qg[x]
		default:
			box[x] = q[x]
		}
		slabBytes *= min(box[x], q[x])
	}
	slab := grow(nil, slabBytes)
	ub := m.unitBytes()
	if m.shard != nil {
		ub, _ = layout.ByteSize(m.dt.typ, m.grid)
	}
	// Each worker holds a chunk (shard) and its encoding.
	workers := min(int64(runtime.GOMAXPROCS(0)), max(1, writeBudget/(2*ub)))
	qstr := layout.Strides(q, layout.RowMajor)
	org, cnt := make([]int64, k), make([]int64, k)
	for {
		for x := range k {
			cnt[x] = min(box[x], q[x]-org[x])
		}
		// Runs of the source: whole along the axes past j.
		run := cnt[j] * qstr[j]
		runs := int64(1)
		for x := range j {
			runs *= cnt[x]
		}
		r := make([]int64, j)
		for n := int64(0); n < runs; n++ {
			first := org[j] * qstr[j]
			for x := range j {
				first += (org[x] + r[x]) * qstr[x]
			}
			if err := src.ReadArray(i, slab[n*run*size:(n+1)*run*size], first, order, m.byteOrder()); err != nil {
				return err
			}
			for x := j - 1; x >= 0; x-- {
				if r[x]++; r[x] < cnt[x] {
					break
				}
				r[x] = 0
			}
		}
		if err := w.flushBox(m, q, qg, qu, slab[:runs*run*size], org, cnt, workers); err != nil {
			return err
		}
		// The next box, in C order over the axes [0, j].
		x := j
		for ; x >= 0; x-- {
			if org[x] += box[x]; org[x] < q[x] {
				break
			}
			org[x] = 0
		}
		if x < 0 {
			return nil
		}
	}
}

// writeRuns writes the chunk files of array i when each chunk is one run
// of the array in storage order (raw chunks that are whole along every
// axis but the slowest of that order): the source's bytes go straight
// from the stream to the chunk files, with no copy, and the last chunk is
// padded with the fill value.
func (w *writer) writeRuns(m *meta, src format.Source, i int, order layout.Order, q, qu []int64) error {
	ub := m.unitBytes()
	var f *os.File
	var at, c int64 // bytes in the chunk file, chunk index along the slowest axis
	key := func() string {
		sg := make([]int64, len(q))
		sg[0] = c
		lg := make([]int64, len(q))
		for j, p := range m.perm {
			lg[p] = sg[j]
		}
		return m.chunkKey(lg)
	}
	put := func(b []byte) error {
		if f == nil {
			var err error
			if f, err = w.st.create(key()); err != nil {
				return err
			}
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			f = nil
			return err
		}
		if at += int64(len(b)); at == ub {
			err := w.st.written(f, ub)
			f, at = nil, 0
			c++
			return err
		}
		return nil
	}
	err := format.Stream(src, i, order, m.byteOrder(), func(b []byte) error {
		for len(b) > 0 {
			n := min(int64(len(b)), ub-at)
			if err := put(b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	})
	if err == nil && f != nil { // the edge chunk: pad it
		pad := make([]byte, ub-at)
		for j := 0; j < len(pad); j += len(m.fill) {
			copy(pad[j:], m.fill)
		}
		return put(pad)
	}
	if f != nil {
		f.Close()
	}
	return err
}

func permute(x []int64, perm []int) []int64 {
	out := make([]int64, len(x))
	for j, p := range perm {
		out[j] = x[p]
	}
	return out
}

// flushBox writes the chunks (shards) whose elements the slab holds: the
// box of storage space at org of extent cnt, C order, cut along grid
// lines, on up to workers goroutines.
func (w *writer) flushBox(m *meta, q, qg, qu []int64, slab []byte, org, cnt []int64, workers int64) error {
	k := len(q)
	size := m.dt.typ.Size()
	G := make([]int64, k) // grid units of the box
	total := int64(1)
	for j := range k {
		G[j] = ceilDiv(cnt[j], qg[j])
		total *= G[j]
	}
	sstr := layout.Strides(cnt, layout.RowMajor)
	ustr := layout.Strides(qu, layout.RowMajor)
	// unit copies the unit of storage-space start us into buf, padded
	// with the fill value.
	unit := func(us []int64, buf []byte) {
		c := make([]int64, k)
		edge := false
		var soff int64
		for j := range k {
			c[j] = min(qu[j], q[j]-us[j])
			edge = edge || c[j] < qu[j]
			soff += (us[j] - org[j]) * sstr[j]
		}
		if edge {
			p := layout.NewStridedCopy(qu, ustr, ustr, size)
			p.Fill(buf, 0, m.fill)
		}
		p := layout.NewStridedCopy(c, sstr, ustr, size)
		p.Copy(buf, 0, slab, soff)
	}
	logical := func(sg []int64) []int64 {
		lg := make([]int64, k)
		for j, p := range m.perm {
			lg[p] = sg[j]
		}
		return lg
	}
	return withWorkers(total, workers, &w.bufs, func(jj int64, wk *worker) error {
		sg := make([]int64, k)
		for j := k - 1; j >= 0; j-- {
			sg[j] = org[j]/qg[j] + jj%G[j]
			jj /= G[j]
		}
		key := m.chunkKey(logical(sg))
		ub := m.unitBytes()
		wk.scratch = grow(wk.scratch, ub)
		us := make([]int64, k)
		if m.shard == nil {
			for j := range k {
				us[j] = sg[j] * qg[j]
			}
			unit(us, wk.scratch)
			if len(m.chain) == 0 {
				return w.st.write(key, wk.scratch)
			}
			enc, err := encodeChain(m.chain, wk.enc, wk.scratch)
			if err != nil {
				return err
			}
			wk.enc = enc
			return w.st.write(key, enc)
		}
		ps := permute(m.shard.perShard, m.perm)
		chunks := make([][]byte, m.shard.n)
		ip := make([]int64, k)
		for range m.shard.n {
			inside := true
			for j := range k {
				us[j] = sg[j]*qg[j] + ip[j]*qu[j]
				inside = inside && us[j] < q[j]
			}
			if inside {
				unit(us, wk.scratch)
				enc, err := encodeChain(m.chain, nil, wk.scratch)
				if err != nil {
					return err
				}
				lip := logical(ip)
				var lin int64
				for i := range k {
					lin = lin*m.shard.perShard[i] + lip[i]
				}
				chunks[lin] = enc
			}
			for j := k - 1; j >= 0; j-- {
				if ip[j]++; ip[j] < ps[j] {
					break
				}
				ip[j] = 0
			}
		}
		return w.st.write(key, encodeShard(m.shard, chunks, len(m.chain) == 0))
	})
}

// withWorkers calls fn for j in [0, total) on up to workers goroutines, each
// with its own buffers (from pool, if not nil), and returns the first
// error.
func withWorkers(total, workers int64, pool *sync.Pool, fn func(j int64, w *worker) error) error {
	get := func() *worker {
		if pool != nil {
			if w, ok := pool.Get().(*worker); ok {
				return w
			}
		}
		return &worker{}
	}
	put := func(w *worker) {
		if pool != nil {
			pool.Put(w)
		}
	}
	return parallel.Do(int(total), int(workers), get, put, func(w *worker, j int) error { return fn(int64(j), w) })
}

// writeMeta writes the metadata documents: each array's, then the groups',
// the root's last with the consolidated metadata.
func (w *writer) writeMeta() error {
	all := map[string]any{} // consolidated: key (v2) or path (v3) → document
	groups := map[string]bool{}
	for i, m := range w.arrays {
		for g := path.Dir(m.path); m.path != "" && g != "."; g = path.Dir(g) {
			groups[g] = true
		}
		doc := w.docs[i]
		if w.version == 2 {
			zt, err := json.Marshal(m.attrs)
			if err != nil {
				return err
			}
			if err := w.put(join(m.path, ".zarray"), doc); err != nil {
				return err
			}
			if err := w.put(join(m.path, ".zattrs"), json.RawMessage(zt)); err != nil {
				return err
			}
			all[join(m.path, ".zarray")], all[join(m.path, ".zattrs")] = doc, json.RawMessage(zt)
			continue
		}
		if err := w.put(join(m.path, "zarr.json"), doc); err != nil {
			return err
		}
		all[m.path] = doc
	}
	if len(w.arrays) == 1 && w.arrays[0].path == "" {
		return nil
	}
	for g := range groups {
		if w.version == 2 {
			doc := map[string]any{"zarr_format": 2}
			all[g+"/.zgroup"] = doc
			if err := w.put(g+"/.zgroup", doc); err != nil {
				return err
			}
			continue
		}
		doc := map[string]any{"zarr_format": 3, "node_type": "group", "attributes": map[string]any{}}
		all[g] = doc
		if err := w.put(g+"/zarr.json", doc); err != nil {
			return err
		}
	}
	if w.version == 2 {
		root := map[string]any{"zarr_format": 2}
		all[".zgroup"] = root
		if err := w.put(".zgroup", root); err != nil {
			return err
		}
		return w.put(".zmetadata", map[string]any{"metadata": all, "zarr_consolidated_format": 1})
	}
	return w.put("zarr.json", map[string]any{"zarr_format": 3, "node_type": "group", "attributes": map[string]any{},
		"consolidated_metadata": map[string]any{"kind": "inline", "must_understand": false, "metadata": all}})
}

func (w *writer) put(key string, doc any) error {
	b, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		return err
	}
	return w.st.write(key, append(b, '\n'))
}

// docV2 is an array's .zarray and .zattrs.
func docV2(m *meta) (map[string]any, map[string]any) {
	order := "C"
	if m.colMajor() {
		order = "F"
	}
	var comp any
	if len(m.chain) > 0 {
		comp = map[string]any{"id": m.chain[0].name, "level": m.chain[0].level}
		if o := m.chain[0].blosc; o != nil {
			comp = bloscConfigV2(o)
		}
	}
	za := map[string]any{
		"zarr_format": 2, "shape": m.shape, "chunks": m.unit, "dtype": dtypeV2(m.dt),
		"compressor": comp, "fill_value": format.FillJSON(m.fill, m.dt.typ, m.byteOrder()),
		"order": order, "filters": nil, "dimension_separator": m.sep,
	}
	if m.noFill {
		za["fill_value"] = nil
	}
	return za, m.attrs
}

// docV3 is an array's zarr.json.
func docV3(m *meta) map[string]any {
	endian := "little"
	if m.dt.big {
		endian = "big"
	}
	var codecs []any
	if m.colMajor() {
		codecs = append(codecs, map[string]any{"name": "transpose", "configuration": map[string]any{"order": m.perm}})
	}
	codecs = append(codecs, map[string]any{"name": "bytes", "configuration": map[string]any{"endian": endian}})
	for _, c := range m.chain {
		switch c.name {
		case "zstd":
			codecs = append(codecs, map[string]any{"name": "zstd", "configuration": map[string]any{"level": c.level, "checksum": false}})
		case "gzip":
			codecs = append(codecs, map[string]any{"name": "gzip", "configuration": map[string]any{"level": c.level}})
		case "zlib":
			codecs = append(codecs, map[string]any{"name": "numcodecs.zlib", "configuration": map[string]any{"level": c.level}})
		case "blosc":
			codecs = append(codecs, bloscConfigV3(c.blosc))
		}
	}
	if m.shard != nil {
		codecs = []any{map[string]any{"name": "sharding_indexed", "configuration": map[string]any{
			"chunk_shape": m.unit, "codecs": codecs, "index_location": "end",
			"index_codecs": []any{
				map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}},
				map[string]any{"name": "crc32c"},
			},
		}}}
	}
	keys := "v2"
	if m.defaultKeys {
		keys = "default"
	}
	doc := map[string]any{
		"zarr_format": 3, "node_type": "array", "shape": m.shape, "data_type": dtypeV3(m.dt),
		"chunk_grid":         map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": m.grid}},
		"chunk_key_encoding": map[string]any{"name": keys, "configuration": map[string]any{"separator": m.sep}},
		"fill_value":         format.FillJSON(m.fill, m.dt.typ, m.byteOrder()),
		"codecs":             codecs, "attributes": m.attrs,
	}
	if len(m.dims) == len(m.shape) {
		doc["dimension_names"] = m.dims
	}
	return doc
}
