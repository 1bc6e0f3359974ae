package zarr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"sort"

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

// forget drops what the store remembers of the file key (its shard index,
// its mapping), after the file was replaced.
func (s *Store) forget(key string) error {
	s.cache.drop(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.shards, key)
	if mp, ok := s.maps[key]; ok {
		delete(s.maps, key)
		return mp.f.Close()
	}
	return nil
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
