package dataset

import (
	"bytes"
	"errors"
	"github.com/mmapkit/mmapkit/internal/shareddata"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func TestLiterals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-g", "5"}, "5i32\n"},
		{[]string{"-g", "[1,2]"}, "[1i32, 2i32]\n"},
		{[]string{"-g", "[10]"}, "[10i32]\n"},
		{[]string{"-g", "empty([0]i32)"}, "empty([0]i32)\n"},
		{[]string{"-g", "true"}, "true\n"},
		{[]string{"-g", "1 2"}, "1i32\n2i32\n"},
		{[]string{"-g", ""}, ""},
		{[]string{"-g", "-5"}, "-5i32\n"},
		{[]string{"-g-5"}, "-5i32\n"},
		{[]string{"--generate=7i8"}, "7i8\n"},
		{[]string{"--generate", "7i8"}, "7i8\n"},
		{[]string{"--gen", "7i8"}, "7i8\n"},
		{[]string{"-t", "-g", "[1,2]"}, "[2]i32\n"},
		{[]string{"-tg", "[1,2]"}, "[2]i32\n"},
		{[]string{"-g", "1", "-t", "-g", "2"}, "1i32\ni32\n"},
		{[]string{"-b", "-g", "1", "--text", "-g", "2"}, "b\x02\x00 i32\x01\x00\x00\x002i32\n"},
		{[]string{"--", "-g"}, ""},
	} {
		out, errs, code := run(t, "", c.args...)
		if c.args[0] == "--" {
			assert.Equal(t, 2, code)
			assert.Contains(t, errs, "Junk argument: -g")
			continue
		}
		require.Equal(t, 0, code, "%v: %s", c.args, errs)
		assert.Equal(t, c.want, out, "%v", c.args)
	}
}

func TestGenerateTypes(t *testing.T) {
	out, errs, code := run(t, "", "-g", "[10][20]f32", "-g", "[10]([3]f32)", "-g", "*[3]i32", "-g", "[ 2 ] [ 2 ] bool", "-t", "-g", "[4]f16")
	require.Equal(t, 0, code, errs)
	require.True(t, strings.HasSuffix(out, "\n[4]f16\n"))
	in := strings.TrimSuffix(out, "[4]f16\n")
	f, err := futhark.NewReader(strings.NewReader(in), int64(len(in)), nil)
	require.NoError(t, err)
	var types []string
	for _, e := range f.Entries() {
		types = append(types, e.TypeString())
	}
	assert.Equal(t, []string{"[10][20]f32", "[10][3]f32", "[3]i32", "[2][2]bool"}, types)
	xs, err := futhark.Read[float32](f, 0)
	require.NoError(t, err)
	for _, x := range xs {
		assert.True(t, x >= 0 && x <= 1)
	}
}

func TestBounds(t *testing.T) {
	cases := []struct {
		typ, bounds string
		lo, hi      float64
	}{
		{"i8", "-5:5", -5, 5},
		{"i8", "0:300", 0, 44},
		{"u8", "0x10:0x20", 16, 32},
		{"i16", "5:-5", -5, 5},
		{"i32", "(-3):3", -3, 3},
		{"i64", "0:9", 0, 9},
		{"u16", "1:1", 1, 1},
		{"u32", "0o7:0o10", 7, 8},
		{"u64", "0:3", 0, 3},
		{"f16", "0.5:1.5", 0.5, 1.5},
		{"f32", "-2:-1", -2, -1},
		{"f64", "1e3:2e3", 1000, 2000},
	}
	for _, c := range cases {
		out, errs, code := run(t, "", "-b", "--"+c.typ+"-bounds="+c.bounds, "-g", "[500]"+c.typ)
		require.Equal(t, 0, code, "%s %s: %s", c.typ, c.bounds, errs)
		f, err := futhark.NewReader(strings.NewReader(out), int64(len(out)), nil)
		require.NoError(t, err)
		v, err := f.Value(0)
		require.NoError(t, err)
		seen := map[float64]bool{}
		for i := int64(0); i < v.Len(); i++ {
			x := elemFloat(v, i)
			require.True(t, x >= c.lo && x <= c.hi, "%s %s: %v", c.typ, c.bounds, x)
			seen[x] = true
		}
		if c.lo != c.hi {
			assert.Greater(t, len(seen), 1, "%s values vary", c.typ)
		}
	}
}

func elemFloat(v futhark.Value, i int64) float64 {
	size := int64(v.Type.Size())
	b := v.Data[i*size : (i+1)*size]
	var u uint64
	for j := len(b) - 1; j >= 0; j-- {
		u = u<<8 | uint64(b[j])
	}
	switch v.Type {
	case layout.F16:
		return layout.Float16(u).Float64()
	case layout.F32:
		return float64(float32frombits(uint32(u)))
	case layout.F64:
		return float64frombits(u)
	}
	if v.Type.IsSigned() {
		shift := 64 - 8*uint(size)
		return float64(int64(u<<shift) >> shift)
	}
	return float64(u)
}

func TestSeedsDeterministic(t *testing.T) {
	a, _, _ := run(t, "", "-s", "7", "-g", "[5]i32", "-g", "[5]i32")
	b, _, _ := run(t, "", "--seed=7", "-g", "[5]i32", "-g", "[5]i32")
	c, _, _ := run(t, "", "-s", "8", "-g", "[5]i32")
	assert.Equal(t, a, b)
	lines := strings.Split(a, "\n")
	assert.NotEqual(t, lines[0], lines[1], "the k-th -g uses seed+k")
	assert.Equal(t, lines[1], strings.TrimSuffix(c, "\n"), "seed 7, second -g = seed 8, first -g")
	d, errs, code := run(t, "", "-s", "-1", "-g", "i8", "-g", "i8", "-g", "i8")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 3, strings.Count(d, "\n"), "mmapkit writes every -g even past 2^64-1")
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"junk"}, "Junk argument: junk"},
		{[]string{"--t"}, "ambiguous"},
		{[]string{"--frob"}, "unrecognized option"},
		{[]string{"-g"}, "requires an argument"},
		{[]string{"-s", "+1"}, "'+1' is not an integer."},
		{[]string{"-s", "1x"}, "'1x' is not an integer."},
		{[]string{"--i8-bounds=1"}, "Invalid bounds for i8: 1"},
		{[]string{"--f32-bounds=0:Infinity"}, "Invalid bounds for f32"},
		{[]string{"--bool-bounds=0:1"}, "unrecognized option"},
		{[]string{"--binary=1"}, "doesn't allow an argument"},
		{[]string{"-g", "(i32, f32)"}, "Cannot handle tuples yet."},
		{[]string{"-g", "{a: i32}"}, "Cannot handle records yet."},
		{[]string{"-g", "i32 -> i32"}, "Cannot generate functions."},
		{[]string{"-g", "#foo"}, "Cannot handle sumtypes yet."},
		{[]string{"-g", "?[n].[n]i32"}, "Cannot handle existential sizes."},
		{[]string{"-g", "[n]i32"}, "Array has non-constant dimension declaration."},
		{[]string{"-g", "foo"}, "Unknown type foo"},
		{[]string{"-g", "list i32"}, "Cannot handle type applications yet."},
		{[]string{"-g", "[4611686018427387904][4]i32"}, "overflow"},
		{[]string{"--aligned=3"}, "power of two"},
		{[]string{"-g", "5", "-s", "x"}, "not an integer"},
	} {
		out, errs, code := run(t, "", c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Empty(t, out, "%v: no output before all options are checked", c.args)
		assert.Contains(t, errs, c.msg, "%v", c.args)
	}
}

func TestHelpVersion(t *testing.T) {
	out, _, code := run(t, "", "--help", "junk")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "--generate=TYPE")
	assert.Contains(t, out, "Example")
	ai, bi := strings.Index(out, "--aligned"), strings.Index(out, "--u64-bounds")
	assert.True(t, ai >= 0 && bi > ai, "sorted by long name")
	out, _, code = run(t, "", "-V")
	assert.Equal(t, 0, code)
	assert.NotEmpty(t, out)
}

func TestConvert(t *testing.T) {
	in := "1 [2, 3]\n-- c\n" + "b\x02\x00 i32\x07\x00\x00\x00\n"
	out, errs, code := run(t, in)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "1i32\n[2i32, 3i32]\n7i32\n", out)
	out, _, code = run(t, in, "-b")
	assert.Equal(t, 0, code)
	assert.Equal(t, "b\x02\x00 i32\x01\x00\x00\x00b\x02\x01 i32\x02\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00b\x02\x00 i32\x07\x00\x00\x00", out)
	out, _, _ = run(t, in, "-t")
	assert.Equal(t, "i32\n[2]i32\ni32\n", out)
	out, _, _ = run(t, in, "-b", "--text")
	assert.Equal(t, "1i32\n[2i32, 3i32]\n7i32\n", out, "the last format option rules conversion")
	out, errs, code = run(t, "--only\n")
	assert.Equal(t, 0, code)
	assert.Empty(t, out+errs)
	out, errs, code = run(t, "1 2 [3,", "-b")
	assert.Equal(t, 1, code)
	assert.Empty(t, out, "nothing on stdout for malformed input")
	assert.Contains(t, errs, "mmapkit: <stdin>: offset 7 (line 1, column 8)")
}

func TestAligned(t *testing.T) {
	out, errs, code := run(t, "", "-b", "--aligned", "-g", "7i32", "-g", "[1.5f64, 2.5f64]")
	require.Equal(t, 0, code, errs)
	want := "\x20" + "b\x02\x00 i32\x07\x00\x00\x00" + strings.Repeat(" ", 5) + "b\x02\x01 f64\x02\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\xf8\x3f" + "\x00\x00\x00\x00\x00\x00\x04\x40"
	assert.Equal(t, want, out)
	out, _, _ = run(t, "", "-b", "--aligned=64", "-g", "7i32", "-g", "[1.5f64, 2.5f64]")
	assert.Len(t, out, 144)
	// Conversion with alignment, read back zero-copy from a file.
	p := filepath.Join(t.TempDir(), "a.data")
	out, _, code = run(t, "[1.5f32, 2.5f32] [1u16] 3i64", "-b", "--aligned")
	require.Equal(t, 0, code)
	require.NoError(t, os.WriteFile(p, []byte(out), 0o644))
	f, err := futhark.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	xs, err := futhark.View[float32](f, 0)
	require.NoError(t, err)
	assert.Equal(t, []float32{1.5, 2.5}, xs)
	ys, err := futhark.View[int64](f, 2)
	require.NoError(t, err)
	assert.Equal(t, []int64{3}, ys)
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriteFailure(t *testing.T) {
	var errb bytes.Buffer
	code := Main([]string{"-g", "[100000]i32"}, strings.NewReader(""), failWriter{}, &errb)
	assert.Equal(t, 1, code)
	assert.Contains(t, errb.String(), "broken pipe")
}

func TestRealDataConversion(t *testing.T) {
	dir := shareddata.Path(t, "futhark")
	in, err := os.ReadFile(filepath.Join(dir, "generated", "all-types.input.txt"))
	require.NoError(t, err)
	for flag, gold := range map[string]string{"--text": "all-types.txt", "-b": "all-types.bin", "-t": "all-types.types.txt"} {
		out, errs, code := run(t, string(in), flag)
		require.Equal(t, 0, code, errs)
		want, err := os.ReadFile(filepath.Join(dir, "generated", gold))
		require.NoError(t, err)
		assert.True(t, string(want) == out, "%s output equals futhark-data's %s", flag, gold)
	}
}

func TestReads(t *testing.T) {
	for s, want := range map[string]int64{"5": 5, "  5": 5, "-5": -5, "(5)": 5, "( -5 )": -5, "((7))": 7, "0x10": 16,
		"0X1f": 31, "0o17": 15, "007": 7, "18446744073709551617": 1} {
		v, ok := readsInt(s)
		assert.True(t, ok, s)
		assert.Equal(t, want, int64(v), s)
	}
	for _, s := range []string{"+5", "5 ", "5x", "", "(5", "0x", "--5", "1.0"} {
		_, ok := readsInt(s)
		assert.False(t, ok, s)
	}
	for s, want := range map[string]float64{"0.5": 0.5, "-1.5e3": -1500, "(2)": 2, " 3": 3, "1e-400": 0} {
		v, ok := readsFloat(s)
		assert.True(t, ok, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"Infinity", "NaN", ".5", "5.", "1e400", "+1", "x"} {
		_, ok := readsFloat(s)
		assert.False(t, ok, s)
	}
}

func TestConvertMappedStdin(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in.data")
	require.NoError(t, os.WriteFile(p, []byte("b\x02\x01 i16\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\xff\xff\n[3i16]"), 0o644))
	for _, bad := range []bool{false, true} {
		if bad {
			require.NoError(t, os.WriteFile(p, []byte("[1, 2]\n[3,"), 0o644))
		}
		in, err := os.Open(p)
		require.NoError(t, err)
		var out, errb bytes.Buffer
		code := Main(nil, in, &out, &errb)
		in.Close()
		if bad {
			assert.Equal(t, 1, code)
			assert.Empty(t, out.String())
			assert.Equal(t, "mmapkit: <stdin>: offset 10 (line 2, column 4): unexpected end of input, expected digits: file is truncated: unexpected EOF\n", errb.String())
			continue
		}
		require.Equal(t, 0, code, errb.String())
		assert.Equal(t, "[1i16, -1i16]\n[3i16]\n", out.String())
	}
}
