package blosc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"
)

func TestBlosclzDecodeStreams(t *testing.T) {
	tests := []struct {
		name   string
		stream []byte
		size   int // room in dst
		want   string
		n      int // -1: refused
	}{
		{"literals, marker ignored", []byte{0x20 | 2, 'a', 'b', 'c'}, 3, "abc", 3},
		{"overlapping match then literal", []byte{0x20 | 2, 'a', 'b', 'c', 4 << 5, 2, 0, 'z'}, 10, "abcabcabcz", 10},
		{"run of one byte", []byte{0x20, 'x', 2 << 5, 0, 0, '.'}, 6, "xxxxx.", 6},
		{"long match", []byte{0x20, 'q', 7 << 5, 3, 0, 0, '!'}, 14, "qqqqqqqqqqqqq!", 14},
		{"match before the start", []byte{0x20, 'a', 1 << 5, 1, 0, 'b'}, 10, "", -1},
		{"match as the last instruction is not copied", []byte{0x20, 'a', 1 << 5, 0, 0}, 10, "", -1},
		{"match whose operands end the stream is dropped", []byte{0x20 | 1, 'a', 'b', 1 << 5, 1, 0, 'c'}, 10, "ababac", 6},
		{"literal past the input", []byte{0x20 | 5, 'a'}, 10, "", -1},
		{"literal past the output", []byte{0x20 | 3, 'a', 'b', 'c', 'd'}, 3, "", -1},
		{"empty", nil, 0, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]byte, tt.size)
			n := blosclzDecode(dst, tt.stream)
			if n != tt.n || n >= 0 && string(dst[:n]) != tt.want {
				t.Fatalf("decoded %d bytes %q, want %d %q", n, dst[:max(n, 0)], tt.n, tt.want)
			}
		})
	}
}

// The case "match whose operands end the stream" above: the decoder
// returns what it has (6 bytes) — c-blosc then refuses the block because
// it is short, and so does decodeStream.
func TestBlosclzShortStreamRefused(t *testing.T) {
	if decodeStream(BloscLZ, make([]byte, 10), []byte{0x20 | 1, 'a', 'b', 1 << 5, 1, 0, 'c'}) {
		t.Fatal("a stream that decodes to 6 of 10 bytes was accepted")
	}
}

func TestBlosclzRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 70000)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	far := append(bytes.Clone(noise[:9000]), noise[:9000]...) // a repeat 9000 back, beyond 13 bits
	tests := map[string]struct {
		data       []byte
		compresses bool
	}{
		"zeros":              {make([]byte, 100000), true},
		"text":               {bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog. "), 500), true},
		"noise":              {noise, false},
		"far repeat":         {far, true},
		"short":              {[]byte("abcdefghijklmnopabcdefghijklmnop"), true},
		"below the minimum":  {[]byte("aaaaaaaaaaaaaaa"), false},
		"long run then tail": {append(bytes.Repeat([]byte{7}, 5000), "tail-bytes"...), true},
	}
	var table [1 << blosclzHashLog]int32
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dst := make([]byte, len(tt.data)-1)
			n := blosclzEncode(dst, tt.data, &table)
			if (n > 0) != tt.compresses {
				t.Fatalf("compressed %d bytes to %d; want compression %v", len(tt.data), n, tt.compresses)
			}
			if n == 0 {
				return
			}
			if dst[0]>>5 != 1 {
				t.Errorf("first byte 0x%02x lacks the marker", dst[0])
			}
			out := make([]byte, len(tt.data))
			if m := blosclzDecode(out, dst[:n]); m != len(out) || !bytes.Equal(out, tt.data) {
				t.Fatalf("round trip: %d bytes, differ at %d", m, firstDiff(out, tt.data))
			}
		})
	}
	// The far repeat is found, not stored as literals.
	dst := make([]byte, len(far))
	if n := blosclzEncode(dst, far, &table); n > len(far)*6/10 {
		t.Errorf("a 9000-byte repeat 9000 bytes back: %d bytes compressed to %d", len(far), n)
	}
}

func TestShuffleBytes(t *testing.T) {
	tests := []struct {
		k        int
		in, want []byte
	}{
		{3, []byte{0xa0, 0xa1, 0xa2, 0xb0, 0xb1, 0xb2, 0xff}, []byte{0xa0, 0xb0, 0xa1, 0xb1, 0xa2, 0xb2, 0xff}},
		{2, []byte{1, 2, 3, 4, 5, 6}, []byte{1, 3, 5, 2, 4, 6}},
		{4, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{1, 5, 2, 6, 3, 7, 4, 8, 9}},
		{1, []byte{1, 2, 3}, []byte{1, 2, 3}},
	}
	for _, tt := range tests {
		got := make([]byte, len(tt.in))
		shuffleBytes(got, tt.in, tt.k)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("shuffle k=%d: % x, want % x", tt.k, got, tt.want)
		}
		back := make([]byte, len(got))
		unshuffleBytes(back, got, tt.k)
		if !bytes.Equal(back, tt.in) {
			t.Errorf("unshuffle k=%d: % x, want % x", tt.k, back, tt.in)
		}
	}
	// The paths of their own (whole tiles, whole lines, tails) against
	// the definition.
	for _, k := range []int{2, 3, 4, 8} {
		for _, n := range []int{0, 1, 7, 8, 9, 17, 64, 65, 1001} {
			in := make([]byte, n*k+k-1)
			for i := range in {
				in[i] = byte(i*7 + i/8)
			}
			got := make([]byte, len(in))
			shuffleBytes(got, in, k)
			for i := range n {
				for j := range k {
					if got[j*n+i] != in[i*k+j] {
						t.Fatalf("k=%d n=%d: byte %d of element %d is at the wrong place", k, n, j, i)
					}
				}
			}
			if !bytes.Equal(got[n*k:], in[n*k:]) {
				t.Fatalf("k=%d n=%d: the tail moved", k, n)
			}
			back := make([]byte, len(in))
			unshuffleBytes(back, got, k)
			if !bytes.Equal(back, in) {
				t.Fatalf("k=%d n=%d: unshuffle differs at %d", k, n, firstDiff(back, in))
			}
		}
	}
}

func TestBitShuffle(t *testing.T) {
	tests := []struct {
		name     string
		k        int
		in, want []byte
	}{
		// Element 0 has every bit: each bit row has element 0's bit.
		{"one element all ones", 1, []byte{0xff, 0, 0, 0, 0, 0, 0, 0}, []byte{1, 1, 1, 1, 1, 1, 1, 1}},
		// Element b has bit b: row b has element b's bit.
		{"diagonal", 1, []byte{1, 2, 4, 8, 16, 32, 64, 128}, []byte{1, 2, 4, 8, 16, 32, 64, 128}},
		// 16-bit elements, element 3 is 0x0100: row 8 (byte 1, bit 0) has bit 3.
		{"second byte", 2, []byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0}},
		// 16 elements: two bytes per row, element 9 (0x80) is bit 1 of row 7's second byte.
		{"two bytes a row", 1, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}},
		// 7 elements: not a multiple of 8, left as it is.
		{"seven elements", 1, []byte{1, 2, 3, 4, 5, 6, 7}, []byte{1, 2, 3, 4, 5, 6, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]byte, len(tt.in))
			bitShuffle(got, tt.in, tt.k)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("% x, want % x", got, tt.want)
			}
			back := make([]byte, len(got))
			bitUnshuffle(back, got, tt.k)
			if !bytes.Equal(back, tt.in) {
				t.Fatalf("unshuffle: % x, want % x", back, tt.in)
			}
		})
	}
	// 8 elements of 3 bytes and 2 bytes after them: the 2 stay at the end.
	in := make([]byte, 26)
	in[24], in[25] = 0xaa, 0xbb
	in[0] = 1
	got := make([]byte, len(in))
	bitShuffle(got, in, 3)
	if got[0] != 1 || got[24] != 0xaa || got[25] != 0xbb {
		t.Errorf("% x: want 01 first and aa bb last", got)
	}
}

// buildFrame is a frame of one lz4 block, for the hostile cases to break.
func buildFrame(t *testing.T) ([]byte, []byte) {
	t.Helper()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1024)
	f, err := Encode(nil, data, Options{Codec: LZ4, Level: 5, Shuffle: NoShuffle, TypeSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := ReadHeader(f); h.Stored() || h.Blocks() != 1 {
		t.Fatalf("want one compressed block, got %+v", h)
	}
	return f, data
}

func TestHostileFrames(t *testing.T) {
	good, data := buildFrame(t)
	set := func(off int, v uint32) func([]byte) []byte {
		return func(f []byte) []byte { binary.LittleEndian.PutUint32(f[off:], v); return f }
	}
	tests := []struct {
		name  string
		edit  func([]byte) []byte
		limit int
		err   error
	}{
		{"short header", func(f []byte) []byte { return f[:10] }, 1 << 20, ErrCorrupt},
		{"truncated", func(f []byte) []byte { return f[:len(f)-1] }, 1 << 20, ErrCorrupt},
		{"trailing bytes", func(f []byte) []byte { return append(f, 0) }, 1 << 20, ErrCorrupt},
		{"version 3", func(f []byte) []byte { f[0] = 3; return f }, 1 << 20, ErrUnsupported},
		{"reserved flag", func(f []byte) []byte { f[2] |= 0x08; return f }, 1 << 20, ErrUnsupported},
		{"codec 6", func(f []byte) []byte { f[2] = f[2]&0x1f | 6<<5; return f }, 1 << 20, ErrUnsupported},
		{"codec stream version 2", func(f []byte) []byte { f[1] = 2; return f }, 1 << 20, ErrUnsupported},
		{"element size 0", func(f []byte) []byte { f[3] = 0; return f }, 1 << 20, ErrCorrupt},
		{"block size 0", set(8, 0), 1 << 20, ErrCorrupt},
		{"block size huge", set(8, 1<<31-1), 1 << 20, ErrCorrupt},
		{"more blocks than the table holds", set(8, 1), 1 << 20, ErrCorrupt},
		{"decoded size over the limit", nil, len(data) - 1, ErrTooLarge},
		{"decoded size 2 GiB", func(f []byte) []byte { set(4, 1<<31-1-16)(f); return set(8, maxBlockSize)(f) }, 1 << 20, ErrTooLarge},
		{"decoded size beyond a frame", set(4, 1<<31-1), 1<<31 - 1, ErrCorrupt},
		{"block start outside", set(16, 1<<30), 1 << 20, ErrCorrupt},
		{"block start negative", set(16, 0xfffffff0), 1 << 20, ErrCorrupt},
		{"stream size outside", set(20, 1<<20), 1 << 20, ErrCorrupt},
		{"stream short", func(f []byte) []byte {
			binary.LittleEndian.PutUint32(f[4:], uint32(len(data)+16))
			binary.LittleEndian.PutUint32(f[8:], uint32(len(data)+16))
			return f
		}, 1 << 20, ErrCorrupt},
		{"stored frame of the wrong size", func(f []byte) []byte { f[2] |= flagMemcpyed; return f }, 1 << 20, ErrCorrupt},
		{"lz4 stream cut short", func(f []byte) []byte { return set(20, binary.LittleEndian.Uint32(f[20:])-5)(f) }, 1 << 20, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := bytes.Clone(good)
			if tt.edit != nil {
				f = tt.edit(f)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, err := Decode(f, tt.limit)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v (decoded %d bytes)", err, tt.err, len(out))
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Errorf("allocated %d bytes for a refused frame", grew)
			}
			if _, err := DecodeInto(make([]byte, min(tt.limit, 1<<20)), f); err == nil {
				t.Errorf("DecodeInto accepted it")
			}
		})
	}
	if out, err := Decode(good, len(data)); err != nil || !bytes.Equal(out, data) {
		t.Fatalf("the unbroken frame: %v", err)
	}
}

// Decoding a shuffled frame needs a block of scratch per core; decoding
// many reuses it rather than allocating a block each time.
func TestDecodeReusesScratch(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers at random")
	}
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i / 4096)
	}
	frame, err := Encode(nil, data, Options{Codec: LZ4, Level: 5, Shuffle: ByteShuffle, TypeSize: 8, BlockSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, len(data))
	if _, err := DecodeInto(dst, frame); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := DecodeInto(dst, frame); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// A block per decode and core would be 10 MiB or more; a collection
	// that empties the pool costs a block or two again.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("10 decodes of a frame of 1 MiB blocks allocated %d bytes", grew)
	}
	if !bytes.Equal(dst, data) {
		t.Fatal("decoded bytes differ")
	}
}
