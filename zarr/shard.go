package zarr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io/fs"
	"math"
	"os"
	"sort"
	"sync"

	"golang.org/x/sys/cpu"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// empty marks an inner chunk that a shard does not hold.
const empty = math.MaxUint64

// shardIndex is a checked shard index: offset and nbytes of each inner
// chunk, in C order of the inner chunks.
type shardIndex struct {
	size int64
	ent  []uint64
}

// indexError is a problem with a shard index at a byte offset of the
// shard file.
type indexError struct {
	off int64
	msg string
	err error
}

// parseShardIndex checks a shard's index, idx (the index bytes of a shard
// file of size bytes), against the file: every inner chunk inside the
// file's data part, none overlapping another, and, where inner chunks are
// stored raw, each exactly one chunk (fixed bytes) long.
func parseShardIndex(idx []byte, size int64, spec *shardSpec, fixed int64) ([]uint64, *indexError) {
	il := spec.indexLen()
	if int64(len(idx)) != il {
		return nil, &indexError{0, fmt.Sprintf("index of %d bytes, want %d", len(idx), il), ErrCorrupt}
	}
	if size < il {
		return nil, &indexError{max(size, 0), fmt.Sprintf("a shard of %d bytes cannot hold its index of %d bytes", size, il), mmapfile.ErrTruncated}
	}
	start := size - il // file offset of the index
	lo, hi := int64(0), start
	if spec.atStart {
		start, lo, hi = 0, il, size
	}
	body := idx[:spec.n*16]
	if spec.crc {
		got := crc32.Checksum(body, castagnoli)
		if want := binary.LittleEndian.Uint32(idx[spec.n*16:]); got != want {
			return nil, &indexError{start + spec.n*16, fmt.Sprintf("shard index checksum 0x%08x, its bytes give 0x%08x", want, got), ErrChecksum}
		}
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if spec.big {
		bo = binary.BigEndian
	}
	ent := make([]uint64, 2*spec.n)
	var used []int64 // entries holding data
	for i := int64(0); i < spec.n; i++ {
		off, nb := bo.Uint64(body[16*i:]), bo.Uint64(body[16*i+8:])
		ent[2*i], ent[2*i+1] = off, nb
		at := start + 16*i
		if off == empty && nb == empty {
			continue
		}
		if off == empty || nb == empty || off > math.MaxInt64 || nb > math.MaxInt64 {
			return nil, &indexError{at, fmt.Sprintf("inner chunk %d: offset %d, nbytes %d is neither a chunk nor empty", i, off, nb), ErrCorrupt}
		}
		end := int64(off) + int64(nb)
		if end < 0 || int64(off) < lo || end > hi {
			return nil, &indexError{at, fmt.Sprintf("inner chunk %d: bytes [%d, %d) outside the shard's data [%d, %d)", i, off, end, lo, hi), ErrCorrupt}
		}
		if fixed >= 0 && int64(nb) != fixed {
			return nil, &indexError{at, fmt.Sprintf("inner chunk %d: %d bytes, an uncompressed chunk has %d", i, nb, fixed), ErrCorrupt}
		}
		if nb > 0 {
			used = append(used, i)
		}
	}
	sort.Slice(used, func(a, b int) bool { return ent[2*used[a]] < ent[2*used[b]] })
	for k := 1; k < len(used); k++ {
		p, q := used[k-1], used[k]
		if ent[2*p]+ent[2*p+1] > ent[2*q] {
			return nil, &indexError{start + 16*q, fmt.Sprintf("inner chunk %d at [%d, %d) overlaps inner chunk %d at [%d, %d)", q, ent[2*q], ent[2*q]+ent[2*q+1], p, ent[2*p], ent[2*p]+ent[2*p+1]), ErrCorrupt}
		}
	}
	return ent, nil
}

// shardIndexOf returns the checked index of the shard file key, nil if the
// shard does not exist.
func (s *Store) shardIndexOf(m *meta, key string) (*shardIndex, error) {
	s.mu.Lock()
	si, ok := s.shards[key]
	s.mu.Unlock()
	if ok {
		return si, nil
	}
	size, exists, err := s.statKey(key)
	if err != nil || !exists {
		return nil, err
	}
	il := m.shard.indexLen()
	if size < il {
		return nil, s.errf(key, size, mmapfile.ErrTruncated, "array %q: a shard of %d bytes cannot hold its index of %d bytes", m.name, size, il)
	}
	at := size - il
	if m.shard.atStart {
		at = 0
	}
	idx := make([]byte, il)
	if err := s.readAt(key, idx, at); err != nil {
		return nil, err
	}
	fixed := int64(-1)
	if len(m.chain) == 0 {
		fixed = m.unitBytes()
	}
	ent, ierr := parseShardIndex(idx, size, m.shard, fixed)
	if ierr != nil {
		return nil, s.errf(key, ierr.off, ierr.err, "array %q: %s", m.name, ierr.msg)
	}
	si = &shardIndex{size: size, ent: ent}
	s.mu.Lock()
	if s.shards == nil {
		s.shards = map[string]*shardIndex{}
	}
	s.shards[key] = si
	s.mu.Unlock()
	return si, nil
}

// forget drops what the store remembers of the file key (its decoded
// chunks, its shard index, its mapping), after the file was replaced, the
// key's lock held for writing. It returns the old file's mapping, for the
// caller to close once that lock is let go: no reader holds it then, and
// none can find it again.
func (s *Store) forget(key string) *mapping {
	s.cache.drop(key)
	s.pays.Reset()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.shards, key)
	mp := s.maps[key]
	delete(s.maps, key)
	return mp
}

// keyLocks keep the chunk and shard files of a store in place while they
// are read. A copying read holds its file's lock for reading from finding
// its chunk (the file's size, the shard's index) to the end of its copy;
// replacing the file (Set re-encoding a compressed chunk, a shard
// rewritten) takes it for writing. So a reader never applies an index
// read from the old file to the new one, never copies from a mapping
// unmapped under it, and never keeps a chunk decoded from the old file
// after the replacement. Keys share the locks by their hash: readers
// never wait for one another, and a replacement holds up only the readers
// of its own lock's keys, only while it renames.
type keyLocks [64]struct {
	sync.RWMutex
	_ cpu.CacheLinePad // no two on one cache line
}

var keySeed = maphash.MakeSeed()

// of returns the lock of the file key.
func (l *keyLocks) of(key string) *sync.RWMutex {
	return &l[maphash.String(keySeed, key)%uint64(len(l))].RWMutex
}

// statKey returns the size of the file key.
func (s *Store) statKey(key string) (int64, bool, error) {
	fi, err := fs.Stat(s.fsys, key)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, s.keyErr(key, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, false, s.errf(key, -1, ErrInvalid, "is not a regular file")
	}
	return fi.Size(), true, nil
}

// shardBase is the file offset of a shard's first inner chunk: past an
// index at the start, rounded up to 16 bytes for raw inner chunks.
func shardBase(spec *shardSpec, raw bool) int64 {
	if !spec.atStart {
		return 0
	}
	il := spec.indexLen()
	if raw {
		return (il + 15) / 16 * 16
	}
	return il
}

// shardIndexBytes encodes a shard's index: inner chunk i at byte off[i],
// n[i] bytes long, or empty where n[i] < 0; then its crc32c, where the
// index has one.
func shardIndexBytes(spec *shardSpec, off, n []int64) []byte {
	var bo binary.ByteOrder = binary.LittleEndian
	if spec.big {
		bo = binary.BigEndian
	}
	idx := make([]byte, spec.indexLen())
	for i := range n {
		o, l := uint64(off[i]), uint64(n[i])
		if n[i] < 0 {
			o, l = empty, empty
		}
		bo.PutUint64(idx[16*i:], o)
		bo.PutUint64(idx[16*i+8:], l)
	}
	if spec.crc {
		binary.LittleEndian.PutUint32(idx[spec.n*16:], crc32c(idx[:spec.n*16]))
	}
	return idx
}

// innerInGrid says, for each inner chunk of the shard holding unit u (in
// C order), whether it lies inside the array's chunk grid: those past the
// array's edge are never stored.
func (m *meta) innerInGrid(u []int64) []bool {
	k := len(u)
	g := m.unitGrid()
	out := make([]bool, m.shard.n)
	ip := make([]int64, k)
	for i := range out {
		in := true
		for j := range k {
			first := u[j] / m.shard.perShard[j] * m.shard.perShard[j]
			in = in && first+ip[j] < g[j]
		}
		out[i] = in
		for j := k - 1; j >= 0; j-- {
			if ip[j]++; ip[j] < m.shard.perShard[j] {
				break
			}
			ip[j] = 0
		}
	}
	return out
}

// createShard creates the missing shard of unit u of an array whose inner
// chunks are stored raw, laid out whole: every inner chunk inside the
// grid at a fixed offset, holding the fill value, and the index naming
// them all. Inner chunks are then only ever written in place, so that no
// view of the shard is ever left mapping a replaced file.
func (a *Array) createShard(u []int64) error {
	s, m := a.s, a.m
	key, _ := m.locate(u)
	spec := m.shard
	ub := m.unitBytes()
	base := shardBase(spec, true)
	in := m.innerInGrid(u)
	off, n := make([]int64, spec.n), make([]int64, spec.n)
	end := base
	for i := range in {
		n[i] = -1
		if in[i] {
			off[i], n[i] = end, ub
			end += ub
		}
	}
	idx := shardIndexBytes(spec, off, n)
	size, idxAt := end+int64(len(idx)), end
	if spec.atStart {
		size, idxAt = end, 0
	}
	return s.createMapped(key, size, func(f *os.File) error {
		if !isZero(m.fill) {
			// The fill value, a piece of whole elements at a time.
			piece := make([]byte, min(ub, 1<<20)/int64(len(m.fill))*int64(len(m.fill)))
			for j := 0; j < len(piece); j += len(m.fill) {
				copy(piece[j:], m.fill)
			}
			for i := range in {
				for at := int64(0); in[i] && at < ub; at += int64(len(piece)) {
					if _, err := f.WriteAt(piece[:min(int64(len(piece)), ub-at)], off[i]+at); err != nil {
						return err
					}
				}
			}
		}
		_, err := f.WriteAt(idx, idxAt)
		return err
	})
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
