package blosc

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// oracleCase is one case of testdata/oracle.py.
type oracleCase struct {
	Cname     string `json:"cname"`
	Level     int    `json:"level"`
	Shuffle   int    `json:"shuffle"`
	TypeSize  int    `json:"typesize"`
	Size      int    `json:"size"`
	BlockSize int    `json:"blocksize"`
	Input     int    `json:"input"`
	Offset    int    `json:"offset"`
	Length    int    `json:"length"`
}

// numcodecs writes every case (codec × level × shuffle × element size ×
// odd and multi-block sizes, and forced block sizes); this package decodes
// each to its input; it writes each case again, and numcodecs decodes
// those to the input.
func TestNumcodecsOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("the numcodecs oracle writes a few thousand frames; skipped with -short")
	}
	py := oracle.Python(t, "numpy", "numcodecs")
	dir := t.TempDir()
	script, _ := filepath.Abs("testdata/oracle.py")
	run := func(mode string) []byte {
		out, err := exec.Command(py, script, mode, dir).Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				t.Fatalf("oracle.py %s: %v\n%s", mode, err, ee.Stderr)
			}
			t.Fatalf("oracle.py %s: %v", mode, err)
		}
		return out
	}
	run("cases")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var cases []oracleCase
	if err := json.Unmarshal(read("index.json"), &cases); err != nil {
		t.Fatal(err)
	}
	inputs, frames := read("inputs.bin"), read("frames.bin")
	if len(cases) < 2000 {
		t.Fatalf("oracle.py wrote %d cases, want every combination (over 2000)", len(cases))
	}
	var goFrames []byte
	goIndex := make([]oracleCase, 0, len(cases))
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.Cname] = true
		want := inputs[c.Input : c.Input+c.Size]
		frame := frames[c.Offset : c.Offset+c.Length]
		got, err := Decode(frame, c.Size)
		if err != nil {
			t.Errorf("%+v: numcodecs' frame: %v", c, err)
		} else if string(got) != string(want) {
			t.Errorf("%+v: numcodecs' frame decodes to bytes that differ at %d", c, firstDiff(got, want))
		}
		codec, err := ParseCodec(c.Cname)
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Codec: codec, Level: c.Level, Shuffle: Shuffle(c.Shuffle), TypeSize: c.TypeSize, BlockSize: c.BlockSize}
		enc, err := Encode(nil, want, o)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		h, err := ReadHeader(enc)
		if err != nil {
			t.Fatalf("%+v: our own frame: %v", c, err)
		}
		if want, _ := ReadHeader(frame); h.BlockSize != want.BlockSize || h.Flags&^flagMemcpyed != want.Flags&^flagMemcpyed {
			t.Errorf("%+v: block size %d and flags 0x%02x, numcodecs chose %d and 0x%02x", c, h.BlockSize, h.Flags, want.BlockSize, want.Flags)
		}
		if c.Size == 0 {
			// numcodecs 0.11 cannot decode an empty frame, not even its own
			// ("error during blosc decompression: 0"): ours must be the same
			// bytes instead.
			if string(enc) != string(frame) {
				t.Errorf("%+v: empty frame % x, numcodecs writes % x", c, enc, frame)
			}
			continue
		}
		gc := c
		gc.Offset, gc.Length = len(goFrames), len(enc)
		goFrames = append(goFrames, enc...)
		goIndex = append(goIndex, gc)
	}
	for _, name := range codecNames {
		if !seen[name] {
			t.Logf("numcodecs here has no %s; its cases were not run", name)
		}
	}
	idx, _ := json.Marshal(goIndex)
	if err := os.WriteFile(filepath.Join(dir, "go-index.json"), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go-frames.bin"), goFrames, 0o644); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Checked int `json:"checked"`
		Bad     []struct {
			Case  oracleCase `json:"case"`
			Error string     `json:"error"`
		} `json:"bad"`
	}
	if err := json.Unmarshal(run("check"), &res); err != nil {
		t.Fatal(err)
	}
	if res.Checked != len(goIndex) {
		t.Errorf("numcodecs checked %d frames, want %d", res.Checked, len(goIndex))
	}
	for i, b := range res.Bad {
		if i == 20 {
			t.Errorf("… and %d more", len(res.Bad)-i)
			break
		}
		t.Errorf("%+v: numcodecs on our frame: %s", b.Case, b.Error)
	}
}
