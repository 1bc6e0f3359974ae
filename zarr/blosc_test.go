package zarr

import (
	"errors"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/blosc"
)

func TestBloscConfigurations(t *testing.T) {
	tests := []struct {
		name     string
		cfg      string
		elemSize int
		want     blosc.Options
		err      string
	}{
		{"numcodecs v2 defaults", `{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}`, 8,
			blosc.Options{Codec: blosc.LZ4, Level: 5, Shuffle: blosc.ByteShuffle, TypeSize: 8}, ""},
		{"autoshuffle of bytes is bit shuffle", `{"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": -1}`, 1,
			blosc.Options{Codec: blosc.Zstd, Level: 3, Shuffle: blosc.BitShuffle, TypeSize: 1}, ""},
		{"autoshuffle of wider elements is byte shuffle", `{"id": "blosc", "shuffle": -1}`, 4,
			blosc.Options{Codec: blosc.LZ4, Level: 5, Shuffle: blosc.ByteShuffle, TypeSize: 4}, ""},
		{"v3 names and typesize", `{"cname": "blosclz", "clevel": 9, "shuffle": "bitshuffle", "typesize": 2, "blocksize": 4096}`, 8,
			blosc.Options{Codec: blosc.BloscLZ, Level: 9, Shuffle: blosc.BitShuffle, TypeSize: 2, BlockSize: 4096}, ""},
		{"no configuration", ``, 0, blosc.Options{Codec: blosc.LZ4, Level: 5, Shuffle: blosc.ByteShuffle, TypeSize: 1}, ""},
		{"unknown cname", `{"cname": "brotli"}`, 8, blosc.Options{}, `cname "brotli"`},
		{"level 10", `{"clevel": 10}`, 8, blosc.Options{}, "clevel 10"},
		{"shuffle 3", `{"shuffle": 3}`, 8, blosc.Options{}, "shuffle 3"},
		{"shuffle name", `{"shuffle": "bytes"}`, 8, blosc.Options{}, `shuffle "bytes"`},
		{"negative blocksize", `{"blocksize": -1}`, 8, blosc.Options{}, "blocksize -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := bloscCodec([]byte(tt.cfg), tt.elemSize)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.msg, tt.err) || !errors.Is(err.err, ErrInvalid) {
					t.Fatalf("err %v, want ErrInvalid naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.name != "blosc" || *c.blosc != tt.want {
				t.Fatalf("%+v, want %+v", *c.blosc, tt.want)
			}
		})
	}
}

func TestParseBloscCompress(t *testing.T) {
	tests := []struct {
		in   string
		want blosc.Options
		err  string
	}{
		{"blosc", blosc.Options{Codec: blosc.LZ4, Level: 5, Shuffle: blosc.ByteShuffle, TypeSize: 1}, ""},
		{"BLOSC:ZSTD", blosc.Options{Codec: blosc.Zstd, Level: 5, Shuffle: blosc.ByteShuffle, TypeSize: 1}, ""},
		{"blosc:lz4hc:9", blosc.Options{Codec: blosc.LZ4HC, Level: 9, Shuffle: blosc.ByteShuffle, TypeSize: 1}, ""},
		{"blosc:snappy:0", blosc.Options{Codec: blosc.Snappy, Level: 0, Shuffle: blosc.ByteShuffle, TypeSize: 1}, ""},
		{"blosc:lz5", blosc.Options{}, "blosclz, lz4, lz4hc, snappy, zlib, zstd"},
		{"blosc:lz4:10", blosc.Options{}, "0 to 9"},
		{"blosc:lz4:x", blosc.Options{}, "0 to 9"},
		{"blosc:lz4:05", blosc.Options{}, "0 to 9"},
	}
	for _, tt := range tests {
		chain, err := parseCompress(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want one naming %s", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || len(chain) != 1 || chain[0].blosc == nil || *chain[0].blosc != tt.want {
			t.Errorf("%q: %+v %v, want %+v", tt.in, chain, err, tt.want)
		}
	}
	// Each array written gets its own element size.
	chain, _ := parseCompress("blosc")
	if got := withElementSize(chain, 8); got[0].blosc.TypeSize != 8 || chain[0].blosc.TypeSize != 1 {
		t.Errorf("element sizes %d (array) and %d (parsed), want 8 and 1", got[0].blosc.TypeSize, chain[0].blosc.TypeSize)
	}
}
