package layout

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// le returns the host-order bytes of an element given as little-endian
// bytes (the form the tables below are written in).
func le(t Type, b ...byte) []byte {
	out := append([]byte(nil), b...)
	if !hostLittle {
		SwapBytes(out, t.SwapSize())
	}
	return out
}

func u16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func TestAppendText(t *testing.T) {
	for _, c := range []struct {
		t    Type
		le   []byte
		want string
	}{
		{I8, []byte{0x80}, "-128i8"}, {U8, []byte{255}, "255u8"},
		{I16, u16(0x8000), "-32768i16"}, {U16, u16(65535), "65535u16"},
		{I32, u32(0x80000000), "-2147483648i32"}, {I32, u32(7), "7i32"}, {I32, u32(0xffffffff), "-1i32"},
		{U32, u32(4000000000), "4000000000u32"},
		{I64, u64(1 << 63), "-9223372036854775808i64"}, {U64, u64(math.MaxUint64), "18446744073709551615u64"},
		{Bool, []byte{0}, "false"}, {Bool, []byte{1}, "true"}, {Bool, []byte{7}, "true"},
		{F16, u16(0x2e66), "9.9975586e-2f16"}, {F16, u16(0x7bff), "65504.0f16"}, {F16, u16(0x8000), "-0.0f16"},
		{F16, u16(0x7c01), "f16.nan"}, {F16, u16(0x7c00), "f16.inf"}, {F16, u16(0xfc00), "-f16.inf"},
		{F32, u32(math.Float32bits(0.1)), "0.1f32"}, {F32, u32(math.Float32bits(5.369e8)), "5.3689997e8f32"},
		{F32, u32(0x7fc00000), "f32.nan"}, {F32, u32(0xff800000), "-f32.inf"}, {F32, u32(0x7f800000), "f32.inf"},
		{F64, u64(math.Float64bits(0.01)), "1.0e-2f64"}, {F64, u64(math.Float64bits(1e23)), "9.999999999999999e22f64"},
		{F64, u64(0xfff8000000000000), "f64.nan"}, {F64, u64(0xfff0000000000000), "-f64.inf"},
		{I128, append(u64(0), u64(1<<63)...), "-170141183460469231731687303715884105728i128"},
		{I128, append(u64(math.MaxUint64), u64(math.MaxUint64)...), "-1i128"},
		{U128, append(u64(math.MaxUint64), u64(math.MaxUint64)...), "340282366920938463463374607431768211455u128"},
		{JuliaChar, u32(0x61000000), "97u32"}, {JuliaChar, u32(0xCEB60000), "950u32"},
		{JuliaChar, u32(0xC0800000), "3229614080u32"}, // overlong: raw value
		{C64, append(u32(math.Float32bits(1.5)), u32(math.Float32bits(-2))...), "[1.5f32, -2.0f32]"},
		{C128, append(u64(math.Float64bits(0.1)), u64(0x7ff0000000000000)...), "[0.1f64, f64.inf]"},
	} {
		assert.Equal(t, c.want, string(AppendText(nil, c.t, le(c.t, c.le...))), "%v %x", c.t, c.le)
		assert.Equal(t, "x "+c.want, string(AppendText([]byte("x "), c.t, le(c.t, c.le...))), "appends")
	}
}

func TestParseText(t *testing.T) {
	for _, c := range []struct {
		t    Type
		in   string
		want []byte // little-endian
	}{
		{I32, "010", u32(10)}, {I32, "010i32", u32(10)}, {I32, "007", u32(7)}, {I32, "0x1f", u32(31)},
		{I32, "0x1f32", u32(0x1f32)}, {I32, "-0x10", u32(0xfffffff0)}, {I32, "0b101", u32(5)}, {I32, "1_000", u32(1000)},
		{I32, "+5", u32(5)}, {I32, " 42 ", u32(42)}, {I32, "-2147483648", u32(0x80000000)},
		{I8, "-128i8", []byte{0x80}}, {U8, "255", []byte{255}}, {U8, "0xffu8", []byte{255}}, {U8, "-0", []byte{0}},
		{I16, "-32768", u16(0x8000)}, {U16, "65535u16", u16(65535)}, {U32, "4294967295", u32(math.MaxUint32)},
		{I64, "-9223372036854775808i64", u64(1 << 63)}, {U64, "18446744073709551615", u64(math.MaxUint64)},
		{U64, "0xffffffffffffffff", u64(math.MaxUint64)},
		{Bool, "true", []byte{1}}, {Bool, "false", []byte{0}},
		{F64, "1", u64(math.Float64bits(1))}, {F64, "1.5", u64(math.Float64bits(1.5))}, {F64, "1e23", u64(math.Float64bits(1e23))},
		{F64, "1.5e-3f64", u64(math.Float64bits(1.5e-3))}, {F64, "2.5E3", u64(math.Float64bits(2500))},
		{F64, "-0.0", u64(1 << 63)}, {F64, "0e999", u64(0)}, {F64, "5e-324", u64(1)},
		{F32, "0.1f32", u32(math.Float32bits(0.1))}, {F32, "3.4028235e38", u32(math.Float32bits(math.MaxFloat32))},
		{F32, "1e-45", u32(1)}, {F32, "-7", u32(math.Float32bits(-7))},
		{F16, "0.1f16", u16(0x2e66)}, {F16, "65504", u16(0x7bff)}, {F16, "6e-8", u16(1)}, {F16, "-0.0", u16(0x8000)},
		{F32, "inf", u32(0x7f800000)}, {F32, "-inf", u32(0xff800000)}, {F32, "f32.inf", u32(0x7f800000)},
		{F32, "nan", u32(0xffc00000)}, {F32, "f32.nan", u32(0xffc00000)}, {F64, "-f64.inf", u64(0xfff0000000000000)},
		{F64, "nan", u64(0xfff8000000000000)}, {F16, "-inf", u16(0xfc00)}, {F16, "f16.nan", u16(0xfe00)},
		{I128, "-170141183460469231731687303715884105728i128", append(u64(0), u64(1<<63)...)},
		{I128, "-1", append(u64(math.MaxUint64), u64(math.MaxUint64)...)},
		{U128, "0x1_0000_0000_0000_0000u128", append(u64(0), u64(1)...)},
		{U128, "340282366920938463463374607431768211455", append(u64(math.MaxUint64), u64(math.MaxUint64)...)},
		{JuliaChar, "97", u32(0x61000000)}, {JuliaChar, "a", u32(0x61000000)}, {JuliaChar, "ζ", u32(0xCEB60000)},
		{JuliaChar, "0x3b6u32", u32(0xCEB60000)},
		{C64, "[1.5f32, -2]", append(u32(math.Float32bits(1.5)), u32(math.Float32bits(-2))...)},
		{C64, "2.5", append(u32(math.Float32bits(2.5)), u32(0)...)},
		{C128, "[0.1, inf]", append(u64(math.Float64bits(0.1)), u64(0x7ff0000000000000)...)},
	} {
		got, err := ParseText(c.t, c.in)
		if assert.NoError(t, err, "%v %q", c.t, c.in) {
			assert.Equal(t, le(c.t, c.want...), got, "%v %q", c.t, c.in)
		}
	}
}

func TestParseTextRejects(t *testing.T) {
	for _, c := range []struct {
		t   Type
		in  string
		err error
	}{
		{I8, "128", ErrRange}, {I8, "-129", ErrRange}, {U8, "256", ErrRange}, {U8, "-1", ErrRange},
		{I32, "2147483648", ErrRange}, {I64, "9223372036854775808", ErrRange},
		{U64, "18446744073709551616", ErrRange}, {I128, "170141183460469231731687303715884105728", ErrRange},
		{U128, "-1", ErrRange}, {JuliaChar, "2097152", ErrRange},
		{F32, "1e400", ErrRange}, {F64, "1e400", ErrRange}, {F32, "1e39", ErrRange}, {F16, "65520", ErrRange},
		{F16, "1e-8", ErrRange}, {F32, "1e-50", ErrRange}, {F64, "-1e-400", ErrRange},
		{I32, "1.5", ErrSyntax}, {I32, "1i8", ErrSyntax}, {I32, "0X1F", ErrSyntax}, {I32, "", ErrSyntax},
		{I32, "_1", ErrSyntax}, {I32, "0x", ErrSyntax}, {I32, "1 2", ErrSyntax}, {I32, "true", ErrSyntax},
		{F32, "1f64", ErrSyntax}, {F32, "f64.nan", ErrSyntax}, {F32, "0x10", ErrSyntax}, {F64, ".5", ErrSyntax},
		{F64, "infinity", ErrSyntax}, {F64, "NaN", ErrSyntax}, {F32, "+inf", ErrSyntax},
		{Bool, "1", ErrSyntax}, {Bool, "True", ErrSyntax}, {C64, "[1, 2", ErrSyntax}, {C64, "[1]", ErrSyntax},
		{JuliaChar, "ab", ErrSyntax}, {U128, "1i128", ErrSyntax},
	} {
		_, err := ParseText(c.t, c.in)
		require.Error(t, err, "%v %q", c.t, c.in)
		assert.ErrorIs(t, err, c.err, "%v %q: %v", c.t, c.in, err)
		assert.Contains(t, err.Error(), fmt.Sprintf("%q", c.in))
	}
	_, err := ParseText(Invalid, "1")
	assert.Error(t, err)
	_, err = ParseText(I32, "1x")
	assert.EqualError(t, err, `layout: "1x" is not a i32 literal: unexpected "x" after the literal: syntax error`)
	_, err = ParseText(I32, "-")
	assert.EqualError(t, err, `layout: "-" is not a i32 literal: it ends where digits should follow: syntax error`)
}

// Every element printed by AppendText parses back to the same bytes.
func TestTextRoundTrip(t *testing.T) {
	for _, typ := range Types() {
		size := typ.Size()
		for k := 0; k < 2000; k++ {
			b := make([]byte, size)
			for j := range b {
				b[j] = byte((k*131 + j*17 + k*k*7) >> (j % 3))
			}
			switch typ {
			case Bool:
				b[0] &= 1
			case JuliaChar:
				c, _ := CharFrom(rune(k * 97 % 0x110000))
				binary.NativeEndian.PutUint32(b, uint32(c))
			}
			txt := string(AppendText(nil, typ, b))
			got, err := ParseText(typ, txt)
			if nanBytes(typ, b) {
				require.NoError(t, err, "%v %s", typ, txt)
				require.True(t, nanBytes(typ, got), "%v %s", typ, txt)
				continue
			}
			require.NoError(t, err, "%v %s", typ, txt)
			require.Equal(t, b, got, "%v %s", typ, txt)
		}
	}
}

// nanBytes reports whether a host-order element of a float or complex type
// holds a NaN.
func nanBytes(t Type, b []byte) bool {
	switch t {
	case F16:
		return Float16(binary.NativeEndian.Uint16(b)).IsNaN()
	case F32:
		return math.IsNaN(float64(math.Float32frombits(binary.NativeEndian.Uint32(b))))
	case F64:
		return math.IsNaN(math.Float64frombits(binary.NativeEndian.Uint64(b)))
	case C64, C128:
		n := t.Part().Size()
		return nanBytes(t.Part(), b[:n]) || nanBytes(t.Part(), b[n:])
	}
	return false
}

// ScanText with futhark-data's flags wraps and rounds where ParseText
// refuses, and reports where a literal ends.
func TestScanText(t *testing.T) {
	for _, c := range []struct {
		in    string
		t     Type
		flags ScanFlags
		typ   Type
		bits  uint64
		n     int
	}{
		{"300u8", Invalid, ScanWrap, U8, 44, 5}, {"-1u8 ", Invalid, ScanWrap, U8, 255, 4},
		{"3000000000", Invalid, ScanWrap | ScanRound, I32, 0xb2d05e00, 10},
		{"1e400", Invalid, ScanRound, F64, 0x7ff0000000000000, 5}, {"1e-8f16", Invalid, ScanRound, F16, 0, 7},
		{"-0.0f16", Invalid, ScanRound, F16, 0, 7}, {"-0.0f16", Invalid, 0, F16, 0x8000, 7},
		{"1i322", Invalid, 0, I32, 1, 4}, {"0x1f32", Invalid, 0, I32, 0x1f32, 6}, {"1.0f32]", Invalid, 0, F32, 0x3f800000, 6},
		{"f32.nan,", Invalid, 0, F32, 0xffc00000, 7}, {"true]", Invalid, 0, Bool, 1, 4},
		{"2, 3", I64, 0, I64, 2, 1}, {"1E5", F64, 0, F64, math.Float64bits(1e5), 3},
		{"nanf32", Invalid, ScanLegacy, F32, 0xffc00000, 6},
	} {
		typ, bits, n, err := ScanText([]byte(c.in), c.t, c.flags)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.typ, typ, c.in)
		assert.Equal(t, c.bits, bits, c.in)
		assert.Equal(t, c.n, n, c.in)
	}
	_, _, _, err := ScanText([]byte("nanf32"), Invalid, 0)
	var te *TextError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, TextError{Off: 0, Want: "a value", Err: ErrSyntax}, *te)
	_, _, _, err = ScanText([]byte("- 1"), I32, 0)
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Off)
	_, _, _, err = ScanText([]byte("128i8"), Invalid, ScanRound)
	assert.ErrorIs(t, err, ErrRange)
	_, _, _, err = ScanText([]byte("1"), C64, 0)
	assert.ErrorIs(t, err, ErrSyntax)

	mag, neg, over, n, err := ScanInt([]byte("-0x1_0]"))
	require.NoError(t, err)
	assert.Equal(t, []any{uint64(16), true, false, 6}, []any{mag, neg, over, n})
	_, _, over, _, err = ScanInt([]byte("18446744073709551616"))
	require.NoError(t, err)
	assert.True(t, over)
	_, _, _, _, err = ScanInt([]byte("i32"))
	assert.True(t, errors.Is(err, ErrSyntax))
}

func ExampleAppendText() {
	b := make([]byte, 8)
	binary.NativeEndian.PutUint64(b, math.Float64bits(0.01))
	fmt.Println(string(AppendText(nil, F64, b)))
	binary.NativeEndian.PutUint32(b, uint32(0x80000000))
	fmt.Println(string(AppendText(nil, I32, b[:4])))
	// Output:
	// 1.0e-2f64
	// -2147483648i32
}

func ExampleParseText() {
	b, err := ParseText(I32, "010")
	fmt.Println(binary.NativeEndian.Uint32(b), err)
	_, err = ParseText(U8, "300")
	fmt.Println(err)
	_, err = ParseText(F16, "1e-8")
	fmt.Println(err)
	// Output:
	// 10 <nil>
	// layout: "300" is not a u8 literal: integer literal out of range for u8
	// layout: "1e-8" is not a f16 literal: float literal rounds to zero in f16
}

// Floats print as Haskell's show does, which is not always Go's shortest
// form.
func ExampleFormatF64() {
	fmt.Println(FormatF64(1e23), FormatF64(0.01), FormatF64(123456.789))
	fmt.Println(FormatF32(5.369e8), FormatF16(0x2e66))
	// Output:
	// 9.999999999999999e22 1.0e-2 123456.789
	// 5.3689997e8 9.9975586e-2
}

// FuzzParseText: whatever ParseText takes prints with AppendText and parses
// back to the same bytes; the scanner never reads past its input.
func FuzzParseText(f *testing.F) {
	for _, s := range []string{"010", "-0x1f", "0b1_0", "1.5e-3f32", "-f64.inf", "nan", "inf", "true", "1e400", "6e-8",
		"[1.5, -2]", "ζ", "97u32", "-1i128", "18446744073709551616u128", "1_000_000", "3.1_4", "1E5", "+7"} {
		for _, t := range Types() {
			f.Add(uint8(t), s)
		}
	}
	f.Fuzz(func(t *testing.T, ti uint8, s string) {
		typ := Type(ti%uint8(len(Types()))) + 1
		for _, flags := range []ScanFlags{0, ScanWrap | ScanRound | ScanLegacy} {
			for _, want := range []Type{Invalid, typ} {
				if !isPrim(want) && want != Invalid {
					continue
				}
				got, bits, n, err := ScanText([]byte(s), want, flags)
				if err == nil && (n <= 0 || n > len(s) || !isPrim(got) || got.Size() < 8 && bits>>(8*got.Size()) != 0) {
					t.Fatalf("ScanText(%q, %v): %v %x %d", s, want, got, bits, n)
				}
			}
		}
		b, err := ParseText(typ, s)
		if err != nil {
			return
		}
		txt := AppendText(nil, typ, b)
		again, err := ParseText(typ, string(txt))
		if err != nil {
			t.Fatalf("%v %q printed as %q, which does not parse: %v", typ, s, txt, err)
		}
		if !bytes.Equal(b, again) && !(nanBytes(typ, b) && nanBytes(typ, again)) {
			t.Fatalf("%v %q: %x printed as %q reads as %x", typ, s, b, txt, again)
		}
	})
}

func TestDigitValue(t *testing.T) {
	for _, tc := range []struct {
		c    byte
		want int
	}{
		{'0', 0}, {'7', 7}, {'9', 9},
		{'a', 10}, {'f', 15}, {'A', 10}, {'F', 15},
		{'g', 16}, {'z', 35}, {'Z', 35},
		{'_', 99}, {' ', 99}, {'/', 99}, {':', 99}, {'@', 99}, {'[', 99}, {'`', 99}, {'{', 99}, {0, 99}, {0xff, 99},
	} {
		assert.Equal(t, tc.want, DigitValue(tc.c), "%q", tc.c)
	}
}
