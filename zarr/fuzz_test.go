package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// sameMeta compares what a re-written metadata document must keep.
func sameMeta(t *testing.T, a, b *meta) {
	t.Helper()
	if !slices.Equal(a.shape, b.shape) || !slices.Equal(a.grid, b.grid) || !slices.Equal(a.unit, b.unit) ||
		a.dt != b.dt || !slices.Equal(a.perm, b.perm) || !bytes.Equal(a.fill, b.fill) || a.sep != b.sep ||
		a.defaultKeys != b.defaultKeys || len(a.chain) != len(b.chain) || (a.shard == nil) != (b.shard == nil) {
		t.Fatalf("re-written metadata differs:\n%+v\n%+v", a, b)
	}
	for i := range a.chain {
		if a.chain[i].name != b.chain[i].name {
			t.Fatalf("codec %d: %q, re-written %q", i, a.chain[i].name, b.chain[i].name)
		}
	}
}

// FuzzZarray parses .zarray documents; what parses is written again and
// must parse to the same array.
func FuzzZarray(f *testing.F) {
	f.Add(zarray("[5, 7]", "[2, 3]", ""))
	f.Add([]byte(`{"zarr_format": 2, "shape": [], "chunks": [], "dtype": "<M8[s]", "compressor": {"id": "zstd", "level": 3}, "fill_value": "NaT", "order": "F", "filters": [], "dimension_separator": "/"}`))
	f.Add([]byte(`{"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "<c16", "compressor": {"id": "blosc"}, "fill_value": ["NaN", 1.5], "order": "C", "filters": null}`))
	f.Add([]byte(`{"zarr_format": 2, "shape": [3, 1, 2], "chunks": [2, 1, 1], "dtype": ">f2", "compressor": {"id": "lz4"}, "fill_value": "-Infinity", "order": "F", "filters": null}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := parseV2(doc, nil)
		if err != nil || !m.dt.typ.Valid() {
			return
		}
		za, _ := docV2(m)
		b, jerr := json.Marshal(za)
		if jerr != nil {
			t.Fatal(jerr)
		}
		m2, err := parseV2(b, nil)
		if err != nil {
			t.Fatalf("re-written %s: %v", b, err.msg)
		}
		sameMeta(t, m, m2)
	})
}

// FuzzZarrJSON parses zarr.json documents; an array that parses is
// written again and must parse to the same array.
func FuzzZarrJSON(f *testing.F) {
	filepath.Walk("testdata/v3", func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Name() == "zarr.json" {
			b, _ := os.ReadFile(p)
			f.Add(b)
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, doc []byte) {
		z, err := parseNodeV3(doc)
		if err != nil || z.NodeType != "array" {
			return
		}
		m, err := parseV3(z)
		if err != nil || !m.dt.typ.Valid() || !m.rowMajor() && !m.colMajor() || len(m.chain) > 1 ||
			len(m.chain) == 1 && m.chain[0].unsupported != "" || m.shard != nil && (m.shard.atStart || !m.shard.crc || m.shard.big) {
			return // forms this package reads but does not write
		}
		b, jerr := json.Marshal(docV3(m))
		if jerr != nil {
			t.Fatal(jerr)
		}
		z2, err := parseNodeV3(b)
		if err != nil {
			t.Fatalf("re-written %s: %v", b, err.msg)
		}
		m2, err := parseV3(z2)
		if err != nil {
			t.Fatalf("re-written %s: %v", b, err.msg)
		}
		sameMeta(t, m, m2)
	})
}

// FuzzShardIndex checks shard indexes against a file size; an index that
// passes is laid out again from its entries and must give the same bytes.
func FuzzShardIndex(f *testing.F) {
	for _, name := range []string{"sharded_end.zarr/c/0/0", "sharded_end.zarr/c/1/1"} {
		b, err := os.ReadFile(filepath.Join("testdata", "v3", name))
		if err == nil {
			f.Add(b[len(b)-68:], int64(len(b)), false)
		}
	}
	f.Add(make([]byte, 68), int64(68), true)
	f.Fuzz(func(t *testing.T, idx []byte, size int64, fixed bool) {
		spec := &shardSpec{n: 4, crc: true}
		want := int64(-1)
		if fixed {
			want = 16
		}
		ent, err := parseShardIndex(idx, size, spec, want)
		if err != nil {
			if err.off < 0 || size >= 0 && err.off > size {
				t.Fatalf("error offset %d outside a file of %d bytes: %s", err.off, size, err.msg)
			}
			return
		}
		again := make([]byte, 68)
		for i, e := range ent {
			binary.LittleEndian.PutUint64(again[8*i:], e)
		}
		binary.LittleEndian.PutUint32(again[64:], crc32c(again[:64]))
		if !bytes.Equal(again, idx) {
			t.Fatalf("index %x re-written as %x", idx, again)
		}
		for i := 0; i < 4; i++ {
			if ent[2*i] != empty && int64(ent[2*i]+ent[2*i+1]) > size-68 {
				t.Fatalf("entry %d [%d, +%d) past the data of a %d-byte shard", i, ent[2*i], ent[2*i+1], size)
			}
		}
	})
}
