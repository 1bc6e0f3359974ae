package abf

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tv1Hex = `
00000000  00 04 00 00 00 00 00 00 00 78 40 00 00 00 00 00  |.........x@.....|
00000010  00 00 41 72 72 61 79 7b 46 6c 6f 61 74 36 34 2c  |..Array{Float64,|
00000020  31 7d 02 00 00 00 00 00 00 00 00 00 00 00 00 00  |1}..............|
00000030  00 00 00 00 00 00 f0 3f 00 00 00 00 00 00 00 40  |.......?.......@|
00000040  00 04 00 00 00 00 00 00 00 62 2c 00 00 00 00 00  |.........b,.....|
00000050  00 00 42 69 74 41 72 72 61 79 7b 31 7d 03 00 00  |..BitArray{1}...|
00000060  00 00 00 00 00 00 00 00 05 00 00 00 00 00 00 00  |................|
`

const tv2Hex = `
00000000  06 00 00 00 00 00 00 00 4c 49 54 54 4c 45 02 00  |........LITTLE..|
00000010  00 00 00 00 00 00 01 00 00 00 00 00 00 00 78 05  |..............x.|
00000020  00 00 00 00 00 00 00 41 72 72 61 79 07 00 00 00  |.......Array....|
00000030  00 00 00 00 46 6c 6f 61 74 36 34 01 00 00 00 00  |....Float64.....|
00000040  00 00 00 02 00 00 00 00 00 00 00 00 00 00 00 00  |................|
00000050  00 00 00 00 00 00 f0 3f 00 00 00 00 00 00 00 40  |.......?.......@|
00000060  01 00 00 00 00 00 00 00 62 08 00 00 00 00 00 00  |........b.......|
00000070  00 42 69 74 41 72 72 61 79 01 00 00 00 00 00 00  |.BitArray.......|
00000080  00 03 00 00 00 00 00 00 00 00 00 00 00 00 00 00  |................|
00000090  05 00 00 00 00 00 00 00                          |........|
`

func writeTV1(f *File) {
	must(Write(f, "x", []int64{2}, []float64{1, 2}))
	b, err := PackBits([]int64{3}, []bool{true, false, true})
	must(err)
	must(f.WriteBits("b", b))
}

// tv3 is TV-1's content in Format B (v0.4), laid out field by field.
func tv3() []byte {
	w := newAB()
	w.u8(0).str("x").str("Array").str("Float64").i64(1).i64(2).padTo(8).f64s(1, 2)
	w.u8(0).str("b").str("BitArray").i64(1).i64(3).padTo(8).i64(5)
	return w.b
}

func checkTV1Values(t *testing.T, f *File) {
	t.Helper()
	recs := f.Entries()
	require.Len(t, recs, 2)
	x, err := Read[float64](f, "x")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2}, x)
	b, err := f.ReadBits("b")
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, b.Bools())
	assert.Equal(t, []int64{2}, recs[0].Shape)
	assert.Equal(t, []int64{3}, recs[1].Shape)
}

func TestTV1FormatC(t *testing.T) {
	want := unhex(tv1Hex)
	got := build(t, FormatC, writeTV1)
	require.Equal(t, want, got)
	assert.Equal(t, "a8b24da5dac9c4cb185d7abe0b13c0ad13e6fbe520f1166edc4a569276e5ba63", sha(got))

	f, _ := openBytes(t, got, "r")
	assert.Equal(t, FormatC, f.version())
	recs := f.Entries()
	assert.Equal(t, []int64{0, 48, 16, 64}, []int64{recs[0].Start, recs[0].Offset, recs[0].Size, recs[0].End})
	assert.Equal(t, []int64{64, 104, 8, 112}, []int64{recs[1].Start, recs[1].Offset, recs[1].Size, recs[1].End})
	assert.Equal(t, "Array{Float64,1}", recs[0].TypeString)
	assert.Equal(t, "BitArray{1}", recs[1].TypeString)
	assert.Equal(t, KindBitArray, recs[1].Kind)
	checkTV1Values(t, f)
	v, err := View[float64](f, "x")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2}, v)
	bits, err := f.ViewBits("b")
	require.NoError(t, err)
	assert.Equal(t, []uint64{5}, bits.Chunks)
}

func TestTV2FormatA(t *testing.T) {
	want := unhex(tv2Hex)
	require.Len(t, want, 152)
	p := tempFile(t, nil)
	f, err := openMode(p, "w", &Options{Format: FormatA})
	require.NoError(t, err)
	require.NoError(t, Write(f, "x", []int64{2}, []float64{1, 2}))
	cur, _ := os.ReadFile(p)
	assert.Equal(t, []byte{1, 0, 0, 0, 0, 0, 0, 0}, cur[14:22])
	b, _ := PackBits([]int64{3}, []bool{true, false, true})
	require.NoError(t, f.WriteBits("b", b))
	cur, _ = os.ReadFile(p)
	assert.Equal(t, []byte{2, 0, 0, 0, 0, 0, 0, 0}, cur[14:22])
	require.NoError(t, f.Close())
	got, _ := os.ReadFile(p)
	require.Equal(t, want, got)
	assert.Equal(t, "fcd1a1973801154a6b309ae76f72f2efc07a9de4bd9d26dda63f65985da93473", sha(got))

	g, _ := openBytes(t, got, "r")
	assert.Equal(t, FormatA, g.version())
	recs := g.Entries()
	assert.Equal(t, int64(80), recs[0].Offset)
	assert.Equal(t, int64(144), recs[1].Offset)
	assert.Equal(t, "Array{Float64,1}", recs[0].TypeString)
	checkTV1Values(t, g)
}

func TestTV3FormatB(t *testing.T) {
	data := tv3()
	require.Len(t, data, 128)
	assert.Equal(t, "8a5425cb441ff8fbdd3bf07495c3a9f929b60bc6e572af668136a83128b454a8", sha(data))
	f, p := openBytes(t, data, "r")
	assert.Equal(t, FormatB, f.version())
	recs := f.Entries()
	assert.Equal(t, int64(56), recs[0].Offset)
	assert.Equal(t, int64(72), recs[1].Start)
	assert.Equal(t, int64(120), recs[1].Offset)
	checkTV1Values(t, f)
	for _, mode := range []string{"r+", "a"} {
		_, err := openMode(p, mode, nil)
		assert.ErrorIs(t, err, mmapfile.ErrNotWritable, mode)
	}
}

// The v0.1 README's example data (TV-4).
var (
	readmeX     = []layout.Float16{0x3B2A, 0x24C0, 0x34B0, 0x0000, 0x37DC}
	readmeRunes = []rune{0x96860, 0xB3835, 0x1103F, 0xD14B6, 0x68AB5, 0x488C1, 0xC6D65, 0xAA2E6, 0xAD6D6,
		0x7D113, 0xEE4DF, 0x13FB5, 0x11028, 0x6539D, 0x5AD2A, 0x52A26, 0x6F827, 0x2FD8B, 0x623D5, 0x96515,
		0x6D337, 0x16BD4, 0x9B53A, 0x8E767, 0xE7EEC, 0x45BE2, 0x72090}
	readmeBits = [][]bool{{false, false, true, true, true}, {true, true, false, false, false}, {true, false, true, false, true}}
)

func readmeFile1(f *File) {
	must(Write(f, "my x array", []int64{5}, readmeX))
	y := make([]layout.Char, len(readmeRunes))
	for i, r := range readmeRunes {
		c, err := layout.CharFrom(r)
		must(err)
		y[i] = c
	}
	must(Write(f, "whY array", []int64{3, 3, 3}, y))
	z := make([]float64, 15)
	for i := range z {
		z[i] = float64(i + 1)
	}
	must(Write(f, "ζ!/b", []int64{3, 5}, z))
	var col []bool // column-major
	for j := 0; j < 5; j++ {
		for i := 0; i < 3; i++ {
			col = append(col, readmeBits[i][j])
		}
	}
	b, err := PackBits([]int64{3, 5}, col)
	must(err)
	must(f.WriteBits("bitmat", b))
}

func payloads(f *File) []int64 {
	var out []int64
	for _, r := range f.Entries() {
		out = append(out, r.Offset)
	}
	return out
}

func TestTV4ReadmeFile1(t *testing.T) {
	for _, tc := range []struct {
		format Format
		offs   []int64
		eof    int
		sha    string
		prefix []byte
		at     int
	}{
		{FormatA, []int64{84, 168, 344, 520}, 528, "2a6ac61cc79eece934b68d940f8db7548cb71f922771a9817d8836b82924a2b3", []byte{4, 0, 0, 0, 0, 0, 0, 0, 0xce, 0xb6, 0x21, 0x2f, 0x62}, 276},
		{FormatC, []int64{52, 128, 296, 472}, 480, "13930550f77806ce719c4bbc7466505c746611ed8d965cffb50ca2b3eed52840", []byte{16, 0, 0, 0, 0, 0, 0, 0, 0xce, 0xb6, 0x21, 0x2f, 0x62}, 237},
	} {
		t.Run(tc.format.String(), func(t *testing.T) {
			data := build(t, tc.format, readmeFile1)
			require.Len(t, data, tc.eof)
			assert.Equal(t, tc.sha, sha(data))
			assert.Equal(t, tc.prefix, data[tc.at:tc.at+len(tc.prefix)])
			f, _ := openBytes(t, data, "r")
			assert.Equal(t, tc.offs, payloads(f))
			if tc.format == FormatA {
				assert.Equal(t, uint64(4), binary.LittleEndian.Uint64(data[14:]))
			}
			bits, err := f.ViewBits("bitmat")
			require.NoError(t, err)
			assert.Equal(t, []uint64{0x5356}, bits.Chunks)
			x, err := View[layout.Float16](f, "my x array")
			require.NoError(t, err)
			assert.Equal(t, readmeX, x)
			assert.InDelta(t, 0.8955, x[0].Float32(), 0.0005)
			y, err := Read[layout.Char](f, "whY array")
			require.NoError(t, err)
			for i, c := range y {
				r, err := c.Rune()
				require.NoError(t, err)
				assert.Equal(t, readmeRunes[i], r)
			}
		})
	}
}

func TestTV5TV6ReadmeFile2(t *testing.T) {
	for _, tc := range []struct {
		format Format
		off    int64
		eof    int
		sha    string
	}{
		{FormatA, 88, 488, "3fd5d1e162c5f7ffc5c9b3d36df522b0b8a5b36b70ed543a46fcc76d55a06435"},
		{FormatC, 56, 456, "481c9a961d2a0d2789987fd220033fad6c94ac6f8d9d41dd1d1dfa83c62b5207"},
	} {
		t.Run(tc.format.String(), func(t *testing.T) {
			p := tempFile(t, nil)
			f, err := openMode(p, "w+", &Options{Format: tc.format})
			require.NoError(t, err)
			x := make([]float64, 50)
			for i := range x {
				x[i] = float64(i + 1)
			}
			require.NoError(t, Write(f, "x", []int64{10, 5}, x))
			v, err := View[float64](f, "x")
			require.NoError(t, err)
			v[0] = -10
			require.NoError(t, f.Close())

			g, err := Open(p, nil)
			require.NoError(t, err)
			defer g.Close()
			rec, ok := g.Lookup("x")
			require.True(t, ok)
			assert.Equal(t, tc.off, rec.Offset)
			data, _ := os.ReadFile(p)
			require.Len(t, data, tc.eof)
			assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0x24, 0xc0}, data[tc.off:tc.off+8])
			assert.Equal(t, tc.sha, sha(data))
			got, err := Read[float64](g, "x")
			require.NoError(t, err)
			assert.Equal(t, -10.0, got[0])
			assert.Equal(t, 50.0, got[49])
		})
	}
}

func TestTV7String(t *testing.T) {
	data := build(t, FormatC, func(f *File) { must(f.WriteString("log", "a∘α")) })
	want := newC().u8(0).str("log").str("String").b
	assert.Equal(t, 26, len(want))
	want = append(want, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0x61, 0xe2, 0x88, 0x98, 0xce, 0xb1)
	require.Equal(t, want, data)
	f, _ := openBytes(t, data, "r")
	rec, _ := f.Lookup("log")
	assert.Equal(t, KindString, rec.Kind)
	assert.Equal(t, []int64{34, 6, 40}, []int64{rec.Offset, rec.Size, rec.End})
	assert.Equal(t, []int64{3}, rec.Shape)
	assert.Equal(t, int64(3), rec.Len())
	s, err := f.ReadString("log")
	require.NoError(t, err)
	assert.Equal(t, "a∘α", s)
	_, err = Read[float64](f, "log")
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)

	// Format A refuses Strings before writing a byte.
	build(t, FormatA, func(f *File) {
		assert.ErrorIs(t, f.WriteString("s", "v"), errors.ErrUnsupported)
		assert.ErrorIs(t, f.WriteString("s", "v"), errors.ErrUnsupported)
	})
}

func TestTV8Char(t *testing.T) {
	chars := []layout.Char{}
	for _, r := range []rune{'a', 'ζ', '\U00096860'} {
		c, err := layout.CharFrom(r)
		require.NoError(t, err)
		chars = append(chars, c)
	}
	data := build(t, FormatC, func(f *File) { must(Write(f, "c", []int64{3}, chars)) })
	require.Len(t, data, 52)
	assert.Equal(t, uint64(52), binary.LittleEndian.Uint64(data[10:]))
	assert.Equal(t, []byte{0, 0, 0, 0x61, 0, 0, 0xb6, 0xce, 0xa0, 0xa1, 0x96, 0xf2}, data[40:])
	f, _ := openBytes(t, data, "r")
	_, err := View[uint32](f, "c")
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	v, err := View[layout.Char](f, "c")
	require.NoError(t, err)
	assert.Equal(t, chars, v)

	// Raw (invalid) Chars round-trip.
	raw := []layout.Char{0x12345678, 0x80000000, 0xFFFFFFFF}
	data = build(t, FormatC, func(f *File) { must(Write(f, "r", []int64{3}, raw)) })
	g, _ := openBytes(t, data, "r")
	back, err := Read[layout.Char](g, "r")
	require.NoError(t, err)
	assert.Equal(t, raw, back)
	_, err = back[1].Rune()
	assert.ErrorIs(t, err, layout.ErrInvalidChar)
}

func TestTV8CharConversions(t *testing.T) {
	for u, r := range map[uint32]rune{0x61000000: 'a', 0xCEB60000: 'ζ', 0xE282AC00: '€', 0xF296A1A0: 0x96860, 0: 0,
		0x41424344: 'A', 0xEDA08000: 0xD800, 0xF4908080: 0x110000} {
		got, err := layout.Char(u).Rune()
		require.NoError(t, err, "%08X", u)
		assert.Equal(t, r, got, "%08X", u)
	}
	for _, u := range []uint32{0x80000000, 0xC2000000, 0xC2A34100, 0xC0800000, 0xE0808000, 0xF0808080, 0xF8000000} {
		_, err := layout.Char(u).Rune()
		assert.ErrorIs(t, err, layout.ErrInvalidChar, "%08X", u)
	}
	for r, u := range map[rune]uint32{0xD800: 0xEDA08000, 0x110000: 0xF4908080, 0x1FFFFF: 0xF7BFBFBF, 'ζ': 0xCEB60000} {
		c, err := layout.CharFrom(r)
		require.NoError(t, err)
		assert.Equal(t, u, uint32(c))
	}
	for _, r := range []rune{0x200000, -1} {
		_, err := layout.CharFrom(r)
		assert.ErrorIs(t, err, layout.ErrInvalidChar)
	}
}

func TestTV9BitArray(t *testing.T) {
	all := make([]bool, 65)
	for i := range all {
		all[i] = true
	}
	b65, err := PackBits([]int64{65}, all)
	require.NoError(t, err)
	data := build(t, FormatC, func(f *File) { must(f.WriteBits("b65", b65)) })
	require.Len(t, data, 56)
	assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0, 0, 0, 0}, data[40:])

	// Unused bits set: the file opens, bit access fails at the last word,
	// and the file is never repaired.
	bad := unhex(tv1Hex)
	bad[104] = 0x0D
	for _, mode := range []string{"r", "r+"} {
		f, p := openBytes(t, bad, mode)
		_, err := f.ViewBits("b")
		requireFormatErr(t, err, 104, nil)
		_, err = f.ReadBits("b")
		requireFormatErr(t, err, 104, nil)
		require.NoError(t, f.Close())
		after, _ := os.ReadFile(p)
		assert.Equal(t, bad, after, mode)
	}
	// Lenient copies mask the unused bits.
	p := tempFile(t, bad)
	f, err := openMode(p, "r", &Options{Lenient: true})
	require.NoError(t, err)
	lb, err := f.ReadBits("b")
	require.NoError(t, err)
	assert.Equal(t, []uint64{5}, lb.Chunks)
	f.Close()

	// WriteBits with unused bits set writes nothing.
	p = tempFile(t, nil)
	g, err := openMode(p, "w", nil)
	require.NoError(t, err)
	require.Error(t, g.WriteBits("b", BitArray{Dims: []int64{3}, Chunks: []uint64{0x0D}}))
	require.Error(t, g.WriteBits("b", BitArray{Dims: []int64{3}, Chunks: []uint64{1, 0}}))
	require.NoError(t, g.Close())
	after, _ := os.ReadFile(p)
	assert.Empty(t, after)
}

func TestTV10EmptyArrays(t *testing.T) {
	e := build(t, FormatC, func(f *File) { must(Write(f, "e", []int64{0}, []float64{})) })
	require.Len(t, e, 48)
	assert.Equal(t, make([]byte, 6), e[42:])

	// Upstream's 42-byte file: no padding after an empty payload.
	up := e[:42]
	f, p := openBytes(t, up, "r")
	rec, _ := f.Lookup("e")
	assert.Equal(t, []int64{48, 0}, []int64{rec.Offset, rec.Size})
	v, err := View[float64](f, "e")
	require.NoError(t, err)
	assert.NotNil(t, v)
	assert.Empty(t, v)
	require.NoError(t, f.Close())
	g, err := openMode(p, "a", nil)
	require.NoError(t, err)
	require.NoError(t, Write(g, "x", []int64{1}, []float64{1}))
	require.NoError(t, g.Close())
	after, _ := os.ReadFile(p)
	want := build(t, FormatC, func(f *File) {
		must(Write(f, "e", []int64{0}, []float64{}))
		must(Write(f, "x", []int64{1}, []float64{1}))
	})
	assert.Equal(t, want, after)

	// Upstream's 96-byte file: the next record starts at the end of the empty array's header.
	w := newC().raw(up)
	w.u8(0).str("x").str("Array{Float64,1}").i64(1).padTo(8).f64s(1)
	require.Len(t, w.b, 96)
	r9, _ := openBytes(t, w.b, "r")
	recs := r9.Entries()
	require.Len(t, recs, 2)
	assert.True(t, recs[0].Unpadded)
	assert.Equal(t, int64(42), recs[0].End)
	assert.Equal(t, int64(88), recs[1].Offset)
	x, err := Read[float64](r9, "x")
	require.NoError(t, err)
	assert.Equal(t, []float64{1}, x)

	bv := build(t, FormatC, func(f *File) { must(f.WriteBits("b", BitArray{Dims: []int64{0}, Chunks: []uint64{}})) })
	assert.Len(t, bv, 40)
	m := build(t, FormatC, func(f *File) { must(Write(f, "m", []int64{3, 0}, []float32{})) })
	assert.Len(t, m, 52)
	mf, _ := openBytes(t, m, "r")
	mr, _ := mf.Lookup("m")
	assert.Equal(t, []int64{3, 0}, mr.Shape)
	a := build(t, FormatA, func(f *File) { must(Write(f, "e", []int64{0}, []float64{})) })
	assert.Len(t, a, 80)
	bf, _ := openBytes(t, bv, "r")
	bb, err := bf.ViewBits("b")
	require.NoError(t, err)
	assert.Equal(t, int64(0), bb.Len())
}

func TestTV11ZeroDim(t *testing.T) {
	c := build(t, FormatC, func(f *File) { must(Write(f, "s", nil, []float64{1.5})) })
	require.Len(t, c, 48)
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}, c[40:])
	a := build(t, FormatA, func(f *File) { must(Write(f, "s", []int64{}, []float64{1.5})) })
	require.Len(t, a, 80)
	assert.Equal(t, make([]byte, 8), a[59:67])
	f, _ := openBytes(t, a, "r")
	rec, _ := f.Lookup("s")
	assert.Equal(t, int64(72), rec.Offset)
	assert.Equal(t, []int64{}, rec.Shape)
	assert.Equal(t, int64(1), rec.Len())
	v, err := View[float64](f, "s")
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5}, v)

	b := build(t, FormatC, func(f *File) { must(f.WriteBits("t", BitArray{Chunks: []uint64{1}})) })
	require.Len(t, b, 40)
	assert.Equal(t, []byte{1, 0, 0, 0, 0, 0, 0, 0}, b[32:])
	g, _ := openBytes(t, b, "r")
	br, _ := g.Lookup("t")
	assert.Empty(t, br.Shape)
	assert.Equal(t, int64(1), br.Len())
	assert.Equal(t, "BitArray{0}", br.TypeString)
}

func TestTV12Keys(t *testing.T) {
	data := build(t, FormatC, func(f *File) {
		must(Write(f, "", []int64{1}, []uint8{7}))
		must(f.WriteString("blahαש", "a∘α"))
		must(Write(f, "μy1234_", []int64{2}, []int16{-1, 2}))
	})
	require.Len(t, data, 136)
	f, _ := openBytes(t, data, "r")
	recs := f.Entries()
	assert.Equal(t, int64(39), recs[0].Offset)
	assert.Equal(t, uint64(24), binary.LittleEndian.Uint64(data[recs[1].Start+1:]))
	assert.Equal(t, []byte{0x62, 0x6c, 0x61, 0x68, 0xce, 0xb1, 0xd7, 0xa9}, data[recs[1].Start+9:recs[1].Start+17])
	assert.Equal(t, int64(71+8), recs[1].Offset)
	assert.Equal(t, uint64(28), binary.LittleEndian.Uint64(data[recs[2].Start+1:]))
	assert.Equal(t, []byte{0xff, 0xff, 0x02, 0x00}, data[132:])
	v, err := View[int16](f, "μy1234_")
	require.NoError(t, err)
	assert.Equal(t, []int16{-1, 2}, v)

	nul := build(t, FormatC, func(f *File) { must(Write(f, "a\x00b", []int64{1}, []int8{-3})) })
	g, _ := openBytes(t, nul, "r")
	got, err := Read[int8](g, "a\x00b")
	require.NoError(t, err)
	assert.Equal(t, []int8{-3}, got)

	bad := build(t, FormatC, func(f *File) { require.Error(t, Write(f, "\xff", []int64{1}, []int8{1})) })
	assert.Empty(t, bad)
}

func TestTV13Int128(t *testing.T) {
	vals := []layout.Int128{layout.Int128From(-2), {Lo: 0, Hi: 1}}
	data := build(t, FormatC, func(f *File) { must(Write(f, "i", []int64{2}, vals)) })
	require.Len(t, data, 80)
	want := append([]byte{0xfe}, repeat(0xff, 15)...)
	want = append(want, repeat(0, 8)...)
	want = append(want, 1, 0, 0, 0, 0, 0, 0, 0)
	assert.Equal(t, want, data[48:])
	assert.Equal(t, make([]byte, 7), data[41:48])
	f, _ := openBytes(t, data, "r")
	v, err := View[layout.Int128](f, "i")
	require.NoError(t, err)
	assert.Equal(t, []layout.Int128{{Lo: 0xFFFFFFFFFFFFFFFE, Hi: -1}, {Lo: 0, Hi: 1}}, v)
	assert.Equal(t, "18446744073709551616", v[1].String())
}

func repeat(b byte, n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func TestTV14LenientTypes(t *testing.T) {
	w := newC().u8(0).str("x").str("Vector{Float64}").i64(2).padTo(8).f64s(1, 2)
	require.Len(t, w.b, 64)
	f, _ := openBytes(t, w.b, "r")
	rec, _ := f.Lookup("x")
	assert.Equal(t, int64(48), rec.Offset)
	assert.Equal(t, "Vector{Float64}", rec.TypeString)
	x, err := View[float64](f, "x")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2}, x)

	for typ, want := range map[string]struct {
		kind Kind
		elem layout.Type
		n    int
	}{
		"Matrix{Int32}":    {KindArray, layout.I32, 2},
		"Array{Char, 3}":   {KindArray, layout.JuliaChar, 3},
		"BitVector":        {KindBitArray, layout.Invalid, 1},
		"BitMatrix":        {KindBitArray, layout.Invalid, 2},
		"Array{Int64,0}":   {KindArray, layout.I64, 0},
		"Array{UInt128,2}": {KindArray, layout.U128, 2},
	} {
		kind, elem, n, ok := parseTypeC(typ)
		require.True(t, ok, typ)
		assert.Equal(t, want.kind, kind, typ)
		assert.Equal(t, want.elem, elem, typ)
		assert.Equal(t, want.n, n, typ)
	}
	for _, typ := range []string{"Array{Complex{Float64},1}", "Array{Float64,-1}", "Array{Float64,1}x",
		"Array{Float64,99999999999999999999}", "Array{Float64,2000}", "Int64", "Array{Int,1}", "Vector{Float64"} {
		w := newC().u8(0).str("x").str(typ).i64(1).padTo(8).f64s(1)
		_, err := NewReader(bytesReader(w.b), int64(len(w.b)), nil)
		requireFormatErr(t, err, 10, nil)
	}
}
