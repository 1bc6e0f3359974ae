package h5

import (
	"bytes"
	stdzlib "compress/zlib"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParsePipelineBytes(t *testing.T) {
	le16 := func(v ...uint16) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint16(b, x)
		}
		return b
	}
	le32 := func(v ...uint32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
		return b
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name string
		body []byte
		want []Filter
		err  string
	}{
		{"v1 shuffle + deflate, names padded to 8, odd params padded",
			cat([]byte{1, 2, 0, 0, 0, 0, 0, 0},
				le16(2, 8, 1, 1), []byte("shuffle\x00"), le32(8), le32(0),
				le16(1, 8, 0, 1), []byte("deflate\x00"), le32(4), le32(0)),
			[]Filter{{ID: 2, Name: "shuffle", Flags: 1, Params: []uint32{8}}, {ID: 1, Name: "deflate", Params: []uint32{4}}}, ""},
		{"v2 fletcher32 + lzf (names only above 255)",
			cat([]byte{2, 2}, le16(3, 1, 0), le16(32000, 4, 1, 3), []byte("lzf\x00"), le32(4, 261, 1000)),
			[]Filter{{ID: 3, Name: "fletcher32", Flags: 1}, {ID: 32000, Name: "lzf", Flags: 1, Params: []uint32{4, 261, 1000}}}, ""},
		{"v2 unknown plugin keeps its stored name",
			cat([]byte{2, 1}, le16(40000, 6, 0, 0), []byte("mine\x00\x00")),
			[]Filter{{ID: 40000, Name: "mine"}}, ""},
		{"v2 known plugin named by id", cat([]byte{2, 1}, le16(32015, 0, 0, 0)), []Filter{{ID: 32015, Name: "zstd"}}, ""},
		{"version 3", []byte{3, 0}, nil, "filter pipeline version 3 is not 1 or 2"},
		{"33 filters", []byte{2, 33}, nil, "33 filters, more than 32"},
		{"parameters overrun", cat([]byte{2, 1}, le16(1, 0, 5), le32(1)), nil, "filter parameters (20 bytes) runs past"},
		{"v1 missing padding", cat([]byte{1, 1, 0, 0, 0, 0, 0, 0}, le16(1, 0, 0, 1), le32(4)), nil, "filter parameter padding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePipeline(tc.body, 50)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParsePipeline = %+v, %v; want an error containing %q", p, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Filters, tc.want) {
				t.Errorf("filters = %+v, want %+v", p.Filters, tc.want)
			}
		})
	}
}

func TestPipelineSupported(t *testing.T) {
	for _, tc := range []struct {
		ids  []uint16
		want string
	}{
		{nil, ""},
		{[]uint16{2, 1}, ""},
		{[]uint16{3, 32000}, ""},
		{[]uint16{2, 6}, "offset 7: filter 6 (scaleoffset) is not supported"},
		{[]uint16{4}, "offset 7: filter 4 (szip) is not supported"},
		{[]uint16{32015, 1}, "offset 7: filter 32015 (zstd) is not supported"},
	} {
		p := &Pipeline{At: 7}
		for _, id := range tc.ids {
			p.Filters = append(p.Filters, Filter{ID: id, Name: filterNames[id]})
		}
		err := p.Supported()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.ids, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want+": "+errors.ErrUnsupported.Error() || !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%v: %v, want %q wrapping ErrUnsupported", tc.ids, err, tc.want)
		}
	}
}

// shuffleForTest is HDF5's shuffle as a writer applies it.
func shuffleForTest(src []byte, size int) []byte {
	n := len(src) / size
	out := make([]byte, len(src))
	for i := 0; i < n; i++ {
		for j := 0; j < size; j++ {
			out[j*n+i] = src[i*size+j]
		}
	}
	copy(out[n*size:], src[n*size:])
	return out
}

func deflateForTest(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w, _ := stdzlib.NewWriterLevel(&buf, 4)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func appendFletcherForTest(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(append([]byte(nil), b...), fletcher32(b))
}

func TestFletcher32Values(t *testing.T) {
	// Worked by hand: words 0x0102, 0x0304; sum1 = 0x0406, sum2 = 0x0102 + 0x0406.
	if got := fletcher32([]byte{1, 2, 3, 4}); got != 0x05080406 {
		t.Errorf("fletcher32(01 02 03 04) = %#08x, want 0x05080406", got)
	}
	// An odd last byte is the high byte of a word: 0x0102, 0x0300.
	if got := fletcher32([]byte{1, 2, 3}); got != 0x05040402 {
		t.Errorf("fletcher32(01 02 03) = %#08x, want 0x05040402", got)
	}
	// 0xffff words reduce modulo 65535 to 0xffff: sums stay at 0xffff.
	if got := fletcher32(bytes.Repeat([]byte{0xff}, 2000)); got != 0xffffffff {
		t.Errorf("fletcher32(ff...) = %#08x, want 0xffffffff", got)
	}
}

// flipLast is b with the bits of its last byte flipped.
func flipLast(b []byte) []byte {
	b = append([]byte(nil), b...)
	b[len(b)-1] ^= 0xff
	return b
}

// dropLast is b without its last n bytes.
func dropLast(b []byte, n int) []byte { return b[:len(b)-n] }

func TestDecodePipelines(t *testing.T) {
	data := make([]byte, 4*250+3) // 250 int32 and 3 bytes of a partial element
	for i := range data {
		data[i] = byte(i * i / 7)
	}
	shuffle := Filter{ID: FilterShuffle, Name: "shuffle", Params: []uint32{4}}
	deflate := Filter{ID: FilterDeflate, Name: "deflate", Params: []uint32{4}}
	fletcher := Filter{ID: FilterFletcher32, Name: "fletcher32"}
	lzf := Filter{ID: FilterLZF, Name: "lzf"}
	shuffled := shuffleForTest(data, 4)
	for _, tc := range []struct {
		name    string
		filters []Filter
		stored  []byte
		mask    uint32
		err     string
	}{
		{"none", nil, data, 0, ""},
		{"deflate", []Filter{deflate}, deflateForTest(t, data), 0, ""},
		{"shuffle", []Filter{shuffle}, shuffled, 0, ""},
		{"shuffle, deflate", []Filter{shuffle, deflate}, deflateForTest(t, shuffled), 0, ""},
		{"shuffle, deflate, fletcher32", []Filter{shuffle, deflate, fletcher}, appendFletcherForTest(deflateForTest(t, shuffled)), 0, ""},
		{"fletcher32, shuffle, deflate", []Filter{fletcher, shuffle, deflate}, deflateForTest(t, shuffleForTest(appendFletcherForTest(data), 4)), 0, ""},
		{"fletcher32 first, deflate second, fletcher32 third", []Filter{fletcher, deflate, fletcher}, appendFletcherForTest(deflateForTest(t, appendFletcherForTest(data))), 0, ""},
		{"deflate skipped by the mask", []Filter{shuffle, deflate}, shuffled, 2, ""},
		{"all skipped", []Filter{shuffle, deflate}, data, 3, ""},
		{"fletcher32 mismatch", []Filter{fletcher}, append(append([]byte(nil), data...), 1, 2, 3, 4), 0, "fletcher32 checksum mismatch"},
		{"deflate too short", []Filter{deflate}, deflateForTest(t, data[:100]), 0, "deflate stream gives 100 bytes, want 1003"},
		{"deflate too long", []Filter{deflate}, deflateForTest(t, append(data, 0)), 0, "deflate stream gives more than 1003 bytes"},
		{"deflate garbage", []Filter{deflate}, []byte("not a zlib stream"), 0, "deflate: zlib: invalid header"},
		{"deflate of 1 byte", []Filter{deflate}, []byte{0x78}, 0, "deflate stream of 1 bytes has no zlib header"},
		{"deflate with a preset dictionary", []Filter{deflate}, []byte{0x78, 0xbb, 0, 0, 0, 1}, 0, "zlib: invalid dictionary"},
		{"deflate Adler-32 wrong", []Filter{deflate}, flipLast(deflateForTest(t, data)), 0, "deflate: zlib: invalid checksum: Adler-32"},
		{"deflate without its Adler-32", []Filter{deflate}, dropLast(deflateForTest(t, data), 2), 0, "deflate stream ends without its Adler-32"},
		{"deflate followed by bytes", []Filter{deflate}, append(deflateForTest(t, data), 9, 9), 0, ""},
		{"unfiltered wrong size", nil, data[:10], 0, "unfiltered chunk has 10 bytes, want 1003"},
		{"unsupported", []Filter{{ID: 6, Name: "scaleoffset"}}, data, 0, "filter 6 (scaleoffset)"},
		{"two compressors", []Filter{deflate, lzf}, data, 0, "2 compression filters in one pipeline"},
		{"fletcher32 of 3 bytes", []Filter{fletcher}, []byte{1, 2, 3}, 0, "3 bytes are too few for a checksum"},
		{"fletcher32 short of the chunk", []Filter{fletcher}, appendFletcherForTest(data[:9]), 0, "9 bytes to decode into 1003"},
		{"lzf garbage", []Filter{lzf}, []byte{0xe0, 0xff}, 0, "lzf match distance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Pipeline{Filters: tc.filters}
			dst := make([]byte, len(data))
			err := p.Decode(dst, tc.stored, tc.mask, 4)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Decode: %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dst, data) {
				t.Errorf("Decode gave different bytes")
			}
		})
	}
}

func TestLZFDecodeBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  []byte
		n    int
		want string
		err  string
	}{
		{"literals", []byte{2, 'a', 'b', 'c'}, 3, "abc", ""},
		// A match of 3 (ctrl 0x20: length 1+2) at distance 3 (low bits 0, byte 2).
		{"match", []byte{2, 'a', 'b', 'c', 0x20, 2}, 6, "abcabc", ""},
		// Overlapping: distance 1, length 7+2... ctrl 0xa0: length 5+2 = 7.
		{"overlapping run", []byte{0, 'x', 0xa0, 0}, 8, "xxxxxxxx", ""},
		// Length 7 takes an extra byte: 7 + 3 + 2 = 12.
		{"long match", []byte{1, 'a', 'b', 0xe0, 3, 1}, 14, "ababababababab", ""},
		{"stops at len(dst)", []byte{0, 'x', 0xa0, 0}, 5, "", "more than 5 bytes"},
		{"short", []byte{2, 'a', 'b', 'c'}, 4, "", "decodes to 3 bytes, want 4"},
		{"before start", []byte{0, 'x', 0x20, 5}, 4, "", "refers 5 bytes before the start"},
		{"literal overruns input", []byte{5, 'a'}, 6, "", "literal run of 6 bytes"},
		{"length byte missing", []byte{0, 'a', 0xe0}, 6, "", "match length"},
	} {
		dst := make([]byte, tc.n)
		err := lzfDecode(dst, tc.src)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || string(dst) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, dst, err, tc.want)
		}
	}
}

// unshuffle undoes shuffleForTest for every element size, the specialised ones included,
// with and without bytes of a partial last element.
func TestUnshuffleSizes(t *testing.T) {
	for _, size := range []int{1, 2, 3, 4, 5, 8, 16} {
		for _, n := range []int{0, 1, size, 7 * size, 7*size + size/2} {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(i*31 + 7)
			}
			got := make([]byte, n)
			unshuffle(got, shuffleForTest(data, size), size)
			if !bytes.Equal(got, data) {
				t.Errorf("size %d, %d bytes: unshuffle(shuffle(x)) = % x, want % x", size, n, got, data)
			}
		}
	}
}

func BenchmarkUnshuffle8(b *testing.B) {
	src := make([]byte, 48*1024)
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for i := 0; i < b.N; i++ {
		unshuffle(dst, src, 8)
	}
}

// A chunk of several of inflate's pieces inflates whole, its Adler-32 checked over all
// of them: a wrong checksum and a stream cut inside its last piece are errors.
func TestInflatePieces(t *testing.T) {
	data := make([]byte, 3*inflatePiece+1003)
	for i := range data {
		data[i] = byte(i*7 + i/1000)
	}
	stored := deflateForTest(t, data)
	dst := make([]byte, len(data))
	if err := inflate(dst, stored); err != nil || !bytes.Equal(dst, data) {
		t.Fatalf("inflate: %v (equal: %v)", err, bytes.Equal(dst, data))
	}
	if err := inflate(dst, flipLast(stored)); err == nil || !strings.Contains(err.Error(), "zlib: invalid checksum") {
		t.Errorf("a wrong Adler-32: %v", err)
	}
	if err := inflate(dst, deflateForTest(t, data[:len(data)-10])); err == nil || !strings.Contains(err.Error(), "deflate stream gives 197601 bytes, want 197611") {
		t.Errorf("a short stream: %v", err)
	}
}
