package layout

import (
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exactShow formats with the exact digit generation only (no strconv fast
// path), as an independent reference.
func exactShow(b uint64, size int) string {
	fp := params64
	if size == 32 {
		fp = params32
	}
	neg := b>>(size-1)&1 == 1
	expField := int(b>>(fp.p-1)) & (1<<fp.expBits - 1)
	frac := b & (1<<(fp.p-1) - 1)
	var f uint64
	var e int
	if expField == 0 {
		f, e = frac, fp.minExp
	} else {
		f, e = frac|1<<(fp.p-1), expField-fp.bias
	}
	s := ""
	if neg {
		s = "-"
	}
	if f == 0 {
		return s + "0.0"
	}
	ds, k := exactDigits(f, e, fp)
	return s + string(appendFormatted(nil, ds, k))
}

func TestFormatSpecTable(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
		goS  string // Go's shortest, where it differs
	}{
		{1e23, "9.999999999999999e22", "1e+23"},
		{2e23, "1.9999999999999998e23", "2e+23"},
		{8.41e21, "8.409999999999999e21", "8.41e+21"},
		{4.73e21, "4.729999999999999e21", "4.73e+21"},
		{4.95e21, "4.950000000000001e21", "4.95e+21"},
		{1.66138862984698e17, "1.6613886298469798e17", "1.66138862984698e+17"},
		{929981866728447.25, "9.299818667284473e14", "9.299818667284472e+14"},
		{1349409328999210.25, "1.3494093289992103e15", "1.3494093289992102e+15"},
		{0.1, "0.1", ""}, {0.01, "1.0e-2", ""}, {5e-324, "5.0e-324", ""}, {12345678, "1.2345678e7", ""},
		{1.7976931348623157e308, "1.7976931348623157e308", ""}, {0, "0.0", ""}, {math.Copysign(0, -1), "-0.0", ""},
		{9999999, "9999999.0", ""}, {1e7, "1.0e7", ""}, {123456.789, "123456.789", ""},
	} {
		assert.Equal(t, c.want, FormatF64(c.x))
		if c.goS != "" {
			assert.Equal(t, c.goS, strconv.FormatFloat(c.x, 'g', -1, 64), "Go's shortest differs here")
		}
	}
	for _, c := range []struct {
		x         float32
		want, goS string
	}{
		{5.369e8, "5.3689997e8", "5.369e+08"}, {153032600, "1.5303261e8", "1.530326e+08"},
		{36723270, "3.6723272e7", "3.672327e+07"}, {3.131120128e9, "3.1311201e9", "3.13112e+09"},
		{2381608.25, "2381608.3", "2.3816082e+06"}, {2138125.25, "2138125.3", "2.1381252e+06"},
		{0.1, "0.1", ""}, {1e-45, "1.0e-45", ""}, {3.4028235e38, "3.4028235e38", ""}, {1e8, "1.0e8", ""},
		{16777216, "1.6777216e7", ""},
	} {
		assert.Equal(t, c.want, FormatF32(c.x))
		if c.goS != "" {
			assert.Equal(t, c.goS, strconv.FormatFloat(float64(c.x), 'g', -1, 32))
		}
	}
	assert.Equal(t, "9.9975586e-2", FormatF16(0x2e66))
	assert.Equal(t, "65504.0", FormatF16(0x7bff))
	assert.Equal(t, "5.9604645e-8", FormatF16(1))
	assert.Equal(t, "6.1035156e-5", FormatF16(0x0400))
	assert.Equal(t, "NaN", FormatF64(math.NaN()))
	assert.Equal(t, "-Infinity", FormatF32(float32(math.Inf(-1))))
}

func TestFormatAllF16(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		x := Float16(h)
		if h&0x7c00 == 0x7c00 {
			continue
		}
		require.Equal(t, exactShow(uint64(math.Float32bits(x.Float32())), 32), FormatF16(x), "f16 %#04x", h)
	}
}

func TestFormatRandomAgainstExact(t *testing.T) {
	// The spec asks for ≥ 10^6 of each: MMAPKIT_FUTHARK_FLOATS=1000000
	// runs that (about 30 s); the default keeps the package fast.
	n := 100000
	if testing.Short() || raceEnabled {
		n = 10000
	}
	if s := os.Getenv("MMAPKIT_FUTHARK_FLOATS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		b32 := r.Uint32()
		if b32&0x7f800000 != 0x7f800000 {
			require.Equal(t, exactShow(uint64(b32), 32), FormatF32(math.Float32frombits(b32)), "f32 %#08x", b32)
		}
		b64 := r.Uint64()
		if b64&0x7ff0000000000000 != 0x7ff0000000000000 {
			require.Equal(t, exactShow(b64, 64), FormatF64(math.Float64frombits(b64)), "f64 %#016x", b64)
		}
	}
	// Where Go and GHC differ most: f32 in [1e6, 1e9], f64 with few
	// fraction bits.
	for i := 0; i < n/10; i++ {
		x := float32(1e6 + r.Float64()*1e9)
		require.Equal(t, exactShow(uint64(math.Float32bits(x)), 32), FormatF32(x))
		y := float64(r.Int64N(1<<52)) + float64(r.IntN(4))/4
		require.Equal(t, exactShow(math.Float64bits(y), 64), FormatF64(y))
	}
}

func TestSmallDigitsAgainstExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	used := 0
	n := 200000
	if raceEnabled {
		n = 20000
	}
	for i := 0; i < n; i++ {
		b := r.Uint32() &^ (1 << 31)
		if i%2 == 0 {
			b = math.Float32bits(float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10))))
			b &^= 1 << 31
		}
		ef := int(b>>23) & 0xff
		if ef == 0xff {
			continue
		}
		f, e := uint64(b&(1<<23-1)), params32.minExp
		if ef != 0 {
			f, e = f|1<<23, ef-params32.bias
		}
		if f == 0 {
			continue
		}
		ds, k, ok := smallDigits(nil, f, e, params32)
		if !ok {
			continue
		}
		used++
		wd, wk := exactDigits(f, e, params32)
		require.Equal(t, string(wd), string(ds), "%#x", b)
		require.Equal(t, wk, k, "%#x", b)
	}
	assert.Greater(t, used, n/3, "the uint64 path covers floats of moderate magnitude")
}

// exactShortDigits must agree with the exact algorithm wherever it answers:
// integers, dyadic fractions, and the edges of its limits.
func TestExactShortDigitsAgainstExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var xs []float64
	for _, v := range []float64{1, 2, 10, 100, 1200, 0.5, 0.25, 0.125, 0.1 + 0.2, 1e7, 1e7 + 0.5,
		999999999999999, 1e15, 1e15 - 0.5, 1e15 + 1, 1 << 52, 1<<53 - 1, 1 << 60, 0x1p-27, 0x1p-28,
		0x1.fffffffffffffp-1, 3 * 0x1p-27, 123456789.125, 7e22, 1e23} {
		xs = append(xs, v, -v)
	}
	for i := 0; i < 200000; i++ {
		switch i % 4 {
		case 0:
			xs = append(xs, float64(r.Int64N(1<<53)))
		case 1:
			xs = append(xs, float64(r.Int64N(1e6))*math.Pow10(r.IntN(12)))
		case 2:
			xs = append(xs, float64(r.Int64N(1<<30))/float64(uint64(1)<<r.IntN(28)))
		default:
			xs = append(xs, math.Ldexp(float64(r.Int64N(1<<53)), r.IntN(60)-58))
		}
	}
	used := [2]int{}
	for _, x := range xs {
		b := math.Float64bits(x)
		require.Equal(t, exactShow(b, 64), FormatF64(x), "f64 %v (%#016x)", x, b)
		if _, _, ok := exactShortDigits(nil, b&(1<<52-1)|1<<52, int(b>>52&0x7ff)-1075, 64); ok {
			used[0]++
		}
		y := float32(x)
		if !math.IsInf(float64(y), 0) && y != 0 {
			c := math.Float32bits(y)
			require.Equal(t, exactShow(uint64(c), 32), FormatF32(y), "f32 %v (%#08x)", y, c)
			if c>>23&0xff != 0 {
				if _, _, ok := exactShortDigits(nil, uint64(c&(1<<23-1)|1<<23), int(c>>23&0xff)-150, 32); ok {
					used[1]++
				}
			}
		}
	}
	t.Logf("fast path taken for %d of %d f64 and %d f32 values", used[0], len(xs), used[1])
	assert.Greater(t, used[0], len(xs)/3)
	assert.Greater(t, used[1], len(xs)/20)
}
