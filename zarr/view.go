package zarr

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// mapping is a chunk or shard file mapped whole, for views and edits.
// Its flags are guarded by Store.mu.
type mapping struct {
	f *mmapfile.File
	r *mmapfile.Region
	// viewed: handed out as a writable view, which its caller may write at
	// any time: synced at every Sync.
	viewed bool
	// dirty: written by Set since the last Sync.
	dirty bool
}

// mapped returns the store's mapping of the file key, made on first use:
// read-write in a store opened read-write.
func (s *Store) mapped(key string) (*mapping, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.errf(key, -1, mmapfile.ErrClosed, "store is closed")
	}
	if mp, ok := s.maps[key]; ok {
		return mp, nil
	}
	f, err := s.mapFile(key, s.writable)
	if err != nil {
		return nil, err
	}
	r, err := f.MapAll()
	if err != nil {
		f.Close()
		return nil, s.errf(key, -1, err, "cannot be mapped")
	}
	if s.maps == nil {
		s.maps = map[string]*mapping{}
	}
	mp := &mapping{f: f, r: r}
	s.maps[key] = mp
	return mp, nil
}

// View returns the whole array as a slice that aliases its chunk file's
// mapping, listed in the array's Order: no copy is made. Only an array
// stored as one chunk of exactly its shape is one run of bytes; for any
// other View fails, naming ViewChunk (a chunk is what Zarr maps) and Read
// (which copies). Where that chunk cannot be aliased it fails as
// ViewChunk does.
func View[T layout.Elem](a *Array) ([]T, error) {
	if err := checkType[T](a); err != nil {
		return nil, err
	}
	return format.View[T](a.s, a.i)
}

// ViewChunk returns chunk idx of the array as a slice that aliases the
// chunk file's mapping: no copy is made. The slice holds the whole chunk
// (at the array's edges too, where the part past the edge is padding),
// listed in the array's Order. In a store opened read-write, writing the
// slice writes the file (durable after Sync or Close), and a missing
// chunk is first created, filled with the fill value. A raw chunk of a
// fill value of zero bytes is created without writing it — a new file of
// reserved blocks, in place at once — and made durable, file and name,
// by the next Sync or Close, with what the slice wrote.
//
// ViewChunk fails — naming the copying call to use instead — for a chunk
// that is compressed (ErrUnsupported), stored in another byte order
// (mmapfile.ErrByteOrder) or another permutation of its axes
// (ErrUnsupported), misaligned in its shard (mmapfile.ErrMisaligned),
// damaged (see Options.Salvage), or missing in a read-only store
// (ErrMissingChunk): Read and ReadRegion copy any of them.
//
// The slice is valid until the store is closed; using it afterwards
// crashes the process, and so does reading it after another process
// truncated the file (SIGBUS), as for any mapping.
func ViewChunk[T layout.Elem](a *Array, idx ...int64) ([]T, error) {
	v, err := viewChunk[T](a, idx)
	return v, a.s.orClosed(err)
}

func viewChunk[T layout.Elem](a *Array, idx []int64) ([]T, error) {
	s, m := a.s, a.m
	if err := checkType[T](a); err != nil {
		return nil, err
	}
	if err := a.checkChunk(idx); err != nil {
		return nil, err
	}
	mp, loc, err := a.viewable(idx, true)
	if err != nil {
		return nil, err
	}
	n := m.unitBytes() / int64(m.dt.typ.Size())
	v, err := mmapfile.View[T](mp.r, loc.off, int(n), m.byteOrder())
	if err != nil {
		var me *mmapfile.Error
		off := loc.off
		if errors.As(err, &me) {
			off = me.Offset
		}
		return nil, s.errf(loc.key, off, err, "array %q: chunk %v cannot be viewed: use Read or ReadRegion", m.name, idx)
	}
	return v, nil
}

// viewing marks a mapping handed out in a writable view.
func (s *Store) viewing(mp *mapping) {
	if s.writable {
		s.mu.Lock()
		mp.viewed = true
		s.mu.Unlock()
	}
}

// viewable returns the mapping of chunk idx (checked) and where the chunk
// is in it, after checking that its bytes can be viewed as the array's
// elements: stored raw, in row- or column-major order, in the host's byte
// order. A missing chunk is created in a store open read-write. view
// marks the mapping as handed out in a writable view, before a rewrite of
// its file can start (which then fails, naming the view).
func (a *Array) viewable(idx []int64, view bool) (*mapping, where, error) {
	s, m := a.s, a.m
	key, _ := m.locate(idx)
	if len(m.chain) > 0 {
		return nil, where{}, s.errf(key, -1, ErrUnsupported, "array %q: chunk %v is compressed (%v): use Read or ReadRegion, which decompress", m.name, idx, a.Codecs())
	}
	if !m.rowMajor() && !m.colMajor() {
		return nil, where{}, s.errf(key, -1, ErrUnsupported, "array %q: chunks are stored transposed by %v: use Read or ReadRegion", m.name, m.perm)
	}
	if m.dt.typ.Size() > 1 && !layout.IsHostOrder(m.byteOrder()) {
		return nil, where{}, s.errf(key, -1, mmapfile.ErrByteOrder, "array %q: chunks are %v: use Read or ReadRegion, which swap", m.name, m.byteOrder())
	}
	// Held from finding the chunk to marking its mapping viewed: the
	// file is not replaced in between.
	l := s.swaps.of(key)
	l.RLock()
	loc, err := a.locateView(idx)
	if err == nil && loc.missing {
		l.RUnlock()
		if err := a.createForView(idx, loc.key); err != nil {
			return nil, where{}, err
		}
		l.RLock()
		if loc, err = a.locateView(idx); err == nil && loc.missing {
			err = s.errf(loc.key, -1, ErrMissingChunk, "array %q: chunk %v is gone as soon as created", m.name, idx)
		}
	}
	defer l.RUnlock()
	if err != nil {
		return nil, where{}, err
	}
	if ub := m.unitBytes(); loc.n != ub {
		return nil, where{}, a.sizeErr(loc, ub)
	}
	mp, err := s.mapped(loc.key)
	if err != nil {
		return nil, where{}, err
	}
	if view {
		s.viewing(mp)
	}
	return mp, loc, nil
}

// createForView creates the missing chunk idx, stored in the file key,
// for a view: in a store open read-write, if it is still missing.
func (a *Array) createForView(idx []int64, key string) error {
	s, m := a.s, a.m
	if err := s.inPlace(); err != nil {
		return err
	}
	if !s.writable {
		return s.errf(key, -1, ErrMissingChunk, "array %q: chunk %v: use Read or ReadRegion (which fill it in), or open the store read-write to create it", m.name, idx)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	loc, err := a.locateUnit(idx)
	if err == nil && loc.missing {
		err = a.createUnit(idx)
	}
	return err
}

// Payload returns the reader of array i's elements (format.Payloader):
// only an array stored as one raw chunk of exactly its shape is one run
// of bytes, its chunk file's mapping. Other arrays, and chunks that
// ViewChunk cannot alias, give the error ViewChunk gives, naming the
// copying call.
func (s *Store) Payload(i int) (*format.Payload, error) {
	a, err := s.arrayAt(i, false)
	if err != nil {
		return nil, err
	}
	if err := a.oneChunk(); err != nil {
		return nil, err
	}
	return s.pays.Get(i, a.payload)
}

// payload builds the reader of the one chunk of the array.
func (a *Array) payload() (*format.Payload, error) {
	s, m := a.s, a.m
	zero := make([]int64, len(m.shape))
	mp, loc, err := a.viewable(zero, false)
	if err != nil {
		return nil, err
	}
	p := &format.Payload{Array: layout.Array{Name: m.name}, Data: mp.r, Off: loc.off, Lenient: s.opts.Lenient,
		Wrap: func(off int64, err error) error {
			return s.errf(loc.key, off, err, "array %q", m.name)
		}}
	p.Array.Type, p.Array.Shape, p.Array.BigEndian = m.dt.typ, m.shape, m.dt.big
	p.Array.Order = layout.RowMajor
	if !m.rowMajor() {
		p.Array.Order = layout.ColMajor
	}
	p.Array.Offset, p.Array.Size = loc.off, m.unitBytes()
	p.Writing = func() error { s.viewing(mp); return nil }
	return p, nil
}

// arrayAt returns array i of an open store (see Store.array).
func (s *Store) arrayAt(i int, withAttrs bool) (*Array, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if i < 0 || i >= len(s.arrays) {
		return nil, s.errf("", -1, mmapfile.ErrOutOfRange, "record %d of %d", i, len(s.arrays))
	}
	return s.array(i, withAttrs), nil
}

// oneChunk checks that the array is stored as one chunk of its shape.
func (a *Array) oneChunk() error {
	m := a.m
	for i := range m.shape {
		if m.unit[i] != m.shape[i] {
			return a.s.errf(m.metaKey, -1, ErrUnsupported, "array %q of shape %v is stored in chunks of %v, not one run of bytes: view a chunk with ViewChunk, or copy with Read", m.name, m.shape, m.unit)
		}
	}
	return nil
}

// locateView is locateUnit for a view: a chunk file of its own is mapped
// at once, its size taken from the mapping (one open instead of a stat
// and an open: a scan maps every chunk).
func (a *Array) locateView(idx []int64) (where, error) {
	key, inner := a.m.locate(idx)
	if inner >= 0 {
		return a.locateUnit(idx)
	}
	mp, err := a.s.mapped(key)
	switch {
	case err == nil:
		return where{key: key, n: int64(mp.r.Len())}, nil
	case errors.Is(err, fs.ErrNotExist):
		return where{key: key, missing: true}, nil
	}
	return where{}, err
}

// Set changes the element of the array at idx (0-based, in the array's
// logical row-major indexing) to v, in place: through a read-write
// mapping of its chunk file when chunks are stored raw; by decoding,
// changing and re-encoding the chunk (its shard) to a new file that
// replaces the old one when they are compressed; a missing chunk is
// created from the fill value. The store must be open read-write. The
// change is visible to every reader of the store at once and durable
// after Sync or Close.
func Set[T layout.Elem](a *Array, idx []int64, v T) error {
	if err := checkType[T](a); err != nil {
		return err
	}
	return format.Set(a.s, a.i, idx, v)
}

// SetBytes changes the element of array i at idx to b, one element in the
// stored byte order, wherever the array keeps it (format.BytesSetter).
func (s *Store) SetBytes(i int, idx []int64, b []byte) error {
	a, err := s.arrayAt(i, false)
	if err != nil {
		return err
	}
	return a.setBytes(idx, b)
}

// SetText changes one element of array i; see format.Setter. value is a
// literal of the array's type ("42", "-1.5e3", "0x1f", "nan", "true",
// "1+2i").
func (s *Store) SetText(i int, idx []int64, value string) error {
	if i < 0 || i >= len(s.arrays) {
		return s.errf("", -1, mmapfile.ErrOutOfRange, "record %d of %d", i, len(s.arrays))
	}
	a := s.array(i, false)
	b, err := parseText(a.m.dt.typ, value, a.m.byteOrder())
	if err != nil {
		e := storeErr(s.name, err, "")
		e.Record = a.m.name
		return e
	}
	return a.setBytes(idx, b)
}

// setBytes writes one element, b in the stored byte order, at idx.
func (a *Array) setBytes(idx []int64, b []byte) error {
	return a.s.orClosed(a.setElement(idx, b))
}

func (a *Array) setElement(idx []int64, b []byte) error {
	s, m := a.s, a.m
	if err := s.checkOpen(); err != nil {
		return err
	}
	if !s.writable {
		return s.errf(m.metaKey, -1, mmapfile.ErrNotWritable, "array %q: the store is open read-only", m.name)
	}
	// Chunks are written by path: at a store put in this one's place they
	// would change that store.
	if err := s.inPlace(); err != nil {
		return err
	}
	if _, err := layout.Index(m.shape, layout.RowMajor, idx...); err != nil {
		return s.errf(m.metaKey, -1, format.IndexError(err), "array %q", m.name)
	}
	size := int64(m.dt.typ.Size())
	sstr := permStrides(m.unit, m.perm)
	u := make([]int64, len(idx))
	var pos int64
	for i := range idx {
		u[i] = idx[i] / m.unit[i]
		pos += (idx[i] - u[i]*m.unit[i]) * sstr[i]
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	loc, err := a.locateUnit(u)
	if err != nil {
		return err
	}
	if loc.missing && len(m.chain) == 0 && m.shard != nil {
		// Created whole and then written in place, as for a view.
		if err := a.createUnit(u); err != nil {
			return err
		}
		if loc, err = a.locateUnit(u); err != nil {
			return err
		}
	}
	if !loc.missing && len(m.chain) == 0 {
		ub := m.unitBytes()
		if loc.n != ub {
			return a.sizeErr(loc, ub)
		}
		mp, err := s.mapped(loc.key)
		if err != nil {
			return err
		}
		if _, err := mp.r.WriteAt(b, loc.off+pos*size); err != nil {
			return s.errf(loc.key, loc.off+pos*size, err, "array %q: element %v cannot be written", m.name, idx)
		}
		s.mu.Lock()
		mp.dirty = true
		s.mu.Unlock()
		return nil
	}
	return a.rewriteUnit(u, b, pos)
}

// createUnit creates the missing unit u for a view or Set, s.wmu held:
// a chunk file of zeros where that is the fill value, a shard laid out
// whole where inner chunks are raw and the shard is missing, else by
// writing the unit anew (a shard with all its raw inner chunks).
func (a *Array) createUnit(u []int64) error {
	m := a.m
	if a.zeroChunkFile() {
		key, _ := m.locate(u)
		return a.s.createZeroed(key, m.unitBytes())
	}
	if m.shard != nil && len(m.chain) == 0 && a.s.root != nil {
		key, _ := m.locate(u)
		si, err := a.s.shardIndexOf(m, key)
		if err != nil {
			return err
		}
		if si == nil {
			return a.createShard(u)
		}
	}
	return a.rewriteUnit(u, nil, -1)
}

// rewriteUnit writes unit u anew: its current values (the fill value if
// it is missing) with element pos set to b (pos < 0: none), encoded, to a
// new file that replaces its chunk file or shard.
func (a *Array) rewriteUnit(u []int64, b []byte, pos int64) error {
	s, m := a.s, a.m
	ub := m.unitBytes()
	if ub > maxDecoded {
		return s.errf(m.metaKey, -1, ErrUnsupported, "array %q: a chunk of %d bytes is too large to rewrite here", m.name, ub)
	}
	buf := grow(nil, ub)
	full := layout.NewStridedCopy(m.unit, layout.Strides(m.unit, layout.RowMajor), layout.Strides(m.unit, layout.RowMajor), m.dt.typ.Size())
	loc, err := a.locateUnit(u)
	if err != nil {
		return err
	}
	if loc.missing {
		full.Fill(buf, 0, m.fill)
	} else {
		w := &worker{}
		if err := a.readUnitRaw(loc, buf, w); err != nil {
			return err
		}
	}
	if pos >= 0 {
		size := int64(m.dt.typ.Size())
		copy(buf[pos*size:], b)
	}
	enc, err := encodeChain(m.chain, nil, buf)
	if err != nil {
		return s.errf(loc.key, -1, err, "array %q: chunk cannot be encoded", m.name)
	}
	key, inner := m.locate(u)
	if inner < 0 {
		return s.writeKey(key, enc, nil)
	}
	return a.rewriteShard(key, u, inner, enc)
}

// readUnitRaw decodes the stored unit at loc into buf (the unit's bytes
// as stored: its own layout and byte order).
func (a *Array) readUnitRaw(loc where, buf []byte, w *worker) error {
	m := a.m
	ub := int64(len(buf))
	if len(m.chain) == 0 {
		if loc.n != ub {
			return a.sizeErr(loc, ub)
		}
		return a.s.readAt(loc.key, buf, loc.off)
	}
	if loc.n > ub+ub/64+1<<20 {
		return a.s.errf(loc.key, loc.off, ErrCorrupt, "array %q: an encoded chunk of %d bytes is larger than any encoding of its %d bytes", m.name, loc.n, ub)
	}
	w.enc = grow(w.enc, loc.n)
	if err := a.s.readAt(loc.key, w.enc, loc.off); err != nil {
		return err
	}
	if err := decodeChain(m.chain, buf, w.enc); err != nil {
		return a.decodeErr(loc, err)
	}
	return nil
}

// rewriteShard writes the shard key anew with inner chunk inner (of unit
// u) replaced by enc, keeping its other inner chunks as they are encoded.
// It fails while the shard is mapped for a writable view.
func (a *Array) rewriteShard(key string, u []int64, inner int64, enc []byte) error {
	s, m := a.s, a.m
	spec := m.shard
	unviewed := func() error {
		s.mu.Lock()
		mp := s.maps[key]
		viewed := mp != nil && mp.viewed
		s.mu.Unlock()
		if viewed {
			// The writes made through the view after the shard was read
			// would go to the file replaced: lost.
			return s.errf(key, -1, ErrUnsupported, "array %q: inner chunk %d of shard %s is not stored, and writing it means rewriting the shard, whose inner chunks are mapped for a writable view: Close the store (or Sync and let go of the views), reopen it and create the chunk before taking views", m.name, inner, key)
		}
		return nil
	}
	if err := unviewed(); err != nil {
		return err
	}
	si, err := s.shardIndexOf(m, key)
	if err != nil {
		return err
	}
	chunks := make([][]byte, spec.n)
	if si != nil {
		order := make([]int64, 0, spec.n)
		for i := range spec.n {
			if si.ent[2*i] != empty && i != inner {
				order = append(order, i)
			}
		}
		sort.Slice(order, func(x, y int) bool { return si.ent[2*order[x]] < si.ent[2*order[y]] })
		for _, i := range order {
			b := make([]byte, si.ent[2*i+1])
			if err := s.readAt(key, b, int64(si.ent[2*i])); err != nil {
				return err
			}
			chunks[i] = b
		}
	}
	chunks[inner] = enc
	if len(m.chain) == 0 {
		// Raw inner chunks: every one inside the grid is stored, holding
		// the fill value where it was missing, so that views and Set of
		// this shard never need to rewrite it again.
		var fill []byte
		for i, in := range m.innerInGrid(u) {
			if in && chunks[i] == nil {
				if fill == nil {
					fill = grow(nil, m.unitBytes())
					full := layout.NewStridedCopy(m.unit, layout.Strides(m.unit, layout.RowMajor), layout.Strides(m.unit, layout.RowMajor), m.dt.typ.Size())
					full.Fill(fill, 0, m.fill)
				}
				chunks[i] = fill
			}
		}
	}
	// Checked again as the shard is replaced: a view taken meanwhile
	// maps the file read above.
	return s.writeKey(key, encodeShard(spec, chunks, len(m.chain) == 0), unviewed)
}

// encodeShard lays out a shard file: the inner chunks in C order (nil
// ones empty) and their index, with its crc32c, at the start or the end.
// Raw inner chunks, all of one size, start at a multiple of 16 bytes (past
// an index at the start) and follow one another, so that each maps as a
// typed slice.
func encodeShard(spec *shardSpec, chunks [][]byte, raw bool) []byte {
	base := shardBase(spec, raw)
	off, n := make([]int64, len(chunks)), make([]int64, len(chunks))
	var body []byte
	for i, c := range chunks {
		n[i] = -1
		if c != nil {
			off[i], n[i] = base+int64(len(body)), int64(len(c))
			body = append(body, c...)
		}
	}
	idx := shardIndexBytes(spec, off, n)
	if spec.atStart {
		return append(append(idx, make([]byte, base-int64(len(idx)))...), body...)
	}
	return append(body, idx...)
}

// writeKey replaces the file key with data: written to a temporary file
// beside it and renamed over it, inside the store. The rename holds the
// key's lock for writing (no reader is inside the file, no view is being
// taken of it), after ok, if not nil, agrees.
func (s *Store) writeKey(key string, data []byte, ok func() error) error {
	if s.root == nil {
		return s.errf(key, -1, mmapfile.ErrNotWritable, "a store opened with NewReader cannot be written")
	}
	if dir := path.Dir(key); dir != "." {
		if err := s.root.MkdirAll(dir, 0o755); err != nil {
			return s.keyErr(dir, err)
		}
	}
	if fi, err := s.root.Lstat(key); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return s.errf(key, -1, ErrInvalid, "is a symlink: not replaced")
	}
	f, err := atomicfile.New(s.path(key), &atomicfile.Options{Perm: s.opts.Perm})
	if err != nil {
		return s.errf(key, -1, err, "cannot be written")
	}
	defer f.Abort()
	// Synced before the lock is taken, so that the commit's own sync
	// finds nothing to write while readers of the key wait.
	if _, err := f.Write(data); err != nil {
		return s.errf(key, -1, err, "cannot be written")
	}
	if err := f.Sync(); err != nil {
		return s.errf(key, -1, err, "cannot be written")
	}
	l := s.swaps.of(key)
	l.Lock()
	if err := s.inPlace(); err != nil {
		l.Unlock()
		return err
	}
	if ok != nil {
		if err := ok(); err != nil {
			l.Unlock()
			return err
		}
	}
	err = f.Commit()
	var old *mapping
	if err == nil {
		old = s.forget(key)
	}
	l.Unlock()
	if err != nil {
		return s.errf(key, -1, err, "cannot be written")
	}
	if old != nil {
		if err := old.f.Close(); err != nil {
			return s.errf(key, -1, err, "the replaced file cannot be closed")
		}
	}
	return nil
}

// Sync makes the changes made through writable views and Set durable,
// and the chunk files created for views: when it returns they survive a
// crash of the machine or a power loss. It syncs the chunk files that Set
// wrote since the last Sync and every chunk file handed out as a writable
// view (its caller may write it at any time), not the others, and the
// directories that chunk files were created in.
func (s *Store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.errf("", -1, mmapfile.ErrClosed, "")
	}
	var keys []string
	for key, mp := range s.maps {
		if mp.viewed || mp.dirty {
			keys = append(keys, key)
		}
	}
	if len(keys) > 1 {
		for _, key := range keys {
			atomicfile.StartWriteback(s.maps[key].f.OSFile(), 0, 0)
		}
	}
	for _, key := range keys {
		mp := s.maps[key]
		if err := syncFile(key, mp.f); err != nil {
			return s.errf(key, -1, err, "cannot be synced")
		}
		mp.dirty = false
	}
	return s.syncDirs()
}

// syncFile and syncDirFile sync a chunk file and a directory of the
// store; variables so that tests can see what a Sync syncs.
var (
	syncFile    = func(key string, f *mmapfile.File) error { return f.Sync() }
	syncDirFile = func(dir string, d *os.File) error { return d.Sync() }
)

// syncDirs syncs the directories that chunk files were created in since
// the last Sync, so that their names survive a crash.
func (s *Store) syncDirs() error {
	for dir := range s.newDirs {
		d, err := s.root.Open(dir)
		if err != nil {
			return s.errf(dir, -1, err, "cannot be synced")
		}
		err = syncDirFile(dir, d)
		d.Close()
		if err != nil {
			return s.errf(dir, -1, err, "cannot be synced")
		}
		delete(s.newDirs, dir)
	}
	return nil
}

// Close syncs a read-write store and releases its mappings, lock and
// directory. Every slice View and ViewChunk returned is invalid afterwards. Closing
// twice returns an error wrapping mmapfile.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.errf("", -1, mmapfile.ErrClosed, "")
	}
	s.closed = true
	s.pays.Reset()
	var first error
	if len(s.maps) > 1 {
		// Closing a file syncs it: start the writeback of them all first,
		// for the device to take together.
		for _, mp := range s.maps {
			if mp.viewed || mp.dirty {
				atomicfile.StartWriteback(mp.f.OSFile(), 0, 0)
			}
		}
	}
	for key, mp := range s.maps {
		if err := mp.f.Close(); err != nil && first == nil {
			first = s.errf(key, -1, err, "cannot be closed")
		}
	}
	s.maps, s.fresh = nil, nil
	if s.root != nil {
		if err := s.syncDirs(); err != nil && first == nil {
			first = err
		}
	}
	if s.lock != nil {
		if err := s.lock.Close(); err != nil && first == nil {
			first = err
		}
	}
	if s.root != nil {
		s.closeDirs()
		s.root.Close()
	}
	return first
}

// zeroChunkFile says whether a missing chunk of the array is created for
// a view as a file of zeros, not by writing its bytes: chunks stored raw,
// one to a file, with a fill value of zero bytes.
func (a *Array) zeroChunkFile() bool {
	m := a.m
	return len(m.chain) == 0 && m.shard == nil && a.s.root != nil && isZero(m.fill)
}

// createZeroed creates the missing chunk file key as n zero bytes for a
// writable view, without writing them: a new file whose blocks are
// reserved (fallocate, where the file system has it, else a sparse file)
// is renamed into place at once, mapped, and its pages made present and
// writable for the caller to fill. Its data and its name are made durable
// by the next Sync or Close, with the writes through the view: a crash
// before leaves the chunk missing, or in place holding zeros (the fill
// value) or part of what was written, as for any write through a view.
func (s *Store) createZeroed(key string, n int64) error {
	return s.createMapped(key, n, nil)
}

// createMapped is createZeroed with init, if not nil, writing the parts
// of the new file that are not zeros (through f, before it is mapped),
// which are made durable before the file takes its name: a shard's index
// and the fill value of its inner chunks.
func (s *Store) createMapped(key string, n int64, init func(f *os.File) error) error {
	dir := path.Dir(key)
	if err := s.mkdirs(dir); err != nil {
		return err
	}
	if fi, err := s.root.Lstat(key); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return s.errf(key, -1, ErrInvalid, "is a symlink: not replaced")
	}
	perm := s.opts.Perm
	if perm == 0 {
		perm = atomicfile.DefaultPerm
	}
	// Named as atomicfile names its temporary files, so that a crash's
	// leftover is recognised (atomicfile.Leftovers) and readers skip it.
	tmp := filepath.ToSlash(atomicfile.TempName(key))
	osf, err := s.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return s.errf(key, -1, err, "cannot be created")
	}
	mo := s.opts.Options
	mo.Create, mo.Truncate, mo.Lock, mo.File = false, false, mmapfile.LockNone, nil
	f, err := mmapfile.NewFile(osf, mmapfile.ReadWrite, &mo)
	if err != nil {
		osf.Close()
		s.root.Remove(tmp)
		return s.errf(key, -1, err, "cannot be created")
	}
	fail := func(err error) error {
		f.Close()
		s.root.Remove(tmp)
		return s.errf(key, -1, err, "cannot be created")
	}
	if err := f.Grow(n); err != nil {
		return fail(err)
	}
	if init != nil {
		if err := init(osf); err != nil {
			return fail(err)
		}
		if err := osf.Sync(); err != nil {
			return fail(err)
		}
	}
	r, err := f.MapAll()
	if err != nil {
		return fail(err)
	}
	if err := r.PopulateWrite(); err != nil {
		return fail(err)
	}
	l := s.swaps.of(key)
	l.Lock()
	if err := s.root.Rename(tmp, key); err != nil {
		l.Unlock()
		return fail(err)
	}
	old := s.forget(key) // none expected: the chunk was missing
	s.created(key, dir, f, r)
	l.Unlock()
	if old != nil {
		old.f.Close()
	}
	return nil
}

// created keeps the mapping r of f, the chunk file key just created in
// directory dir for a writable view.
func (s *Store) created(key, dir string, f *mmapfile.File, r *mmapfile.Region) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maps == nil {
		s.maps = map[string]*mapping{}
	}
	mp := &mapping{f: f, r: r, viewed: true}
	s.maps[key] = mp
	s.markDir(dir)
	// The chunks created for views before this one are most likely
	// filled by now (a store is filled chunk by chunk): start their
	// writeback, on another core, so that the disk writes them while the
	// caller fills this one. A chunk written again later is written back
	// again by Sync.
	for _, old := range s.fresh {
		go atomicfile.StartWriteback(old.f.OSFile(), 0, 0)
	}
	s.fresh = append(s.fresh[:0], mp)
}

// mkdirs makes the directory dir of the store and any parents missing,
// and notes the directories whose entries changed, for Sync.
func (s *Store) mkdirs(dir string) error {
	if dir == "." {
		return nil
	}
	if fi, err := s.root.Stat(dir); err == nil && fi.IsDir() {
		return nil
	}
	if err := s.mkdirs(path.Dir(dir)); err != nil {
		return err
	}
	if err := s.root.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return s.keyErr(dir, err)
	}
	s.mu.Lock()
	s.markDir(path.Dir(dir))
	s.mu.Unlock()
	return nil
}

// markDir notes that directory dir of the store has a new entry to sync;
// s.mu is held.
func (s *Store) markDir(dir string) {
	if s.newDirs == nil {
		s.newDirs = map[string]bool{}
	}
	s.newDirs[dir] = true
}
