package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Options configure Open, OpenFile, NewReader, Create and Write. A nil
// *Options means the defaults.
type Options struct {
	// Options are the mapping's options (advice, populate, lock, wait)
	// for the chunk files this package maps, and the lock of a store
	// opened read-write.
	mmapfile.Options
	// Lenient makes copying reads accept bool bytes other than 0 and 1
	// (as true), as NumPy does. Views stay strict.
	Lenient bool
	// Salvage makes Open, OpenFile and NewReader read every chunk of
	// every array once (decompressing compressed ones): the chunks that
	// do not decode — cut short, failing to decompress or their checksum,
	// in a shard whose index is damaged — read as the fill value through
	// the copying calls, and Store.Damage lists each with its key and
	// byte offset. Views and Set stay strict: they fail on such a chunk.
	// Damaged metadata still fails the open: without it no chunk of the
	// array can be found.
	Salvage bool

	// Version is the Zarr version Write and Create produce: 3 (the
	// default, also for 0) or 2.
	Version int
	// Chunks is the chunk shape of the arrays written (of the arrays of
	// its rank); nil chooses chunks of about 8 MiB from each array's
	// shape. Dimensions larger than the array's are cut to it.
	Chunks []int64
	// Shards, for version 3, gathers chunks into shard files of this
	// shape (a multiple of the chunk shape), with the sharding_indexed
	// codec; nil writes one file per chunk.
	Shards []int64
	// Compress is "none" (the default: chunks that map as typed slices),
	// "zlib", "gzip" or "zstd", optionally with a level ("zstd:3").
	Compress string
}

// maxMetadata bounds the size of a metadata document read into memory.
const maxMetadata = 64 << 20

// Store is an open Zarr store: a hierarchy of groups and arrays in a
// directory (or an fs.FS). Its arrays are its records, in the order
// zarr-python visits them. A Store is safe for concurrent use.
type Store struct {
	name     string
	dir      string   // the directory, "" for NewReader
	root     *os.Root // confines every access to the store; nil for NewReader
	fsys     fs.FS
	version  int
	writable bool
	opts     Options

	arrays []entry
	// recs are the records, listed on the first call of Records;
	// describe, guarded by descMu, shares what records described alike
	// have in common.
	recsOnce sync.Once
	recs     []format.Record
	descMu   sync.Mutex
	describe describer

	lock *mmapfile.File // the root metadata document, locked while read-write

	wmu    sync.Mutex // serialises Set and chunk creation
	swaps  keyLocks   // keep chunk files in place while they are read
	mu     sync.Mutex
	maps   map[string]*mapping // chunk and shard files mapped for views and edits
	shards map[string]*shardIndex
	// newDirs are the directories that chunk files were created in (for
	// views) since the last Sync: synced by Sync and Close.
	newDirs map[string]bool
	// fresh is the chunk file last created for a view, whose writeback
	// starts when the next is created.
	fresh  []*mapping
	closed bool
	dirMu  sync.Mutex
	dirs   map[string]*os.Root // directories of chunk files, kept open by openInside
	states sync.Pool           // *worker
	cache  unitCache
	pays   format.Payloads // payload readers of arrays stored as one chunk

	// Options.Salvage: the units that do not decode, and their errors.
	damaged map[unitRef]bool
	damage  []error
}

// Open opens the store at path read-only.
func Open(path string, o *Options) (*Store, error) { return OpenFile(path, mmapfile.ReadOnly, o) }

// OpenFile opens the store at path read-only or read-write. A read-write
// store is locked against other writers (an advisory lock on its root
// metadata document) and can be changed in place with Set and writable
// views.
func OpenFile(path string, mode mmapfile.Mode, o *Options) (*Store, error) {
	s := &Store{name: path, dir: path, writable: mode == mmapfile.ReadWrite}
	if o != nil {
		s.opts = *o
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, s.errf("", -1, mmapfile.ErrNotRegular, "%s, not a directory: a Zarr store is a directory", fi.Mode().Type())
	}
	if !fi.IsDir() {
		return nil, s.errf("", -1, ErrInvalid, "not a directory: a Zarr store is a directory")
	}
	if s.root, err = os.OpenRoot(path); err != nil {
		return nil, err
	}
	s.fsys = s.root.FS()
	if err := s.load(); err != nil {
		s.root.Close()
		return nil, err
	}
	lock := s.opts.Lock
	if lock == mmapfile.LockDefault && s.writable {
		lock = mmapfile.LockExclusive
	}
	if lock == mmapfile.LockShared || lock == mmapfile.LockExclusive {
		beforeLock(path)
		// The document locked is the one loaded, opened through the
		// directory opened: the path may lead to another store by now.
		key := s.rootKey()
		doc, err := s.root.Open(key)
		if err != nil {
			s.root.Close()
			return nil, err
		}
		s.lock, err = mmapfile.OpenFile(filepath.Join(path, key), mmapfile.ReadOnly, &mmapfile.Options{File: doc, Lock: lock, Wait: s.opts.Wait})
		if err != nil {
			doc.Close()
			s.root.Close()
			return nil, err
		}
	}
	if s.opts.Salvage {
		s.salvage()
	}
	return s, nil
}

// beforeLock is called by OpenFile between loading the store at path and
// locking it; a variable so that tests can replace the store then.
var beforeLock = func(path string) {}

// NewReader opens a store held in any file system — an in-memory one, an
// archive, a remote store behind fs.FS — read-only. Its chunks are
// fetched, never mapped: views fail and reads copy.
func NewReader(fsys fs.FS, o *Options) (*Store, error) {
	s := &Store{fsys: fsys}
	if o != nil {
		s.opts = *o
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	if s.opts.Salvage {
		s.salvage()
	}
	return s, nil
}

// rootKey is the key of the root metadata document.
func (s *Store) rootKey() string {
	if s.version == 3 {
		return "zarr.json"
	}
	if len(s.arrays) == 1 && s.arrays[0].path == "" {
		return ".zarray"
	}
	return ".zgroup"
}

// errf builds a FormatError about the file key of the store.
func (s *Store) errf(key string, off int64, err error, format string, a ...any) error {
	e := storeErr(s.name, err, fmt.Sprintf(format, a...))
	e.Key, e.Offset = key, off
	return e
}

// readMeta reads a metadata document; ok is false if it does not exist.
func (s *Store) readMeta(key string) ([]byte, bool, error) { return s.readMetaInto(key, nil) }

// readMetaInto reads a metadata document into buf (its capacity) where
// it fits, so that a walk over many documents reuses one buffer; ok is
// false if it does not exist. A document that does not fit is read into
// a buffer of the size the file says (checked against the limit first),
// not one grown by doubling.
func (s *Store) readMetaInto(key string, buf []byte) ([]byte, bool, error) {
	f, err := s.fsys.Open(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.keyErr(key, err)
	}
	defer f.Close()
	b := buf[:0]
	sized := false // b has the size the file says
	for {
		if len(b) == cap(b) {
			if !sized {
				// Most documents are a few hundred bytes: their size is
				// asked for only when they outgrow buf.
				fi, err := f.Stat()
				if err != nil {
					return nil, false, s.keyErr(key, err)
				}
				if fi.IsDir() {
					return nil, false, nil
				}
				if fi.Size() > maxMetadata {
					return nil, false, s.errf(key, maxMetadata, ErrInvalid, "a metadata document of %d bytes is larger than %d", fi.Size(), maxMetadata)
				}
				sized = true
				b = append(make([]byte, 0, max(fi.Size(), int64(len(b)))+1), b...)
			} else {
				// The file grew since: read on to EOF, up to the limit.
				b = slices.Grow(b, min(len(b), maxMetadata+1-len(b)))
			}
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			if fi, serr := f.Stat(); serr == nil && fi.IsDir() {
				return nil, false, nil
			}
			return nil, false, s.keyErr(key, err)
		}
		if len(b) > maxMetadata {
			return nil, false, s.errf(key, maxMetadata, ErrInvalid, "a metadata document larger than %d bytes", maxMetadata)
		}
	}
	return b, true, nil
}

// keyErr names the key in an error of the file system (a symlink out of
// the store, a permission).
func (s *Store) keyErr(key string, err error) error {
	msg := "cannot be read"
	if strings.Contains(err.Error(), "escapes") {
		msg = "leaves the store (a symlink or path outside it)"
		err = fmt.Errorf("%v: %w", err, ErrInvalid)
	}
	return s.errf(key, -1, err, "%s", msg)
}

// checkKey refuses a key that is not a plain relative path inside the
// store (absolute, "..", empty parts).
func (s *Store) checkKey(where, key string) error {
	if key == "" || !fs.ValidPath(key) || strings.Contains(key, `\`) {
		return s.errf(where, -1, ErrInvalid, "key %q is not a path inside the store", key)
	}
	return nil
}

// load reads the hierarchy's arrays; their records are described on
// demand.
func (s *Store) load() error {
	var l loader
	if doc, ok, err := s.readMeta("zarr.json"); err != nil {
		return err
	} else if ok {
		s.version = 3
		return s.loadV3(&l, doc)
	}
	s.version = 2
	if doc, ok, err := s.readMeta(".zarray"); err != nil {
		return err
	} else if ok {
		attrs, err := s.readAttrs(&l, ".zattrs")
		if err != nil {
			return err
		}
		return s.addV2(&l, "", ".zarray", doc, attrs)
	}
	if _, ok, err := s.readMeta(".zgroup"); err != nil {
		return err
	} else if !ok {
		return s.errf("", -1, ErrInvalid, "no .zarray, .zgroup or zarr.json: not a Zarr store")
	}
	if doc, ok, err := s.readMeta(".zmetadata"); err != nil {
		return err
	} else if ok {
		return s.loadConsolidatedV2(&l, doc)
	}
	// Each array is added as the walk finds it, its document read once.
	return s.walk("", func(p string) (bool, error) {
		key := join(p, ".zarray")
		if doc, ok, err := s.readMetaInto(key, l.doc[:]); err != nil || ok {
			if !ok {
				return false, err
			}
			attrs, err := s.readAttrs(&l, join(p, ".zattrs"))
			if err != nil {
				return false, err
			}
			return false, s.addV2(&l, p, key, doc, attrs)
		}
		_, ok, err := s.readMetaInto(join(p, ".zgroup"), l.doc[:])
		return ok, err
	})
}

// walk visits the sub-directories of the group at prefix, depth first in
// name order (as zarr-python visits a hierarchy): visit says whether a
// directory is a group to descend into.
func (s *Store) walk(prefix string, visit func(p string) (bool, error)) error {
	dir := prefix
	if dir == "" {
		dir = "."
	}
	entries, err := fs.ReadDir(s.fsys, dir)
	if err != nil {
		return s.keyErr(dir, err)
	}
	// Most of a group's entries are arrays: room for them at once, rather
	// than a list grown (and copied) many times.
	s.arrays = slices.Grow(s.arrays, len(entries))
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "__") {
			continue
		}
		p := join(prefix, name)
		if !e.IsDir() {
			if e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			fi, err := fs.Stat(s.fsys, p)
			if err != nil {
				return s.keyErr(p, err)
			}
			if !fi.IsDir() {
				continue
			}
		}
		group, err := visit(p)
		if err != nil {
			return err
		}
		if group {
			if err := s.walk(p, visit); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "/" + name
}

// readAttrs reads a .zattrs document: its compact JSON, or nil if there
// is none.
func (s *Store) readAttrs(l *loader, key string) ([]byte, error) {
	doc, ok, err := s.readMetaInto(key, l.attrs[:])
	if err != nil || !ok {
		return nil, err
	}
	var attrs map[string]any
	if off, err := decodeJSON(doc, &attrs); err != nil {
		return nil, s.errf(key, off, invalid(err), "%v", err)
	}
	return l.compact(doc, attrs == nil), nil
}

// addV2 adds the array at path p from its .zarray document and the
// compact JSON of its attributes.
func (s *Store) addV2(l *loader, p, key string, doc, attrs []byte) error {
	m, merr := l.v2(doc)
	if merr != nil {
		return s.errf(key, merr.off, merr.err, "%s", merr.msg)
	}
	s.add(p, m, attrs)
	return nil
}

func (s *Store) add(p string, m *meta, attrs []byte) {
	s.arrays = append(s.arrays, entry{path: p, m: m, attrs: attrs})
}

// array returns array i of the store, described afresh from its entry;
// withAttrs decodes its attributes (and the dimension names they hold)
// too, which reads and writes of its elements do without.
func (s *Store) array(i int, withAttrs bool) *Array {
	e := &s.arrays[i]
	m := *e.m
	m.path, m.name = e.path, "/"+e.path
	m.metaKey = join(e.path, ".zarray")
	if s.version == 3 {
		m.metaKey = join(e.path, "zarr.json")
	}
	if withAttrs {
		m.attrs = decodeAttrs(e.attrs)
		if m.dims == nil {
			m.dims = attrDims(m.attrs, len(m.shape))
		}
	}
	return &Array{s: s, m: &m, i: i}
}

// loadConsolidatedV2 reads the arrays listed in .zmetadata.
func (s *Store) loadConsolidatedV2(l *loader, doc []byte) error {
	var z struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
		Format   json.RawMessage            `json:"zarr_consolidated_format"`
	}
	if off, err := decodeJSON(doc, &z); err != nil {
		return s.errf(".zmetadata", off, invalid(err), "%v", err)
	}
	if string(bytes.TrimSpace(z.Format)) != "1" {
		return s.errf(".zmetadata", -1, ErrInvalid, "zarr_consolidated_format is %s, not 1", clip(z.Format))
	}
	var paths []string
	for k := range z.Metadata {
		if err := s.checkKey(".zmetadata", k); err != nil {
			return err
		}
		if p, ok := strings.CutSuffix(k, ".zarray"); ok && (p == "" || strings.HasSuffix(p, "/")) {
			p = strings.TrimSuffix(p, "/")
			if p == "" {
				return s.errf(".zmetadata", -1, ErrInvalid, "lists a root array in a group")
			}
			paths = append(paths, p)
		}
	}
	sortPaths(paths)
	s.arrays = slices.Grow(s.arrays, len(paths))
	for _, p := range paths {
		inGroup := true
		for q := path.Dir(p); q != "."; q = path.Dir(q) {
			_, ok := z.Metadata[q+"/.zgroup"]
			inGroup = inGroup && ok
		}
		if !inGroup {
			continue // zarr-python does not see arrays outside groups
		}
		var attrs []byte
		if a, ok := z.Metadata[p+"/.zattrs"]; ok {
			var decoded map[string]any
			if _, err := decodeJSON(a, &decoded); err != nil {
				return s.errf(".zmetadata", -1, ErrInvalid, "%s/.zattrs: %v", p, err)
			}
			attrs = l.compact(a, decoded == nil)
		}
		m, merr := l.v2(z.Metadata[p+"/.zarray"])
		if merr != nil {
			return s.errf(".zmetadata", -1, merr.err, "%s/.zarray: %s", p, merr.msg)
		}
		s.add(p, m, attrs)
	}
	return nil
}

// sortPaths sorts array paths in the order of a depth-first visit with
// each group's members in name order.
func sortPaths(paths []string) {
	slices.SortFunc(paths, func(a, b string) int {
		return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
	})
}

// loadV3 reads a version 3 hierarchy from its root zarr.json.
func (s *Store) loadV3(l *loader, doc []byte) error {
	z, merr := parseNodeV3(doc)
	if merr != nil {
		return s.errf("zarr.json", merr.off, merr.err, "%s", merr.msg)
	}
	if z.NodeType == "array" {
		return s.addV3(l, "", "zarr.json", doc, z)
	}
	if c := bytes.TrimSpace(z.Consolidated); len(c) > 0 && string(c) != "null" {
		var cm struct {
			Kind     string                     `json:"kind"`
			Metadata map[string]json.RawMessage `json:"metadata"`
		}
		if off, err := decodeJSON(c, &cm); err != nil || cm.Kind != "inline" {
			return s.errf("zarr.json", off, ErrInvalid, "consolidated_metadata is not {\"kind\": \"inline\", \"metadata\": {…}}")
		}
		type node struct {
			m     *meta
			attrs []byte
		}
		var paths []string
		arrays := map[string]node{}
		for k, v := range cm.Metadata {
			if err := s.checkKey("zarr.json", k); err != nil {
				return err
			}
			m, attrs, ok := l.arrayV3(v)
			if !ok {
				n, merr := parseNodeV3(v)
				if merr != nil {
					return s.errf("zarr.json", -1, merr.err, "consolidated_metadata %q: %s", k, merr.msg)
				}
				if n.NodeType == "array" {
					if m, attrs, merr = l.v3(v, n); merr != nil {
						return s.errf(k+"/zarr.json", merr.off, merr.err, "%s", merr.msg)
					}
				}
			}
			if m != nil {
				arrays[k] = node{m, attrs}
				paths = append(paths, k)
			}
		}
		sortPaths(paths)
		s.arrays = slices.Grow(s.arrays, len(paths))
		for _, p := range paths {
			s.add(p, arrays[p].m, arrays[p].attrs)
		}
		return nil
	}
	return s.walk("", func(p string) (bool, error) {
		key := join(p, "zarr.json")
		doc, ok, err := s.readMetaInto(key, l.doc[:])
		if err != nil || !ok {
			return false, err
		}
		if m, attrs, ok := l.arrayV3(doc); ok {
			s.add(p, m, attrs)
			return false, nil
		}
		n, merr := parseNodeV3(doc)
		if merr != nil {
			return false, s.errf(key, merr.off, merr.err, "%s", merr.msg)
		}
		if n.NodeType == "group" {
			return true, nil
		}
		return false, s.addV3(l, p, key, doc, n)
	})
}

// addV3 adds the array at path p from its zarr.json document doc,
// decoded as z.
func (s *Store) addV3(l *loader, p, key string, doc []byte, z *zarrJSONDoc) error {
	m, attrs, merr := l.v3(doc, z)
	if merr != nil {
		return s.errf(key, merr.off, merr.err, "%s", merr.msg)
	}
	s.add(p, m, attrs)
	return nil
}

// describer describes arrays as format.Records. Arrays described alike
// (their chunks, codecs and fill value, without attributes or dimension
// names), as most of a large group's are, share one Extra and one Facts:
// a record's are never changed.
type describer struct {
	extras map[string]map[string]any
	facts  map[string]*format.Facts
	// keys are the keys of extras and facts of the entries' shared metas.
	keys map[*meta]string
}

// record describes an array as a format.Record; alike is the meta it
// shares with the arrays described alike.
func (d *describer) record(m, alike *meta) format.Record {
	r := format.Record{
		Array: layout.Array{Name: m.name, Type: m.dt.typ, Shape: m.shape, BigEndian: m.dt.big, Offset: -1},
		Kind:  format.KindArray, TypeName: m.dt.name,
	}
	if m.colMajor() {
		r.Order = layout.ColMajor
	}
	// An array of a type this package cannot read stays an array: its
	// reads fail naming the type, rather than it passing for a value
	// that holds nothing.
	if m.dt.typ.Valid() {
		r.Size, _ = layout.ByteSize(m.dt.typ, m.shape)
	} else if n, err := layout.Count(m.shape); err == nil {
		r.Size, _ = layout.Mul(n, m.dt.itemsize)
	}
	var storage, key string
	if m.dims == nil && len(m.attrs) == 0 {
		if key = d.keys[alike]; key == "" {
			storage = storageOf(m)
			key = strings.Join([]string{storage, layout.ShapeString(m.unit), layout.ShapeString(m.grid), string(m.compressor), string(m.codecs), string(m.fillJSON)}, "\x00")
		}
		if r.Extra, r.Facts = d.extras[key], d.facts[key]; r.Extra != nil {
			return r
		}
	}
	if storage == "" {
		storage = storageOf(m)
	}
	r.Extra = map[string]any{"chunks": m.unit}
	if m.shard != nil {
		r.Extra["shards"] = m.grid
	}
	if m.version == 2 {
		c := m.compressor
		if len(bytes.TrimSpace(c)) == 0 {
			c = json.RawMessage("null")
		}
		r.Extra["compressor"] = c
	} else {
		r.Extra["codecs"] = m.codecs
	}
	facts := &format.Facts{DimensionNames: m.dims}
	if len(bytes.TrimSpace(m.fillJSON)) > 0 {
		r.Extra["fill_value"] = m.fillJSON
		facts.FillValue = m.fillJSON
	}
	if m.dims != nil {
		r.Extra["dimension_names"] = m.dims
	}
	if len(m.attrs) > 0 {
		r.Extra["attributes"] = m.attrs
		facts.Attributes = m.attrs
	}
	r.Facts = facts
	r.Extra["storage"] = storage
	if key != "" {
		if d.extras == nil {
			d.extras, d.facts, d.keys = map[string]map[string]any{}, map[string]*format.Facts{}, map[*meta]string{}
		}
		d.extras[key], d.facts[key] = r.Extra, r.Facts
		if alike != nil && len(d.keys) < maxAlike {
			d.keys[alike] = key
		}
	}
	return r
}

// storageOf describes in a few words how an array's chunks are stored:
// their shape, the shards that hold them, the axis order within a chunk
// where it is neither C nor F, and the codecs after "bytes".
func storageOf(m *meta) string {
	var b strings.Builder
	if len(m.unit) == 0 {
		b.WriteString("one chunk")
	} else {
		b.WriteString("chunks " + layout.ShapeString(m.unit))
	}
	if m.shard != nil {
		b.WriteString(" in shards " + layout.ShapeString(m.grid))
	}
	if !m.rowMajor() && !m.colMajor() {
		fmt.Fprintf(&b, ", transposed %v", m.perm)
	}
	if m.dt.big && m.dt.typ.Size() > 1 {
		b.WriteString(", big-endian")
	}
	if len(m.chain) == 0 {
		b.WriteString(", raw")
	}
	for _, c := range m.chain {
		b.WriteString(", " + c.name)
		if o := c.blosc; o != nil {
			fmt.Fprintf(&b, "(%s:%d, %s)", o.Codec, o.Level, o.Shuffle)
		} else if c.level != 0 {
			fmt.Fprintf(&b, "(%d)", c.level)
		}
	}
	return b.String()
}

// Arrays lists the store's arrays, in the order zarr-python visits them.
func (s *Store) Arrays() []*Array {
	out := make([]*Array, len(s.arrays))
	for i := range out {
		out[i] = s.array(i, true)
	}
	return out
}

// Array returns the array named name ("/temp"; the leading "/" may be
// left out).
func (s *Store) Array(name string) (*Array, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	// An array's name is "/" and its path: a name with or without the
	// "/" is found by its path.
	p := strings.TrimPrefix(name, "/")
	for i := range s.arrays {
		if s.arrays[i].path == p {
			return s.array(i, true), nil
		}
	}
	return nil, s.errf("", -1, format.NoRecord(name), "")
}

// Records describes the arrays as format records: Offset -1 (the payload
// is many files); Facts with the fill value, dimension names and
// attributes, which writers keep; and, for listings, Extra with "chunks",
// "shards" (sharded arrays), "compressor" (v2) or "codecs" (v3),
// "fill_value", "dimension_names" and "attributes". The list is made on
// the first call; Record describes one array without it.
func (s *Store) Records() []format.Record {
	s.recsOnce.Do(func() {
		recs := make([]format.Record, len(s.arrays))
		for i := range recs {
			recs[i] = s.Record(i)
		}
		s.recs = recs
	})
	return s.recs
}

// NumRecords is the number of arrays (format.RecordLister).
func (s *Store) NumRecords() int { return len(s.arrays) }

// Record describes array i as Records does, built afresh
// (format.RecordLister): a listing of a group of many arrays need not
// hold a record for each.
func (s *Store) Record(i int) format.Record {
	m := s.array(i, true).m
	s.descMu.Lock()
	defer s.descMu.Unlock()
	return s.describe.record(m, s.arrays[i].m)
}

// Format returns "zarr".
func (s *Store) Format() string { return "zarr" }

// Name returns the store's path as it was opened.
func (s *Store) Name() string { return s.name }

// Version returns the store's Zarr version, "2" or "3".
func (s *Store) Version() string { return strconv.Itoa(s.version) }
