package zarr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// An array of a type this package cannot read is listed as an array of
// that type (with its size where the store gives one), and reading it
// fails naming the type: it does not pass for a value of no bytes.
func TestUnreadableTypesAreArraysThatFail(t *testing.T) {
	v3 := func(dt string) []byte {
		return []byte(`{"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": ` + dt + `,
			"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
			"chunk_key_encoding": {"name": "default"}, "fill_value": 0,
			"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}`)
	}
	for _, c := range []struct {
		name, key string
		doc       []byte
		typ       string
		size      int64
	}{
		{"<U4", ".zarray", bytes.Replace(zarray("[3]", "[2]", ""), []byte(`"<f8"`), []byte(`"<U4"`), 1), "str4", 48},
		{"|S5", ".zarray", bytes.Replace(zarray("[3]", "[2]", ""), []byte(`"<f8"`), []byte(`"|S5"`), 1), "bytes5", 15},
		{"structured", ".zarray", bytes.Replace(zarray("[3]", "[2]", ""), []byte(`"<f8"`), []byte(`[["a", "<i4"], ["b", "<f8"]]`), 1), "structured", 0},
		{"v3 float128", "zarr.json", v3(`"float128"`), "float128", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "u.zarr")
			writeFile(t, dir, c.key, c.doc)
			s, err := Open(dir, nil)
			require.NoError(t, err)
			defer s.Close()
			r := s.Records()[0]
			assert.Equal(t, format.KindArray, r.Kind)
			assert.Equal(t, c.typ, r.TypeName)
			assert.Equal(t, c.size, r.Size)
			err = s.ReadArray(0, make([]byte, 48), 0, layout.RowMajor, leOrder)
			require.ErrorIs(t, err, ErrUnsupported)
			assert.Contains(t, err.Error(), "type "+c.typ+" cannot be read")
		})
	}
}

// A compression level its codec does not have is refused at open.
func TestCompressorLevelChecked(t *testing.T) {
	for _, c := range []struct{ comp, text string }{
		{`{"id": "gzip", "level": 1099511627776}`, "gzip level 1099511627776 is not -1 to 9"},
		{`{"id": "zlib", "level": 10}`, "zlib level 10 is not -1 to 9"},
		{`{"id": "zstd", "level": 23}`, "zstd level 23 is not -131072 to 22"},
	} {
		dir := filepath.Join(t.TempDir(), "l.zarr")
		writeFile(t, dir, ".zarray", bytes.Replace(zarray("[4]", "[2]", ""), []byte(`"compressor": null`), []byte(`"compressor": `+c.comp), 1))
		_, err := Open(dir, nil)
		require.ErrorIs(t, err, ErrInvalid, c.comp)
		assert.Contains(t, err.Error(), c.text)
	}
	for _, comp := range []string{`{"id": "gzip", "level": -1}`, `{"id": "zstd", "level": -5}`, `{"id": "zlib"}`} {
		dir := filepath.Join(t.TempDir(), "l.zarr")
		writeFile(t, dir, ".zarray", bytes.Replace(zarray("[4]", "[2]", ""), []byte(`"compressor": null`), []byte(`"compressor": `+comp), 1))
		s, err := Open(dir, nil)
		require.NoError(t, err, comp)
		s.Close()
	}
}

// After Close, Array is ErrClosed too, naming the store.
func TestArrayAfterClose(t *testing.T) {
	p, _ := writeStore(t, Options{})
	s, err := Open(p, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	a, err := s.Array("x")
	assert.Nil(t, a)
	require.True(t, errors.Is(err, mmapfile.ErrClosed), "%v", err)
	assert.True(t, strings.Contains(err.Error(), p), "%v", err)
}

// createSharded makes a store of one f64 array [4, 4] in one shard of
// four raw inner chunks [2, 2], with the fill value given.
func createSharded(t *testing.T, fill any) (*Store, *Array, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.zarr")
	s, err := Create(p, []ArraySpec{{Name: "x", Type: layout.F64, Shape: []int64{4, 4}, Chunks: []int64{2, 2}, Shards: []int64{4, 4}, FillValue: fill}}, nil)
	require.NoError(t, err)
	a, err := s.Array("x")
	require.NoError(t, err)
	return s, a, p
}

// Filling a new sharded store through views of all its inner chunks,
// taken before any is written: every view stays valid (creating an inner
// chunk never moves another) and every write reaches the store.
func TestShardViewsTakenTogetherStayValid(t *testing.T) {
	for _, fill := range []any{nil, 7.5} {
		s, a, p := createSharded(t, fill)
		var views [][]float64
		for _, idx := range [][]int64{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
			v, err := ViewChunk[float64](a, idx...)
			require.NoError(t, err, "%v", idx)
			views = append(views, v)
		}
		for k, v := range views {
			for j := range v {
				v[j] = float64(10*k + j)
			}
		}
		require.NoError(t, s.Close())
		r, err := Open(p, nil)
		require.NoError(t, err)
		got, err := Read[float64](r.Arrays()[0])
		require.NoError(t, err)
		assert.Equal(t, []float64{0, 1, 10, 11, 2, 3, 12, 13, 20, 21, 30, 31, 22, 23, 32, 33}, got, "fill %v", fill)
		require.NoError(t, r.Close())
	}
}

// One goroutine fills a view of inner chunk 0 while another takes views
// of the shard's other inner chunks and sets elements: no write is lost.
func TestShardViewFilledWhileOthersAreCreated(t *testing.T) {
	for round := range 20 {
		s, a, p := createSharded(t, nil)
		v0, err := ViewChunk[float64](a, 0, 0)
		require.NoError(t, err)
		done := make(chan error)
		go func() {
			for _, idx := range [][]int64{{0, 1}, {1, 0}, {1, 1}} {
				v, err := ViewChunk[float64](a, idx...)
				if err != nil {
					done <- err
					return
				}
				v[0] = float64(idx[0]*2 + idx[1])
			}
			done <- Set(a, []int64{3, 3}, 99.0)
		}()
		for pass := range 2000 {
			for j := range v0 {
				v0[j] = float64(pass + j)
			}
		}
		require.NoError(t, <-done)
		require.NoError(t, s.Close())
		r, err := Open(p, nil)
		require.NoError(t, err)
		got, err := Read[float64](r.Arrays()[0])
		require.NoError(t, err)
		assert.Equal(t, []float64{1999, 2000, 1, 0, 2001, 2002, 0, 0, 2, 0, 3, 0, 0, 0, 0, 99}, got, "round %d", round)
		require.NoError(t, r.Close())
	}
}

// A shard written elsewhere with an inner chunk missing: creating that
// chunk would rewrite the shard, so while a writable view of the shard is
// live it fails naming the view, and the view stays valid.
func TestShardRewriteRefusedUnderAView(t *testing.T) {
	p := shardStore(t, "")
	setIndex(t, p, 3, empty, empty)
	s, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	a := s.Arrays()[0]
	v, err := ViewChunk[float64](a, 0, 0)
	require.NoError(t, err)
	_, err = ViewChunk[float64](a, 1, 1)
	require.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "writable view")
	require.ErrorIs(t, Set(a, []int64{3, 3}, 1.0), ErrUnsupported)
	v[0] = -1
	require.NoError(t, s.Close())

	// Without a live view, the shard is rewritten with every inner chunk
	// in place, so that later views create nothing.
	s, err = OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	a = s.Arrays()[0]
	require.NoError(t, Set(a, []int64{3, 3}, 5.0))
	got, err := Read[float64](a)
	require.NoError(t, err)
	assert.Equal(t, []float64{-1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 12, 13, 0, 5}, got)
	require.NoError(t, s.Close())
}

// A store replaced (or removed) under an open reader: reads give the old
// values or an error saying so, never the fill value for chunks that the
// replacement deleted. A chunk missing from a store still in place reads
// as the fill value.
func TestStoreReplacedUnderReader(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     Options
		swap  func(t *testing.T, p string)
		shard bool
	}{
		{"replaced by Write", Options{}, func(t *testing.T, p string) {
			require.NoError(t, Write(p, (&memSource{}).add("x", layout.F64, []int64{5, 7}, layout.RowMajor, false, ramp(layout.F64, 35, 100)), &Options{Chunks: []int64{2, 3}}))
		}, false},
		{"sharded, replaced by Write", Options{Shards: []int64{4, 6}}, func(t *testing.T, p string) {
			require.NoError(t, Write(p, (&memSource{}).add("x", layout.F64, []int64{5, 7}, layout.RowMajor, false, ramp(layout.F64, 35, 100)), &Options{Chunks: []int64{2, 3}}))
		}, true},
		{"removed", Options{Version: 2}, func(t *testing.T, p string) {
			require.NoError(t, os.RemoveAll(p))
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, _ := writeStore(t, c.o)
			s, err := Open(p, nil)
			require.NoError(t, err)
			defer s.Close()
			a, err := s.Array("x")
			require.NoError(t, err)
			c.swap(t, p)
			got, err := Read[float64](a)
			require.Error(t, err, "read %v", got)
			require.ErrorIs(t, err, ErrReplaced)
			assert.Contains(t, err.Error(), p)
			_, err = ReadRegion[float64](a, []int64{4, 6}, []int64{1, 1})
			require.ErrorIs(t, err, ErrReplaced)
		})
	}
	// Still in place: a chunk removed by hand is the fill value.
	p, _ := writeStore(t, Options{})
	s, err := Open(p, nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, os.Remove(filepath.Join(p, "x", "c", "0", "0")))
	got, err := ReadRegion[float64](s.Arrays()[0], []int64{0, 0}, []int64{2, 4})
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0, 0, 3, 0, 0, 0, 10}, got)
}

// countingSource serves element i of every array as byte i%251 and
// remembers the largest read asked of it.
type countingSource struct {
	recs    []format.Record
	largest int
}

func (c *countingSource) Records() []format.Record { return c.recs }

func (c *countingSource) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	c.largest = max(c.largest, len(dst))
	for j := range dst {
		dst[j] = byte((first + int64(j)) % 251)
	}
	return nil
}

// The writer holds at most writeBudget bytes of the source at once,
// whatever the shape: a row of chunks larger than that is written in
// bands, and every value arrives.
func TestWriteMemoryBounded(t *testing.T) {
	defer func(b int64) { writeBudget = b }(writeBudget)
	writeBudget = 4096
	for _, c := range []struct {
		name          string
		shape         []int64
		order         layout.Order
		chunks, shard []int64
		compress      string
	}{
		{"a row of chunks past the budget", []int64{3, 5000}, layout.RowMajor, []int64{1, 100}, nil, ""},
		{"compressed", []int64{3, 5000}, layout.RowMajor, []int64{2, 300}, nil, "zstd"},
		{"sharded", []int64{3, 5000}, layout.RowMajor, []int64{1, 100}, []int64{2, 400}, ""},
		{"column-major", []int64{5000, 3}, layout.ColMajor, []int64{100, 1}, nil, ""},
		{"3-d, a chunk past the budget", []int64{2, 3, 3000}, layout.RowMajor, []int64{1, 2, 3000}, nil, "gzip"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, _ := layout.Count(c.shape)
			src := &countingSource{recs: []format.Record{{Kind: format.KindArray, Array: layout.Array{Name: "x", Type: layout.U8, Shape: c.shape, Order: c.order, Offset: -1, Size: n}}}}
			p := filepath.Join(t.TempDir(), "b.zarr")
			require.NoError(t, Write(p, src, &Options{Chunks: c.chunks, Shards: c.shard, Compress: c.compress}))
			ub := c.chunks[0]
			for _, x := range c.chunks[1:] {
				ub *= x
			}
			assert.LessOrEqual(t, int64(src.largest), max(writeBudget, ub), "the largest read")
			s, err := Open(p, nil)
			require.NoError(t, err)
			defer s.Close()
			got := make([]byte, n)
			require.NoError(t, s.ReadArray(0, got, 0, c.order, leOrder))
			for j := range got {
				if got[j] != byte(j%251) {
					t.Fatalf("element %d (in %v order) is %d, want %d", j, c.order, got[j], j%251)
				}
			}
		})
	}
}

// What cannot be written in reasonable time is refused at once, naming
// its size, and leaves nothing behind; what a reader of the store would
// refuse is refused before anything is written.
func TestWriteRefusesWhatItCannotWriteReadably(t *testing.T) {
	one := func(shape ...int64) format.Source {
		return &countingSource{recs: []format.Record{{Kind: format.KindArray, Array: layout.Array{Name: "x", Type: layout.F64, Shape: shape, Offset: -1}}}}
	}
	rank := func(k int) []int64 {
		s := make([]int64, k)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	for _, c := range []struct {
		name string
		src  format.Source
		o    Options
		err  error
		text string
	}{
		{"10^18 elements", one(1e9, 1e9), Options{}, ErrUnsupported, "8000007408000000000 bytes in 954000000000 chunk files"},
		{"2^65 bytes", one(1<<31, 1<<31), Options{}, ErrUnsupported, "more than 2^63 bytes"},
		{"a billion chunk files", one(1e9), Options{Chunks: []int64{1}}, ErrUnsupported, "8000000000 bytes in 1000000000 chunk files"},
		{"rank 40", one(rank(40)...), Options{}, format.ErrNotRepresentable, "rank 40 is more than 32"},
		{"rank 70", one(rank(70)...), Options{Version: 2}, format.ErrNotRepresentable, "rank 70 is more than 32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			err := Write(filepath.Join(dir, "o.zarr"), c.src, &c.o)
			require.ErrorIs(t, err, c.err)
			assert.Contains(t, err.Error(), c.text)
			left, _ := os.ReadDir(dir)
			assert.Empty(t, left, "left behind")
		})
	}
}

// A shape with a zero and a huge dimension gets chunks whose size does
// not overflow, and the store reads back.
func TestWriteHugeEmptyShape(t *testing.T) {
	p := filepath.Join(t.TempDir(), "e.zarr")
	src := &countingSource{recs: []format.Record{{Kind: format.KindArray, Array: layout.Array{Name: "x", Type: layout.F64, Shape: []int64{0, 1<<63 - 1}, Offset: -1}}}}
	require.NoError(t, Write(p, src, nil))
	s, err := Open(p, nil)
	require.NoError(t, err)
	defer s.Close()
	c := s.Arrays()[0].ChunkShape()
	assert.LessOrEqual(t, c[0]*c[1]*8, int64(chunkTarget), "chunks %v", c)
	assert.Equal(t, []int64{0, 1<<63 - 1}, s.Arrays()[0].Shape())
	assert.Equal(t, []int64{0, (1<<63-1)/c[1] + 1}, s.Arrays()[0].Grid())
}

// An array cannot sit where another array's group is; many arrays are
// checked in time linear in their number.
func TestWriteArrayInsideArray(t *testing.T) {
	for _, names := range [][]string{{"a", "a/b"}, {"g/a/b/c", "x", "g/a"}} {
		src := &countingSource{}
		for _, n := range names {
			src.recs = append(src.recs, format.Record{Kind: format.KindArray, Array: layout.Array{Name: n, Type: layout.U8, Shape: []int64{1}, Offset: -1, Size: 1}})
		}
		err := Write(filepath.Join(t.TempDir(), "n.zarr"), src, nil)
		require.ErrorIs(t, err, format.ErrNotRepresentable, "%v", names)
		assert.Contains(t, err.Error(), "an array cannot hold another array")
	}
}

// A writer still running after its stage was aborted (by a signal
// handler's atomicfile.AbortAll) cannot make the stage again: its files
// fail and nothing is left beside the target.
func TestStageAbortedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	st, err := newStage(filepath.Join(dir, "t.zarr"), 0)
	require.NoError(t, err)
	require.NoError(t, st.write("a/c/0", []byte("x")))
	st.tmp.Abort()
	assert.Error(t, st.write("b/c/0", []byte("y")))
	assert.Error(t, st.write("a/c/1", []byte("y")))
	st.abort()
	left, _ := os.ReadDir(dir)
	assert.Empty(t, left)
}

// Set on a store whose directory was moved away and replaced by another
// at its path (by hand, which the advisory lock does not stop) fails with
// ErrReplaced and leaves the new store as it was, whether the chunk is
// changed in place or re-encoded to a new file.
func TestSetAfterReplaced(t *testing.T) {
	for _, o := range []Options{{}, {Compress: "zlib"}, {Shards: []int64{4, 6}}} {
		t.Run(o.Compress+fmt.Sprint(o.Shards), func(t *testing.T) {
			p, _ := writeStore(t, o)
			s, err := OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			defer s.Close()
			a, err := s.Array("x")
			require.NoError(t, err)
			require.NoError(t, os.Rename(p, p+".moved"))
			q, _ := writeStore(t, o)
			require.NoError(t, os.Rename(q, p))
			want := files(t, p)
			err = Set(a, []int64{1, 1}, 42.0)
			require.ErrorIs(t, err, ErrReplaced)
			assert.Contains(t, err.Error(), p)
			assert.Equal(t, want, files(t, p))
		})
	}
}
