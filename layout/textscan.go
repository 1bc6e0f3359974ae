package layout

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Errors of text that does not parse, for errors.Is: the literal scanner's
// (on a *TextError) and, wrapped, every format's (a Futhark text value, a
// SciDB format string, an element given to set).
var (
	// ErrSyntax: the text is not what its grammar allows, such as a
	// literal of the element type.
	ErrSyntax = errors.New("syntax error")
	// ErrRange: an integer literal outside its type's range, or a float
	// literal that overflows its type or rounds to zero in it.
	ErrRange = errors.New("literal out of range")
)

// TextError reports a literal that ScanText, ScanInt or ParseText cannot
// take: where in the scanned input and why.
type TextError struct {
	Off  int    // byte offset in the scanned input
	Want string // what was expected at Off (syntax errors)
	Msg  string // what is wrong (range errors)
	Err  error  // ErrSyntax or ErrRange
}

func (e *TextError) Error() string {
	if e.Msg != "" {
		return fmt.Sprintf("offset %d: %s", e.Off, e.Msg)
	}
	return fmt.Sprintf("offset %d: expected %s", e.Off, e.Want)
}

// Unwrap returns ErrSyntax or ErrRange.
func (e *TextError) Unwrap() error { return e.Err }

// ScanFlags select how ScanText treats literals that do not fit their type
// and which old spellings it takes. The zero value is strict.
type ScanFlags uint8

const (
	// ScanWrap: integers out of their type's range wrap modulo 2^bits, as
	// futhark-data's readers do (Haskell's fromInteger); otherwise they
	// are an error wrapping ErrRange.
	ScanWrap ScanFlags = 1 << iota
	// ScanRound: floats that overflow their type become ±inf and nonzero
	// ones that round to zero become zero, and f16 zero loses its sign, as
	// futhark-data's readers do; otherwise overflow and underflow to zero
	// are errors wrapping ErrRange (infinity only when spelt inf).
	ScanRound
	// ScanLegacy also takes the spellings that compiled Futhark programs
	// printed before 2018: nanf32, -nanf32, inff32, -inff32 (and f64).
	ScanLegacy
)

// ScanText reads the Futhark literal at the start of b as an element of
// type t, one of Futhark's primitive types (i8 … u64, f16, f32, f64,
// bool), and returns its bits (two's complement, IEEE 754, or 0 and 1 for
// bool, in the low t.Size() bytes of the uint64) and the number of bytes
// it took; the literal need not end b. With t Invalid the type comes from
// the literal by Futhark's default rules: an integer without a suffix is
// i32, a float f64, and f32.nan is an f32.
//
// The syntax is Futhark's: decimal digits with underscores between them
// (010 is ten), 0x and 0b integers, an optional type suffix that must
// match t (1i32, 1.5f32), floats with a point or an exponent (1.5, 1e-3),
// integers for float types, tT.nan, tT.inf and -tT.inf for a float type
// tT, true and false. A float converts to f64 correctly rounded, then to
// f32 or through f32 to f16, as futhark-data converts it.
//
// Errors are *TextError wrapping ErrSyntax or ErrRange.
func ScanText(b []byte, t Type, flags ScanFlags) (Type, uint64, int, error) {
	s := scanner{b: b, flags: flags}
	if t == Invalid {
		typ, bits, n, ok := s.prim()
		if !ok {
			return Invalid, 0, 0, s.error()
		}
		return typ, bits, n, nil
	}
	if !isPrim(t) {
		return Invalid, 0, 0, &TextError{Want: "a primitive Futhark type, not " + t.String(), Err: ErrSyntax}
	}
	bits, n, ok := s.typed(t)
	if !ok {
		return Invalid, 0, 0, s.error()
	}
	return t, bits, n, nil
}

// ScanInt reads an integer literal without a type suffix at the start of
// b, as Futhark writes array dimensions: an optional sign, then decimal,
// 0x or 0b digits with underscores between them. It returns the magnitude
// modulo 2^64, whether the literal was negative, whether its magnitude is
// 2^64 or more, and the number of bytes it took.
func ScanInt(b []byte) (mag uint64, neg, over bool, n int, err error) {
	s := scanner{b: b}
	j, mag, over, neg, ok := s.intLiteral(0)
	if !ok {
		return 0, false, false, 0, s.error()
	}
	return mag, neg, over, j, nil
}

func isPrim(t Type) bool { return t >= I8 && t <= Bool }

// scanner reads one literal from b; the first error it meets is kept.
type scanner struct {
	b      []byte
	flags  ScanFlags
	failed bool
	err    TextError
}

func (s *scanner) error() error {
	e := s.err
	return &e
}

func (s *scanner) syntax(off int, want string) bool {
	if !s.failed {
		s.failed, s.err = true, TextError{Off: off, Want: want, Err: ErrSyntax}
	}
	return false
}

func (s *scanner) rangeErr(off int, format string, args ...any) bool {
	if !s.failed {
		s.failed, s.err = true, TextError{Off: off, Msg: fmt.Sprintf(format, args...), Err: ErrRange}
	}
	return false
}

func (s *scanner) hasPrefix(i int, p string) bool {
	return len(s.b)-i >= len(p) && string(s.b[i:i+len(p)]) == p
}

// digitValues maps bytes to digit values (36 and up for non-digits).
var digitValues = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9':
			t[c] = uint8(c - '0')
		case c >= 'a' && c <= 'z':
			t[c] = uint8(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			t[c] = uint8(c-'A') + 10
		default:
			t[c] = 99
		}
	}
	return
}()

// DigitValue is c's value as a digit of any base up to 36 (0–9, then
// a–z or A–Z for 10–35), and 99 for a byte that is no digit: a parser of
// base b takes c while DigitValue(c) < b.
func DigitValue(c byte) int { return int(digitValues[c]) }

// intSpan scans sign? ("0b" bdigits | "0x" xdigits | ddigits), digits with
// underscores after the first digit, and returns where the digits lie.
func (s *scanner) intSpan(i int) (neg bool, base, from, to int, ok bool) {
	if i < len(s.b) && (s.b[i] == '-' || s.b[i] == '+') {
		neg = s.b[i] == '-'
		i++
	}
	base = 10
	if s.hasPrefix(i, "0b") {
		base, i = 2, i+2
	} else if s.hasPrefix(i, "0x") {
		base, i = 16, i+2
	}
	if i >= len(s.b) || int(digitValues[s.b[i]]) >= base {
		return false, 0, i, i, s.syntax(i, "digits")
	}
	j := i
	for ; j < len(s.b); j++ {
		if c := s.b[j]; int(digitValues[c]) >= base && c != '_' {
			break
		}
	}
	return neg, base, i, j, true
}

// intLiteral scans an integer literal and accumulates its magnitude
// modulo 2^64; over reports a true magnitude ≥ 2^64.
func (s *scanner) intLiteral(i int) (j int, mag uint64, over, neg, ok bool) {
	neg, base, from, to, ok := s.intSpan(i)
	if !ok {
		return i, 0, false, false, false
	}
	for _, c := range s.b[from:to] {
		if c == '_' {
			continue
		}
		hi, lo := mulAdd(mag, uint64(base), uint64(digitValues[c]))
		over = over || hi
		mag = lo
	}
	return to, mag, over, neg, true
}

func mulAdd(v, m, a uint64) (bool, uint64) {
	if v <= (math.MaxUint64-a)/m {
		return false, v*m + a
	}
	return true, v*m + a
}

// intBits wraps a literal to type t (ScanWrap) or checks that it is in
// range.
func (s *scanner) intBits(start int, t Type, mag uint64, over, neg bool) (uint64, bool) {
	v := mag
	if neg {
		v = -mag
	}
	if s.flags&ScanWrap == 0 {
		bitsN := uint(t.Size() * 8)
		var in bool
		switch {
		case over:
		case t.IsUnsigned():
			in = !neg && (bitsN == 64 || mag < 1<<bitsN) || neg && mag == 0
		case neg:
			in = mag <= 1<<(bitsN-1)
		default:
			in = mag < 1<<(bitsN-1)
		}
		if !in {
			return 0, s.rangeErr(start, "integer literal out of range for %v", t)
		}
	}
	if t.Size() < 8 {
		v &= 1<<(uint(t.Size())*8) - 1
	}
	return v, true
}

var floatFollow = []string{"f16", "f32", "f64", ".", "e"}

var intSuffixes = []Type{I8, I16, I32, I64, U8, U16, U32, U64}

// prim parses a primitive literal with Futhark's default rules: integer,
// then float, then true/false.
func (s *scanner) prim() (Type, uint64, int, bool) {
	if len(s.b) == 0 {
		return 0, 0, 0, s.syntax(0, "a value")
	}
	// An integer, if it is not the start of a float (no error if not).
	if j, mag, over, neg, ok := s.intLiteral(0); ok {
		follow := false
		for _, f := range floatFollow {
			if s.hasPrefix(j, f) {
				follow = true
				break
			}
		}
		if !follow {
			t := I32
			for _, st := range intSuffixes {
				if name := st.String(); s.hasPrefix(j, name) {
					t, j = st, j+len(name)
					break
				}
			}
			bits, ok := s.intBits(0, t, mag, over, neg)
			return t, bits, j, ok
		}
	} else {
		s.failed = false
	}
	if t, bits, j, ok := s.special(0, Invalid); ok {
		return t, bits, j, true
	}
	if c := s.b[0]; c == '-' || c == '+' || c-'0' <= 9 {
		x, j, nonzero, ok := s.number(0)
		if !ok {
			return 0, 0, 0, false
		}
		t := F64
		for _, ft := range []Type{F16, F32, F64} {
			if s.hasPrefix(j, ft.String()) {
				t, j = ft, j+3
				break
			}
		}
		bits, ok := s.floatResult(0, t, x, nonzero)
		return t, bits, j, ok
	}
	if s.hasPrefix(0, "true") {
		return Bool, 1, 4, true
	}
	if s.hasPrefix(0, "false") {
		return Bool, 0, 5, true
	}
	return 0, 0, 0, s.syntax(0, "a value")
}

var specials = []struct {
	s    string
	t    Type
	bits uint64
}{
	{"f16.nan", F16, 0xfe00}, {"f32.nan", F32, 0xffc00000}, {"f64.nan", F64, 0xfff8000000000000},
	{"f16.inf", F16, 0x7c00}, {"f32.inf", F32, 0x7f800000}, {"f64.inf", F64, 0x7ff0000000000000},
	{"-f16.inf", F16, 0xfc00}, {"-f32.inf", F32, 0xff800000}, {"-f64.inf", F64, 0xfff0000000000000},
}

var legacySpecials = []struct {
	s    string
	t    Type
	bits uint64
}{
	{"-nanf32", F32, 0xffc00000}, {"-nanf64", F64, 0xfff8000000000000},
	{"nanf32", F32, 0xffc00000}, {"nanf64", F64, 0xfff8000000000000},
	{"-inff32", F32, 0xff800000}, {"-inff64", F64, 0xfff0000000000000},
	{"inff32", F32, 0x7f800000}, {"inff64", F64, 0x7ff0000000000000},
}

// special matches f32.nan and friends at i; want restricts the type
// unless Invalid.
func (s *scanner) special(i int, want Type) (Type, uint64, int, bool) {
	if i >= len(s.b) {
		return 0, 0, i, false
	}
	switch c := s.b[i]; c {
	case 'f', 'n', 'i':
	case '-':
		if i+1 >= len(s.b) || s.b[i+1]-'0' <= 9 {
			return 0, 0, i, false
		}
	default:
		return 0, 0, i, false
	}
	for _, sp := range specials {
		if (want == Invalid || want == sp.t) && s.hasPrefix(i, sp.s) {
			return sp.t, sp.bits, i + len(sp.s), true
		}
	}
	if s.flags&ScanLegacy != 0 {
		for _, sp := range legacySpecials {
			if (want == Invalid || want == sp.t) && s.hasPrefix(i, sp.s) {
				return sp.t, sp.bits, i + len(sp.s), true
			}
		}
	}
	return 0, 0, i, false
}

// floatBits converts a double to the bits of type t as futhark-data does:
// f32 by double2Float, f16 through f32; under ScanRound zero loses its
// sign in f16 (futhark-data goes through toRational).
func (s *scanner) floatBits(t Type, x float64) uint64 {
	switch t {
	case F64:
		return math.Float64bits(x)
	case F32:
		return uint64(math.Float32bits(float32(x)))
	}
	if x == 0 && s.flags&ScanRound != 0 {
		return 0
	}
	return uint64(Float16From(float32(x)))
}

// floatResult converts x to type t and, unless ScanRound, checks that a
// finite literal stays finite and a nonzero one nonzero.
func (s *scanner) floatResult(start int, t Type, x float64, nonzero bool) (uint64, bool) {
	bits := s.floatBits(t, x)
	if s.flags&ScanRound != 0 {
		return bits, true
	}
	mag := bits &^ (1 << (t.Size()*8 - 1))
	var inf uint64
	switch t {
	case F16:
		inf = 0x7c00
	case F32:
		inf = 0x7f800000
	default:
		inf = 0x7ff0000000000000
	}
	if mag == inf {
		return 0, s.rangeErr(start, "float literal overflows %v (write inf for infinity)", t)
	}
	if mag == 0 && nonzero {
		return 0, s.rangeErr(start, "float literal rounds to zero in %v", t)
	}
	return bits, true
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number parses sign? ddigits ("." ddigits)? (("e"|"E") sign? ddigits)?
// and rounds it correctly to a double (Data.Scientific.toRealFloat). The
// exponent wraps as a 64-bit Int, as in Haskell. nonzero reports a nonzero
// digit in the mantissa.
func (s *scanner) number(i int) (x float64, j int, nonzero, ok bool) {
	d, end := s.b, len(s.b)
	neg := false
	if i < end && (d[i] == '-' || d[i] == '+') {
		neg = d[i] == '-'
		i++
	}
	if i >= end || d[i]-'0' > 9 {
		return 0, i, false, s.syntax(i, "digits")
	}
	// Mantissa: up to 19 significant digits exactly in m; the rest go to
	// the slow path.
	var m uint64
	nd := 0        // significant digits seen (after leading zeros)
	var frac int64 // digits after the point
	long := false
	startDigits := i
	for ; i < end; i++ {
		c := d[i]
		if c-'0' <= 9 {
			if nd > 0 || c != '0' {
				if nd < 19 {
					m = m*10 + uint64(c-'0')
				} else {
					long = true
				}
				nd++
			}
		} else if c != '_' {
			break
		}
	}
	fracStart := -1
	if i+1 < end && d[i] == '.' && d[i+1]-'0' <= 9 {
		i++
		fracStart = i
		for ; i < end; i++ {
			c := d[i]
			if c-'0' <= 9 {
				frac++
				if nd > 0 || c != '0' {
					if nd < 19 {
						m = m*10 + uint64(c-'0')
					} else {
						long = true
						frac-- // digit not in m: keep the scale right
					}
					nd++
				}
			} else if c != '_' {
				break
			}
		}
	}
	var exp int64
	if i < end && (d[i] == 'e' || d[i] == 'E') {
		k := i + 1
		eneg := false
		if k < end && (d[k] == '-' || d[k] == '+') {
			eneg = d[k] == '-'
			k++
		}
		if k < end && d[k]-'0' <= 9 {
			var ev int64
			for ; k < end; k++ {
				c := d[k]
				if c-'0' <= 9 {
					ev = ev*10 + int64(c-'0') // wraps like Haskell's Int
				} else if c != '_' {
					break
				}
			}
			if eneg {
				ev = -ev
			}
			exp = ev
			i = k
		}
	}
	e10 := exp - frac
	switch {
	case m == 0 && !long:
		x = 0
	case !long && m < 1<<53 && e10 >= -22 && e10 <= 22:
		x = float64(m)
		if e10 >= 0 {
			x *= pow10[e10]
		} else {
			x /= pow10[-e10]
		}
	default:
		x = s.slowFloat(startDigits, fracStart, i, exp)
	}
	if neg {
		x = -x
	}
	return x, i, nd > 0, true
}

// slowFloat converts the literal digits in b[from:to] exactly, through
// strconv on a normalised copy: all digits, then the total exponent.
func (s *scanner) slowFloat(from, fracStart, to int, exp int64) float64 {
	var scratch [64]byte
	buf := scratch[:0]
	var frac int64
	for k := from; k < to; k++ {
		c := s.b[k]
		if c == 'e' || c == 'E' {
			break
		}
		if c-'0' <= 9 {
			buf = append(buf, c)
			if fracStart >= 0 && k >= fracStart {
				frac++
			}
		}
	}
	buf = append(buf, 'e')
	buf = strconv.AppendInt(buf, exp-frac, 10)
	x, _ := strconv.ParseFloat(string(buf), 64) // range errors give ±Inf or 0, as wanted
	return x
}

// typed parses an element with the parser for type t: what Futhark takes
// for every element of an array after the first, and for a literal whose
// type is known.
func (s *scanner) typed(t Type) (uint64, int, bool) {
	switch {
	case t == Bool:
		if s.hasPrefix(0, "true") {
			return 1, 4, true
		}
		if s.hasPrefix(0, "false") {
			return 0, 5, true
		}
		return 0, 0, s.syntax(0, "true or false")
	case t.IsInteger():
		j, mag, over, neg, ok := s.fastInt()
		if !ok {
			return 0, 0, false
		}
		var bits uint64
		if !over && s.flags&ScanWrap != 0 && mag <= 1<<31 {
			// Common case: no range check to make; wrap to the type.
			bits = mag
			if neg {
				bits = -mag
			}
			if sz := t.Size(); sz < 8 {
				bits &= 1<<(uint(sz)*8) - 1
			}
		} else if bits, ok = s.intBits(0, t, mag, over, neg); !ok {
			return 0, 0, false
		}
		if j < len(s.b) && (s.b[j] == 'i' || s.b[j] == 'u') {
			if name := t.String(); s.hasPrefix(j, name) {
				j += len(name)
			}
		}
		return bits, j, true
	}
	if x, j, ok := s.fastFloat(); ok {
		if j+3 <= len(s.b) && s.b[j] == 'f' && string(s.b[j+1:j+3]) == t.String()[1:] {
			j += 3
		}
		bits, ok := s.floatResult(0, t, x, x != 0)
		return bits, j, ok
	}
	if _, bits, j, ok := s.special(0, t); ok {
		return bits, j, true
	}
	x, j, nonzero, ok := s.number(0)
	if !ok {
		return 0, 0, false
	}
	if name := t.String(); s.hasPrefix(j, name) {
		j += len(name)
	}
	bits, ok := s.floatResult(0, t, x, nonzero)
	return bits, j, ok
}

// fastInt is intLiteral with a tight loop for plain decimal digits.
func (s *scanner) fastInt() (int, uint64, bool, bool, bool) {
	d, end := s.b, len(s.b)
	j := 0
	neg := false
	if j < end && d[j] == '-' {
		neg = true
		j++
	}
	if j < end && d[j]-'1' <= 8 {
		var v uint64
		k := j
		for ; k < end && k-j < 19; k++ {
			c := d[k] - '0'
			if c > 9 {
				break
			}
			v = v*10 + uint64(c)
		}
		if k == end || (d[k]-'0' > 9 && d[k] != '_') {
			return k, v, false, neg, true
		}
	}
	return s.intLiteral(0)
}

// fastFloat parses the common float forms -?d+(.d+)?(e[+-]?d+)? with at
// most 19 significant digits and a small exponent, exactly (Clinger's fast
// path). Anything else (underscores, long mantissas, large exponents)
// reports !ok and goes to number.
func (s *scanner) fastFloat() (float64, int, bool) {
	d, end := s.b, len(s.b)
	i := 0
	neg := false
	if i < end && d[i] == '-' {
		neg = true
		i++
	}
	start := i
	var m uint64
	for ; i < end; i++ {
		c := d[i] - '0'
		if c > 9 {
			break
		}
		m = m*10 + uint64(c)
	}
	nd := i - start
	if nd == 0 {
		return 0, i, false
	}
	var e10 int
	if i+1 < end && d[i] == '.' && d[i+1]-'0' <= 9 {
		i++
		fs := i
		for ; i < end; i++ {
			c := d[i] - '0'
			if c > 9 {
				break
			}
			m = m*10 + uint64(c)
		}
		e10 = fs - i
		nd += i - fs
	}
	if nd > 19 || i < end && d[i] == '_' {
		return 0, i, false
	}
	if i < end && (d[i] == 'e' || d[i] == 'E') {
		j := i + 1
		eneg := false
		if j < end && (d[j] == '-' || d[j] == '+') {
			eneg = d[j] == '-'
			j++
		}
		if j < end && d[j]-'0' <= 9 {
			ev, k := 0, j
			for ; k < end && k-j < 4; k++ {
				c := d[k] - '0'
				if c > 9 {
					break
				}
				ev = ev*10 + int(c)
			}
			if k-j >= 4 || k < end && d[k] == '_' {
				return 0, i, false
			}
			if eneg {
				ev = -ev
			}
			e10 += ev
			i = k
		}
	}
	if m >= 1<<53 || e10 < -22 || e10 > 22 {
		if m != 0 {
			return 0, i, false
		}
	}
	x := float64(m)
	if m != 0 {
		if e10 >= 0 {
			x *= pow10[e10]
		} else {
			x /= pow10[-e10]
		}
	}
	if neg {
		x = -x
	}
	return x, i, true
}
