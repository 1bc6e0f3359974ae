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

	arrays []*Array
	recs   []format.Record
	lock   *mmapfile.File // the root metadata document, locked while read-write

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
	if len(s.arrays) == 1 && s.arrays[0].m.path == "" {
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
func (s *Store) readMeta(key string) ([]byte, bool, error) {
	f, err := s.fsys.Open(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.keyErr(key, err)
	}
	defer f.Close()
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
	// Read into a buffer of the size the file says (checked above), not
	// one grown by doubling or padded for reads to come: a group's
	// metadata may be megabytes, in documents of a hundred bytes each. A
	// file that grew since is read on to EOF, up to the limit.
	b := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, s.keyErr(key, err)
		}
		if len(b) > maxMetadata {
			return nil, false, s.errf(key, maxMetadata, ErrInvalid, "a metadata document larger than %d bytes", maxMetadata)
		}
		if len(b) == cap(b) {
			b = slices.Grow(b, min(len(b), maxMetadata+1-len(b)))
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

// load reads the hierarchy and describes its arrays.
func (s *Store) load() error {
	if err := s.loadArrays(); err != nil {
		return err
	}
	s.recs = make([]format.Record, len(s.arrays))
	var d describer
	for i, a := range s.arrays {
		s.recs[i] = d.record(a.m)
	}
	return nil
}

// loadArrays reads the hierarchy's arrays.
func (s *Store) loadArrays() error {
	if doc, ok, err := s.readMeta("zarr.json"); err != nil {
		return err
	} else if ok {
		s.version = 3
		return s.loadV3(doc)
	}
	s.version = 2
	if doc, ok, err := s.readMeta(".zarray"); err != nil {
		return err
	} else if ok {
		attrs, err := s.readAttrs(".zattrs")
		if err != nil {
			return err
		}
		return s.addV2("", ".zarray", doc, attrs)
	}
	if _, ok, err := s.readMeta(".zgroup"); err != nil {
		return err
	} else if !ok {
		return s.errf("", -1, ErrInvalid, "no .zarray, .zgroup or zarr.json: not a Zarr store")
	}
	if doc, ok, err := s.readMeta(".zmetadata"); err != nil {
		return err
	} else if ok {
		return s.loadConsolidatedV2(doc)
	}
	// Each array is added as the walk finds it, its document read once.
	return s.walk("", func(p string) (bool, error) {
		key := join(p, ".zarray")
		if doc, ok, err := s.readMeta(key); err != nil || ok {
			if !ok {
				return false, err
			}
			attrs, err := s.readAttrs(join(p, ".zattrs"))
			if err != nil {
				return false, err
			}
			return false, s.addV2(p, key, doc, attrs)
		}
		_, ok, err := s.readMeta(join(p, ".zgroup"))
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

// readAttrs reads a .zattrs document, or nil if there is none.
func (s *Store) readAttrs(key string) (map[string]any, error) {
	doc, ok, err := s.readMeta(key)
	if err != nil || !ok {
		return nil, err
	}
	var attrs map[string]any
	if off, err := decodeJSON(doc, &attrs); err != nil {
		return nil, s.errf(key, off, invalid(err), "%v", err)
	}
	return attrs, nil
}

// addV2 adds the array at path p from its .zarray document.
func (s *Store) addV2(p, key string, doc []byte, attrs map[string]any) error {
	m, merr := parseV2(doc, attrs)
	if merr != nil {
		return s.errf(key, merr.off, merr.err, "%s", merr.msg)
	}
	return s.add(m, p, key)
}

func (s *Store) add(m *meta, p, key string) error {
	m.path, m.metaKey = p, key
	m.name = "/" + p
	s.arrays = append(s.arrays, &Array{s: s, m: m, i: len(s.arrays)})
	return nil
}

// loadConsolidatedV2 reads the arrays listed in .zmetadata.
func (s *Store) loadConsolidatedV2(doc []byte) error {
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
	for _, p := range paths {
		inGroup := true
		for q := path.Dir(p); q != "."; q = path.Dir(q) {
			_, ok := z.Metadata[q+"/.zgroup"]
			inGroup = inGroup && ok
		}
		if !inGroup {
			continue // zarr-python does not see arrays outside groups
		}
		var attrs map[string]any
		if a, ok := z.Metadata[p+"/.zattrs"]; ok {
			if _, err := decodeJSON(a, &attrs); err != nil {
				return s.errf(".zmetadata", -1, ErrInvalid, "%s/.zattrs: %v", p, err)
			}
		}
		m, merr := parseV2(z.Metadata[p+"/.zarray"], attrs)
		if merr != nil {
			return s.errf(".zmetadata", -1, merr.err, "%s/.zarray: %s", p, merr.msg)
		}
		if err := s.add(m, p, p+"/.zarray"); err != nil {
			return err
		}
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
func (s *Store) loadV3(doc []byte) error {
	z, merr := parseNodeV3(doc)
	if merr != nil {
		return s.errf("zarr.json", merr.off, merr.err, "%s", merr.msg)
	}
	if z.NodeType == "array" {
		return s.addV3("", "zarr.json", z)
	}
	if c := bytes.TrimSpace(z.Consolidated); len(c) > 0 && string(c) != "null" {
		var cm struct {
			Kind     string                     `json:"kind"`
			Metadata map[string]json.RawMessage `json:"metadata"`
		}
		if off, err := decodeJSON(c, &cm); err != nil || cm.Kind != "inline" {
			return s.errf("zarr.json", off, ErrInvalid, "consolidated_metadata is not {\"kind\": \"inline\", \"metadata\": {…}}")
		}
		var paths []string
		nodes := map[string]*zarrJSONDoc{}
		for k, v := range cm.Metadata {
			if err := s.checkKey("zarr.json", k); err != nil {
				return err
			}
			n, merr := parseNodeV3(v)
			if merr != nil {
				return s.errf("zarr.json", -1, merr.err, "consolidated_metadata %q: %s", k, merr.msg)
			}
			nodes[k] = n
			if n.NodeType == "array" {
				paths = append(paths, k)
			}
		}
		sortPaths(paths)
		for _, p := range paths {
			if err := s.addV3(p, p+"/zarr.json", nodes[p]); err != nil {
				return err
			}
		}
		return nil
	}
	return s.walk("", func(p string) (bool, error) {
		key := join(p, "zarr.json")
		doc, ok, err := s.readMeta(key)
		if err != nil || !ok {
			return false, err
		}
		n, merr := parseNodeV3(doc)
		if merr != nil {
			return false, s.errf(key, merr.off, merr.err, "%s", merr.msg)
		}
		if n.NodeType == "group" {
			return true, nil
		}
		return false, s.addV3(p, key, n)
	})
}

func (s *Store) addV3(p, key string, z *zarrJSONDoc) error {
	m, merr := parseV3(z)
	if merr != nil {
		return s.errf(key, merr.off, merr.err, "%s", merr.msg)
	}
	return s.add(m, p, key)
}

// describer describes arrays as format.Records. Arrays described alike
// (their chunks, codecs and fill value, without attributes or dimension
// names), as most of a large group's are, share one Extra and one Facts:
// a record's are never changed.
type describer struct {
	extras map[string]map[string]any
	facts  map[string]*format.Facts
}

// record describes an array as a format.Record.
func (d *describer) record(m *meta) format.Record {
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
	storage := storageOf(m)
	var key string
	if m.dims == nil && len(m.attrs) == 0 {
		key = strings.Join([]string{storage, layout.ShapeString(m.unit), layout.ShapeString(m.grid), string(m.compressor), string(m.codecs), string(m.fillJSON)}, "\x00")
		if r.Extra, r.Facts = d.extras[key], d.facts[key]; r.Extra != nil {
			return r
		}
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
			d.extras, d.facts = map[string]map[string]any{}, map[string]*format.Facts{}
		}
		d.extras[key], d.facts[key] = r.Extra, r.Facts
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
func (s *Store) Arrays() []*Array { return slices.Clone(s.arrays) }

// Array returns the array named name ("/temp"; the leading "/" may be
// left out).
func (s *Store) Array(name string) (*Array, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	i, err := format.Find(s, name)
	if err != nil {
		return nil, s.errf("", -1, format.NoRecord(name), "")
	}
	return s.arrays[i], nil
}

// Records describes the arrays as format records: Offset -1 (the payload
// is many files); Facts with the fill value, dimension names and
// attributes, which writers keep; and, for listings, Extra with "chunks",
// "shards" (sharded arrays), "compressor" (v2) or "codecs" (v3),
// "fill_value", "dimension_names" and "attributes".
func (s *Store) Records() []format.Record { return s.recs }

// Format returns "zarr".
func (s *Store) Format() string { return "zarr" }

// Name returns the store's path as it was opened.
func (s *Store) Name() string { return s.name }

// Version returns the store's Zarr version, "2" or "3".
func (s *Store) Version() string { return strconv.Itoa(s.version) }
