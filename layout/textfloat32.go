package layout

import "math/bits"

// pow10u64 holds 10^0 … 10^19.
var pow10u64 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return
}()

// smallDigits runs GHC's floatToDigits (the algorithm of exactDigits) in
// uint64 arithmetic, for floats whose scaled quantities stay below 2^59
// (every f32 of moderate magnitude). It reports !ok where they would not,
// and the caller falls back. dst receives the digits.
func smallDigits(dst []byte, f uint64, e int, fp floatParams) ([]byte, int, bool) {
	const limit = 1 << 59
	var r, s, mp, mm uint64
	pow2 := uint64(1) << (fp.p - 1)
	if e >= 0 {
		if e > 30 {
			return nil, 0, false
		}
		b := uint64(1) << e
		if f == pow2 {
			r, s, mp, mm = 4*f*b, 4, 2*b, b
		} else {
			r, s, mp, mm = 2*f*b, 2, b, b
		}
	} else {
		if e < -55 {
			return nil, 0, false
		}
		if e > fp.minExp && f == pow2 {
			r, s, mp, mm = 4*f, 1<<(2-e), 2, 1
		} else {
			r, s, mp, mm = 2*f, 1<<(1-e), 1, 1
		}
	}
	// k: the least integer with r + m+ ≤ s·10^k. Estimate from the binary
	// magnitude, then correct.
	high := r + mp
	lg := bits.Len64(high) - bits.Len64(s) // high/s is within [2^(lg-1), 2^(lg+1))
	k := (lg * 78913) >> 18                // ≈ lg·log10(2), floor (arithmetic shift)
	fits := func(k int) (bool, bool) {     // (r+m+ ≤ s·10^k, computable)
		if k >= 0 {
			if k >= len(pow10u64) {
				return true, true
			}
			hi, lo := bits.Mul64(s, pow10u64[k])
			if hi != 0 {
				return true, true
			}
			return high <= lo, true
		}
		if -k >= len(pow10u64) {
			return false, false
		}
		hi, lo := bits.Mul64(high, pow10u64[-k])
		if hi != 0 {
			return false, true
		}
		return lo <= s, true
	}
	for {
		ok, can := fits(k)
		if !can {
			return nil, 0, false
		}
		if ok {
			break
		}
		k++
	}
	for {
		ok, can := fits(k - 1)
		if !can || !ok {
			break
		}
		k--
	}
	if k >= 0 {
		if k >= len(pow10u64) {
			return nil, 0, false
		}
		hi, lo := bits.Mul64(s, pow10u64[k])
		if hi != 0 || lo >= limit {
			return nil, 0, false
		}
		s = lo
	} else {
		if -k >= len(pow10u64) {
			return nil, 0, false
		}
		p := pow10u64[-k]
		hi1, lo1 := bits.Mul64(r, p)
		hi2, lo2 := bits.Mul64(mp, p)
		if hi1 != 0 || hi2 != 0 || lo1 >= limit || lo2 >= limit {
			return nil, 0, false
		}
		r, mp, mm = lo1, lo2, mm*p
	}
	if s >= limit/10 || mp >= limit/10 {
		return nil, 0, false
	}
	for {
		r *= 10
		mp *= 10
		mm *= 10
		d := r / s
		r -= d * s
		low := r < mm
		hi := r+mp > s
		switch {
		case !low && !hi:
			dst = append(dst, byte('0'+d))
			if mp >= limit/10 {
				return nil, 0, false
			}
			continue
		case low && !hi:
		case !low && hi:
			d++
		default:
			if 2*r >= s {
				d++
			}
		}
		return append(dst, byte('0'+d)), k, true
	}
}
