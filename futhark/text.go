package futhark

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
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
	flags  layout.ScanFlags
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
}

// scanFlags are the literal scanner's flags for the read options:
// futhark-data wraps integers (unless StrictIntegers) and rounds floats.
func scanFlags(o Options) layout.ScanFlags {
	f := layout.ScanRound
	if !o.StrictIntegers {
		f |= layout.ScanWrap
	}
	if o.Lenient {
		f |= layout.ScanLegacy
	}
	return f
}

// scanErr records an error of the literal scanner, which read from at.
func (p *textParser) scanErr(at int, err error) bool {
	var te *layout.TextError
	if !errors.As(err, &te) {
		return p.fail(at, layout.ErrSyntax, "%v", err)
	}
	if te.Err == layout.ErrRange {
		return p.fail(at+te.Off, layout.ErrRange, "%s", te.Msg)
	}
	return p.unexpected(at+te.Off, te.Want)
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
		return p.fail(i, mmapfile.ErrTruncated, "unexpected end of input, expected %s", what)
	case i >= p.end:
		return p.fail(i, layout.ErrSyntax, "byte 0x%02x cannot appear in text, expected %s", p.d[i], what)
	}
	return p.fail(i, layout.ErrSyntax, "unexpected %q, expected %s", p.d[i], what)
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
	t, bits, n, err := layout.ScanText(p.d[p.i:p.end], layout.Invalid, p.flags)
	if err != nil {
		return false, p.scanErr(start, err)
	}
	p.i += n
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
				return p.fail(p.i, layout.ErrSyntax, "empty array literal (use empty(...))")
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
	_, bits, n, err := layout.ScanText(p.d[p.i:p.end], p.typ, p.flags)
	if err != nil {
		return p.scanErr(p.i, err)
	}
	p.i += n
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
		mag, neg, over, k, err := layout.ScanInt(p.d[i+1 : p.end])
		if err != nil {
			return p.scanErr(i+1, err)
		}
		j := i + 1 + k
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
		return p.fail(start, layout.ErrSyntax, "expected at least one empty dimension")
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
		return 0, i, p.fail(i, layout.ErrSyntax, "bad control escape")
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
			dv := layout.DigitValue(p.d[k])
			if dv >= base {
				break
			}
			v = v*base + dv
		}
		if k == j || v > 0x10ffff {
			return 0, i, p.fail(i, layout.ErrSyntax, "bad numeric escape")
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
		return 0, i, p.fail(i, layout.ErrSyntax, "bad escape")
	}
	if best == 33 { // DEL
		best = 127
	} else if best == 32 { // SP
		best = ' '
	}
	return rune(best), i + 1 + bestLen, true
}
