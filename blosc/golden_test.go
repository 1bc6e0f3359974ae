package blosc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenFrames are frames numcodecs 0.11 (c-blosc 1.21.3) wrote, made by
// `python3 testdata/oracle.py golden testdata/numcodecs`, with the bytes
// each decodes to.
func goldenFrames(t testing.TB) map[string][2][]byte {
	files, _ := filepath.Glob("testdata/numcodecs/*.blosc")
	if len(files) == 0 {
		t.Fatal("no frames in testdata/numcodecs")
	}
	out := map[string][2][]byte{}
	for _, f := range files {
		frame, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(strings.TrimSuffix(f, ".blosc") + ".raw")
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".blosc")] = [2][]byte{frame, raw}
	}
	return out
}

func TestNumcodecsGoldenFrames(t *testing.T) {
	want := map[string]struct {
		codec    Codec
		shuffle  Shuffle
		typeSize int
		stored   bool
	}{
		"lz4-shuffle-f8":        {LZ4, ByteShuffle, 8, false},
		"lz4hc-bitshuffle-i4":   {LZ4, BitShuffle, 4, false},
		"blosclz-shuffle-i4":    {BloscLZ, ByteShuffle, 4, false},
		"blosclz-noshuffle-b1":  {BloscLZ, NoShuffle, 1, false},
		"blosclz-bitshuffle-v3": {BloscLZ, BitShuffle, 3, false},
		"snappy-shuffle-v12":    {Snappy, ByteShuffle, 12, false},
		"zlib-shuffle-i2":       {Zlib, ByteShuffle, 2, false},
		"zstd-bitshuffle-f8":    {Zstd, BitShuffle, 8, false},
		"lz4-stored-i4":         {LZ4, ByteShuffle, 4, true},
		"lz4-small-f8":          {LZ4, ByteShuffle, 8, true},
		"zstd-empty":            {Zstd, ByteShuffle, 8, true},
	}
	golden := goldenFrames(t)
	if len(golden) != len(want) {
		t.Errorf("%d golden frames, want %d", len(golden), len(want))
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			g, ok := golden[name]
			if !ok {
				t.Fatal("missing")
			}
			frame, raw := g[0], g[1]
			h, err := ReadHeader(frame)
			if err != nil {
				t.Fatal(err)
			}
			if h.Codec() != w.codec || h.Shuffle() != w.shuffle || h.TypeSize != w.typeSize || h.Stored() != w.stored || h.Size != len(raw) {
				t.Errorf("header %+v (%v, %v, stored %v), want %+v and %d bytes", h, h.Codec(), h.Shuffle(), h.Stored(), w, len(raw))
			}
			got, err := Decode(frame, len(raw))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(raw) {
				t.Fatalf("decoded bytes differ at %d", firstDiff(got, raw))
			}
			// What this package writes with the same parameters decodes
			// back too (numcodecs decoding it is TestNumcodecsOracle's).
			o := Options{Codec: w.codec, Level: 5, Shuffle: h.Shuffle(), TypeSize: h.TypeSize}
			enc, err := Encode(nil, raw, o)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Decode(enc, len(raw))
			if err != nil || string(back) != string(raw) {
				t.Fatalf("re-encoded frame: %v (differs at %d)", err, firstDiff(back, raw))
			}
		})
	}
}
