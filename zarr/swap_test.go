package zarr

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// setStep separates the values Set writes to one element: element i (in
// row-major order) holds i, or i + k·setStep after the k-th Set of it, or
// the fill value 0 while its chunk is missing.
const setStep = 1 << 20

// checkValues fails on an element that holds none of the values its
// element ever held: a value made of two (a torn write), or another
// element's (bytes read at the wrong offset).
func checkValues(got []float64, first int64) error {
	for j, v := range got {
		i := float64(first + int64(j))
		if v != 0 && (v < i || math.Mod(v-i, setStep) != 0) {
			return fmt.Errorf("element %d reads %v, which it never held", first+int64(j), v)
		}
	}
	return nil
}

// readWhileSet runs readers of array a — whole reads, linear reads cut
// across chunks, regions — while set changes elements, and fails on the
// first error or wrong value a reader gets. It returns how many reads ran.
func readWhileSet(t *testing.T, a *Array, set func() error) int64 {
	t.Helper()
	shape := a.Shape()
	total := shape[0] * shape[1]
	var stop atomic.Bool
	var reads atomic.Int64
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	reader := func(read func(pass int) error) {
		defer wg.Done()
		for pass := 0; !stop.Load(); pass++ {
			if err := read(pass); err != nil {
				errs <- err
				return
			}
			reads.Add(1)
		}
	}
	wg.Add(3)
	go reader(func(int) error {
		got, err := Read[float64](a)
		if err != nil {
			return err
		}
		return checkValues(got, 0)
	})
	go reader(func(pass int) error {
		// Runs that start and end inside chunks: partial copies from
		// mappings and from decoded chunks kept for the next read.
		first := int64(pass*37) % (total - 100)
		dst := make([]float64, 100)
		if err := format.ReadAt(a.s, a.i, first, dst); err != nil {
			return err
		}
		return checkValues(dst, first)
	})
	go reader(func(pass int) error {
		// Nearly the whole array: every chunk copied in part.
		r0, c0 := int64(pass%2), int64(pass%3)
		rows, cols := shape[0]-2, shape[1]-3
		got, err := ReadRegion[float64](a, []int64{r0, c0}, []int64{rows, cols})
		if err != nil {
			return err
		}
		for r := range rows {
			if err := checkValues(got[r*cols:(r+1)*cols], (r0+r)*shape[1]+c0); err != nil {
				return err
			}
		}
		return nil
	})
	werr := set()
	stop.Store(true)
	wg.Wait()
	close(errs)
	require.NoError(t, werr)
	for err := range errs {
		require.NoError(t, err)
	}
	return reads.Load()
}

// setCycle sets n elements of a [64, 64] array, spread over its chunks,
// each to its next value.
func setCycle(a *Array, n int) error {
	for k := range n {
		i := int64(k*97) % (64 * 64)
		v := float64(i + int64(1+k)*setStep)
		if err := Set(a, []int64{i / 64, i % 64}, v); err != nil {
			return err
		}
	}
	return nil
}

// Set re-encodes a compressed chunk (or its whole shard) to a file that
// replaces the old one. Readers copying from the chunks meanwhile get
// each element's old value or its new one, and no error: not ErrClosed,
// not a decoding error from an index read before the replacement applied
// to the file after it.
func TestReadsWhileSetReplacesChunks(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"v3 zstd chunks", Options{Chunks: []int64{8, 8}, Compress: "zstd"}},
		{"v2 zlib chunks", Options{Version: 2, Chunks: []int64{8, 8}, Compress: "zlib"}},
		{"zstd shards", Options{Chunks: []int64{8, 8}, Shards: []int64{32, 32}, Compress: "zstd"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(memDir(t), "c.zarr")
			src := (&memSource{}).add("/", layout.F64, []int64{64, 64}, layout.RowMajor, false, ramp(layout.F64, 64*64, 0))
			require.NoError(t, Write(p, src, &c.o))
			s, err := OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			defer s.Close()
			a := s.Arrays()[0]
			reads := readWhileSet(t, a, func() error { return setCycle(a, 300) })
			t.Logf("%d reads during 300 Sets", reads)
		})
	}
}

// Shards of raw inner chunks, written elsewhere without their first
// inner chunk, are mapped for Set, then each rewritten whole, its inner
// chunks moved, when Set creates the missing one. Readers copying from
// the old mappings meanwhile get their values: not ErrClosed, nor values
// read at the offsets of the old index in the new file.
func TestReadsWhileSetRewritesRawShards(t *testing.T) {
	for range 50 {
		s, a, _ := openShardsMissingChunk0(t)
		for i := range int64(32) {
			// Maps shard i: reads then copy from that mapping.
			require.NoError(t, Set(a, []int64{2 * i, 8}, float64(2*i*64+8+setStep)))
		}
		readWhileSet(t, a, func() error {
			// The first Set in each shard's inner chunk 0 rewrites the
			// shard, the second writes in place.
			for k := range 64 {
				i := int64(k%32*2*64 + k/32)
				if err := Set(a, []int64{i / 64, i % 64}, float64(i+setStep)); err != nil {
					return err
				}
			}
			return nil
		})
		require.NoError(t, s.Close())
	}
}

// openShardsMissingChunk0 opens read-write a new store of the [64, 64]
// f64 array 0…4095 in 32 shards [2, 64] of 8 raw inner chunks [2, 8],
// each shard without its inner chunk 0; and its path.
func openShardsMissingChunk0(t *testing.T) (*Store, *Array, string) {
	t.Helper()
	p := filepath.Join(memDir(t), "s.zarr")
	src := (&memSource{}).add("/", layout.F64, []int64{64, 64}, layout.RowMajor, false, ramp(layout.F64, 64*64, 0))
	require.NoError(t, Write(p, src, &Options{Chunks: []int64{2, 8}, Shards: []int64{2, 64}}))
	for i := range 32 {
		dropInnerChunk(t, p, fmt.Sprintf("c/%d/0", i), 8, 0)
	}
	s, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	return s, s.Arrays()[0], p
}

// memDir returns a new temporary directory in memory (/dev/shm) where
// there is one, so that a test of thousands of synced replacements runs in
// seconds, else on disk (t.TempDir).
func memDir(t *testing.T) string {
	if d, err := os.MkdirTemp("/dev/shm", "zarr-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	return t.TempDir()
}

// dropInnerChunk marks inner chunk i of the shard key (of n inner chunks,
// index at the end with its crc32c) as not stored.
func dropInnerChunk(t *testing.T, dir, key string, n, i int) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	idx := b[len(b)-16*n-4:]
	binary.LittleEndian.PutUint64(idx[16*i:], empty)
	binary.LittleEndian.PutUint64(idx[16*i+8:], empty)
	binary.LittleEndian.PutUint32(idx[16*n:], crc32c(idx[:16*n]))
	require.NoError(t, os.WriteFile(p, b, 0o644))
}

// BenchmarkReadChunksInParallel: goroutines (one per core: -cpu 2 runs
// two) copy small boxes, each out of a chunk of its own, from the
// mappings of raw shards whose indexes are read: a read that makes no
// system call, where any lock the readers share would show.
func BenchmarkReadChunksInParallel(b *testing.B) {
	p := filepath.Join(b.TempDir(), "b.zarr")
	src := (&memSource{}).add("/", layout.F64, []int64{64, 1024}, layout.RowMajor, false, ramp(layout.F64, 64*1024, 0))
	if err := Write(p, src, &Options{Chunks: []int64{8, 128}, Shards: []int64{8, 1024}}); err != nil {
		b.Fatal(err)
	}
	s, err := Open(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a := s.Arrays()[0]
	for i := range int64(8) {
		if _, err := ViewChunk[float64](a, i, 0); err != nil { // maps shard i
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		row := 8 * (next.Add(1) % 8) // a shard of its own
		dst := make([]byte, 16*8)
		start, count := []int64{row + 1, 100}, []int64{1, 16}
		for pb.Next() {
			if err := a.ReadRegion(dst, start, count, layout.RowMajor, leOrder); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A copying read keeps the mapping it found while it copies: a Set that
// rewrites the shard at that moment waits for the read, which gets its
// values, not ErrClosed.
func TestReadKeepsTheMappingItFound(t *testing.T) {
	p := filepath.Join(memDir(t), "s.zarr")
	src := (&memSource{}).add("/", layout.F64, []int64{4, 4}, layout.RowMajor, false, ramp(layout.F64, 16, 0))
	require.NoError(t, Write(p, src, &Options{Chunks: []int64{2, 2}, Shards: []int64{4, 4}}))
	dropInnerChunk(t, p, "c/0/0", 4, 3) // creating it rewrites the shard
	s, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	defer s.Close()
	a := s.Arrays()[0]
	require.NoError(t, Set(a, []int64{0, 0}, 100.0)) // maps the shard
	set := make(chan error, 1)
	var once sync.Once
	found := mappingFound
	defer func() { mappingFound = found }()
	mappingFound = func(key string) {
		once.Do(func() {
			go func() { set <- Set(a, []int64{3, 3}, 5.0) }()
			// Time for the rewrite to finish, unless it waits for this
			// read.
			select {
			case err := <-set:
				set <- err
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
	got, err := ReadRegion[float64](a, []int64{0, 0}, []int64{1, 2}) // part of inner chunk 0
	require.NoError(t, err)
	assert.Equal(t, []float64{100, 1}, got)
	require.NoError(t, <-set)
	all, err := Read[float64](a)
	require.NoError(t, err)
	assert.Equal(t, []float64{100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 12, 13, 0, 5}, all)
}

// Views taken while Set rewrites their shards (each missing an inner
// chunk): each view maps the shard that stays, or the Set fails naming
// the view. Every write through a view reaches the store.
func TestViewsTakenWhileSetRewritesShards(t *testing.T) {
	for round := range 20 {
		s, a, p := openShardsMissingChunk0(t)
		want := ramp(layout.F64, 64*64, 0)
		vals := unsafeslice.Cast[float64](want)
		for i := range 32 { // inner chunk 0 of each shard: the fill value
			for r := range 2 {
				for c := range 8 {
					vals[(2*i+r)*64+c] = 0
				}
			}
		}
		setErrs := make([]error, 32)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 32 {
				setErrs[i] = Set(a, []int64{int64(2 * i), 0}, -1.0)
			}
		}()
		for i := range int64(32) {
			v, err := ViewChunk[float64](a, i, 1)
			require.NoError(t, err)
			v[0] = -2 // element [2i, 8]
			vals[2*i*64+8] = -2
		}
		<-done
		for i, err := range setErrs {
			if err != nil {
				require.ErrorIs(t, err, ErrUnsupported, "shard %d", i)
				require.Contains(t, err.Error(), "writable view")
				continue
			}
			vals[2*i*64] = -1
		}
		require.NoError(t, s.Close())
		r, err := Open(p, nil)
		require.NoError(t, err)
		got, err := Read[float64](r.Arrays()[0])
		require.NoError(t, err)
		require.Equal(t, vals, got, "round %d", round)
		require.NoError(t, r.Close())
	}
}

// BenchmarkSetCompressed: Set of one element of a zstd chunk, which
// re-encodes the chunk to a new file renamed over it (synced), on disk.
func BenchmarkSetCompressed(b *testing.B) {
	p := filepath.Join(b.TempDir(), "s.zarr")
	src := (&memSource{}).add("/", layout.F64, []int64{64, 64}, layout.RowMajor, false, ramp(layout.F64, 64*64, 0))
	if err := Write(p, src, &Options{Chunks: []int64{8, 8}, Compress: "zstd"}); err != nil {
		b.Fatal(err)
	}
	s, err := OpenFile(p, mmapfile.ReadWrite, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a := s.Arrays()[0]
	k := 0
	for b.Loop() {
		k++
		if err := Set(a, []int64{int64(k % 64), int64(k * 7 % 64)}, float64(k)); err != nil {
			b.Fatal(err)
		}
	}
}
