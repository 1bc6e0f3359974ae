package zarr

import (
	"bytes"
	"errors"
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
