package zarr

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/blosc"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zarray is a v2 .zarray for an f8 array.
func zarray(shape, chunks, extra string) []byte {
	return []byte(`{"zarr_format": 2, "shape": ` + shape + `, "chunks": ` + chunks + `, "dtype": "<f8", "compressor": null, "fill_value": 0, "order": "C", "filters": null` + extra + `}`)
}

// openAndRead opens a store and reads every array whole.
func openAndRead(dir string) error {
	s, err := Open(dir, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	for i, r := range s.Records() {
		n, _ := layout.ByteSize(r.Type, r.Shape)
		if err := s.ReadArray(i, make([]byte, n), 0, layout.RowMajor, leOrder); err != nil {
			return err
		}
	}
	return nil
}

// shardStore writes a v3 store of one f64 [4, 4] array (values 0…15) in
// one shard [4, 4] of inner chunks [2, 2], raw, index at the end with its
// crc32c: shard c/0/0 is 4·32 data bytes then the 68-byte index at 128.
func shardStore(t *testing.T, compress string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.zarr")
	err := Write(p, (&memSource{}).add("/", layout.F64, []int64{4, 4}, layout.RowMajor, false, ramp(layout.F64, 16, 0)),
		&Options{Chunks: []int64{2, 2}, Shards: []int64{4, 4}, Compress: compress})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// setIndex rewrites entry i of shard c/0/0's index (at the end, 4 inner
// chunks) and fixes the index's crc32c.
func setIndex(t *testing.T, dir string, i int, off, n uint64) {
	t.Helper()
	p := filepath.Join(dir, "c", "0", "0")
	b, _ := os.ReadFile(p)
	idx := b[len(b)-68:]
	binary.LittleEndian.PutUint64(idx[16*i:], off)
	binary.LittleEndian.PutUint64(idx[16*i+8:], n)
	binary.LittleEndian.PutUint32(idx[64:], crc32c(idx[:64]))
	os.WriteFile(p, b, 0o644)
}

// chunkDirOutside writes a v2 store of a [2, 2] array whose chunk
// directory 0 is a symlink to a directory outside it holding chunk 0/0.
func chunkDirOutside(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "h.zarr")
	writeFile(t, dir, ".zarray", zarray("[2, 2]", "[1, 2]", `, "dimension_separator": "/"`))
	ext := t.TempDir()
	os.WriteFile(filepath.Join(ext, "0"), make([]byte, 16), 0o644)
	os.Symlink(ext, filepath.Join(dir, "0"))
	return dir
}

// TestChunkDirectoriesStayInside: the directories of chunk files, opened
// once and kept for the store's later opens, are opened inside the store
// like the files themselves (a symlink out of it is refused, every time).
func TestChunkDirectoriesStayInside(t *testing.T) {
	s, err := Open(chunkDirOutside(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 {
		if f, err := s.openInside("0/0", os.O_RDONLY); err == nil {
			f.Close()
			t.Fatal("opened a chunk through a directory outside the store")
		}
	}
	if f, err := s.openInside("1/0", os.O_RDONLY); !errors.Is(err, fs.ErrNotExist) {
		if f != nil {
			f.Close()
		}
		t.Fatalf("missing chunk 1/0: %v, want fs.ErrNotExist", err)
	}
}

func TestHostile(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(outside, make([]byte, 16), 0o644)
	zlibOf := func(n int) []byte {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		w.Write(make([]byte, n))
		w.Close()
		return b.Bytes()
	}
	v2 := func(t *testing.T, files map[string][]byte) string {
		dir := filepath.Join(t.TempDir(), "h.zarr")
		for k, v := range files {
			writeFile(t, dir, k, v)
		}
		return dir
	}
	cases := []struct {
		name  string
		store func(t *testing.T) string
		err   error
		key   string
		off   int64
		text  string
	}{
		{"shape overflows", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": zarray("[4611686018427387904, 4611686018427387904]", "[1, 1]", "")})
		}, ErrInvalid, ".zarray", -1, "overflows"},
		{"chunk size overflows", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": zarray("[2, 2]", "[1099511627776, 1099511627776]", "")})
		}, ErrInvalid, ".zarray", -1, "overflows"},
		{"zero chunk size", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": zarray("[2, 2]", "[0, 1]", "")})
		}, ErrInvalid, ".zarray", -1, "not positive"},
		{"negative chunk size", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": zarray("[2]", "[-3]", "")})
		}, ErrInvalid, ".zarray", -1, "not positive"},
		{"negative shape", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": zarray("[-2]", "[3]", "")})
		}, ErrInvalid, ".zarray", -1, "negative"},
		{"rank mismatch", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": zarray("[2, 3]", "[3]", "")})
		}, ErrInvalid, ".zarray", -1, "rank"},
		{"not JSON", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": []byte(`{"zarr_format": 2, "shape": [2,]}`)})
		}, ErrInvalid, ".zarray", 32, "not JSON"},
		{"shape not integers", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": zarray(`[2.5]`, "[3]", "")})
		}, ErrInvalid, ".zarray", 32, "shape"},
		{"filters", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": bytes.Replace(zarray("[2]", "[3]", ""), []byte(`"filters": null`), []byte(`"filters": [{"id": "delta", "dtype": "<f8"}]`), 1)})
		}, ErrUnsupported, ".zarray", -1, `"delta"`},
		{"consolidated key with ..", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zgroup": []byte(`{"zarr_format": 2}`),
				".zmetadata": []byte(`{"zarr_consolidated_format": 1, "metadata": {"../x/.zarray": {}}}`)})
		}, ErrInvalid, ".zmetadata", -1, `"../x/.zarray"`},
		{"consolidated absolute key", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zgroup": []byte(`{"zarr_format": 2}`),
				".zmetadata": []byte(`{"zarr_consolidated_format": 1, "metadata": {"/etc/.zarray": {}}}`)})
		}, ErrInvalid, ".zmetadata", -1, `"/etc/.zarray"`},
		{"chunk symlinked out of the store", func(t *testing.T) string {
			dir := v2(t, map[string][]byte{".zarray": zarray("[2]", "[2]", "")})
			os.Symlink(outside, filepath.Join(dir, "0"))
			return dir
		}, ErrInvalid, "0", -1, "leaves the store"},
		{"chunk directory symlinked out of the store", func(t *testing.T) string {
			return chunkDirOutside(t)
		}, ErrInvalid, "0/0", -1, "leaves the store"},
		{"group symlinked out of the store", func(t *testing.T) string {
			dir := v2(t, map[string][]byte{".zgroup": []byte(`{"zarr_format": 2}`)})
			ext := v2(t, map[string][]byte{".zarray": zarray("[2]", "[2]", "")})
			os.Symlink(ext, filepath.Join(dir, "g"))
			return dir
		}, ErrInvalid, "g", -1, "leaves the store"},
		{"chunk shorter than a chunk", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": zarray("[3]", "[2]", ""), "0": make([]byte, 16), "1": make([]byte, 11)})
		}, mmapfile.ErrTruncated, "1", 11, "16"},
		{"chunk longer than a chunk", func(t *testing.T) string {
			return v2(t, map[string][]byte{".zarray": zarray("[3]", "[2]", ""), "0": make([]byte, 17)})
		}, ErrCorrupt, "0", 16, "1 past"},
		{"zlib chunk inflates past its size", func(t *testing.T) string {
			z := bytes.Replace(zarray("[4]", "[2]", ""), []byte(`"compressor": null`), []byte(`"compressor": {"id": "zlib", "level": 1}`), 1)
			return v2(t, map[string][]byte{".zarray": z, "0": zlibOf(16), "1": zlibOf(1 << 20)})
		}, ErrCorrupt, "1", 0, "more than the chunk's 16 bytes"},
		{"zlib chunk decodes short", func(t *testing.T) string {
			z := bytes.Replace(zarray("[4]", "[2]", ""), []byte(`"compressor": null`), []byte(`"compressor": {"id": "zlib", "level": 1}`), 1)
			return v2(t, map[string][]byte{".zarray": z, "0": zlibOf(15)})
		}, ErrCorrupt, "0", 0, "15 bytes"},
		{"zstd chunk is garbage", func(t *testing.T) string {
			z := bytes.Replace(zarray("[4]", "[2]", ""), []byte(`"compressor": null`), []byte(`"compressor": {"id": "zstd", "level": 1}`), 1)
			return v2(t, map[string][]byte{".zarray": z, "0": []byte("not zstd at all")})
		}, ErrCorrupt, "0", 0, "zstd"},
		{"blosc chunk is garbage", func(t *testing.T) string {
			z := bytes.Replace(zarray("[4]", "[2]", ""), []byte(`"compressor": null`), []byte(`"compressor": {"id": "blosc", "cname": "lz4"}`), 1)
			return v2(t, map[string][]byte{".zarray": z, "0": []byte("whatever")})
		}, ErrCorrupt, "0", 0, "cannot hold a blosc header"},
		{"blosc chunk decodes to more than the chunk", func(t *testing.T) string {
			z := bytes.Replace(zarray("[4]", "[2]", ""), []byte(`"compressor": null`), []byte(`"compressor": {"id": "blosc", "cname": "lz4"}`), 1)
			frame, err := blosc.Encode(nil, make([]byte, 1<<20), blosc.DefaultOptions(8))
			if err != nil {
				t.Fatal(err)
			}
			return v2(t, map[string][]byte{".zarray": z, "0": frame})
		}, ErrCorrupt, "0", 0, "more than the chunk's 16 bytes"},
		{"shard index points past the file", func(t *testing.T) string {
			p := shardStore(t, "")
			setIndex(t, p, 2, 100, 32)
			return p
		}, ErrCorrupt, "c/0/0", 128 + 32, "outside the shard's data [0, 128)"},
		{"shard index entries overlap", func(t *testing.T) string {
			p := shardStore(t, "zstd")
			setIndex(t, p, 3, 0, 8)
			return p
		}, ErrCorrupt, "c/0/0", -2, "overlaps inner chunk"},
		{"shard index crc32c", func(t *testing.T) string {
			p := shardStore(t, "")
			f := filepath.Join(p, "c", "0", "0")
			b, _ := os.ReadFile(f)
			b[130] ^= 1
			os.WriteFile(f, b, 0o644)
			return p
		}, ErrChecksum, "c/0/0", 192, "checksum"},
		{"raw inner chunk of the wrong size", func(t *testing.T) string {
			p := shardStore(t, "")
			setIndex(t, p, 1, 32, 24)
			return p
		}, ErrCorrupt, "c/0/0", 128 + 16, "24 bytes, an uncompressed chunk has 32"},
		{"shard shorter than its index", func(t *testing.T) string {
			p := shardStore(t, "")
			os.Truncate(filepath.Join(p, "c", "0", "0"), 60)
			return p
		}, mmapfile.ErrTruncated, "c/0/0", 60, "cannot hold its index"},
		{"crc32c codec mismatch", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "c.zarr")
			copyDir(t, "testdata/v3/v2keys_zstd_crc.zarr", p)
			f := filepath.Join(p, "0", "0", "0")
			b, _ := os.ReadFile(f)
			b[len(b)-1] ^= 0x80
			os.WriteFile(f, b, 0o644)
			return p
		}, ErrChecksum, "0/0/0", 0, "checksum"},
		{"unknown v3 codec", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "c.zarr")
			copyDir(t, "testdata/v3/transpose_big_gzip.zarr", p)
			editFile(t, filepath.Join(p, "zarr.json"), `"gzip"`, `"bz2"`)
			return p
		}, ErrUnsupported, "c.0.0", 0, `codec "bz2"`},
		{"unknown v3 member", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "c.zarr")
			copyDir(t, "testdata/v3/spec_example.zarr", p)
			editFile(t, filepath.Join(p, "zarr.json"), `"zarr_format": 3,`, `"zarr_format": 3, "chunk_memory_layout": "C",`)
			return p
		}, ErrUnsupported, "zarr.json", -1, `"chunk_memory_layout"`},
		{"storage transformers", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "c.zarr")
			copyDir(t, "testdata/v3/spec_example.zarr", p)
			editFile(t, filepath.Join(p, "zarr.json"), `"zarr_format": 3,`, `"zarr_format": 3, "storage_transformers": [{"name": "x"}],`)
			return p
		}, ErrUnsupported, "zarr.json", -1, "storage_transformers"},
		{"inner chunks do not divide the shard", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "c.zarr")
			copyDir(t, "testdata/v3/sharded_end.zarr", p)
			editFile(t, filepath.Join(p, "zarr.json"), `"chunk_shape": [
                    2,
                    2
                ]`, `"chunk_shape": [3, 2]`)
			return p
		}, ErrInvalid, "zarr.json", -1, "does not divide"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.store(t)
			err := openAndRead(dir)
			var fe *FormatError
			if !errors.Is(err, c.err) || !errors.As(err, &fe) {
				t.Fatalf("got %v, want %v", err, c.err)
			}
			if fe.File != dir || fe.Key != c.key || (c.off != -2 && fe.Offset != c.off) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("got file %q key %q offset %d: %v; want key %q offset %d, naming %q", fe.File, fe.Key, fe.Offset, err, c.key, c.off, c.text)
			}
		})
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, _ := os.ReadFile(p)
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
}

func editFile(t *testing.T, p, old, new string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s has no %q", p, old)
	}
	os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

// TestTruncatedEverywhere cuts a raw chunk, a shard and a metadata
// document at every byte: each cut is an error naming the file and, for
// chunks and metadata (mmapfile.ErrTruncated), the offset where the file ends.
func TestTruncatedEverywhere(t *testing.T) {
	p, _ := writeStore(t, Options{})
	chunk := filepath.Join(p, "x", "c", "1", "1")
	full, _ := os.ReadFile(chunk)
	for n := 0; n < len(full); n++ {
		os.WriteFile(chunk, full[:n], 0o644)
		err := openAndRead(p)
		var fe *FormatError
		if !errors.Is(err, mmapfile.ErrTruncated) || !errors.As(err, &fe) || fe.Key != "x/c/1/1" || fe.Offset != int64(n) {
			t.Fatalf("chunk cut at %d: %v", n, err)
		}
	}
	os.WriteFile(chunk, full, 0o644)
	sp := shardStore(t, "")
	shard := filepath.Join(sp, "c", "0", "0")
	full, _ = os.ReadFile(shard)
	for n := 0; n < len(full); n++ {
		os.WriteFile(shard, full[:n], 0o644)
		err := openAndRead(sp)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Key != "c/0/0" || fe.Offset < 0 || fe.Offset > int64(n) {
			t.Fatalf("shard cut at %d: %v", n, err)
		}
		if n < 68 && (!errors.Is(err, mmapfile.ErrTruncated) || fe.Offset != int64(n)) {
			t.Fatalf("shard cut at %d: %v", n, err)
		}
	}
	os.WriteFile(shard, full, 0o644)
	meta := filepath.Join(p, "zarr.json") // holds the consolidated metadata
	full, _ = os.ReadFile(meta)
	for n := 0; n < len(full)-1; n++ {
		os.WriteFile(meta, full[:n], 0o644)
		err := openAndRead(p)
		var fe *FormatError
		if !errors.Is(err, ErrInvalid) || !errors.Is(err, mmapfile.ErrTruncated) || !errors.As(err, &fe) || fe.File != p || fe.Key != "zarr.json" || fe.Offset != int64(n) {
			t.Fatalf("zarr.json cut at %d: %v", n, err)
		}
	}
}

// A store of more chunk directories than are kept open reads whole, and
// through a view of each chunk, with at most maxOpenDirs of them open at
// once.
func TestChunkDirectoriesKeptOpenAreBounded(t *testing.T) {
	const rows = 3 * maxOpenDirs // chunk keys c/<row>/0: one directory a row
	p := filepath.Join(t.TempDir(), "d.zarr")
	want := ramp(layout.F64, 2*rows, 0)
	require.NoError(t, Write(p, (&memSource{}).add("/", layout.F64, []int64{rows, 2}, layout.RowMajor, false, want), &Options{Chunks: []int64{1, 2}}))
	s, err := Open(p, nil)
	require.NoError(t, err)
	defer s.Close()
	got, err := Read[float64](s.Arrays()[0])
	require.NoError(t, err)
	assert.Equal(t, want, unsafeslice.Bytes(got))
	a := s.Arrays()[0]
	for i := range rows {
		v, err := ViewChunk[float64](a, int64(i), 0)
		require.NoError(t, err)
		require.Equal(t, []float64{float64(2 * i), float64(2*i + 1)}, v)
		assert.LessOrEqual(t, len(s.dirs), maxOpenDirs)
	}
	assert.NotEmpty(t, s.dirs)
}
