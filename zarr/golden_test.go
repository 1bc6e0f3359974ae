package zarr

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// goldenV3 are the v3 stores testdata/make_v3.py builds by hand from the
// specification's examples and rules.
var goldenV3 = []struct {
	name    string
	records []string
	types   []layout.Type
}{
	{"spec_example", []string{"/"}, []layout.Type{layout.F64}},
	{"transpose_big_gzip", []string{"/"}, []layout.Type{layout.I32}},
	{"v2keys_zstd_crc", []string{"/"}, []layout.Type{layout.U16}},
	{"sharded_end", []string{"/"}, []layout.Type{layout.F32}},
	{"sharded_start", []string{"/"}, []layout.Type{layout.I64}},
	{"group", []string{"/half", "/hexfill", "/scalar", "/sub/cplx", "/sub/flags"}, []layout.Type{layout.F16, layout.F32, layout.I8, layout.C64, layout.Bool}},
}

// TestGoldenV3 reads every golden store, from its directory and through
// NewReader from an fs.FS, and compares every array with its expected
// values.
func TestGoldenV3(t *testing.T) {
	for _, g := range goldenV3 {
		t.Run(g.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "v3", g.name+".zarr")
			want, err := os.ReadFile(filepath.Join("testdata", "v3", g.name+".expect"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			fsys, err := NewReader(os.DirFS(dir), nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.Version() != "3" || s.Format() != "zarr" {
				t.Errorf("version %q format %q", s.Version(), s.Format())
			}
			var names []string
			var got, gotFS []byte
			for i, r := range s.Records() {
				names = append(names, r.Name)
				if r.Type != g.types[i] {
					t.Errorf("%s: type %s, want %s", r.Name, r.Type, g.types[i])
				}
				got = append(got, readAll(t, s, i)...)
				gotFS = append(gotFS, readAll(t, fsys, i)...)
			}
			if !slices.Equal(names, g.records) {
				t.Errorf("records %v, want %v", names, g.records)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("values differ:\n got %v\nwant %v", got, want)
			}
			if !bytes.Equal(gotFS, want) {
				t.Errorf("values through NewReader differ")
			}
		})
	}
}

// TestGoldenV3Details checks what the golden stores say beyond their
// values: names, attributes, chunk shapes, views of shards.
func TestGoldenV3Details(t *testing.T) {
	s, err := Open("testdata/v3/spec_example.zarr", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := s.Arrays()[0]
	if d := a.DimensionNames(); !slices.Equal(d, []string{"rows", "columns"}) {
		t.Errorf("dimension names %v", d)
	}
	if at := a.Attributes(); at["foo"] != 42.0 || at["bar"] != "apples" {
		t.Errorf("attributes %v", at)
	}
	// A missing chunk reads as "NaN" (NumPy's quiet NaN) and cannot be
	// viewed.
	v, err := ReadRegion[float64](a, []int64{4, 0}, []int64{2, 2})
	if err != nil || len(v) != 4 || math.Float64bits(v[0]) != 0x7ff8000000000000 {
		t.Errorf("missing chunk read %v, %v", v, err)
	}
	if _, err := ViewChunk[float64](a, 1, 0); !errors.Is(err, ErrMissingChunk) {
		t.Errorf("view of a missing chunk: %v", err)
	}
	// A chunk index of the wrong rank is a wrong-rank call, as for Set,
	// not an index outside the grid.
	for _, idx := range [][]int64{{0}, {0, 0, 0}} {
		_, err := ViewChunk[float64](a, idx...)
		if !errors.Is(err, layout.ErrIndexCount) || !errors.Is(err, mmapfile.ErrOutOfRange) {
			t.Errorf("view of chunk %v: %v, want layout.ErrIndexCount", idx, err)
		}
	}
	if _, err := ViewChunk[float64](a, 9, 0); !errors.Is(err, layout.ErrIndexRange) || !errors.Is(err, mmapfile.ErrOutOfRange) {
		t.Errorf("view of chunk [9,0]: %v, want layout.ErrIndexRange", err)
	}
	// Chunk (0, 0) is a raw little-endian block: a view of its file.
	c, err := ViewChunk[float64](a, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c, []float64{0, 0.25, 1.25, 1.5, 2.5, 2.75, 3.75, 4}) {
		t.Errorf("chunk (0, 0) = %v", c)
	}

	sh, err := Open("testdata/v3/sharded_end.zarr", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	b := sh.Arrays()[0]
	if !slices.Equal(b.ChunkShape(), []int64{2, 2}) || !slices.Equal(b.ShardShape(), []int64{4, 4}) || !slices.Equal(b.Grid(), []int64{3, 3}) {
		t.Errorf("chunks %v shards %v grid %v", b.ChunkShape(), b.ShardShape(), b.Grid())
	}
	if key, _ := b.ChunkKey(2, 1); key != "c/1/0" {
		t.Errorf("inner chunk (2, 1) is in %q", key)
	}
	inner, err := ViewChunk[float32](b, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inner, []float32{16, 17, 22, 23}) {
		t.Errorf("inner chunk (1, 2) = %v", inner)
	}
	// The view aliases the shard's mapping: its address lies in the
	// mapping of c/0/1.
	mp, _ := sh.mapped("c/0/1")
	base := unsafeslice.Addr(mp.r.Bytes())
	if addr := unsafeslice.AddrOf(inner); addr < base || addr >= base+uintptr(mp.r.Len()) {
		t.Errorf("view at %#x is not in the shard's mapping at %#x", addr, base)
	}
	if _, err := ViewChunk[float32](b, 0, 1); !errors.Is(err, ErrMissingChunk) {
		t.Errorf("view of an empty inner chunk: %v", err)
	}
	st, err := Open("testdata/v3/sharded_start.zarr", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := ViewChunk[int64](st.Arrays()[0], 0, 0); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("view of a gzip'd inner chunk: %v", err)
	}
}
