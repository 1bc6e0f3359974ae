package blosc

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// c-blosc's compatibility frames: a million int32 counting up, written by
// releases from 1.3.0 to 1.18.0 with every codec.
func TestCBloscCompatFrames(t *testing.T) {
	want := make([]byte, 4_000_000)
	for i := range 1_000_000 {
		binary.LittleEndian.PutUint32(want[4*i:], uint32(i))
	}
	files, _ := filepath.Glob("testdata/c-blosc/*.cdata")
	if len(files) < 13 {
		t.Fatalf("found %d frames in testdata/c-blosc, want 13", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			frame, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h, err := ReadHeader(frame)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(filepath.Base(f), ".cdata")
			codec := strings.Split(name, "-")[2]
			if codec == "lz4hc" {
				codec = "lz4"
			}
			if h.Codec().String() != codec || h.TypeSize != 4 || h.Size != len(want) {
				t.Errorf("header %+v: codec %s, want %s, element size 4, %d bytes", h, h.Codec(), codec, len(want))
			}
			wantShuffle := ByteShuffle
			if strings.HasSuffix(name, "bitshuffle") {
				wantShuffle = BitShuffle
			}
			if h.Shuffle() != wantShuffle {
				t.Errorf("shuffle %v, want %v", h.Shuffle(), wantShuffle)
			}
			got, err := Decode(frame, len(want))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("decoded bytes differ from 0, 1, 2, … (first difference at %d)", firstDiff(got, want))
			}
			if _, err := Decode(frame, len(want)-1); err == nil {
				t.Errorf("a limit one byte short of the frame's size decoded")
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
