package zarr

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// syncLog records what Sync syncs, through the package's hooks, until the
// test ends.
type syncLog struct {
	mu          sync.Mutex
	files, dirs []string
}

func watchSyncs(t *testing.T) *syncLog {
	l := &syncLog{}
	f0, d0 := syncFile, syncDirFile
	syncFile = func(key string, f *mmapfile.File) error {
		l.mu.Lock()
		l.files = append(l.files, key)
		l.mu.Unlock()
		return f0(key, f)
	}
	syncDirFile = func(dir string, d *os.File) error {
		l.mu.Lock()
		l.dirs = append(l.dirs, dir)
		l.mu.Unlock()
		return d0(dir, d)
	}
	t.Cleanup(func() { syncFile, syncDirFile = f0, d0 })
	return l
}

// take returns the files and directories synced since the last take,
// sorted.
func (l *syncLog) take() (files, dirs []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	files, dirs = l.files, l.dirs
	l.files, l.dirs = nil, nil
	slices.Sort(files)
	slices.Sort(dirs)
	return files, dirs
}

func TestSyncOnlyWhatChanged(t *testing.T) {
	log := watchSyncs(t)
	p, data := writeStore(t, Options{})
	s, err := OpenFile(p, mmapfile.ReadWrite, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := s.Arrays()[0]
	key := func(i, j int64) string { k, _ := a.m.locate([]int64{i, j}); return k }
	sync := func(want ...string) {
		t.Helper()
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		files, dirs := log.take()
		slices.Sort(want)
		if !slices.Equal(files, want) || len(dirs) > 0 {
			t.Fatalf("Sync synced files %q and directories %q, want files %q", files, dirs, want)
		}
	}
	for _, ix := range [][]int64{{0, 0}, {2, 3}, {4, 6}} {
		if err := Set(a, ix, -1.0); err != nil {
			t.Fatal(err)
		}
	}
	sync(key(0, 0), key(1, 1), key(2, 2))
	sync() // nothing changed since
	if err := Set(a, []int64{3, 4}, -2.0); err != nil {
		t.Fatal(err)
	}
	sync(key(1, 1))
	// A chunk handed out as a writable view is synced at every Sync: its
	// caller may write it at any time.
	v, err := ViewChunk[float64](a, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	sync(key(1, 2))
	if err := Set(a, []int64{0, 1}, -3.0); err != nil {
		t.Fatal(err)
	}
	v[0] = -4 // element [2, 6]
	sync(key(0, 0), key(1, 2))
	v[3] = -5 // element [3, 6]: written after the Set, still made durable
	sync(key(1, 2))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := bytesToF64(data)
	for _, e := range []struct {
		i, j int
		v    float64
	}{{0, 0, -1}, {2, 3, -1}, {4, 6, -1}, {3, 4, -2}, {0, 1, -3}, {2, 6, -4}, {3, 6, -5}} {
		want[e.i*7+e.j] = e.v
	}
	r, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := Read[float64](r.Arrays()[0])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("after Close and reopen: %v, want %v", got, want)
	}
}

func bytesToF64(b []byte) []float64 {
	return append([]float64(nil), unsafeslice.Cast[float64](b)...)
}

// TestCreateZeroedChunks fills a new store through writable views of its
// missing chunks, whose fill value is zero: each is created as a file of
// zeros at once, without a sync, and Sync (or Close) makes the file and
// its directory durable. The store reads back whole after Close, from
// this process and others, with no temporary file left.
func TestCreateZeroedChunks(t *testing.T) {
	for _, v := range []int{2, 3} {
		for _, order := range []layout.Order{layout.RowMajor, layout.ColMajor} {
			log := watchSyncs(t)
			p := filepath.Join(t.TempDir(), "new.zarr")
			s, err := Create(p, []ArraySpec{{Name: "g/grid", Type: layout.I32, Shape: []int64{10, 9}, Chunks: []int64{4, 4}, Order: order}}, &Options{Version: v})
			if err != nil {
				t.Fatal(err)
			}
			a := s.Arrays()[0]
			g := a.Grid()
			var keys []string
			dirs := map[string]bool{}
			for i := int64(0); i < g[0]; i++ {
				for j := int64(0); j < g[1]-1; j++ { // the last column of chunks stays missing
					c, err := ViewChunk[int32](a, i, j)
					if err != nil {
						t.Fatal(err)
					}
					key, _ := a.m.locate([]int64{i, j})
					keys = append(keys, key)
					dirs[filepath.ToSlash(filepath.Dir(key))] = true
					fi, err := os.Stat(filepath.Join(p, key))
					if err != nil || fi.Size() != 64 {
						t.Fatalf("v%d: chunk %s after ViewChunk: %v, %v", v, key, fi, err)
					}
					for _, x := range c {
						if x != 0 {
							t.Fatalf("v%d: new chunk %s holds %d, want the fill value 0", v, key, x)
						}
					}
					if i == 1 && j == 1 {
						continue // left as created: zeros
					}
					start, count, _ := a.ChunkBox(i, j)
					for x := int64(0); x < count[0]; x++ {
						for y := int64(0); y < count[1]; y++ {
							at := x*4 + y
							if order == layout.ColMajor {
								at = y*4 + x
							}
							c[at] = int32((start[0]+x)*100 + start[1] + y + 1)
						}
					}
				}
			}
			if files, ds := log.take(); len(files)+len(ds) > 0 {
				t.Fatalf("v%d: creating chunks for views synced %q %q: want it left to Sync", v, files, ds)
			}
			// Another reader sees the chunks and their values before any sync.
			check := func(what string, r *Store) {
				t.Helper()
				got, err := ReadRegion[int32](r.Arrays()[0], []int64{0, 0}, []int64{10, 9})
				if err != nil {
					t.Fatal(err)
				}
				for x := int64(0); x < 10; x++ {
					for y := int64(0); y < 9; y++ {
						want := int32(x*100 + y + 1)
						if y == 8 || x/4 == 1 && y/4 == 1 {
							want = 0
						}
						at := x*9 + y
						if order == layout.ColMajor {
							at = y*10 + x
						}
						if got[at] != want {
							t.Fatalf("v%d %v %s: [%d, %d] = %d, want %d", v, order, what, x, y, got[at], want)
						}
					}
				}
			}
			other, err := Open(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			check("before Sync, another store", other)
			other.Close()
			check("before Sync, the same store", s)
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			files, ds := log.take()
			slices.Sort(keys)
			if !slices.Equal(files, keys) {
				t.Fatalf("v%d: Sync synced %q, want the new chunks %q", v, files, keys)
			}
			for d := range dirs {
				if !slices.Contains(ds, d) {
					t.Fatalf("v%d: Sync synced the directories %q, not %q, where chunks were created", v, ds, d)
				}
			}
			if v == 3 && !slices.Contains(ds, "g/grid") { // c/ was made in it
				t.Fatalf("v3: Sync synced the directories %q, not g/grid, where c/ was created", ds)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			if _, ds := log.take(); len(ds) > 0 {
				t.Fatalf("v%d: a second Sync synced the directories %q again", v, ds)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := Open(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			check("after Close and reopen", r)
			r.Close()
			filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
				if err == nil && atomicfile.IsTemp(d.Name()) {
					t.Errorf("v%d: temporary file left: %s", v, q)
				}
				return nil
			})
		}
	}
}

// TestCreateZeroedChunkRefusesSymlink: a dangling symlink where a missing
// chunk's file would go is not replaced.
func TestCreateZeroedChunkRefusesSymlink(t *testing.T) {
	p := filepath.Join(t.TempDir(), "new.zarr")
	s, err := Create(p, []ArraySpec{{Name: "x", Type: layout.F64, Shape: []int64{4}}}, &Options{Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := s.Arrays()[0]
	key, _ := a.m.locate([]int64{0})
	if err := os.Symlink(filepath.Join(t.TempDir(), "nowhere"), filepath.Join(p, key)); err != nil {
		t.Skip(err)
	}
	if _, err := ViewChunk[float64](a, 0); err == nil {
		t.Fatal("ViewChunk replaced a symlink")
	}
}

// TestWriteRuns writes arrays whose chunks are runs of the storage order
// (whole along all axes but the slowest), which go from the stream to the
// chunk files with no copy: values, padding of the edge chunk with the
// fill value, and no temporary file left.
func TestWriteRuns(t *testing.T) {
	for _, c := range []struct {
		order  layout.Order
		chunks []int64
	}{
		{layout.RowMajor, []int64{4, 7}},
		{layout.RowMajor, []int64{10, 7}},
		{layout.RowMajor, []int64{1, 7}},
		{layout.ColMajor, []int64{10, 3}},
		{layout.ColMajor, []int64{10, 7}},
	} {
		for _, v := range []int{2, 3} {
			data := ramp(layout.F64, 70, 1)
			p := filepath.Join(t.TempDir(), "w.zarr")
			stored := toOrder(t, layout.F64, []int64{10, 7}, data, c.order, false)
			src := (&memSource{}).add("x", layout.F64, []int64{10, 7}, c.order, false, stored)
			if err := Write(p, src, &Options{Version: v, Chunks: c.chunks}); err != nil {
				t.Fatal(err)
			}
			s, err := Open(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			a := s.Arrays()[0]
			got, err := ReadRegion[float64](a, []int64{0, 0}, []int64{10, 7})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(unsafeslice.Bytes(got), stored) {
				t.Fatalf("v%d %v chunks %v: read back %v", v, c.order, c.chunks, got)
			}
			g := a.Grid()
			last := make([]int64, 2)
			last[0], last[1] = g[0]-1, g[1]-1
			ch, err := ViewChunk[float64](a, last...)
			if err != nil {
				t.Fatal(err)
			}
			start, count, _ := a.ChunkBox(last...)
			for x := int64(0); x < c.chunks[0]; x++ {
				for y := int64(0); y < c.chunks[1]; y++ {
					at := x*c.chunks[1] + y
					if c.order == layout.ColMajor {
						at = y*c.chunks[0] + x
					}
					if x >= count[0] || y >= count[1] {
						if ch[at] != 0 {
							t.Fatalf("v%d %v chunks %v: padding [%d, %d] of the edge chunk at %v holds %v", v, c.order, c.chunks, x, y, start, ch[at])
						}
					}
				}
			}
			s.Close()
			filepath.WalkDir(filepath.Dir(p), func(q string, d fs.DirEntry, err error) error {
				if err == nil && atomicfile.IsTemp(d.Name()) {
					t.Errorf("temporary file left: %s", q)
				}
				return nil
			})
		}
	}
}

// TestRewriteAfterEarlyWriteback: a chunk created for a view is written
// back early, when the next one is created; writing it again afterwards
// still reaches the file at Close.
func TestRewriteAfterEarlyWriteback(t *testing.T) {
	p := filepath.Join(t.TempDir(), "new.zarr")
	s, err := Create(p, []ArraySpec{{Name: "x", Type: layout.F64, Shape: []int64{3, 1024}, Chunks: []int64{1, 1024}}}, &Options{Version: 3})
	if err != nil {
		t.Fatal(err)
	}
	a := s.Arrays()[0]
	var views [][]float64
	for i := range int64(3) {
		v, err := ViewChunk[float64](a, i, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j := range v {
			v[j] = float64(i)
		}
		views = append(views, v)
	}
	views[0][5] = -1
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := Read[float64](r.Arrays()[0])
	if err != nil {
		t.Fatal(err)
	}
	for k, x := range got {
		want := float64(k / 1024)
		if k == 5 {
			want = -1
		}
		if x != want {
			t.Fatalf("element %d = %v, want %v", k, x, want)
		}
	}
}
