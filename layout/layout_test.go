package layout

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTypeTable(t *testing.T) {
	cases := []struct {
		typ   Type
		name  string
		size  int
		align int
	}{
		{I8, "i8", 1, 1}, {I16, "i16", 2, 2}, {I32, "i32", 4, 4}, {I64, "i64", 8, 8},
		{U8, "u8", 1, 1}, {U16, "u16", 2, 2}, {U32, "u32", 4, 4}, {U64, "u64", 8, 8},
		{F16, "f16", 2, 2}, {F32, "f32", 4, 4}, {F64, "f64", 8, 8}, {Bool, "bool", 1, 1},
		{I128, "i128", 16, 16}, {U128, "u128", 16, 16}, {JuliaChar, "char", 4, 4},
		// Complex numbers align as their parts, as in C and Go.
		{C64, "c64", 8, 4}, {C128, "c128", 16, 8},
	}
	require.Len(t, Types(), len(cases))
	for _, c := range cases {
		assert.Equal(t, c.name, c.typ.String())
		assert.Equal(t, c.size, c.typ.Size(), c.name)
		assert.Equal(t, c.align, c.typ.Align(), c.name)
		assert.Equal(t, c.align, c.typ.SwapSize(), c.name)
		got, err := ParseType(c.name)
		require.NoError(t, err)
		assert.Equal(t, c.typ, got)
	}
	_, err := ParseType("f128")
	assert.Error(t, err)
	assert.False(t, Invalid.Valid())
	assert.Equal(t, "Type(200)", Type(200).String())
	assert.Equal(t, 0, Type(200).Size())
}

func TestTypeOf(t *testing.T) {
	assert.Equal(t, I8, TypeOf[int8]())
	assert.Equal(t, U8, TypeOf[uint8]())
	assert.Equal(t, U32, TypeOf[uint32]())
	assert.Equal(t, JuliaChar, TypeOf[Char]())
	assert.Equal(t, F16, TypeOf[Float16]())
	assert.Equal(t, Bool, TypeOf[bool]())
	assert.Equal(t, I128, TypeOf[Int128]())
	assert.Equal(t, U128, TypeOf[Uint128]())
	assert.Equal(t, F64, TypeOf[float64]())
	assert.Equal(t, C64, TypeOf[complex64]())
	assert.Equal(t, C128, TypeOf[complex128]())
	assert.Equal(t, F32, C64.Part())
	assert.Equal(t, F64, C128.Part())
	assert.True(t, C64.IsComplex())
	assert.False(t, C64.IsFloat())
}

// naiveReorder is the definition of a change of order, element by element.
func naiveReorder(src []byte, size int, shape []int64, from Order) []byte {
	n, _ := Count(shape)
	dst := make([]byte, len(src))
	idx := make([]int64, len(shape))
	for k := int64(0); k < n; k++ {
		// idx is the logical index of source element k.
		rem := k
		if from == RowMajor {
			for i := len(shape) - 1; i >= 0; i-- {
				idx[i] = rem % shape[i]
				rem /= shape[i]
			}
		} else {
			for i := 0; i < len(shape); i++ {
				idx[i] = rem % shape[i]
				rem /= shape[i]
			}
		}
		to := RowMajor
		if from == RowMajor {
			to = ColMajor
		}
		pos, _ := Index(shape, to, idx...)
		copy(dst[pos*int64(size):(pos+1)*int64(size)], src[k*int64(size):])
	}
	return dst
}

func TestReorderBytesEveryRankAndSize(t *testing.T) {
	shapes := [][]int64{{7}, {1, 9}, {3, 5}, {33, 70}, {70, 33}, {2, 3, 4}, {5, 1, 6}, {4, 3, 2, 5}, {3, 1, 1, 2, 7}, {0, 4}, {17, 19, 3}}
	for _, size := range []int{1, 2, 3, 4, 8, 12, 16} {
		for _, shape := range shapes {
			for _, from := range []Order{RowMajor, ColMajor} {
				n, _ := Count(shape)
				src := make([]byte, n*int64(size))
				for i := range src {
					src[i] = byte(i*7 + i/251)
				}
				want := naiveReorder(src, size, shape, from)
				got := make([]byte, len(src))
				require.NoError(t, ReorderBytes(got, src, size, shape, from))
				require.Equal(t, want, got, "size %d shape %v from %v", size, shape, from)
				// Misaligned buffers take the byte path and agree.
				buf := make([]byte, len(src)+1)
				require.NoError(t, ReorderBytes(buf[1:], src, size, shape, from))
				require.Equal(t, want, buf[1:], "misaligned: size %d shape %v", size, shape)
			}
		}
	}
	assert.Error(t, ReorderBytes(make([]byte, 5), make([]byte, 6), 1, []int64{2, 3}, RowMajor))
}

func TestReorderParallelMatchesSerial(t *testing.T) {
	// Large enough to be split over the cores.
	rows, cols := int64(1031), int64(700)
	src := make([]uint64, rows*cols)
	for i := range src {
		src[i] = uint64(i)
	}
	dst := make([]uint64, rows*cols)
	require.NoError(t, Reorder(dst, src, []int64{rows, cols}, RowMajor))
	for i := int64(0); i < rows; i += 37 {
		for j := int64(0); j < cols; j += 13 {
			require.Equal(t, src[i*cols+j], dst[j*rows+i])
		}
	}
}

func TestCount(t *testing.T) {
	cases := []struct {
		shape []int64
		want  int64
		err   error
	}{
		{nil, 1, nil},
		{[]int64{}, 1, nil},
		{[]int64{0}, 0, nil},
		{[]int64{3, 5}, 15, nil},
		{[]int64{1 << 31, 1 << 31}, 1 << 62, nil},
		{[]int64{1 << 32, 1 << 31}, 0, ErrOverflow},
		{[]int64{math.MaxInt64, 2}, 0, ErrOverflow},
		{[]int64{math.MaxInt64, 1}, math.MaxInt64, nil},
		{[]int64{math.MaxInt64, 2, 0}, 0, nil}, // a zero dimension wins, as Julia's prod does
		{[]int64{3, -1}, 0, ErrNegative},
		{[]int64{math.MinInt64}, 0, ErrNegative},
	}
	for _, c := range cases {
		got, err := Count(c.shape)
		if c.err != nil {
			assert.ErrorIs(t, err, c.err, "%v", c.shape)
			continue
		}
		require.NoError(t, err, "%v", c.shape)
		assert.Equal(t, c.want, got, "%v", c.shape)
	}
}

func TestByteSize(t *testing.T) {
	n, err := ByteSize(F64, []int64{10, 5})
	require.NoError(t, err)
	assert.Equal(t, int64(400), n)
	_, err = ByteSize(F64, []int64{1 << 61})
	assert.ErrorIs(t, err, ErrOverflow)
	_, err = ByteSize(I128, []int64{1 << 59, 1})
	assert.ErrorIs(t, err, ErrOverflow)
	_, err = ByteSize(Invalid, []int64{1})
	assert.Error(t, err)
}

func TestAddMulAlignUp(t *testing.T) {
	_, ok := Add(math.MaxInt64, 1)
	assert.False(t, ok)
	_, ok = Add(-1, 1)
	assert.False(t, ok)
	s, ok := Add(math.MaxInt64-1, 1)
	assert.True(t, ok)
	assert.Equal(t, int64(math.MaxInt64), s)
	_, ok = Mul(1<<32, 1<<31)
	assert.False(t, ok)
	p, ok := Mul(1<<31, 1<<31)
	assert.True(t, ok)
	assert.Equal(t, int64(1<<62), p)

	cases := []struct{ x, a, want int64 }{
		{0, 8, 0}, {1, 8, 8}, {8, 8, 8}, {81, 2, 82}, {82, 2, 82}, {89, 8, 96}, {15, 64, 64}, {5, 1, 5},
	}
	for _, c := range cases {
		got, err := AlignUp(c.x, c.a)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "AlignUp(%d,%d)", c.x, c.a)
	}
	_, err := AlignUp(math.MaxInt64-1, 8)
	assert.ErrorIs(t, err, ErrOverflow)
	_, err = AlignUp(3, 0)
	assert.Error(t, err)
	_, err = AlignUp(-3, 8)
	assert.ErrorIs(t, err, ErrNegative)
}

func TestPlan(t *testing.T) {
	// The offsets of AlignedBinaryFormat.jl's original README example
	// (Format A): headers of 62, 60, 56 and 59 bytes after a 22-byte file
	// header, payloads of Float16[5], Char 3×3×3, Float64 3×5 and a 3×5
	// BitArray (one 8-byte chunk).
	recs := []Slot{
		{Header: 62, ElemAlign: 2, Payload: 10},
		{Header: 62, ElemAlign: 4, Payload: 108},
		{Header: 60, ElemAlign: 8, Payload: 120},
		{Header: 56, ElemAlign: 8, Payload: 8},
	}
	got, err := Plan(22, ElementPolicy, recs)
	require.NoError(t, err)
	assert.Equal(t, Placement{Start: 22, HeaderEnd: 84, Padding: 0, Offset: 84, End: 94}, got[0])
	assert.Equal(t, Placement{Start: 94, HeaderEnd: 156, Padding: 0, Offset: 156, End: 264}, got[1])
	assert.Equal(t, int64(324), got[2].HeaderEnd)
	assert.Equal(t, int64(328), got[2].Offset)
	assert.Equal(t, int64(4), got[2].Padding)

	// A fixed 64-byte policy never aligns below the element's own need.
	pl, err := FixedPolicy(64).Place(7, Slot{Header: 8, ElemAlign: 128, Payload: 1})
	require.NoError(t, err)
	assert.Equal(t, int64(128), pl.Offset)
	pl, err = FixedPolicy(64).Place(7, Slot{Header: 8, ElemAlign: 4, Payload: 0})
	require.NoError(t, err)
	assert.Equal(t, Placement{Start: 7, HeaderEnd: 15, Padding: 49, Offset: 64, End: 64}, pl)
	pl, err = PagePolicy().Place(0, Slot{Header: 1, ElemAlign: 8, Payload: 8})
	require.NoError(t, err)
	assert.Equal(t, int64(0), pl.Offset%4096)

	_, err = Plan(0, ElementPolicy, []Slot{{Header: math.MaxInt64, ElemAlign: 8, Payload: 1}})
	assert.Error(t, err)
	_, err = Plan(0, ElementPolicy, []Slot{{Header: -1}})
	assert.ErrorIs(t, err, ErrNegative)
	_, err = Plan(math.MaxInt64-4, ElementPolicy, []Slot{{Header: 2, ElemAlign: 1, Payload: 10}})
	assert.ErrorIs(t, err, ErrOverflow)
}

func TestArrayCheckAndIndex(t *testing.T) {
	a := Array{Name: "x", Type: F64, Shape: []int64{2, 3}, Order: ColMajor, Offset: 48, Size: 48}
	require.NoError(t, a.Check(96))
	assert.Error(t, a.Check(95))
	bad := a
	bad.Size = 40
	assert.Error(t, bad.Check(-1))
	n, err := a.Len()
	require.NoError(t, err)
	assert.Equal(t, int64(6), n)

	// Julia x[2,3] (1-based) in a 2×3 column-major array is position 5.
	p, err := Index([]int64{2, 3}, ColMajor, 1, 2)
	require.NoError(t, err)
	assert.Equal(t, int64(5), p)
	p, err = Index([]int64{2, 3}, RowMajor, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, int64(3), p)
	p, err = Index(nil, RowMajor)
	require.NoError(t, err)
	assert.Equal(t, int64(0), p)
	_, err = Index([]int64{2, 3}, RowMajor, 2, 0)
	assert.Error(t, err)
	_, err = Index([]int64{2, 3}, RowMajor, 1)
	assert.Error(t, err)
	assert.Equal(t, "[2][3]", ShapeString([]int64{2, 3}))
	assert.Equal(t, "col", ColMajor.String())
	assert.Equal(t, "row", RowMajor.String())
}

func TestReorder(t *testing.T) {
	// Julia [1 3 5; 2 4 6] is stored column-major as 1..6.
	col := []int{1, 2, 3, 4, 5, 6}
	row := make([]int, 6)
	require.NoError(t, Reorder(row, col, []int64{2, 3}, ColMajor))
	assert.Equal(t, []int{1, 3, 5, 2, 4, 6}, row)
	back := make([]int, 6)
	require.NoError(t, Reorder(back, row, []int64{2, 3}, RowMajor))
	assert.Equal(t, col, back)

	// Rank 3: compare with Index on every element.
	shape := []int64{2, 3, 4}
	src := make([]int64, 24)
	for i := range src {
		src[i] = int64(i)
	}
	dst := make([]int64, 24)
	require.NoError(t, Reorder(dst, src, shape, ColMajor))
	for i := int64(0); i < 2; i++ {
		for j := int64(0); j < 3; j++ {
			for k := int64(0); k < 4; k++ {
				c, _ := Index(shape, ColMajor, i, j, k)
				r, _ := Index(shape, RowMajor, i, j, k)
				assert.Equal(t, src[c], dst[r])
			}
		}
	}
	again := make([]int64, 24)
	require.NoError(t, Reorder(again, dst, shape, RowMajor))
	assert.Equal(t, src, again)

	// Large 2-D beyond one tile.
	big2 := make([]int32, 70*33)
	for i := range big2 {
		big2[i] = int32(i)
	}
	out := make([]int32, len(big2))
	require.NoError(t, Reorder(out, big2, []int64{70, 33}, ColMajor))
	for i := int64(0); i < 70; i++ {
		for j := int64(0); j < 33; j++ {
			assert.Equal(t, big2[j*70+i], out[i*33+j])
		}
	}
	assert.Error(t, Reorder(out[:3], big2, []int64{70, 33}, ColMajor))
	one := []int{7}
	require.NoError(t, Reorder(one, []int{9}, nil, ColMajor))
	assert.Equal(t, []int{9}, one)
}

func TestFloat16(t *testing.T) {
	cases := []struct {
		bits Float16
		f    float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, 5.9604645e-08},
		{0x0400, 6.1035156e-05}, {0x3555, 0.33325195}, {0x7c00, float32(math.Inf(1))}, {0xfc00, float32(math.Inf(-1))},
	}
	for _, c := range cases {
		assert.Equal(t, c.f, c.bits.Float32(), "%04x", uint16(c.bits))
		assert.Equal(t, c.bits, Float16From(c.f), "%v", c.f)
	}
	assert.Equal(t, Float16(0x8000), Float16From(float32(math.Copysign(0, -1))))
	assert.Equal(t, Float16(0x7e00), Float16From(float32(math.NaN())))
	assert.Equal(t, Float16(0xfe00), Float16From(-float32(math.NaN())))
	assert.True(t, Float16(0x7e00).IsNaN())
	assert.True(t, math.IsNaN(float64(Float16(0x7c01).Float32())))
	// Overflow rounds to Inf; 65519 rounds down, 65520 up (ties to even).
	assert.Equal(t, Float16(0x7c00), Float16From(1e6))
	assert.Equal(t, Float16(0x7bff), Float16From(65519))
	assert.Equal(t, Float16(0x7c00), Float16From(65520))
	// Ties to even: 1 + 2^-11 is halfway between 1 and 1+2^-10.
	assert.Equal(t, Float16(0x3c00), Float16From(1+1.0/2048))
	assert.Equal(t, Float16(0x3c02), Float16From(1+3.0/2048))
	// Subnormal rounding: half of the smallest subnormal rounds to even (0).
	assert.Equal(t, Float16(0x0000), Float16From(2.9802322e-08))
	assert.Equal(t, Float16(0x0001), Float16From(2.9802326e-08*1.5))
	// Every binary16 value round-trips through float32.
	for b := 0; b < 1<<16; b++ {
		h := Float16(b)
		if h.IsNaN() {
			continue
		}
		require.Equal(t, h, Float16From(h.Float32()), "%04x", b)
		require.Equal(t, h, Float16FromFloat64(h.Float64()), "%04x", b)
	}
	// A float64 just above a tie must round up, which float32 double
	// rounding would get wrong.
	assert.Equal(t, Float16(0x3c01), Float16FromFloat64(1+1.0/2048+1e-12))
}

func TestChar(t *testing.T) {
	cases := []struct {
		r rune
		c Char
	}{
		{'a', 0x61000000}, {'ζ', 0xCEB60000}, {'€', 0xE282AC00}, {0x96860, 0xF296A1A0}, {0, 0},
		{0xD800, 0xEDA08000}, // surrogate, kept as Julia keeps it
		{0x1FFFFF, 0xF7BFBFBF},
	}
	for _, c := range cases {
		got, err := CharFrom(c.r)
		require.NoError(t, err)
		assert.Equal(t, c.c, got, "%U", c.r)
		r, err := c.c.Rune()
		require.NoError(t, err)
		assert.Equal(t, c.r, r)
	}
	_, err := CharFrom(0x200000)
	assert.ErrorIs(t, err, ErrInvalidChar)
	_, err = CharFrom(-1)
	assert.ErrorIs(t, err, ErrInvalidChar)
	// Low bytes of ASCII are ignored, as Julia does.
	r, err := Char(0x61123456).Rune()
	require.NoError(t, err)
	assert.Equal(t, 'a', r)
	for _, bad := range []Char{0x80000000, 0xF8000000, 0xC0800000, 0xC1BF0000, 0xE0800000, 0xF0800000, 0xCE410000, 0xCEB60001, 0x12345678 | 0x80000000} {
		_, err := bad.Rune()
		assert.ErrorIs(t, err, ErrInvalidChar, "%08x", uint32(bad))
	}
}

func TestInt128(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "170141183460469231731687303715884105727", "-170141183460469231731687303715884105728", "18446744073709551616", "-18446744073709551617"} {
		v, _ := new(big.Int).SetString(s, 10)
		x, err := Int128FromBig(v)
		require.NoError(t, err, s)
		assert.Equal(t, s, x.String())
	}
	assert.Equal(t, Int128{Lo: math.MaxUint64, Hi: -1}, Int128From(-1))
	assert.Equal(t, Int128{Lo: 5}, Int128From(5))
	v, _ := new(big.Int).SetString("170141183460469231731687303715884105728", 10)
	_, err := Int128FromBig(v)
	assert.Error(t, err)
	for _, s := range []string{"0", "340282366920938463463374607431768211455", "18446744073709551616"} {
		v, _ := new(big.Int).SetString(s, 10)
		x, err := Uint128FromBig(v)
		require.NoError(t, err, s)
		assert.Equal(t, s, x.String())
	}
	_, err = Uint128FromBig(big.NewInt(-1))
	assert.Error(t, err)
	assert.Equal(t, Uint128{Lo: 1, Hi: 2}, func() Uint128 {
		x, _ := Uint128FromBig(new(big.Int).Add(new(big.Int).Lsh(big.NewInt(2), 64), big.NewInt(1)))
		return x
	}())
	assert.True(t, errors.Is(ErrOverflow, ErrOverflow))
}

func TestSwapBytes(t *testing.T) {
	b := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	SwapBytes(b, 2)
	assert.Equal(t, []byte{2, 1, 4, 3, 6, 5, 8, 7}, b)
	b = []byte{1, 2, 3, 4, 5, 6, 7, 8}
	SwapBytes(b, 4)
	assert.Equal(t, []byte{4, 3, 2, 1, 8, 7, 6, 5}, b)
	b = []byte{1, 2, 3, 4, 5, 6, 7, 8}
	SwapBytes(b, 8)
	assert.Equal(t, []byte{8, 7, 6, 5, 4, 3, 2, 1}, b)
	b16 := make([]byte, 16)
	for i := range b16 {
		b16[i] = byte(i)
	}
	SwapBytes(b16, 16)
	assert.Equal(t, byte(15), b16[0])
	assert.Equal(t, byte(0), b16[15])
	b = []byte{1, 2, 3}
	SwapBytes(b, 1)
	assert.Equal(t, []byte{1, 2, 3}, b)
}

func TestInt(t *testing.T) {
	for _, c := range []struct {
		le   []byte
		want int64
	}{
		{[]byte{0x7f}, 127},
		{[]byte{0x80}, -128},
		{[]byte{0xff}, -1},
		{[]byte{0xfe, 0xff}, -2},
		{[]byte{0xff, 0x7f}, 32767},
		{[]byte{0x00, 0x00, 0x00, 0x80}, math.MinInt32},
		{[]byte{0x01, 0x02, 0x03, 0x04}, 0x04030201},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, -1},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0x80}, math.MinInt64},
	} {
		assert.Equal(t, c.want, Int(c.le, binary.LittleEndian), "% x", c.le)
		be := slices.Clone(c.le)
		slices.Reverse(be)
		assert.Equal(t, c.want, Int(be, binary.BigEndian), "% x big-endian", be)
	}
}

func TestPutUintAndFloat(t *testing.T) {
	for _, c := range []struct {
		size   int
		x      uint64
		le, be []byte
		back   uint64 // what Uint reads back: the low bytes
	}{
		{1, 0x1ff, []byte{0xff}, []byte{0xff}, 0xff},
		{2, 0x10203, []byte{3, 2}, []byte{2, 3}, 0x203},
		{4, 0x0102030405, []byte{5, 4, 3, 2}, []byte{2, 3, 4, 5}, 0x02030405},
		{8, 0x0102030405060708, []byte{8, 7, 6, 5, 4, 3, 2, 1}, []byte{1, 2, 3, 4, 5, 6, 7, 8}, 0x0102030405060708},
	} {
		for bo, want := range map[binary.ByteOrder][]byte{binary.LittleEndian: c.le, binary.BigEndian: c.be} {
			b := make([]byte, c.size)
			PutUint(b, bo, c.x)
			assert.Equal(t, want, b, "%d bytes %v", c.size, bo)
			assert.Equal(t, c.back, Uint(b, bo), "%d bytes %v", c.size, bo)
		}
	}
	for _, c := range []struct {
		t    Type
		x    float64
		want []byte // big-endian
	}{
		{F16, 1.5, []byte{0x3e, 0x00}},
		{F32, -2, []byte{0xc0, 0, 0, 0}},
		{F64, 0.1, []byte{0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a}},
	} {
		b := make([]byte, c.t.Size())
		PutFloat(b, binary.BigEndian, c.t, c.x)
		assert.Equal(t, c.want, b, "%v", c.t)
	}
}

// Float reads back what PutFloat stored, in both byte orders.
func TestFloatRoundTrip(t *testing.T) {
	for _, c := range []struct {
		t Type
		x float64
	}{{F16, -1.5}, {F16, 65504}, {F32, -0.15625}, {F64, math.Pi}, {F64, math.Inf(-1)}} {
		for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			b := make([]byte, c.t.Size())
			PutFloat(b, bo, c.t, c.x)
			if got := Float(b, bo, c.t); got != c.x {
				t.Errorf("%s %v in %v: read %v", c.t, c.x, bo, got)
			}
		}
	}
}
