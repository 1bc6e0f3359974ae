package futhark

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/layout"
)

const bin2i32 = "b\x02\x00 i32\x02\x00\x00\x00"

// specCases are the → examples of the spec (§2–§4.6): input and
// futhark-data's canonical text of all values, or reject for inputs it
// rejects (and inputs it crashes on or misreads, which mmapkit rejects).
const reject = "\x00reject"

var specCases = []struct{ in, want string }{
	// §2.2, §3
	{"b\x02\x00bool\x02", "true\n"},
	{"1i32 \n " + bin2i32 + " [3,4]", "1i32\n2i32\n[3i32, 4i32]\n"},
	{bin2i32 + "\n\n", "2i32\n"},
	{bin2i32 + "\x00", reject},
	{"b\x02\x01 i32\xff\xff\xff\xff\xff\xff\xff\xff", reject},                                 // [-1]
	{"b\x02\x02 i32\x00\x00\x00\x00\x00\x00\x00\x40\x04\x00\x00\x00\x00\x00\x00\x00", reject}, // [2^62][4]
	{"b\x02\x01 i32\x00\x00\x00\x00\x00\x00\x00\x80", reject},                                 // INT64_MIN
	{"b\x01\x00 i32\x01\x00\x00\x00", reject},                                                 // version 1
	{"b\x02\x80 i32", reject},                                                                 // rank 128
	{" \xa0\t-- c\xff\n" + bin2i32 + " -- x\n " + bin2i32, "2i32\n2i32\n"},                    // top-level skipping
	// §4.1 window
	{"1 -- em\xe2\x80\x94dash\n2", reject},
	{"1 -- x\x01y\n2", reject},
	{"[1, -- em\xe2\x80\x94\n2]", reject},
	{"-- em\xe2\x80\x94dash\n2", "2i32\n"},
	{"0" + bin2i32, "0.0f64\n2i32\n"},
	{"-0" + bin2i32, "-0.0f64\n2i32\n"},
	{"0x1" + bin2i32, reject},
	{"1" + bin2i32, "1i32\n2i32\n"},
	{"\"a\x85b\"", reject},
	{"\"a\xadb\"", reject},
	{"\xef\xbb\xbf1", reject},
	{"1 \x85 2", reject},
	// §4.3 integers
	{"1", "1i32\n"}, {"1i8 2i16 3i32 4i64 5u8 6u16 7u32 8u64", "1i8\n2i16\n3i32\n4i64\n5u8\n6u16\n7u32\n8u64\n"},
	{"1_i32", "1i32\n"}, {"+5", "5i32\n"}, {"+0x10", "16i32\n"}, {"-0x10i64", "-16i64\n"},
	{"- 1", reject}, {"+-1", reject}, {"0XFF", reject}, {"0B1", reject}, {"0x", reject}, {"0b2", reject},
	{"010", "10i32\n"}, {"007", "7i32\n"}, {"0xffu8", "255u8\n"}, {"0x1f32", "7986i32\n"}, {"0x10f32", "69426i32\n"},
	{"1_000", "1000i32\n"}, {"0b1_0_0_1", "9i32\n"}, {"0x12_34", "4660i32\n"}, {"3.1_4", "3.14f64\n"},
	{"1.5e1_0", "1.5e10f64\n"}, {"3.1_e-2f64", "3.1e-2f64\n"}, {"0_1", "1i32\n"},
	{"_1", reject}, {"tr_ue", reject}, {"1._5", reject}, {"1e-_5", reject},
	{"300u8", "44u8\n"}, {"-1u8", "255u8\n"}, {"128i8", "-128i8\n"}, {"3000000000", "-1294967296i32\n"},
	{"9007199254740993", "1i32\n"}, {"18446744073709551616u64", "0u64\n"},
	{"0x8000000000000000i64", "-9223372036854775808i64\n"}, {"-9223372036854775809i64", "9223372036854775807i64\n"},
	// floats
	{"1.0", "1.0f64\n"}, {"1.5", "1.5f64\n"}, {"1e5", "100000.0f64\n"}, {"1e+5", "100000.0f64\n"},
	{"1e-5", "1.0e-5f64\n"}, {"1.5e-3", "1.5e-3f64\n"}, {"0.1e1", "1.0f64\n"}, {"1.5E3", "1500.0f64\n"},
	{"1E5", reject}, {".5", reject}, {"5.", reject}, {"1.5 e3", reject}, {"0x1.8p1", reject}, {"nan", reject},
	{"inf", reject}, {"NaN", reject}, {"-f32.nan", reject}, {"+f32.inf", reject}, {"1.5i32", reject}, {"1u", reject},
	{"2f32", "2.0f32\n"}, {"2f16", "2.0f16\n"}, {"1e300f32", "f32.inf\n"}, {"1e400", "f64.inf\n"},
	{"1e-400", "0.0f64\n"}, {"-1e-400", "-0.0f64\n"}, {"1e18446744073709551617", "10.0f64\n"},
	{"1.00000005960464477539062500001f32", "1.0f32\n"}, {"1.00048828126f16", "1.0f16\n"},
	{"1.00146484375f16", "1.0019531f16\n"}, {"65519f16", "65504.0f16\n"}, {"65520f16", "f16.inf\n"},
	{"2.98023224e-8f16", "0.0f16\n"},
	{"-0.0", "-0.0f64\n"}, {"-0.0f32", "-0.0f32\n"}, {"-1e-50f32", "-0.0f32\n"}, {"-0.0f16", "0.0f16\n"},
	{"-1e-8f16", "-0.0f16\n"},
	{"true", "true\n"}, {"false", "false\n"}, {"True", reject},
	// strings
	{"\"foo\"", "[102u8, 111u8, 111u8]\n"}, {"\"\"", "empty([0]u8)\n"}, {"\"a\\nb\"", "[97u8, 10u8, 98u8]\n"},
	{"\"\\233\"", "[195u8, 169u8]\n"}, {"\"\\o101\"", "[65u8]\n"}, {"\"\\x41\"", "[65u8]\n"},
	{"\"\\x100\"", "[196u8, 128u8]\n"}, {"\"\\u00e9\"", reject}, {"\"\\&\"", reject},
	{"\"\\SOH\\SO\\^A\\NUL\\DEL\"", "[1u8, 14u8, 1u8, 0u8, 127u8]\n"},
	{"\"\xc3\xa9\"", "[195u8, 131u8, 194u8, 169u8]\n"}, {"\"\xe9\"", "[195u8, 169u8]\n"},
	{"[\"ab\", \"cd\"]", "[[97u8, 98u8],\n[99u8, 100u8]]\n"}, {"[\"ab\", \"c\"]", reject},
	{"\"\\55296\"", "[239u8, 191u8, 189u8]\n"},
	// whitespace, comments, separators
	{"1\r\n2", "1i32\n2i32\n"}, {"1\xa02", "1i32\n2i32\n"}, {"[1, -- c\n 2]", "[1i32, 2i32]\n"},
	{"1--x\n2", "1i32\n2i32\n"}, {"--only", ""}, {"", ""}, {"1-1", "1i32\n-1i32\n"},
	{"truefalse", "true\nfalse\n"}, {"1i322", "1i32\n2i32\n"}, {"[1,2][3,4]", "[1i32, 2i32]\n[3i32, 4i32]\n"},
	{"[1]2", "[1i32]\n2i32\n"}, {"f32.inf1", "f32.inf\n1i32\n"}, {"empty([0]i32)1", "empty([0]i32)\n1i32\n"},
	{"1i32,2i32", reject}, {"1 ;2", reject}, {"[1, 2, 3,]", "[1i32, 2i32, 3i32]\n"}, {"[1,,2]", reject},
	{"[,]", reject}, {"[1 2]", reject}, {"-- a\r2", ""},
	// §4.4 arrays and inference
	{"[[1,2],[3]]", reject}, {"[]", reject}, {"[[],[]]", reject}, {"[true, 1]", reject},
	{"[1i8, 0]", "[1i8, 0i8]\n"}, {"[1.0, 2]", "[1.0f64, 2.0f64]\n"}, {"[1f32, 2]", "[1.0f32, 2.0f32]\n"},
	{"[f32.nan, 1]", "[f32.nan, 1.0f32]\n"}, {"[1.0f32, 2.5, f32.nan, -f32.inf]", "[1.0f32, 2.5f32, f32.nan, -f32.inf]\n"},
	{"[1i64, 0x10, -3]", "[1i64, 16i64, -3i64]\n"}, {"[1u64, -1]", "[1u64, 18446744073709551615u64]\n"},
	{"[1.0, 1E5]", "[1.0f64, 100000.0f64]\n"},
	{"[0, 1i8]", reject}, {"[1i32, 2i8]", reject}, {"[1, 2.0]", reject}, {"[1i8, 2.5]", reject}, {"[1, 1e5]", reject},
	{"[1.0, 0x10]", reject}, {"[1f32, f64.nan]", reject}, {"[1.0f64, 2f32]", reject}, {"[1u8, 2i8]", reject},
	{"[[1i8, 2], [3, 4]]", reject}, {"[[1i8, 2], [3i8, 4]]", "[[1i8, 2i8],\n[3i8, 4i8]]\n"},
	{"[[[1u8, 2u8], [3u8, 4u8]], [[5u8, 6u8], [7u8, 8u8]]]", "[[[1u8, 2u8],\n[3u8, 4u8]],\n[[5u8, 6u8],\n[7u8, 8u8]]]\n"},
	{"[empty([0]i32), empty([0]i32)]", "empty([2][0]i32)\n"}, {"[true, false]", "[true, false]\n"},
	// §4.5 empty
	{"empty([0]i32)", "empty([0]i32)\n"}, {"empty([0][3]f32)", "empty([0][3]f32)\n"},
	{"empty([3][0]u64)", "empty([3][0]u64)\n"}, {"empty([2][0][4]i8)", "empty([2][0][4]i8)\n"},
	{"empty([0][0]f64)", "empty([0][0]f64)\n"}, {"empty([0][3]bool)", "empty([0][3]bool)\n"},
	{"empty(i32)", reject}, {"empty([3]i32)", reject}, {"empty([0x0]i32)", "empty([0]i32)\n"},
	{"empty([1_0][0]i32)", "empty([10][0]i32)\n"}, {"empty([0i64]i32)", reject}, {"empty( [0]i32)", reject},
	{"empty([0]i32 )", reject}, {"empty ([0]i32)", reject}, {"empty([0] i32)", reject},
	{"empty([-1][0]i32)", reject}, {"empty([18446744073709551616]i32)", reject},
	// §4.6 compiled programs
	{"0.100000001f32", "0.1f32\n"}, {"1f32", "1.0f32\n"}, {"1e+10f32", "1.0e10f32\n"}, {"0.10000000000000001f64", "0.1f64\n"},
	{"9.9999999999999992e+22f64", "9.999999999999999e22f64\n"}, {"4.9406564584124654e-324f64", "5.0e-324f64\n"},
	{"-0f16", "0.0f16\n"}, {"5.96046448e-08f16", "5.9604645e-8f16\n"}, {"0.000007f32", "7.0e-6f32\n"},
	{"135.000000f32", "135.0f32\n"}, {"[[1i32, 2i32], [3i32, 4i32]]", "[[1i32, 2i32],\n[3i32, 4i32]]\n"},
	{"nanf32", reject}, {"-inff64", reject},
	// §5 table
	{"0.1f16 65504f16 6e-8f16 0.00006103515625f16", "9.9975586e-2f16\n65504.0f16\n5.9604645e-8f16\n6.1035156e-5f16\n"},
	{"0.1f32 0.1 0.01 1e-45f32 3.4028235e38f32", "0.1f32\n0.1f64\n1.0e-2f64\n1.0e-45f32\n3.4028235e38f32\n"},
	{"12345678.0 100000000.0f32 16777217f32 5e-324", "1.2345678e7f64\n1.0e8f32\n1.6777216e7f32\n5.0e-324f64\n"},
	{"1e23 2e23", "9.999999999999999e22f64\n1.9999999999999998e23f64\n"},
	{"8.41e21 4.73e21 4.95e21", "8.409999999999999e21f64\n4.729999999999999e21f64\n4.950000000000001e21f64\n"},
	{"1.66138862984698e17", "1.6613886298469798e17f64\n"},
	{"5.369e8f32 153032600f32 36723270f32 3.131120128e9f32", "5.3689997e8f32\n1.5303261e8f32\n3.6723272e7f32\n3.1311201e9f32\n"},
	{"2381608.25f32 2138125.25f32", "2381608.3f32\n2138125.3f32\n"},
	{"929981866728447.25 1349409328999210.25", "9.299818667284473e14f64\n1.3494093289992103e15f64\n"},
	{"0.1 1.0 100.0 123456.7 123456.789 9999999.0 0.0 1.0e7 1.2345678e7 1.7976931348623157e308",
		"0.1f64\n1.0f64\n100.0f64\n123456.7f64\n123456.789f64\n9999999.0f64\n0.0f64\n1.0e7f64\n1.2345678e7f64\n1.7976931348623157e308f64\n"},
}

func TestSpecExamples(t *testing.T) {
	for _, c := range specCases {
		txt, _, _, err := convert(t, []byte(c.in), nil)
		if c.want == reject {
			var fe *FormatError
			assert.True(t, errors.As(err, &fe), "%q must be rejected with a FormatError, got %v", c.in, err)
			continue
		}
		if assert.NoError(t, err, "%q", c.in) {
			assert.Equal(t, c.want, string(txt), "%q", c.in)
		}
	}
}

func TestLegacyAndStrict(t *testing.T) {
	txt, _, _, err := convert(t, []byte("nanf32 -nanf32 inff32 -inff64 [1.0f32, nanf32]"), &Options{Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, "f32.nan\nf32.nan\nf32.inf\n-f64.inf\n[1.0f32, f32.nan]\n", string(txt))
	for _, in := range []string{"300u8", "-1u8", "128i8", "3000000000", "18446744073709551616u64", "[1u8, 256]"} {
		_, _, _, err := convert(t, []byte(in), &Options{StrictIntegers: true})
		assert.ErrorIs(t, err, layout.ErrRange, in)
	}
	txt, _, _, err = convert(t, []byte("255u8 -128i8 -9223372036854775808i64 18446744073709551615u64 -0u8"), &Options{StrictIntegers: true})
	require.NoError(t, err)
	assert.Equal(t, "255u8\n-128i8\n-9223372036854775808i64\n18446744073709551615u64\n0u8\n", string(txt))
}

func TestNaNBits(t *testing.T) {
	_, bin, _, err := convert(t, []byte("f16.nan f32.nan f64.nan"), nil)
	require.NoError(t, err)
	assert.Equal(t, "b\x02\x00 f16\x00\xfe"+"b\x02\x00 f32\x00\x00\xc0\xff"+"b\x02\x00 f64\x00\x00\x00\x00\x00\x00\xf8\xff", string(bin))
	// Binary to binary keeps NaN payloads and -0.0 of f16.
	in := "b\x02\x00 f16\x01\x7c" + "b\x02\x00 f16\x00\x80"
	txt, bin, _, err := convert(t, []byte(in), nil)
	require.NoError(t, err)
	assert.Equal(t, in, string(bin))
	assert.Equal(t, "f16.nan\n-0.0f16\n", string(txt))
}

func TestErrorLocation(t *testing.T) {
	_, err := newReader([]byte("1 2\n  [1,\n 2 x]"), nil)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(13), fe.Offset)
	assert.Equal(t, 3, fe.Line)
	assert.Equal(t, 4, fe.Col)
	assert.Equal(t, "futhark: offset 13 (line 3, column 4): unexpected 'x', expected ',' or ']': syntax error", fe.Error())
	assert.ErrorIs(t, err, layout.ErrSyntax)

	_, err = newReader([]byte("[[1,2],[3]]"), nil)
	assert.ErrorIs(t, err, ErrIrregular)
	_, err = newReader([]byte(bin2i32+"b\x03\x00"), nil)
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, ErrVersion)
	assert.Equal(t, int64(12), fe.Offset)
	assert.Equal(t, 0, fe.Line)
	_, err = newReader([]byte("b\x02\x00 I32\x01\x00\x00\x00"), nil)
	assert.ErrorIs(t, err, ErrUnknownType)
	_, err = newReader([]byte("b\x02\x01 i32\x00\x00\x00\x00\x00\x00\x00\x80"), nil)
	require.ErrorIs(t, err, ErrDims)
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(7), fe.Offset)
}

func TestNesting(t *testing.T) {
	deep := func(n int) string {
		return strings.Repeat("[", n) + "1" + strings.Repeat("]", n)
	}
	f, err := newReader([]byte(deep(127)), nil)
	require.NoError(t, err)
	assert.Len(t, f.Entries()[0].Shape, 127)
	_, err = newReader([]byte(deep(128)), nil)
	assert.ErrorIs(t, err, ErrRank)
	_, err = newReader([]byte(deep(100000)), nil)
	assert.ErrorIs(t, err, ErrRank)
}
