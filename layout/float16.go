package layout

import "math"

// Float16 is an IEEE 754 binary16 value kept as its raw bits, so every
// value (NaN payloads included) round-trips through files unchanged.
type Float16 uint16

// Float32 converts h exactly (every binary16 value is a binary32 value).
func (h Float16) Float32() float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN: keep the payload in the top fraction bits.
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: normalise.
	e := uint32(113)
	for frac&0x400 == 0 {
		frac <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
}

// Float64 converts h exactly.
func (h Float16) Float64() float64 { return float64(h.Float32()) }

// IsNaN reports whether h is a NaN.
func (h Float16) IsNaN() bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 }

// Float16From rounds f to the nearest binary16 value, ties to even, as
// Julia's Float16(::Float32) does: values too large become ±Inf and a NaN
// becomes a quiet NaN of the same sign (NaN32 gives 0x7E00).
func Float16From(f float32) Float16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	frac := b & 0x7fffff
	if exp == 0xff {
		if frac != 0 {
			return Float16(sign | 0x7e00)
		}
		return Float16(sign | 0x7c00)
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return Float16(sign | 0x7c00)
	}
	if e <= 0 {
		// Subnormal or zero in binary16.
		if e < -10 {
			return Float16(sign)
		}
		m := frac | 0x800000 // implicit bit
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		rest := m & (1<<shift - 1)
		r := m >> shift
		if rest > half || (rest == half && r&1 == 1) {
			r++
		}
		return Float16(sign | uint16(r))
	}
	r := uint32(e)<<10 | frac>>13
	rest := frac & 0x1fff
	if rest > 0x1000 || (rest == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, up to Inf: that is correct rounding
	}
	return Float16(sign | uint16(r))
}

// Float16FromFloat64 rounds f to binary16 directly (no double rounding
// through float32), ties to even.
func Float16FromFloat64(f float64) Float16 {
	if f32 := float32(f); float64(f32) == f || math.IsNaN(f) || math.IsInf(f, 0) {
		return Float16From(f32)
	}
	// Round f to 11 significant bits with the right exponent by choosing the
	// nearer of the two binary16 neighbours of the float32 rounding.
	h := Float16From(float32(f))
	best, bestDiff := h, math.Abs(h.Float64()-f)
	for _, c := range []Float16{h - 1, h + 1} {
		if c.IsNaN() || c&0x7fff > 0x7c00 {
			continue
		}
		d := math.Abs(c.Float64() - f)
		if d < bestDiff || (d == bestDiff && c&1 == 0) {
			best, bestDiff = c, d
		}
	}
	return best
}
