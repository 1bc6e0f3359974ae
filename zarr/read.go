package zarr

import (
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// maxDecoded bounds the size of a compressed chunk decoded into a buffer
// of its own (chunks read whole into the destination need none).
const maxDecoded = 1 << 32

// worker holds one goroutine's buffers for reading chunks.
type worker struct {
	enc, scratch []byte
}

// where is the stored location of one unit.
type where struct {
	key     string
	off, n  int64
	missing bool
}

// locateUnit finds the bytes of unit u.
func (a *Array) locateUnit(u []int64) (where, error) {
	m := a.m
	key, inner := m.locate(u)
	if inner < 0 {
		size, ok, err := a.s.statKey(key)
		return where{key: key, n: size, missing: !ok}, err
	}
	si, err := a.s.shardIndexOf(m, key)
	if err != nil || si == nil {
		return where{key: key, missing: true}, err
	}
	off, nb := si.ent[2*inner], si.ent[2*inner+1]
	if off == empty {
		return where{key: key, missing: true}, nil
	}
	return where{key: key, off: int64(off), n: int64(nb)}, nil
}

// readBox copies the box [start, start+count) of the array into dst, laid
// out in order, elements in the stored byte order. Chunks are read in
// parallel; each compressed chunk that dst holds whole and in its own
// layout is decompressed straight into dst.
func (a *Array) readBox(dst []byte, start, count []int64, order layout.Order) error {
	m := a.m
	k := len(m.shape)
	lo, span := make([]int64, k), make([]int64, k)
	total := int64(1)
	for i := range k {
		if count[i] == 0 {
			return nil
		}
		lo[i] = start[i] / m.unit[i]
		span[i] = (start[i]+count[i]-1)/m.unit[i] - lo[i] + 1
		total *= span[i]
	}
	dstr := layout.Strides(count, order)
	var missing atomic.Bool
	one := func(j int64, w *worker) error {
		u := make([]int64, k)
		for i := k - 1; i >= 0; i-- {
			u[i] = lo[i] + j%span[i]
			j /= span[i]
		}
		return a.readUnit(u, dst, start, count, dstr, w, &missing)
	}
	workers := int64(runtime.GOMAXPROCS(0))
	if len(dst) < 1<<20 {
		workers = 1
	}
	err := withWorkers(total, workers, &a.s.states, one)
	if err == nil && missing.Load() || errors.Is(err, fs.ErrNotExist) {
		// Checked once, after the read: a store that is in place now
		// was in place when each of its chunks was found missing.
		if perr := a.s.inPlace(); perr != nil || err == nil {
			err = perr
		}
	}
	return a.s.orClosed(err)
}

// inPlace fails with ErrReplaced when the store's path no longer leads to
// the directory opened (a store written over it, or removed): chunks
// missing from that directory are then not the fill value, but gone.
func (s *Store) inPlace() error {
	if s.root == nil {
		return nil
	}
	opened, err := s.root.Stat(".")
	if err != nil {
		return s.orClosed(s.errf("", -1, err, "cannot be checked"))
	}
	if now, err := os.Stat(s.dir); err == nil && os.SameFile(opened, now) {
		return nil
	}
	return s.errf("", -1, ErrReplaced, "its chunks are gone; open it again")
}

// readUnit copies the part of unit u inside the box into dst, noting in
// missing a unit that is not stored.
func (a *Array) readUnit(u []int64, dst []byte, start, count, dstr []int64, w *worker, missing *atomic.Bool) error {
	m := a.m
	k := len(u)
	size := int64(m.dt.typ.Size())
	sstr := permStrides(m.unit, m.perm)
	cnt := make([]int64, k)
	var soff, doff int64
	for i := range k {
		us := u[i] * m.unit[i]
		lo, hi := max(us, start[i]), min(us+m.unit[i], start[i]+count[i])
		cnt[i] = hi - lo
		soff += (lo - us) * sstr[i]
		doff += (lo - start[i]) * dstr[i]
	}
	p := layout.NewStridedCopy(cnt, sstr, dstr, int(size))
	ub := m.unitBytes()
	whole := p.Contiguous() && p.Elems()*size == ub // dst holds the unit as stored
	if a.isDamaged(u) {
		p.Fill(dst, doff, m.fill) // Options.Salvage; Damage reports it
		return nil
	}
	key, _ := m.locate(u)
	l := a.s.swaps.of(key)
	l.RLock()
	defer l.RUnlock()
	loc, err := a.locateUnit(u)
	if err != nil {
		return err
	}
	if loc.missing {
		missing.Store(true)
		p.Fill(dst, doff, m.fill)
		return nil
	}
	if len(m.chain) == 0 {
		if loc.n != ub {
			return a.sizeErr(loc, ub)
		}
		if whole {
			return a.s.readAt(loc.key, dst[doff*size:doff*size+ub], loc.off)
		}
		return a.s.withBytes(loc.key, loc.off, ub, w, func(b []byte) { p.Copy(dst, doff, b, soff) })
	}
	if loc.n > ub+ub/64+1<<20 {
		return a.s.errf(loc.key, loc.off, ErrCorrupt, "array %q: an encoded chunk of %d bytes is larger than any encoding of its %d bytes", m.name, loc.n, ub)
	}
	w.enc = grow(w.enc, loc.n)
	if err := a.s.readAt(loc.key, w.enc, loc.off); err != nil {
		return err
	}
	if whole {
		if err := decodeChain(m.chain, dst[doff*size:doff*size+ub], w.enc); err != nil {
			return a.decodeErr(loc, err)
		}
		return nil
	}
	if ub > maxDecoded {
		return a.s.errf(loc.key, loc.off, ErrUnsupported, "array %q: a compressed chunk of %d bytes is larger than the %d bytes decoded here apart from the destination", m.name, ub, int64(maxDecoded))
	}
	// A chunk read in part is kept decoded for a while: consecutive
	// linear reads (a conversion's) cut across the same chunks.
	ck := cacheKey{loc.key, loc.off}
	if b := a.s.cache.get(ck); b != nil {
		p.Copy(dst, doff, b, soff)
		return nil
	}
	b := grow(nil, ub)
	if err := decodeChain(m.chain, b, w.enc); err != nil {
		return a.decodeErr(loc, err)
	}
	a.s.cache.put(ck, b)
	p.Copy(dst, doff, b, soff)
	return nil
}

// cacheKey names a unit's stored bytes: its file and offset.
type cacheKey struct {
	key string
	off int64
}

// unitCache keeps recently decoded chunks, least recently used dropped
// first, up to a number of bytes.
type unitCache struct {
	mu    sync.Mutex
	used  int64
	tick  int64
	units map[cacheKey]*cached
}

type cached struct {
	b    []byte
	used int64
}

// cacheBytes bounds the decoded chunks a store keeps.
const cacheBytes = 64 << 20

func (c *unitCache) get(k cacheKey) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.units[k]; ok {
		c.tick++
		e.used = c.tick
		return e.b
	}
	return nil
}

func (c *unitCache) put(k cacheKey, b []byte) {
	if int64(len(b)) > cacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.units == nil {
		c.units = map[cacheKey]*cached{}
	}
	if _, ok := c.units[k]; ok {
		return
	}
	for c.used+int64(len(b)) > cacheBytes {
		var old cacheKey
		oldest := int64(-1)
		for k, e := range c.units {
			if oldest < 0 || e.used < oldest {
				old, oldest = k, e.used
			}
		}
		c.used -= int64(len(c.units[old].b))
		delete(c.units, old)
	}
	c.tick++
	c.units[k] = &cached{b: b, used: c.tick}
	c.used += int64(len(b))
}

// drop forgets the chunks of the file key.
func (c *unitCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.units {
		if k.key == key {
			c.used -= int64(len(e.b))
			delete(c.units, k)
		}
	}
}

// grow returns b resized to n bytes, aligned for any element type.
func grow(b []byte, n int64) []byte {
	if int64(cap(b)) >= n {
		return b[:n]
	}
	return unsafeslice.AlignedBytes(n)
}

func (a *Array) sizeErr(loc where, ub int64) error {
	if loc.n < ub {
		return a.s.errf(loc.key, loc.off+loc.n, mmapfile.ErrTruncated, "array %q: chunk of %d bytes, an uncompressed chunk has %d", a.m.name, loc.n, ub)
	}
	return a.s.errf(loc.key, loc.off+ub, ErrCorrupt, "array %q: chunk of %d bytes, %d past the %d of an uncompressed chunk", a.m.name, loc.n, loc.n-ub, ub)
}

func (a *Array) decodeErr(loc where, err error) error {
	return a.s.errf(loc.key, loc.off, err, "array %q: chunk", a.m.name)
}

// readAt reads len(b) bytes of the file key at off.
func (s *Store) readAt(key string, b []byte, off int64) error {
	f, err := s.fsys.Open(key)
	if err != nil {
		return s.keyErr(key, err)
	}
	defer f.Close()
	var n int
	if ra, ok := f.(io.ReaderAt); ok {
		n, err = ra.ReadAt(b, off)
	} else if sk, ok := f.(io.Seeker); ok {
		if _, err = sk.Seek(off, io.SeekStart); err == nil {
			n, err = io.ReadFull(f, b)
		}
	} else {
		if _, err = io.CopyN(io.Discard, f, off); err == nil {
			n, err = io.ReadFull(f, b)
		}
	}
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return s.errf(key, off+int64(n), mmapfile.ErrTruncated, "file ends %d bytes into the %d read there", n, len(b))
	}
	return s.errf(key, off, err, "cannot be read")
}

// withBytes calls fn with bytes [off, off+n) of the file key: a mapping of
// them where the store is a directory (faults in it become errors), else
// a copy.
func (s *Store) withBytes(key string, off, n int64, w *worker, fn func(b []byte)) error {
	s.mu.Lock()
	mp := s.maps[key]
	s.mu.Unlock()
	if mp != nil {
		mappingFound(key)
		b := mp.r.Bytes()
		if off+n > int64(len(b)) {
			return s.errf(key, int64(len(b)), mmapfile.ErrTruncated, "mapping of %d bytes, want [%d, %d)", len(b), off, off+n)
		}
		return s.guard(key, mp.r, func() { fn(b[off : off+n]) })
	}
	if s.root == nil {
		w.scratch = grow(w.scratch, n)
		if err := s.readAt(key, w.scratch, off); err != nil {
			return err
		}
		fn(w.scratch)
		return nil
	}
	f, err := s.mapFile(key, false)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := f.Map(off, n)
	if err != nil {
		return s.errf(key, off, err, "cannot be mapped")
	}
	return s.guard(key, r, func() { fn(r.Bytes()) })
}

// mappingFound is called by a copying read that found the mapping of the
// file key, before it copies from it; a variable so that tests can act at
// that moment.
var mappingFound = func(key string) {}

// guard runs fn over a mapping of key, turning a fault into an error
// naming the key.
func (s *Store) guard(key string, r *mmapfile.Region, fn func()) error {
	if err := r.Guard(fn); err != nil {
		return s.errf(key, -1, err, "fault while reading the mapping (the file was truncated?)")
	}
	return nil
}

// mapFile opens the file key for mapping, after making sure that it lies
// inside the store (no symlink out of it).
func (s *Store) mapFile(key string, writable bool) (*mmapfile.File, error) {
	if s.root == nil {
		return nil, s.errf(key, -1, ErrUnsupported, "a store opened with NewReader is not mapped: use Read")
	}
	// Opened once, inside the store (os.Root refuses what leads out of
	// it), and that descriptor is what gets mapped.
	flag, mode := os.O_RDONLY, mmapfile.ReadOnly
	if writable {
		flag, mode = os.O_RDWR, mmapfile.ReadWrite
	}
	inside, err := s.openInside(key, flag)
	if err != nil {
		return nil, s.keyErr(key, err)
	}
	mo := s.opts.Options
	mo.Create, mo.Truncate, mo.Lock = false, false, mmapfile.LockNone
	mo.File = inside // named by its path in errors
	f, err := mmapfile.OpenFile(s.path(key), mode, &mo)
	if err != nil {
		inside.Close()
		return nil, s.errf(key, -1, err, "cannot be opened")
	}
	return f, nil
}

// openInside opens the file key inside the store. The directories of
// chunk files are opened once and kept (os.Root opens every directory on
// a path for each open): a store of thousands of chunks is opened file by
// file, and those opens were most of a view's cost.
func (s *Store) openInside(key string, flag int) (*os.File, error) {
	dir, base := path.Split(key)
	if dir == "" {
		return s.root.OpenFile(key, flag, 0)
	}
	dir = strings.TrimSuffix(dir, "/")
	// Held through the open: a directory may be closed to make room.
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	r, ok := s.dirs[dir]
	if !ok {
		var err error
		if r, err = s.root.OpenRoot(dir); err != nil {
			return nil, err
		}
		if len(s.dirs) >= maxOpenDirs { // each holds a descriptor
			for _, d := range s.dirs {
				d.Close()
			}
			clear(s.dirs)
		}
		if s.dirs == nil {
			s.dirs = map[string]*os.Root{}
		}
		s.dirs[dir] = r
	}
	f, err := r.OpenFile(base, flag, 0)
	if err != nil {
		// Named as the store names it, not by the directory's root.
		if pe, ok := err.(*os.PathError); ok {
			pe.Path = key
		}
	}
	return f, err
}

// maxOpenDirs bounds the directories openInside keeps open: a store of
// many chunk directories (v3's c/i/j keys of a large grid) reads them a
// few at a time, and each costs a file descriptor.
const maxOpenDirs = 64

// closeDirs closes the directories openInside kept.
func (s *Store) closeDirs() {
	s.dirMu.Lock()
	defer s.dirMu.Unlock()
	for _, r := range s.dirs {
		r.Close()
	}
	s.dirs = nil
}

// checkType fails unless T's element type is the array's.
func checkType[T layout.Elem](a *Array) error {
	if err := a.s.checkOpen(); err != nil {
		return err
	}
	if t := layout.TypeOf[T](); t != a.m.dt.typ {
		return a.s.errf(a.m.metaKey, -1, mmapfile.ErrTypeMismatch, "array %q holds %s, not %s", a.m.name, a.m.dt.typeName(), t)
	}
	return nil
}

// Read returns a copy of the whole array, listed in its Order (as View
// and ViewChunk list a chunk) and in the host's byte order. Missing chunks
// read as the fill value. T must be the array's element type.
func Read[T layout.Elem](a *Array) ([]T, error) {
	if err := checkType[T](a); err != nil {
		return nil, err
	}
	return format.Read[T](a.s, a.i)
}

// PartElems is the number of elements in a row of whole units (chunks, or
// a shard's inner chunks) of array i along its slowest axis in its Order:
// the multiple format.Read reads it in, so that no unit is decoded twice
// (format.PartSizer).
func (s *Store) PartElems(i int) int64 {
	if i < 0 || i >= len(s.arrays) {
		return 0
	}
	m := s.arrays[i].m
	if len(m.shape) == 0 {
		return 1
	}
	outer := 0
	if m.colMajor() {
		outer = len(m.shape) - 1
	}
	n := min(m.unit[outer], m.shape[outer])
	for j, d := range m.shape {
		if j != outer {
			var ok bool
			if n, ok = layout.Mul(n, d); !ok {
				return 0
			}
		}
	}
	return n
}

// ReadAt copies the elements [start, start+len(dst)) of the array, counted
// in its Order over the whole array (row-major: the last index varies
// fastest), into dst: a part of a huge array in bounded memory. It fills
// dst or returns an error (mmapfile.ErrOutOfRange for a range outside the
// array).
func ReadAt[T layout.Elem](a *Array, start int64, dst []T) error {
	if err := checkType[T](a); err != nil {
		return err
	}
	return format.ReadAt(a.s, a.i, start, dst)
}

// ReadRegion copies the region [start, start+count) of the array (the
// box of count[i] elements from start[i] along each axis) into a new
// slice, listed in the array's Order and in the host's byte order.
// Missing chunks read as the fill value. T must be the array's element
// type. Array.ReadRegion is the same copy into bytes, in any order and
// byte order.
func ReadRegion[T layout.Elem](a *Array, start, count []int64) ([]T, error) {
	if err := checkType[T](a); err != nil {
		return nil, err
	}
	n, err := a.checkBox(start, count)
	if err != nil {
		return nil, err
	}
	out := make([]T, n)
	if err := a.ReadRegion(unsafeslice.Bytes(out), start, count, a.Order(), layout.HostOrder()); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadRegion copies the region [start, start+count) of the array into
// dst, which it fills exactly: listed in order (RowMajor: the last index
// varies fastest) and in byte order bo. Chunks are read in parallel, each
// decompressed straight into dst where dst holds it whole; missing chunks
// read as the fill value.
func (a *Array) ReadRegion(dst []byte, start, count []int64, order layout.Order, bo binary.ByteOrder) error {
	if err := a.s.checkOpen(); err != nil {
		return err
	}
	n, err := a.checkBox(start, count)
	if err != nil {
		return err
	}
	t := a.m.dt.typ
	if int64(len(dst)) != n*int64(t.Size()) {
		return a.s.errf(a.m.metaKey, -1, mmapfile.ErrOutOfRange, "array %q: %d bytes for a region of %d %s elements", a.m.name, len(dst), n, t)
	}
	if err := a.readBox(dst, start, count, order); err != nil {
		return err
	}
	return a.finish(dst, bo)
}

// finish turns bytes in the stored byte order into bo and checks bools.
func (a *Array) finish(dst []byte, bo binary.ByteOrder) error {
	t := a.m.dt.typ
	layout.SwapOrder(dst, t, a.m.byteOrder(), bo)
	if t == layout.Bool {
		if bad := layout.CheckBools(dst, t, a.s.opts.Lenient); bad >= 0 {
			return a.s.errf(a.m.metaKey, -1, mmapfile.ErrInvalidBool, "array %q: byte 0x%02x at element %d of the read", a.m.name, dst[bad], bad)
		}
	}
	return nil
}

// ReadArray copies the elements [first, first+len(dst)/size) of array i,
// listed in order (RowMajor: logical row-major order), into dst in byte
// order bo; see format.Source.
func (s *Store) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if i < 0 || i >= len(s.arrays) {
		return s.errf("", -1, mmapfile.ErrOutOfRange, "record %d of %d", i, len(s.arrays))
	}
	return s.array(i, false).readLinear(dst, first, order, bo)
}

// readLinear copies the elements [first, first+len(dst)/size) of the
// array, listed in order, into dst in byte order bo.
func (a *Array) readLinear(dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	s, m := a.s, a.m
	zero := make([]int64, len(m.shape))
	total, err := a.checkBox(zero, m.shape)
	if err != nil {
		return err
	}
	size := int64(m.dt.typ.Size())
	n := int64(len(dst)) / size
	if int64(len(dst))%size != 0 {
		return s.errf(m.metaKey, -1, mmapfile.ErrOutOfRange, "array %q: %d bytes is not a whole number of %s elements", m.name, len(dst), m.dt.typ)
	}
	if end, ok := layout.Add(first, n); first < 0 || !ok || end > total {
		return s.errf(m.metaKey, -1, mmapfile.ErrOutOfRange, "array %q: elements [%d, %d+%d) outside [0, %d)", m.name, first, first, n, total)
	}
	if first == 0 && n == total {
		// The whole array: one box (Read's one part of a mapped array).
		if err := a.readBox(dst, zero, m.shape, order); err != nil {
			return err
		}
		return a.finish(dst, bo)
	}
	q := append([]int64(nil), m.shape...)
	if order == layout.ColMajor {
		reverseInts(q)
	}
	var at int64
	err = layout.LinearBoxes(q, first, first+n, func(start, count []int64) error {
		if order == layout.ColMajor {
			reverseInts(start)
			reverseInts(count)
		}
		c, _ := layout.Count(count)
		part := dst[at*size : (at+c)*size]
		at += c
		return a.readBox(part, start, count, order)
	})
	if err != nil {
		return err
	}
	return a.finish(dst, bo)
}

func reverseInts(p []int64) {
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
}

// path is the file name of key in the store's directory.
func (s *Store) path(key string) string { return filepath.Join(s.dir, filepath.FromSlash(key)) }

// orClosed turns the error of a call that the store's Close overtook
// (its directory or a mapping closed under it) into ErrClosed.
func (s *Store) orClosed(err error) error {
	if err == nil {
		return nil
	}
	if cerr := s.checkOpen(); cerr != nil {
		return cerr
	}
	return err
}

func (s *Store) checkOpen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.errf("", -1, mmapfile.ErrClosed, "")
	}
	return nil
}
