package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistration(t *testing.T) {
	f, ok := format.Lookup("zarr")
	if !ok || !f.Dir || !slices.Equal(f.Extensions, []string{".zarr"}) {
		t.Fatalf("registered %+v", f)
	}
	if g, ok := format.ForName("out/x.zarr/"); !ok || g.Name != "zarr" {
		t.Errorf("ForName: %v %v", g.Name, ok)
	}
	dir := filepath.Join(t.TempDir(), "plain-name")
	writeFile(t, dir, ".zgroup", []byte(`{"zarr_format": 2}`))
	if g, err := format.Detect(dir, nil); err != nil || g.Name != "zarr" {
		t.Errorf("Detect of a directory with .zgroup: %v %v", g.Name, err)
	}
	v3 := filepath.Join(t.TempDir(), "v3")
	copyDir(t, "testdata/v3/sharded_end.zarr", v3)
	fl, err := format.Open(v3, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	r := fl.Records()[0]
	codecs, _ := json.Marshal(r.Extra["codecs"])
	if fl.Format() != "zarr" || fl.Version() != "3" || r.Offset != -1 || r.Size != 36*4 ||
		!slices.Equal(r.Extra["chunks"].([]int64), []int64{2, 2}) || !slices.Equal(r.Extra["shards"].([]int64), []int64{4, 4}) ||
		!bytes.Contains(codecs, []byte(`"name":"sharding_indexed"`)) {
		t.Errorf("record %+v codecs %s", r, codecs)
	}
}

// TestStorage checks the few words a listing shows for how each golden
// store keeps its chunks.
func TestStorage(t *testing.T) {
	for _, c := range []struct{ store, want string }{
		{"sharded_end", "chunks [2][2] in shards [4][4], raw"},
		{"sharded_start", "chunks [2][3] in shards [4][6], gzip(5), crc32c"},
		{"transpose_big_gzip", "chunks [2][3], big-endian, gzip(1)"},
		{"v2keys_zstd_crc", "chunks [3][2][4], transposed [2 0 1], zstd(3), crc32c"},
		{"spec_example", "chunks [4][2], raw"},
	} {
		s, err := Open(filepath.Join("testdata/v3", c.store+".zarr"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Records()[0].Extra["storage"]; got != c.want {
			t.Errorf("%s: Storage %q, want %q", c.store, got, c.want)
		}
		s.Close()
	}
	s, err := Open("testdata/v3/group.zarr", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range s.Records() {
		if r.Name == "/scalar" && r.Extra["storage"] != "one chunk, raw" {
			t.Errorf("0-d array: Storage %q", r.Extra["storage"])
		}
	}
}

// TestWriteParams checks the writing parameters, as the command line
// passes them.
func TestWriteParams(t *testing.T) {
	src := (&memSource{}).add("m", layout.F32, []int64{300, 200}, layout.ColMajor, false, ramp(layout.F32, 60000, 0)).
		add("v", layout.I16, []int64{50}, layout.RowMajor, false, ramp(layout.I16, 50, 0))
	for _, c := range []struct {
		params map[string]string
		err    string
		check  func(t *testing.T, s *Store)
	}{
		{map[string]string{"zarr-version": "2", "chunks": "64,50", "compress": "gzip:4"}, "", func(t *testing.T, s *Store) {
			m := s.Arrays()[0]
			if s.Version() != "2" || !slices.Equal(m.ChunkShape(), []int64{64, 50}) || !slices.Equal(m.Codecs(), []string{"gzip"}) || m.Order() != layout.ColMajor {
				t.Errorf("v2 store: %v", m)
			}
			if !slices.Equal(s.Arrays()[1].ChunkShape(), []int64{50}) {
				t.Errorf("the 1-D array took chunks %v", s.Arrays()[1].ChunkShape())
			}
		}},
		{map[string]string{"chunks": "100,100", "shards": "200,200"}, "", func(t *testing.T, s *Store) {
			m := s.Arrays()[0]
			if !slices.Equal(m.ShardShape(), []int64{200, 200}) || !slices.Equal(m.ChunkShape(), []int64{100, 100}) {
				t.Errorf("sharded: %v shards %v", m, m.ShardShape())
			}
		}},
		{map[string]string{"zarr-version": "4"}, "zarr-version", nil},
		{map[string]string{"compress": "lz5"}, "not one of none, zlib, gzip, zstd", nil},
		{map[string]string{"compress": "zstd:99"}, "level", nil},
		{map[string]string{"chunks": "0,3"}, "not a positive integer", nil},
		{map[string]string{"chunks": "1,2,3"}, "fit no array", nil},
		{map[string]string{"zarr-version": "2", "shards": "4,4"}, "version 3", nil},
		{map[string]string{"chunks": "30,30", "shards": "50,50"}, "not a multiple", nil},
	} {
		p := filepath.Join(t.TempDir(), "o.zarr")
		err := format.Write(p, src, &format.Options{Params: c.params})
		if c.err != "" {
			var fe *FormatError
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &fe) {
				t.Errorf("%v: got %v, want an error naming %q", c.params, err, c.err)
			}
			if _, serr := os.Stat(p); serr == nil {
				t.Errorf("%v: a failed write left %s", c.params, p)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.params, err)
		}
		s, err := Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.check(t, s)
		if got, _ := format.ReadAll(s, 0, layout.ColMajor, leOrder); !bytes.Equal(got, ramp(layout.F32, 60000, 0)) {
			t.Errorf("%v: values differ", c.params)
		}
		s.Close()
	}
}

// tableSource is a table of two columns, one of them nullable.
type tableSource struct{ recs []format.Record }

func (s *tableSource) Records() []format.Record { return s.recs }

func (s *tableSource) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	for k := range dst {
		dst[k] = byte(int(first)*2 + k + i)
	}
	return nil
}

func (s *tableSource) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	return fn(0, []format.Column{{Values: []int16{1, 2, 3}}, {Values: []uint8{4, 5, 6}, Reason: []int8{-1, 3, -1}}})
}

func TestWriteTablesAndRefusals(t *testing.T) {
	table := &tableSource{recs: []format.Record{
		{Array: layout.Array{Name: "a", Type: layout.I16, Shape: []int64{3}, Offset: -1}, Kind: format.KindColumn},
		{Array: layout.Array{Name: "b", Type: layout.U8, Shape: []int64{3}, Offset: -1}, Kind: format.KindColumn, Nullable: true},
	}}
	p := filepath.Join(t.TempDir(), "t.zarr")
	if err := Write(p, table, nil); err != nil {
		t.Fatal(err)
	}
	s, _ := Open(p, nil)
	var names []string
	for _, r := range s.Records() {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"/a", "/b", "/b.reason"}) {
		t.Errorf("table written as %v", names)
	}
	if got := readAll(t, s, 2); !bytes.Equal(got, []byte{0xff, 3, 0xff}) {
		t.Errorf("b.reason = %v", got)
	}
	s.Close()
	for _, c := range []struct {
		rec format.Record
		why string
	}{
		{format.Record{Array: layout.Array{Name: "s", Type: layout.U8, Shape: []int64{3}}, Kind: format.KindString}, "string"},
		{format.Record{Array: layout.Array{Name: "w", Type: layout.I128, Shape: []int64{3}}}, "i128"},
		{format.Record{Array: layout.Array{Name: "../up", Type: layout.I8, Shape: []int64{3}}}, ".."},
		{format.Record{Array: layout.Array{Name: "__x", Type: layout.I8, Shape: []int64{3}}}, "reserves"},
	} {
		src := &tableSource{recs: []format.Record{c.rec}}
		err := Write(filepath.Join(t.TempDir(), "r.zarr"), src, nil)
		if !errors.Is(err, format.ErrNotRepresentable) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v", c.rec.Name, err)
		}
	}
}

// failing fails ReadArray after some calls, as a source that breaks
// half-way through a conversion.
type failing struct {
	*memSource
	left int
}

func (f *failing) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if f.left--; f.left < 0 {
		return errors.New("source broke")
	}
	return f.memSource.ReadArray(i, dst, first, order, bo)
}

// TestReplace: a store replaces a store only when complete; other
// directories and files are never replaced.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.zarr")
	old := (&memSource{}).add("x", layout.F64, []int64{4}, layout.RowMajor, false, f64bytes(1, 2, 3, 4))
	if err := Write(p, old, nil); err != nil {
		t.Fatal(err)
	}
	before := files(t, p)
	big := (&memSource{}).add("y", layout.F64, []int64{3 << 20}, layout.RowMajor, false, make([]byte, 24<<20))
	if err := Write(p, &failing{big, 1}, &Options{Chunks: []int64{1 << 18}}); err == nil || !strings.Contains(err.Error(), "source broke") {
		t.Fatalf("failing write: %v", err)
	}
	if got := changed(before, files(t, p)); len(got) != 0 {
		t.Errorf("a failed write changed %v", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left %d entries beside the store", len(entries))
	}
	if err := Write(p, (&memSource{}).add("z", layout.I8, []int64{2}, layout.RowMajor, false, []byte{5, 6}), nil); err != nil {
		t.Fatal(err)
	}
	s, _ := Open(p, nil)
	if s.Records()[0].Name != "/z" || len(s.Records()) != 1 {
		t.Errorf("replaced store holds %v", s.Records())
	}
	s.Close()
	other := filepath.Join(dir, "home")
	writeFile(t, other, "notes.txt", []byte("keep"))
	if err := Write(other, old, nil); err == nil || !strings.Contains(err.Error(), "not a Zarr store") {
		t.Errorf("write over a directory that is not a store: %v", err)
	}
	file := filepath.Join(dir, "file.zarr")
	os.WriteFile(file, []byte("x"), 0o644)
	if err := Write(file, old, nil); err == nil {
		t.Error("write over a regular file succeeded")
	}
}

func TestChooseChunks(t *testing.T) {
	for _, c := range []struct {
		shape []int64
		order layout.Order
		size  int
		want  []int64
	}{
		{[]int64{100, 100}, layout.RowMajor, 8, []int64{100, 100}},
		{[]int64{10000, 1000}, layout.RowMajor, 8, []int64{1000, 1000}},
		{[]int64{1000, 10000}, layout.ColMajor, 8, []int64{1000, 1000}},
		{[]int64{1 << 24}, layout.RowMajor, 8, []int64{1 << 20}},
		{[]int64{3, 2 << 20}, layout.RowMajor, 8, []int64{1, 1 << 20}},
		{[]int64{0, 5}, layout.RowMajor, 4, []int64{1, 5}},
		{[]int64{}, layout.RowMajor, 8, []int64{}},
	} {
		if got := chooseChunks(c.shape, c.order, c.size); !slices.Equal(got, c.want) {
			t.Errorf("chooseChunks(%v, %v, %d) = %v, want %v", c.shape, c.order, c.size, got, c.want)
		}
	}
}

// A new store's directory gets the usual mode less the umask; a replaced
// store keeps its own; a symbolic link to a store is followed and stays a
// link.
func TestStoreModeAndLinks(t *testing.T) {
	dir := t.TempDir()
	src := (&memSource{}).add("x", layout.F64, []int64{4}, layout.RowMajor, false, f64bytes(1, 2, 3, 4))
	p := filepath.Join(dir, "s.zarr")
	if err := Write(p, src, nil); err != nil {
		t.Fatal(err)
	}
	// What the umask leaves of 0755, as os.Mkdir shows.
	if err := os.Mkdir(filepath.Join(dir, "plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	want, _ := os.Stat(filepath.Join(dir, "plain"))
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want.Mode().Perm() {
		t.Errorf("new store: %v %v", fi.Mode(), err)
	}
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, src, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("replaced store: %v %v", fi.Mode(), err)
	}
	link := filepath.Join(dir, "link.zarr")
	if err := os.Symlink("s.zarr", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, (&memSource{}).add("y", layout.I8, []int64{1}, layout.RowMajor, false, []byte{7}), nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	s, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Records()[0].Name != "/y" {
		t.Errorf("the store the link points to holds %v", s.Records())
	}
}

// A store open read-write (here or in another process) is not replaced
// under its writer: the write fails with mmapfile.ErrLocked and leaves
// it as it was.
func TestWriteRefusesALockedStore(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.zarr")
	src := (&memSource{}).add("x", layout.F64, []int64{4}, layout.RowMajor, false, f64bytes(1, 2, 3, 4))
	for _, v := range []int{2, 3} {
		if err := Write(p, src, &Options{Version: v}); err != nil {
			t.Fatal(err)
		}
		before := files(t, p)
		s, err := OpenFile(p, mmapfile.ReadWrite, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = Write(p, src, &Options{Version: v})
		if !errors.Is(err, mmapfile.ErrLocked) {
			t.Errorf("version %d: Write over a store open read-write: %v", v, err)
		}
		if got := changed(before, files(t, p)); len(got) != 0 {
			t.Errorf("version %d: the refused write changed %v", v, got)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := Write(p, src, &Options{Version: v}); err != nil {
			t.Errorf("version %d: Write after Close: %v", v, err)
		}
	}
}

// TestPartElems: format.Read reads an array in rows of whole units along
// the axis that varies slowest in its Order, so that no unit is decoded
// twice.
func TestPartElems(t *testing.T) {
	src := (&memSource{}).add("c", layout.F32, []int64{10, 7}, layout.RowMajor, false, ramp(layout.F32, 70, 0)).
		add("f", layout.F32, []int64{10, 7}, layout.ColMajor, false, ramp(layout.F32, 70, 0)).
		add("v", layout.I16, []int64{5}, layout.RowMajor, false, ramp(layout.I16, 5, 0))
	for _, c := range []struct {
		params map[string]string
		want   []int64
	}{
		{map[string]string{"chunks": "4,3"}, []int64{4 * 7, 10 * 3, 5}},
		{map[string]string{"chunks": "20,20"}, []int64{70, 70, 5}},
		{map[string]string{"chunks": "2,2", "shards": "4,4"}, []int64{2 * 7, 10 * 2, 5}},
	} {
		p := filepath.Join(t.TempDir(), "o.zarr")
		require.NoError(t, format.Write(p, src, &format.Options{Params: c.params}))
		s, err := Open(p, nil)
		require.NoError(t, err)
		var got []int64
		for i := range s.Arrays() {
			got = append(got, s.PartElems(i))
		}
		assert.Equal(t, c.want, got, "%v", c.params)
		for i, a := range s.Arrays() {
			if a.Type() != layout.F32 {
				continue
			}
			v, err := Read[float32](a)
			require.NoError(t, err)
			want := make([]float32, 70)
			require.NoError(t, format.ReadAt(s, i, 0, want))
			assert.Equal(t, want, v)
		}
		require.NoError(t, s.Close())
	}
}
