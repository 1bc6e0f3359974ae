package blosc

import (
	"bytes"
	"testing"
)

// fuzzLimit bounds what a fuzzed frame may decode to, so that each
// execution is fast and a frame that claims more is refused unread.
const fuzzLimit = 256 << 10

func FuzzDecode(f *testing.F) {
	for _, g := range goldenFrames(f) {
		if len(g[1]) <= fuzzLimit {
			f.Add(g[0])
		}
	}
	for _, o := range []Options{
		{Codec: BloscLZ, Level: 9, Shuffle: BitShuffle, TypeSize: 4, BlockSize: 256},
		{Codec: Snappy, Level: 5, Shuffle: ByteShuffle, TypeSize: 2},
		{Codec: Zlib, Level: 1, Shuffle: NoShuffle, TypeSize: 1, BlockSize: 300},
		{Codec: Zstd, Level: 3, Shuffle: ByteShuffle, TypeSize: 8},
	} {
		data := bytes.Repeat([]byte("smooth series 0001 0002 0003 "), 40)
		frame, err := Encode(nil, data, o)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		out, err := Decode(frame, fuzzLimit)
		if err != nil {
			return
		}
		if len(out) > fuzzLimit {
			t.Fatalf("decoded %d bytes, over the limit of %d", len(out), fuzzLimit)
		}
		// DecodeInto agrees, and refuses a destination one byte short.
		dst := make([]byte, len(out))
		if n, err := DecodeInto(dst, frame); err != nil || n != len(out) || !bytes.Equal(dst, out) {
			t.Fatalf("DecodeInto: %d bytes, %v", n, err)
		}
		if len(out) > 0 {
			if _, err := DecodeInto(dst[:len(out)-1], frame); err == nil {
				t.Fatal("DecodeInto filled a destination one byte short")
			}
		}
	})
}

func FuzzBlosclz(f *testing.F) {
	f.Add([]byte("abcabcabcabcabcabcabcabcabcabc0123456789"), []byte{0x20, 'a', 2 << 5, 0, 0, '.'})
	f.Add(bytes.Repeat([]byte{0}, 1000), []byte{0x3f})
	var table [1 << blosclzHashLog]int32
	f.Fuzz(func(t *testing.T, data, stream []byte) {
		// Any stream: decoded within its destination or refused.
		dst := make([]byte, 4096)
		if n := blosclzDecode(dst, stream); n > len(dst) {
			t.Fatalf("decoded %d bytes into %d", n, len(dst))
		}
		// Any data: what is encoded decodes back.
		if len(data) < 2 {
			return
		}
		enc := make([]byte, len(data)-1)
		n := blosclzEncode(enc, data, &table)
		if n == 0 {
			return
		}
		out := make([]byte, len(data))
		if m := blosclzDecode(out, enc[:n]); m != len(data) || !bytes.Equal(out, data) {
			t.Fatalf("round trip of %d bytes: %d back, differ at %d", len(data), m, firstDiff(out, data))
		}
	})
}

func FuzzBitshuffle(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef01"), uint8(4))
	f.Add(bytes.Repeat([]byte{0xa5}, 72), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		if k == 0 {
			return
		}
		for _, s := range []struct {
			name      string
			fwd, back func(dst, src []byte, k int)
		}{{"bit", bitShuffle, bitUnshuffle}, {"byte", shuffleBytes, unshuffleBytes}} {
			mid := make([]byte, len(data))
			s.fwd(mid, data, int(k))
			back := make([]byte, len(data))
			s.back(back, mid, int(k))
			if !bytes.Equal(back, data) {
				t.Fatalf("%s shuffle of %d bytes, k=%d: differs at %d", s.name, len(data), k, firstDiff(back, data))
			}
		}
		// A whole frame round trip with the fuzzed element size.
		frame, err := Encode(nil, data, Options{Codec: LZ4, Level: 5, Shuffle: BitShuffle, TypeSize: int(k), BlockSize: 128})
		if err != nil {
			t.Fatal(err)
		}
		out, err := Decode(frame, len(data))
		if err != nil || !bytes.Equal(out, data) {
			t.Fatalf("frame round trip: %v", err)
		}
	})
}
