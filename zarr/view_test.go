package zarr

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// writeStore writes one f64 array x of shape [5, 7], values 0…34, with
// chunks [2, 3] and the given options.
func writeStore(t *testing.T, o Options) (string, []byte) {
	t.Helper()
	data := ramp(layout.F64, 35, 0)
	p := filepath.Join(t.TempDir(), "x.zarr")
	o.Chunks = []int64{2, 3}
	if err := Write(p, (&memSource{}).add("x", layout.F64, []int64{5, 7}, layout.RowMajor, false, data), &o); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// files reads every file of a store, by key.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = b
		}
		return nil
	})
	return out
}

// changed lists the keys whose bytes differ between two snapshots.
func changed(a, b map[string][]byte) []string {
	var out []string
	for k := range b {
		if !bytes.Equal(a[k], b[k]) {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func TestViewAliasesAndWrites(t *testing.T) {
	p, _ := writeStore(t, Options{})
	s, err := OpenFile(p, mmapfile.ReadWrite, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Array("x")
	if err != nil {
		t.Fatal(err)
	}
	// Edge chunk (2, 2): rows 4, columns 6…8 of which only [4, 6] is
	// inside; the rest is padding (zero).
	v, err := ViewChunk[float64](a, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v, []float64{34, 0, 0, 0, 0, 0}) {
		t.Fatalf("edge chunk %v", v)
	}
	mp, _ := s.mapped("x/c/2/2")
	if unsafeslice.AddrOf(v) != unsafeslice.Addr(mp.r.Bytes()) {
		t.Fatal("the view does not alias the chunk file's mapping")
	}
	before := files(t, p)
	v[0] = -1
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := changed(before, files(t, p)); !slices.Equal(got, []string{"x/c/2/2"}) {
		t.Errorf("changed %v", got)
	}
	r, _ := Open(p, nil)
	defer r.Close()
	got, _ := ReadRegion[float64](r.Arrays()[0], []int64{4, 5}, []int64{1, 2})
	if !slices.Equal(got, []float64{33, -1}) {
		t.Errorf("after the edit: %v", got)
	}
	if err := s.Close(); !errors.Is(err, mmapfile.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if _, err := ViewChunk[float64](a, 0, 0); !errors.Is(err, mmapfile.ErrClosed) {
		t.Errorf("view after Close: %v", err)
	}
}

// TestSet changes one element of raw, compressed and sharded stores and
// checks which files changed.
func TestSet(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    Options
		idx     []int64
		changed []string
	}{
		{"raw v3, through the mapping", Options{}, []int64{3, 4}, []string{"x/c/1/1"}},
		{"raw v2", Options{Version: 2}, []int64{0, 6}, []string{"x/0.2"}},
		{"zstd, re-encoded", Options{Compress: "zstd"}, []int64{3, 4}, []string{"x/c/1/1"}},
		{"gzip v2", Options{Version: 2, Compress: "gzip:6"}, []int64{4, 0}, []string{"x/2.0"}},
		{"sharded raw", Options{Shards: []int64{4, 6}}, []int64{1, 1}, []string{"x/c/0/0"}},
		{"sharded zlib", Options{Shards: []int64{4, 6}, Compress: "zlib"}, []int64{4, 6}, []string{"x/c/1/1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, data := writeStore(t, c.opts)
			before := files(t, p)
			f, err := format.OpenFile(p, mmapfile.ReadWrite, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.(format.Setter).SetText(0, c.idx, "-2.5"); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if got := changed(before, files(t, p)); !slices.Equal(got, c.changed) {
				t.Errorf("changed %v, want %v", got, c.changed)
			}
			s, _ := Open(p, nil)
			defer s.Close()
			got := readAll(t, s, 0)
			want := append([]byte(nil), data...)
			copy(want[(c.idx[0]*7+c.idx[1])*8:], f64bytes(-2.5))
			if !bytes.Equal(got, want) {
				t.Errorf("after Set: %v", got)
			}
		})
	}
}

// TestCreateFillThroughViews creates an array on disk with no chunks and
// fills it chunk by chunk through writable views (numpy's open_memmap
// w+), then Sets one element of a chunk that is still missing.
func TestCreateFillThroughViews(t *testing.T) {
	for _, v := range []int{2, 3} {
		p := filepath.Join(t.TempDir(), "new.zarr")
		s, err := Create(p, []ArraySpec{{Name: "grid", Type: layout.I32, Shape: []int64{10, 9}, Chunks: []int64{4, 4}, Order: layout.ColMajor, FillValue: -1}}, &Options{Version: v})
		if err != nil {
			t.Fatal(err)
		}
		a := s.Arrays()[0]
		g := a.Grid()
		for i := int64(0); i < g[0]; i++ {
			for j := int64(0); j < g[1]-1; j++ { // leave the last column of chunks missing
				c, err := ViewChunk[int32](a, i, j)
				if err != nil {
					t.Fatal(err)
				}
				start, count, _ := a.ChunkBox(i, j)
				for x := int64(0); x < count[0]; x++ {
					for y := int64(0); y < count[1]; y++ {
						c[y*4+x] = int32((start[0]+x)*100 + start[1] + y) // column-major inside the chunk
					}
				}
			}
		}
		if err := Set(a, []int64{9, 8}, int32(7)); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadRegion[int32](r.Arrays()[0], []int64{0, 0}, []int64{10, 9})
		if err != nil {
			t.Fatal(err)
		}
		for x := int64(0); x < 10; x++ {
			for y := int64(0); y < 9; y++ {
				want := int32(x*100 + y)
				if y == 8 {
					want = -1
				}
				if x == 9 && y == 8 {
					want = 7
				}
				if got[y*10+x] != want { // listed in the array's (column-major) order
					t.Fatalf("v%d [%d, %d] = %d, want %d", v, x, y, got[y*10+x], want)
				}
			}
		}
		r.Close()
	}
}

func TestViewAndSetErrors(t *testing.T) {
	p, _ := writeStore(t, Options{Compress: "zstd"})
	s, _ := Open(p, nil)
	defer s.Close()
	a := s.Arrays()[0]
	var fe *FormatError
	if _, err := ViewChunk[float64](a, 0, 0); !errors.Is(err, ErrUnsupported) || !errors.As(err, &fe) || fe.Key != "x/c/0/0" || fe.File != p {
		t.Errorf("view of a compressed chunk: %v", err)
	}
	if _, err := ViewChunk[float32](a, 0, 0); !errors.Is(err, mmapfile.ErrTypeMismatch) {
		t.Errorf("view as the wrong type: %v", err)
	}
	if _, err := ViewChunk[float64](a, 3, 0); !errors.Is(err, mmapfile.ErrOutOfRange) {
		t.Errorf("view outside the grid: %v", err)
	}
	if err := Set(a, []int64{0, 0}, 1.0); !errors.Is(err, mmapfile.ErrNotWritable) {
		t.Errorf("Set in a read-only store: %v", err)
	}
	if _, err := ReadRegion[float64](a, []int64{0, 0}, []int64{6, 1}); !errors.Is(err, mmapfile.ErrOutOfRange) {
		t.Errorf("read outside the array: %v", err)
	}
	big := (&memSource{}).add("b", layout.I16, []int64{4}, layout.RowMajor, true, []byte{0, 1, 0, 2, 0, 3, 0, 4})
	bp := filepath.Join(t.TempDir(), "b.zarr")
	if err := Write(bp, big, nil); err != nil {
		t.Fatal(err)
	}
	bs, _ := Open(bp, nil)
	defer bs.Close()
	if _, err := ViewChunk[int16](bs.Arrays()[0], 0); !errors.Is(err, mmapfile.ErrByteOrder) {
		t.Errorf("view of big-endian chunks: %v", err)
	}
	if got, _ := ReadRegion[int16](bs.Arrays()[0], []int64{1}, []int64{3}); !slices.Equal(got, []int16{2, 3, 4}) {
		t.Errorf("big-endian read %v", got)
	}
	w, err := OpenFile(p, mmapfile.ReadWrite, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := OpenFile(p, mmapfile.ReadWrite, nil); !errors.Is(err, mmapfile.ErrLocked) {
		t.Errorf("a second writer: %v", err)
	}
}

// TestLinearPieces reads a compressed store in linear pieces of every
// length, in both orders, as conversions do (each chunk is decoded once
// and kept while the pieces cut across it), and checks that a Set is seen
// by the next read of the same store.
func TestLinearPieces(t *testing.T) {
	p, data := writeStore(t, Options{Compress: "zstd"})
	s, err := OpenFile(p, mmapfile.ReadWrite, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	col := make([]byte, len(data))
	layout.ReorderBytes(col, data, 8, []int64{5, 7}, layout.RowMajor)
	for _, c := range []struct {
		order layout.Order
		want  []byte
	}{{layout.RowMajor, data}, {layout.ColMajor, col}} {
		for n := int64(1); n <= 35; n++ {
			got := make([]byte, 0, len(data))
			for first := int64(0); first < 35; first += n {
				piece := make([]byte, min(n, 35-first)*8)
				if err := s.ReadArray(0, piece, first, c.order, leOrder); err != nil {
					t.Fatal(err)
				}
				got = append(got, piece...)
			}
			if !bytes.Equal(got, c.want) {
				t.Fatalf("%v pieces of %d: %v", c.order, n, got)
			}
		}
	}
	if err := Set(s.Arrays()[0], []int64{1, 1}, 99.0); err != nil {
		t.Fatal(err)
	}
	piece := make([]byte, 8)
	if err := s.ReadArray(0, piece, 8, layout.RowMajor, leOrder); err != nil || !bytes.Equal(piece, f64bytes(99)) {
		t.Errorf("after Set: %v %v", piece, err)
	}
}

// TestTypedCalls: View, Read, ReadAt, ReadRegion and Set read as in every
// format package; copies list elements in the array's Order, as views do,
// and View aliases an array only when it is one chunk.
func TestTypedCalls(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.zarr")
	s, err := Create(p, []ArraySpec{
		{Name: "one", Type: layout.I32, Shape: []int64{2, 3}, Chunks: []int64{2, 3}},
		{Name: "grid", Type: layout.F64, Shape: []int64{5, 4}, Chunks: []int64{2, 3}, Order: layout.ColMajor, FillValue: -1},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	one, _ := s.Array("one")
	grid, _ := s.Array("grid")

	v, err := View[int32](one)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		v[i] = int32(10 * i)
	}
	if got, err := Read[int32](one); err != nil || !slices.Equal(got, []int32{0, 10, 20, 30, 40, 50}) {
		t.Fatalf("Read(one) = %v, %v", got, err)
	}
	part := make([]int32, 3)
	if err := ReadAt(one, 2, part); err != nil || !slices.Equal(part, []int32{20, 30, 40}) {
		t.Fatalf("ReadAt(one, 2) = %v, %v", part, err)
	}

	if err := Set(grid, []int64{4, 3}, 2.5); err != nil {
		t.Fatal(err)
	}
	if err := Set(grid, []int64{0, 1}, 0.5); err != nil {
		t.Fatal(err)
	}
	all, err := Read[float64](grid)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Repeat([]float64{-1}, 20)
	want[1*5+0], want[3*5+4] = 0.5, 2.5 // column-major: (i, j) at j·5+i
	if !slices.Equal(all, want) {
		t.Fatalf("Read(grid) = %v, want %v", all, want)
	}
	box, err := ReadRegion[float64](grid, []int64{3, 2}, []int64{2, 2})
	if err != nil || !slices.Equal(box, []float64{-1, -1, -1, 2.5}) {
		t.Fatalf("ReadRegion(grid) = %v, %v: (3,2) (4,2) (3,3) (4,3)", box, err)
	}
	last := make([]float64, 2)
	if err := ReadAt(grid, 18, last); err != nil || !slices.Equal(last, []float64{-1, 2.5}) {
		t.Fatalf("ReadAt(grid, 18) = %v, %v", last, err)
	}

	for _, c := range []struct {
		name string
		err  error
		want error
		key  string
	}{
		{"View of an array of many chunks", func() error { _, err := View[float64](grid); return err }(), ErrUnsupported, "grid/zarr.json"},
		{"View of the wrong type", func() error { _, err := View[int64](one); return err }(), mmapfile.ErrTypeMismatch, "one/zarr.json"},
		{"Read of the wrong type", func() error { _, err := Read[float32](grid); return err }(), mmapfile.ErrTypeMismatch, "grid/zarr.json"},
		{"ReadAt past the end", ReadAt(grid, 19, last), mmapfile.ErrOutOfRange, "grid/zarr.json"},
		{"ReadAt before the start", ReadAt(grid, -1, last), mmapfile.ErrOutOfRange, "grid/zarr.json"},
		{"Set outside the array", Set(grid, []int64{5, 0}, 1.0), mmapfile.ErrOutOfRange, "grid/zarr.json"},
		{"Set with a 1-D index", Set(grid, []int64{0}, 1.0), mmapfile.ErrOutOfRange, "grid/zarr.json"},
		{"Set of the wrong type", Set(grid, []int64{0, 0}, int32(1)), mmapfile.ErrTypeMismatch, "grid/zarr.json"},
	} {
		var fe *FormatError
		if !errors.Is(c.err, c.want) || !errors.As(c.err, &fe) || fe.File != p || fe.Key != c.key {
			t.Errorf("%s: %v (%#v), want %v in %s", c.name, c.err, fe, c.want, c.key)
		}
	}
	_, err = View[float64](grid)
	if msg := err.Error(); !strings.Contains(msg, "ViewChunk") || !strings.Contains(msg, "copy with Read") {
		t.Errorf("View's error names neither ViewChunk nor Read: %v", err)
	}
}
