package layout

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// FormatF64 formats x as Haskell's show does (GHC.Float.floatToDigits and
// formatRealFloat FFGeneric), the digits Futhark's tools print: 0.1,
// 1.0e-2, 9.999999999999999e22. Go's shortest form differs from it for
// some values (1e23 is 1e+23 in Go, 9.999999999999999e22 here): Go takes a
// candidate on the edge of the rounding interval and rounds ties to even
// digits, GHC does neither. NaN and infinities give "NaN", "Infinity" and
// "-Infinity". No type suffix is added; see AppendText for the literal.
func FormatF64(x float64) string { return string(appendShow(nil, math.Float64bits(x), 64)) }

// FormatF32 formats x as Haskell's show does for Float: 0.1, 1.5303261e8.
func FormatF32(x float32) string {
	return string(appendShow(nil, uint64(math.Float32bits(x)), 32))
}

// FormatF16 formats h as Futhark's tools do: widened exactly to f32 and
// printed by f32's show (0x2e66 gives 9.9975586e-2).
func FormatF16(h Float16) string { return FormatF32(h.Float32()) }

// floatParams describes a binary format for digit generation.
type floatParams struct {
	p, minExp, expBits, bias int
}

var (
	params64 = floatParams{p: 53, minExp: -1074, expBits: 11, bias: 1075}
	params32 = floatParams{p: 24, minExp: -149, expBits: 8, bias: 150}
)

// appendShow appends Haskell's show of the float with raw bits b of the
// given size (32 or 64).
func appendShow(dst []byte, b uint64, size int) []byte {
	fp := params64
	if size == 32 {
		fp = params32
	}
	neg := b>>(size-1)&1 == 1
	expField := int(b>>(fp.p-1)) & (1<<fp.expBits - 1)
	frac := b & (1<<(fp.p-1) - 1)
	if expField == 1<<fp.expBits-1 {
		if frac != 0 {
			return append(dst, "NaN"...)
		}
		if neg {
			return append(dst, "-Infinity"...)
		}
		return append(dst, "Infinity"...)
	}
	if neg {
		dst = append(dst, '-')
	}
	var f uint64
	var e int
	if expField == 0 {
		f, e = frac, fp.minExp
	} else {
		f, e = frac|1<<(fp.p-1), expField-fp.bias
	}
	if f == 0 {
		return append(dst, "0.0"...)
	}
	var scratch [32]byte
	var x float64
	if size == 32 {
		x = float64(math.Float32frombits(uint32(b) &^ (1 << 31)))
	} else {
		x = math.Float64frombits(b &^ (1 << 63))
	}
	digits, k, ok := exactShortDigits(scratch[:0], f, e, size)
	if ok {
		return appendFormatted(dst, digits, k)
	}
	if size == 32 {
		digits, k, ok = smallDigits(scratch[:0], f, e, fp)
	}
	if !ok {
		digits, k, ok = fastDigits(scratch[:0], x, f, e, fp, size)
	}
	if !ok {
		digits, k = exactDigits(f, e, fp)
	}
	return appendFormatted(dst, digits, k)
}

// exactShortDigits handles the values arrays are full of — integers and
// fractions with a short binary tail (k/4, k/1024, …) — without any search:
// when f·2^e is exactly M·10^-j with M below 10^15 (f64) or 10^7 (f32),
// M's digits are the shortest that identify the float. Any other decimal
// with no more digits differs from it by at least 10^-15 (10^-7) relative,
// more than half an ulp, so it cannot read back as the same float; and
// the exact value is the closest candidate, which is what GHC picks.
func exactShortDigits(dst []byte, f uint64, e int, size int) ([]byte, int, bool) {
	limit := uint64(1e15)
	if size == 32 {
		limit = 1e7
	}
	tz := bits.TrailingZeros64(f)
	f >>= tz
	e += tz
	var m uint64
	j := 0
	switch {
	case e >= 0:
		if e >= 64 || f > limit>>e {
			return nil, 0, false
		}
		m = f << e
	default:
		j = -e // f·2^-j = f·5^j·10^-j
		if j >= len(pow5u64) {
			return nil, 0, false
		}
		hi, lo := bits.Mul64(f, pow5u64[j])
		if hi != 0 {
			return nil, 0, false
		}
		m = lo
	}
	if m >= limit {
		return nil, 0, false
	}
	if e >= 0 { // 1200 is 0.12·10^4; f·5^j has no factor 10 when j > 0
		for m%10 == 0 {
			m /= 10
			j--
		}
	}
	dst = strconv.AppendUint(dst, m, 10)
	return dst, len(dst) - j, true
}

// pow5u64[i] = 5^i, as far as it fits in a uint64.
var pow5u64 = func() (t [28]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 5
	}
	return t
}()

// appendFormatted lays out digits d1…dn with |x| = 0.d1…dn·10^k as
// formatRealFloat FFGeneric does.
func appendFormatted(dst, ds []byte, k int) []byte {
	if k >= 0 && k <= 7 {
		if k == 0 {
			dst = append(dst, '0', '.')
			return append(dst, ds...)
		}
		if len(ds) <= k {
			dst = append(dst, ds...)
			for i := len(ds); i < k; i++ {
				dst = append(dst, '0')
			}
			return append(dst, '.', '0')
		}
		dst = append(dst, ds[:k]...)
		dst = append(dst, '.')
		return append(dst, ds[k:]...)
	}
	dst = append(dst, ds[0], '.')
	if len(ds) > 1 {
		dst = append(dst, ds[1:]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(k-1), 10)
}

// fastDigits takes Go's shortest digits for f·2^e and accepts them when an
// exact check shows they lie neither on an edge of the rounding interval
// (where GHC, whose interval is open, needs more digits) nor exactly
// halfway between two candidates (where GHC rounds up and Go to even).
func fastDigits(scratch []byte, x float64, f uint64, e int, fp floatParams, size int) ([]byte, int, bool) {
	scratch = strconv.AppendFloat(scratch, x, 'e', -1, size)
	// scratch is d[.ddd]e±XX
	n := 0
	var D uint64
	i := 0
	for ; i < len(scratch) && scratch[i] != 'e'; i++ {
		c := scratch[i]
		if c == '.' {
			continue
		}
		scratch[n] = c
		n++
		D = D*10 + uint64(c-'0')
	}
	if n > 19 || i >= len(scratch) {
		return nil, 0, false
	}
	i++
	eneg := scratch[i] == '-'
	i++
	x10 := 0
	for ; i < len(scratch); i++ {
		x10 = x10*10 + int(scratch[i]-'0')
	}
	if eneg {
		x10 = -x10
	}
	k := x10 + 1
	E := k - n // value = D·10^E
	// Interval edges: x ± half the gap to the neighbours.
	if eqDyadicDecimal(2*f+1, e-1, D, E) {
		return nil, 0, false
	}
	if f == 1<<(fp.p-1) && e > fp.minExp {
		if eqDyadicDecimal(4*f-1, e-2, D, E) {
			return nil, 0, false
		}
	} else if eqDyadicDecimal(2*f-1, e-1, D, E) {
		return nil, 0, false
	}
	// Ties: x exactly halfway between D and its neighbour at the last digit.
	if D <= math.MaxUint64/10-5 {
		if eqDyadicDecimal(f, e, 10*D+5, E-1) || (D > 0 && eqDyadicDecimal(f, e, 10*D-5, E-1)) {
			return nil, 0, false
		}
	} else {
		return nil, 0, false
	}
	return scratch[:n], k, true
}

// eqDyadicDecimal reports whether m·2^q equals D·10^E exactly.
func eqDyadicDecimal(m uint64, q int, D uint64, E int) bool {
	if m == 0 || D == 0 {
		return m == 0 && D == 0
	}
	tz := bits.TrailingZeros64(m)
	m >>= tz
	q += tz
	t := bits.TrailingZeros64(D)
	Dp := D >> t
	// D·10^E = Dp·5^E·2^(t+E); m odd.
	if E >= 0 {
		if t+E != q {
			return false
		}
		v := Dp
		for j := 0; j < E; j++ {
			hi, lo := bits.Mul64(v, 5)
			if hi != 0 || lo > m {
				return false
			}
			v = lo
		}
		return v == m
	}
	F := -E
	if t-F != q {
		return false
	}
	v := m
	for j := 0; j < F; j++ {
		hi, lo := bits.Mul64(v, 5)
		if hi != 0 || lo > Dp {
			return false
		}
		v = lo
	}
	return v == Dp
}

// exactDigits is GHC's floatToDigits 10 in exact integer arithmetic.
func exactDigits(f uint64, e int, fp floatParams) ([]byte, int) {
	bf := new(big.Int).SetUint64(f)
	var r, s, mp, mm big.Int
	pow2 := uint64(1) << (fp.p - 1)
	if e >= 0 {
		b := new(big.Int).Lsh(big.NewInt(1), uint(e))
		if f == pow2 {
			r.Mul(bf, b)
			r.Lsh(&r, 2)
			s.SetInt64(4)
			mp.Lsh(b, 1)
			mm.Set(b)
		} else {
			r.Mul(bf, b)
			r.Lsh(&r, 1)
			s.SetInt64(2)
			mp.Set(b)
			mm.Set(b)
		}
	} else {
		if e > fp.minExp && f == pow2 {
			r.Lsh(bf, 2)
			s.Lsh(big.NewInt(1), uint(2-e))
			mp.SetInt64(2)
			mm.SetInt64(1)
		} else {
			r.Lsh(bf, 1)
			s.Lsh(big.NewInt(1), uint(1-e))
			mp.SetInt64(1)
			mm.SetInt64(1)
		}
	}
	// k: least integer with r + m+ ≤ s·10^k. Estimate, then correct.
	x := math.Ldexp(float64(f), e)
	k := int(math.Ceil(math.Log10(x)))
	ten := big.NewInt(10)
	var high, tmp big.Int
	high.Add(&r, &mp)
	pow := func(n int) *big.Int { return new(big.Int).Exp(ten, big.NewInt(int64(n)), nil) }
	fits := func(k int) bool { // r + m+ ≤ s·10^k
		if k >= 0 {
			tmp.Mul(&s, pow(k))
			return high.Cmp(&tmp) <= 0
		}
		tmp.Mul(&high, pow(-k))
		return tmp.Cmp(&s) <= 0
	}
	for !fits(k) {
		k++
	}
	for fits(k - 1) {
		k--
	}
	if k >= 0 {
		s.Mul(&s, pow(k))
	} else {
		p := pow(-k)
		r.Mul(&r, p)
		mp.Mul(&mp, p)
		mm.Mul(&mm, p)
	}
	var ds []byte
	var d, sum, r2 big.Int
	for {
		r.Mul(&r, ten)
		mp.Mul(&mp, ten)
		mm.Mul(&mm, ten)
		d.DivMod(&r, &s, &r)
		dig := byte(d.Int64())
		low := r.Cmp(&mm) < 0
		sum.Add(&r, &mp)
		hi := sum.Cmp(&s) > 0
		switch {
		case !low && !hi:
			ds = append(ds, '0'+dig)
			continue
		case low && !hi:
			ds = append(ds, '0'+dig)
		case !low && hi:
			ds = append(ds, '0'+dig+1)
		default:
			r2.Lsh(&r, 1)
			if r2.Cmp(&s) < 0 {
				ds = append(ds, '0'+dig)
			} else {
				ds = append(ds, '0'+dig+1)
			}
		}
		return ds, k
	}
}
