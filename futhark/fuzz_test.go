package futhark

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds returns golden inputs: binary ones or text ones.
func fuzzSeeds(binary bool) [][]byte {
	var out [][]byte
	gen := filepath.Join(testdataDir, "generated")
	filepath.Walk(gen, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Size() > 8192 {
			return nil
		}
		if binary == strings.HasSuffix(p, ".bin") && (strings.HasSuffix(p, ".bin") || strings.HasSuffix(p, ".txt")) {
			if b, err := os.ReadFile(p); err == nil {
				out = append(out, b)
			}
		}
		return nil
	})
	if b, err := os.ReadFile(filepath.Join(gen, "reader-cases.jsonl")); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var c readerCase
			if json.Unmarshal([]byte(line), &c) != nil {
				continue
			}
			switch {
			case binary && c.InHex != nil:
				if in, err := hex.DecodeString(*c.InHex); err == nil {
					out = append(out, in)
				}
			case !binary && c.In != nil:
				out = append(out, []byte(*c.In))
			}
		}
	}
	for _, c := range specCases {
		if binary == strings.HasPrefix(c.in, "b\x02") {
			out = append(out, []byte(c.in))
		}
	}
	for _, h := range hostileInputs {
		if binary == (h[0] == 'b') {
			out = append(out, h)
		}
	}
	return out
}

// checkRoundTrip is the property both fuzz targets check: no panic; a
// parse re-writes to canonical bytes that re-read identically; the
// streaming Decoder agrees with the index.
func checkRoundTrip(t *testing.T, in []byte) {
	reencode(t, in)
	_, wantB, _, err := convert(t, in, nil)
	_, gotB, derr := decodeAll(t, bytes.NewReader(in))
	if err == nil {
		if derr != nil || !bytes.Equal(wantB, gotB) {
			t.Fatalf("decoder disagrees on %q: %v", in, derr)
		}
	} else if derr == nil {
		t.Fatalf("decoder accepts %q, index rejects it: %v", in, err)
	}
}

func FuzzBinary(f *testing.F) {
	for _, s := range fuzzSeeds(true) {
		f.Add(s)
	}
	f.Fuzz(checkRoundTrip)
}

func FuzzText(f *testing.F) {
	for _, s := range fuzzSeeds(false) {
		f.Add(s)
	}
	f.Fuzz(checkRoundTrip)
}
