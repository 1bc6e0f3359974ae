package futhark

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/layout"
)

// Byte classes of the text format. futhark-data hands its text parser only
// the longest prefix of the input made of Latin-1 characters that are
// isSpace or isPrint (the window W); whitespace is isSpace on Latin-1.
var (
	inWindow [256]bool
	isSpace  [256]bool
)

func init() {
	for c := 0; c < 256; c++ {
		inWindow[c] = (c >= 0x09 && c <= 0x0d) || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c != 0xad)
		isSpace[c] = (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0xa0
	}
}

// windowEnd returns the first offset ≥ from whose byte is outside W.
func windowEnd(d []byte, from int) int {
	i := from
	for ; i+8 <= len(d); i += 8 {
		v := binary.LittleEndian.Uint64(d[i:])
		const hi, b20, b7f = 0x8080808080808080, 0x2020202020202020, 0x7f7f7f7f7f7f7f7f
		x := v ^ b7f
		if v&hi == 0 && (v-b20)&^v&hi == 0 && (x-0x0101010101010101)&^x&hi == 0 {
			continue // eight printable ASCII bytes
		}
		for k := i; k < i+8; k++ {
			if !inWindow[d[k]] {
				return k
			}
		}
	}
	for ; i < len(d); i++ {
		if !inWindow[d[i]] {
			return i
		}
	}
	return len(d)
}

// dropSpaces skips what futhark-data skips at the start of the input and
// after each binary value: isSpace bytes and "--" comments up to and
// including a newline (any bytes inside).
func dropSpaces(d []byte, i int) int {
	for {
		for i < len(d) && isSpace[d[i]] {
			i++
		}
		if i+1 < len(d) && d[i] == '-' && d[i+1] == '-' {
			i += 2
			for i < len(d) && d[i] != '\n' {
				i++
			}
			if i < len(d) {
				i++
			}
			continue
		}
		return i
	}
}

// textParser parses one text value within the window d[:end]. With emit
// set it appends the elements, little-endian, to out; without, it only
// validates and records type and shape, keeping O(rank) state.
type textParser struct {
	d      []byte
	end    int
	i      int
	tokEnd int // end of the last token of the value, before trailing space
	legacy bool
	strict bool
	emit   bool
	out    []byte
	keep   int // with emit: stop emitting (and drop out) past this many bytes; 0: no limit

	typ  layout.Type
	rank int
	dims [MaxRank + 1]int64
	tmp  [MaxRank + 1]int64

	errOff int
	errMsg string
	errSen error

	num []byte // scratch for float digits
}

func (p *textParser) fail(off int, sen error, format string, args ...any) bool {
	if p.errMsg == "" {
		p.errOff, p.errSen, p.errMsg = off, sen, fmt.Sprintf(format, args...)
	}
	return false
}

// unexpected reports what stands at offset i where something else was
// expected.
func (p *textParser) unexpected(i int, what string) bool {
	switch {
	case i >= len(p.d):
		return p.fail(i, ErrTruncated, "unexpected end of input, expected %s", what)
	case i >= p.end:
		return p.fail(i, ErrSyntax, "byte 0x%02x cannot appear in text, expected %s", p.d[i], what)
	}
	return p.fail(i, ErrSyntax, "unexpected %q, expected %s", p.d[i], what)
}

// skip skips whitespace and comments inside the window (megaparsec's
// space followed by "--" comments ending at a newline or the window end).
func (p *textParser) skip(i int) int {
	d, end := p.d, p.end
	if i < end && !isSpace[d[i]] && d[i] != '-' {
		return i
	}
	for {
		for i < end && isSpace[d[i]] {
			i++
		}
		if i+1 < end && d[i] == '-' && d[i+1] == '-' {
			i += 2
			for i < end && d[i] != '\n' {
				i++
			}
			if i < end {
				i++
			}
			continue
		}
		return i
	}
}

func (p *textParser) hasPrefix(i int, s string) bool {
	if p.end-i < len(s) {
		return false
	}
	return string(p.d[i:i+len(s)]) == s
}

// parse parses one value at p.i, then the whitespace after it.
func (p *textParser) parse() bool {
	p.typ, p.rank = layout.Invalid, 0
	_, ok := p.value(0, true)
	return ok
}

// value parses a value at nesting depth depth. est is set on the chain of
// first elements, which establishes the type and shape that every later
// element must have. It reports whether the value was a primitive.
func (p *textParser) value(depth int, est bool) (prim, ok bool) {
	if p.i >= p.end {
		return false, p.unexpected(p.i, "a value")
	}
	switch p.d[p.i] {
	case '[':
		return false, p.array(depth, est)
	case '"':
		return false, p.str(depth, est)
	case 'e':
		return false, p.empty(depth, est)
	}
	start := p.i
	t, bits, ok := p.prim()
	if !ok {
		return false, false
	}
	if est {
		p.typ, p.rank = t, depth
	} else if depth != p.rank || t != p.typ {
		return false, p.fail(start, ErrIrregular, "%s", ErrIrregular)
	}
	p.put(t, bits)
	p.tokEnd = p.i
	p.i = p.skip(p.i)
	return true, true
}

func (p *textParser) put(t layout.Type, bits uint64) {
	if !p.emit {
		return
	}
	switch t.Size() {
	case 1:
		p.out = append(p.out, byte(bits))
	case 2:
		p.out = append(p.out, byte(bits), byte(bits>>8))
	case 4:
		p.out = append(p.out, byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24))
	default:
		p.out = append(p.out, byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24),
			byte(bits>>32), byte(bits>>40), byte(bits>>48), byte(bits>>56))
	}
	p.limitOut()
}

// limitOut stops emitting once out holds more than keep bytes.
func (p *textParser) limitOut() {
	if p.keep > 0 && cap(p.out) > p.keep {
		p.emit, p.out = false, nil
	}
}

func (p *textParser) array(depth int, est bool) bool {
	open := p.i
	if depth >= MaxRank {
		return p.fail(open, ErrRank, "arrays nested deeper than %d", MaxRank)
	}
	if !est && depth >= p.rank {
		return p.fail(open, ErrIrregular, "%s", ErrIrregular)
	}
	p.i = p.skip(p.i + 1)
	var count int64
	firstPrim := false
	for {
		if p.i < p.end && p.d[p.i] == ']' {
			if count == 0 {
				return p.fail(p.i, ErrSyntax, "empty array literal (use empty(...))")
			}
			break
		}
		var ok bool
		switch {
		case count == 0:
			firstPrim, ok = p.value(depth+1, est)
		case firstPrim:
			ok = p.typedPrim()
		default:
			_, ok = p.value(depth+1, false)
		}
		if !ok {
			return false
		}
		count++
		if !est && count > p.dims[depth] {
			return p.fail(open, ErrIrregular, "%s", ErrIrregular)
		}
		if p.i < p.end && p.d[p.i] == ',' {
			p.i = p.skip(p.i + 1)
			continue
		}
		if p.i < p.end && p.d[p.i] == ']' {
			break
		}
		return p.unexpected(p.i, "',' or ']'")
	}
	if est {
		p.dims[depth] = count
	} else if count != p.dims[depth] {
		return p.fail(open, ErrIrregular, "%s", ErrIrregular)
	}
	p.i++
	p.tokEnd = p.i
	p.i = p.skip(p.i)
	return true
}

// compound checks a string or empty(...) value of type t and dims at depth.
func (p *textParser) compound(start, depth int, est bool, t layout.Type, dims []int64) bool {
	if depth+len(dims) > MaxRank {
		return p.fail(start, ErrRank, "rank above %d", MaxRank)
	}
	if est {
		p.typ, p.rank = t, depth+len(dims)
		copy(p.dims[depth:], dims)
		return true
	}
	if t != p.typ || depth+len(dims) != p.rank {
		return p.fail(start, ErrIrregular, "%s", ErrIrregular)
	}
	for j, d := range dims {
		if p.dims[depth+j] != d {
			return p.fail(start, ErrIrregular, "%s", ErrIrregular)
		}
	}
	return true
}

// typedPrim parses a later element of an array level whose first element
// was a primitive: futhark-data ≥ 1.1.2.0 reads it with a parser for the
// first element's type.
func (p *textParser) typedPrim() bool {
	bits, ok := p.typedNumber(p.typ)
	if !ok {
		return false
	}
	p.put(p.typ, bits)
	p.tokEnd = p.i
	p.i = p.skip(p.i)
	return true
}

var primNames = func() []string {
	s := make([]string, len(primTypes))
	for i, t := range primTypes {
		s[i] = t.String()
	}
	return s
}()

// primTypeAt matches a primitive type name at i.
func (p *textParser) primTypeAt(i int) (layout.Type, int) {
	for j, name := range primNames {
		if p.hasPrefix(i, name) {
			return primTypes[j], i + len(name)
		}
	}
	return layout.Invalid, i
}

func (p *textParser) empty(depth int, est bool) bool {
	start := p.i
	if !p.hasPrefix(p.i, "empty(") {
		return p.unexpected(p.i, "a value")
	}
	i := p.i + 6
	n := 0
	zero := false
	for i < p.end && p.d[i] == '[' {
		if n > MaxRank {
			return p.fail(i, ErrRank, "rank above %d", MaxRank)
		}
		j, mag, over, neg, ok := p.intLiteral(i + 1)
		if !ok {
			return false
		}
		if neg && mag != 0 || over || mag > math.MaxInt64 {
			return p.fail(i+1, ErrDims, "dimension out of range")
		}
		if j >= p.end || p.d[j] != ']' {
			return p.unexpected(j, "']'")
		}
		p.tmp[n] = int64(mag)
		zero = zero || mag == 0
		n++
		i = j + 1
	}
	t, j := p.primTypeAt(i)
	if t == layout.Invalid {
		return p.unexpected(i, "'[' or a type name")
	}
	if j >= p.end || p.d[j] != ')' {
		return p.unexpected(j, "')'")
	}
	if !zero {
		return p.fail(start, ErrSyntax, "expected at least one empty dimension")
	}
	if !p.compound(start, depth, est, t, p.tmp[:n]) {
		return false
	}
	p.i = j + 1
	p.tokEnd = p.i
	p.i = p.skip(p.i)
	return true
}

// str parses a string literal, a [n]u8 of the UTF-8 encoding of its
// characters; raw bytes are Latin-1 characters.
func (p *textParser) str(depth int, est bool) bool {
	start := p.i
	i := p.i + 1
	var n int64
	var enc [4]byte
	for {
		if i >= p.end {
			return p.unexpected(i, "'\"'")
		}
		c := p.d[i]
		if c == '"' {
			break
		}
		r := rune(c)
		if c == '\\' {
			var ok bool
			r, i, ok = p.escape(i)
			if !ok {
				return false
			}
		} else {
			i++
		}
		if r >= 0xd800 && r <= 0xdfff {
			r = utf8.RuneError // Data.Text.pack replaces surrogates
		}
		k := utf8.EncodeRune(enc[:], r)
		if p.emit {
			p.out = append(p.out, enc[:k]...)
			p.limitOut()
		}
		n += int64(k)
	}
	p.tmp[0] = n
	if !p.compound(start, depth, est, layout.U8, p.tmp[:1]) {
		return false
	}
	p.i = i + 1
	p.tokEnd = p.i
	p.i = p.skip(p.i)
	return true
}

var asciiNames = []string{"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR",
	"SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
	"SP", "DEL"}

// escape decodes a Haskell character escape at i (a backslash), as
// readLitChar does on at most 10 characters of lookahead.
func (p *textParser) escape(i int) (rune, int, bool) {
	lim := i + 10
	if lim > p.end {
		lim = p.end
	}
	if i+1 >= lim {
		return 0, i, p.unexpected(i+1, "an escape")
	}
	c := p.d[i+1]
	switch c {
	case 'a':
		return 7, i + 2, true
	case 'b':
		return 8, i + 2, true
	case 'f':
		return 12, i + 2, true
	case 'n':
		return 10, i + 2, true
	case 'r':
		return 13, i + 2, true
	case 't':
		return 9, i + 2, true
	case 'v':
		return 11, i + 2, true
	case '\\', '"', '\'':
		return rune(c), i + 2, true
	case '^':
		if i+2 < lim && p.d[i+2] >= '@' && p.d[i+2] <= '_' {
			return rune(p.d[i+2] - '@'), i + 3, true
		}
		return 0, i, p.fail(i, ErrSyntax, "bad control escape")
	}
	base, j := 10, i+1
	switch c {
	case 'o':
		base, j = 8, i+2
	case 'x':
		base, j = 16, i+2
	}
	if c >= '0' && c <= '9' || c == 'o' || c == 'x' {
		v, k := 0, j
		for ; k < lim; k++ {
			dv := digitVal(p.d[k])
			if dv >= base {
				break
			}
			v = v*base + dv
		}
		if k == j || v > 0x10ffff {
			return 0, i, p.fail(i, ErrSyntax, "bad numeric escape")
		}
		return rune(v), k, true
	}
	best, bestLen := -1, 0
	for code, name := range asciiNames {
		if len(name) > bestLen && i+1+len(name) <= lim && string(p.d[i+1:i+1+len(name)]) == name {
			best, bestLen = code, len(name)
		}
	}
	if best < 0 {
		return 0, i, p.fail(i, ErrSyntax, "bad escape")
	}
	if best == 33 { // DEL
		best = 127
	} else if best == 32 { // SP
		best = ' '
	}
	return rune(best), i + 1 + bestLen, true
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

// digits scans a digit run of the given base with underscores after the
// first digit, accumulating modulo 2^64; over reports a true value ≥ 2^64.
func (p *textParser) digits(i, base int) (j int, v uint64, over bool, ok bool) {
	d, end := p.d, p.end
	if i >= end || digitVal(d[i]) >= base {
		return i, 0, false, false
	}
	if base == 10 {
		for ; i < end; i++ {
			c := d[i]
			if c-'0' <= 9 {
				hi, lo := mulAdd(v, 10, uint64(c-'0'))
				over = over || hi
				v = lo
			} else if c != '_' {
				break
			}
		}
		return i, v, over, true
	}
	for ; i < end; i++ {
		c := d[i]
		if dv := digitVal(c); dv < base {
			hi, lo := mulAdd(v, uint64(base), uint64(dv))
			over = over || hi
			v = lo
		} else if c != '_' {
			break
		}
	}
	return i, v, over, true
}

func mulAdd(v, m, a uint64) (bool, uint64) {
	if v <= (math.MaxUint64-a)/m {
		return false, v*m + a
	}
	return true, v*m + a
}

// intLiteral scans sign? ("0b" bdigits | "0x" xdigits | ddigits).
func (p *textParser) intLiteral(i int) (j int, mag uint64, over, neg, ok bool) {
	start := i
	if i < p.end && (p.d[i] == '-' || p.d[i] == '+') {
		neg = p.d[i] == '-'
		i++
	}
	base := 10
	if p.hasPrefix(i, "0b") {
		base, i = 2, i+2
	} else if p.hasPrefix(i, "0x") {
		base, i = 16, i+2
	}
	j, mag, over, ok = p.digits(i, base)
	if !ok {
		return start, 0, false, false, p.unexpected(i, "digits")
	}
	return j, mag, over, neg, true
}

// intBits wraps a literal to type t as Haskell's fromInteger does, or
// reports it out of range under StrictIntegers.
func (p *textParser) intBits(start int, t layout.Type, mag uint64, over, neg bool) (uint64, bool) {
	v := mag
	if neg {
		v = -mag
	}
	if p.strict {
		bitsN := uint(t.Size() * 8)
		var okr bool
		switch {
		case over:
		case t.IsUnsigned():
			okr = !neg && (bitsN == 64 || mag < 1<<bitsN) || neg && mag == 0
		case neg:
			okr = mag <= 1<<(bitsN-1)
		default:
			okr = mag < 1<<(bitsN-1)
		}
		if !okr {
			return 0, p.fail(start, ErrRange, "integer literal out of range for %v", t)
		}
	}
	if t.Size() < 8 {
		v &= 1<<(uint(t.Size())*8) - 1
	}
	return v, true
}

var floatFollow = []string{"f16", "f32", "f64", ".", "e"}

var intSuffixes = []layout.Type{layout.I8, layout.I16, layout.I32, layout.I64, layout.U8, layout.U16, layout.U32, layout.U64}

// prim parses a primitive literal with futhark-data's default rules:
// integer, then float, then true/false.
func (p *textParser) prim() (layout.Type, uint64, bool) {
	start := p.i
	// Integer constant (under try: any failure falls through).
	if j, mag, over, neg, ok := p.intLiteralQuiet(start); ok {
		follow := false
		for _, s := range floatFollow {
			if p.hasPrefix(j, s) {
				follow = true
				break
			}
		}
		if !follow {
			t := layout.I32
			for _, st := range intSuffixes {
				name := st.String()
				if p.hasPrefix(j, name) {
					t, j = st, j+len(name)
					break
				}
			}
			bits, ok := p.intBits(start, t, mag, over, neg)
			if !ok {
				return 0, 0, false
			}
			p.i = j
			return t, bits, true
		}
	}
	if t, bits, j, ok := p.special(start, layout.Invalid); ok {
		p.i = j
		return t, bits, true
	}
	if c := p.d[start]; c == '-' || c == '+' || c-'0' <= 9 {
		x, j, ok := p.number(start)
		if !ok {
			return 0, 0, false
		}
		t := layout.F64
		for _, ft := range []layout.Type{layout.F16, layout.F32, layout.F64} {
			if p.hasPrefix(j, ft.String()) {
				t, j = ft, j+3
				break
			}
		}
		p.i = j
		return t, floatBits(t, x), true
	}
	if p.hasPrefix(start, "true") {
		p.i = start + 4
		return layout.Bool, 1, true
	}
	if p.hasPrefix(start, "false") {
		p.i = start + 5
		return layout.Bool, 0, true
	}
	return 0, 0, p.unexpected(start, "a value")
}

// intLiteralQuiet is intLiteral without recording an error.
func (p *textParser) intLiteralQuiet(i int) (int, uint64, bool, bool, bool) {
	saved := p.errMsg
	j, mag, over, neg, ok := p.intLiteral(i)
	if !ok && saved == "" {
		p.errMsg, p.errSen = "", nil
	}
	return j, mag, over, neg, ok
}

var specials = []struct {
	s    string
	t    layout.Type
	bits uint64
}{
	{"f16.nan", layout.F16, 0xfe00}, {"f32.nan", layout.F32, 0xffc00000}, {"f64.nan", layout.F64, 0xfff8000000000000},
	{"f16.inf", layout.F16, 0x7c00}, {"f32.inf", layout.F32, 0x7f800000}, {"f64.inf", layout.F64, 0x7ff0000000000000},
	{"-f16.inf", layout.F16, 0xfc00}, {"-f32.inf", layout.F32, 0xff800000}, {"-f64.inf", layout.F64, 0xfff0000000000000},
}

var legacySpecials = []struct {
	s    string
	t    layout.Type
	bits uint64
}{
	{"-nanf32", layout.F32, 0xffc00000}, {"-nanf64", layout.F64, 0xfff8000000000000},
	{"nanf32", layout.F32, 0xffc00000}, {"nanf64", layout.F64, 0xfff8000000000000},
	{"-inff32", layout.F32, 0xff800000}, {"-inff64", layout.F64, 0xfff0000000000000},
	{"inff32", layout.F32, 0x7f800000}, {"inff64", layout.F64, 0x7ff0000000000000},
}

// special matches f32.nan and friends; want restricts the type unless
// Invalid.
func (p *textParser) special(i int, want layout.Type) (layout.Type, uint64, int, bool) {
	if i >= p.end {
		return 0, 0, i, false
	}
	switch c := p.d[i]; c {
	case 'f', 'n', 'i':
	case '-':
		if i+1 >= p.end || p.d[i+1]-'0' <= 9 {
			return 0, 0, i, false
		}
	default:
		return 0, 0, i, false
	}
	for _, s := range specials {
		if (want == layout.Invalid || want == s.t) && p.hasPrefix(i, s.s) {
			return s.t, s.bits, i + len(s.s), true
		}
	}
	if p.legacy {
		for _, s := range legacySpecials {
			if (want == layout.Invalid || want == s.t) && p.hasPrefix(i, s.s) {
				return s.t, s.bits, i + len(s.s), true
			}
		}
	}
	return 0, 0, i, false
}

// floatBits converts a double to the bits of type t as futhark-data does:
// f32 by double2Float, f16 through f32 with zero losing its sign (toRational).
func floatBits(t layout.Type, x float64) uint64 {
	switch t {
	case layout.F64:
		return math.Float64bits(x)
	case layout.F32:
		return uint64(math.Float32bits(float32(x)))
	case layout.F16:
		if x == 0 {
			return 0
		}
		return uint64(layout.Float16From(float32(x)))
	}
	// Integer types never reach here.
	return 0
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number parses sign? ddigits ("." ddigits)? (("e"|"E") sign? ddigits)?
// and rounds it correctly to a double (Data.Scientific.toRealFloat). The
// exponent wraps as a 64-bit Int, as in Haskell.
func (p *textParser) number(i int) (float64, int, bool) {
	d, end := p.d, p.end
	neg := false
	if i < end && (d[i] == '-' || d[i] == '+') {
		neg = d[i] == '-'
		i++
	}
	if i >= end || d[i]-'0' > 9 {
		return 0, i, p.unexpected(i, "digits")
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
	intEnd := i
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
		j := i + 1
		eneg := false
		if j < end && (d[j] == '-' || d[j] == '+') {
			eneg = d[j] == '-'
			j++
		}
		if j < end && d[j]-'0' <= 9 {
			var ev int64
			for ; j < end; j++ {
				c := d[j]
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
			i = j
		}
	}
	_ = intEnd
	e10 := exp - frac
	var x float64
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
		x = p.slowFloat(startDigits, fracStart, i, exp)
	}
	if neg {
		x = -x
	}
	return x, i, true
}

// slowFloat converts the literal digits in d[from:to] exactly, through
// strconv on a normalised copy: all digits, then the total exponent.
func (p *textParser) slowFloat(from, fracStart, to int, exp int64) float64 {
	buf := p.num[:0]
	var frac int64
	seenE := false
	for k := from; k < to; k++ {
		c := p.d[k]
		if c == 'e' || c == 'E' {
			seenE = true
		}
		if seenE {
			break
		}
		if c-'0' <= 9 {
			buf = append(buf, c)
			if fracStart >= 0 && k >= fracStart {
				frac++
			}
		}
	}
	e10 := exp - frac
	buf = append(buf, 'e')
	buf = strconv.AppendInt(buf, e10, 10)
	p.num = buf
	x, _ := strconv.ParseFloat(string(buf), 64) // range errors give ±Inf or 0, as wanted
	return x
}

// typedNumber parses an element with the parser for type t.
func (p *textParser) typedNumber(t layout.Type) (uint64, bool) {
	i := p.i
	switch {
	case t == layout.Bool:
		if p.hasPrefix(i, "true") {
			p.i = i + 4
			return 1, true
		}
		if p.hasPrefix(i, "false") {
			p.i = i + 5
			return 0, true
		}
		return 0, p.unexpected(i, "true or false")
	case t.IsInteger():
		j, mag, over, neg, ok := p.fastInt(i)
		if !ok {
			return 0, false
		}
		var bits uint64
		if !over && !p.strict && mag <= 1<<31 {
			// Common case: no range check to make; wrap to the type.
			bits = mag
			if neg {
				bits = -mag
			}
			if sz := t.Size(); sz < 8 {
				bits &= 1<<(uint(sz)*8) - 1
			}
		} else if bits, ok = p.intBits(i, t, mag, over, neg); !ok {
			return 0, false
		}
		if j < p.end && (p.d[j] == 'i' || p.d[j] == 'u') {
			if name := t.String(); p.hasPrefix(j, name) {
				j += len(name)
			}
		}
		p.i = j
		return bits, true
	}
	if x, j, ok := p.fastFloat(i); ok {
		if j+3 <= p.end && p.d[j] == 'f' && string(p.d[j+1:j+3]) == t.String()[1:] {
			j += 3
		}
		p.i = j
		return floatBits(t, x), true
	}
	if _, bits, j, ok := p.special(i, t); ok {
		p.i = j
		return bits, true
	}
	x, j, ok := p.number(i)
	if !ok {
		return 0, false
	}
	if name := t.String(); p.hasPrefix(j, name) {
		j += len(name)
	}
	p.i = j
	return floatBits(t, x), true
}

// fastInt is intLiteral with a tight loop for plain decimal digits.
func (p *textParser) fastInt(i int) (int, uint64, bool, bool, bool) {
	d, end := p.d, p.end
	j := i
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
	return p.intLiteral(i)
}

// fastFloat parses the common float forms -?d+(.d+)?(e[+-]?d+)? with at
// most 19 significant digits and a small exponent, exactly (Clinger's fast
// path). Anything else (underscores, long mantissas, large exponents)
// reports !ok and goes to number.
func (p *textParser) fastFloat(i int) (float64, int, bool) {
	d, end := p.d, p.end
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
