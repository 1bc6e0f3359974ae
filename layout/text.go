package layout

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// AppendText appends the canonical text of one element of type t, given
// as its bytes in the host's byte order, as a Futhark literal with its
// type suffix: what Futhark's tools print (futhark-data's valueText).
//
//   - integers in decimal with their suffix: -128i8, 255u8, 7i32;
//   - bool as true or false (any nonzero byte is true);
//   - floats by Haskell's show with their suffix (see FormatF64): 1.0f32,
//     1.0e-2f64, 9.9975586e-2f16; any NaN as tT.nan, infinities as tT.inf
//     and -tT.inf;
//   - i128 and u128, which Futhark lacks, in decimal with an i128 or u128
//     suffix;
//   - char (Julia's Char) as its code point with a u32 suffix (97u32 for
//     'a'), or its raw 32-bit value where it encodes no code point;
//   - c64 and c128 as the two-element array of their real and imaginary
//     parts, [1.5f32, -2.0f32]: the form in which Futhark reads a complex
//     number, as an array with a last dimension of 2.
//
// Text parsed back with ParseText gives the same bytes, except that NaN
// payloads are not kept.
func AppendText(dst []byte, t Type, b []byte) []byte {
	switch t {
	case I8:
		return append(strconv.AppendInt(dst, int64(int8(b[0])), 10), 'i', '8')
	case U8:
		return append(strconv.AppendUint(dst, uint64(b[0]), 10), 'u', '8')
	case I16:
		return append(strconv.AppendInt(dst, int64(int16(binary.NativeEndian.Uint16(b))), 10), "i16"...)
	case U16:
		return append(strconv.AppendUint(dst, uint64(binary.NativeEndian.Uint16(b)), 10), "u16"...)
	case I32:
		return append(appendI32(dst, int32(binary.NativeEndian.Uint32(b))), "i32"...)
	case U32:
		return append(strconv.AppendUint(dst, uint64(binary.NativeEndian.Uint32(b)), 10), "u32"...)
	case I64:
		return append(strconv.AppendInt(dst, int64(binary.NativeEndian.Uint64(b)), 10), "i64"...)
	case U64:
		return append(strconv.AppendUint(dst, binary.NativeEndian.Uint64(b), 10), "u64"...)
	case Bool:
		if b[0] != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case F16:
		h := Float16(binary.NativeEndian.Uint16(b))
		switch {
		case h.IsNaN():
			return append(dst, "f16.nan"...)
		case h == 0x7c00:
			return append(dst, "f16.inf"...)
		case h == 0xfc00:
			return append(dst, "-f16.inf"...)
		}
		return append(appendShow(dst, uint64(math.Float32bits(h.Float32())), 32), "f16"...)
	case F32:
		return appendFloatText(dst, uint64(binary.NativeEndian.Uint32(b)), 32, "f32")
	case F64:
		return appendFloatText(dst, binary.NativeEndian.Uint64(b), 64, "f64")
	case I128, U128:
		lo, hi := words128(b)
		if t == I128 {
			return append(append(dst, Int128{Lo: lo, Hi: int64(hi)}.String()...), "i128"...)
		}
		return append(append(dst, Uint128{Lo: lo, Hi: hi}.String()...), "u128"...)
	case JuliaChar:
		c := Char(binary.NativeEndian.Uint32(b))
		v := uint64(c)
		if r, err := c.Rune(); err == nil {
			v = uint64(r)
		}
		return append(strconv.AppendUint(dst, v, 10), "u32"...)
	case C64, C128:
		p := t.Part()
		n := p.Size()
		dst = AppendText(append(dst, '['), p, b[:n])
		return append(AppendText(append(dst, ',', ' '), p, b[n:2*n]), ']')
	}
	return append(dst, "<invalid>"...)
}

func appendFloatText(dst []byte, v uint64, size int, suffix string) []byte {
	expMask, fracMask := uint64(0x7ff0000000000000), uint64(1)<<52-1
	if size == 32 {
		expMask, fracMask = 0x7f800000, 1<<23-1
	}
	if v&expMask == expMask {
		switch {
		case v&fracMask != 0:
			return append(append(dst, suffix...), ".nan"...)
		case v>>(size-1) == 0:
			return append(append(dst, suffix...), ".inf"...)
		}
		return append(append(append(dst, '-'), suffix...), ".inf"...)
	}
	return append(appendShow(dst, v, size), suffix...)
}

// appendI32 is strconv.AppendInt specialised for the common i32 element.
func appendI32(b []byte, v int32) []byte {
	u := uint32(v)
	if v < 0 {
		b = append(b, '-')
		u = uint32(-int64(v))
	}
	if u < 10 {
		return append(b, byte('0'+u))
	}
	var tmp [10]byte
	i := len(tmp)
	for u >= 10 {
		i--
		q := u / 10
		tmp[i] = byte('0' + u - q*10)
		u = q
	}
	i--
	tmp[i] = byte('0' + u)
	return append(b, tmp[i:]...)
}

// words128 reads a host-order 128-bit integer: on a big-endian host the
// whole 16 bytes are big-endian (high word first), as a byte swap of the
// little-endian form makes them.
func words128(b []byte) (lo, hi uint64) {
	if hostLittle {
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	}
	return binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b)
}

func putWords128(b []byte, lo, hi uint64) {
	if hostLittle {
		binary.LittleEndian.PutUint64(b, lo)
		binary.LittleEndian.PutUint64(b[8:], hi)
		return
	}
	binary.BigEndian.PutUint64(b, hi)
	binary.BigEndian.PutUint64(b[8:], lo)
}

// ParseText parses s, one element of type t written as a Futhark literal,
// and returns its bytes in the host's byte order (bool as 0 or 1). It is
// how a value typed by a person becomes an element, whatever the file's
// format. The syntax is Futhark's, not Go's (see ScanText): 010 and 010i32
// are ten, 0x1f is hex, a type suffix is optional but must match t, bool
// is true or false. Float types also take inf, -inf and nan (the NaN of
// tT.nan). Unlike Futhark's readers, which wrap, ParseText refuses a value
// that its type cannot hold: an integer out of range, a float literal that
// overflows its type (1e400, or 1e39 as an f32: infinity only when spelt
// inf) or a nonzero one that rounds to zero in it (1e-8 as an f16).
//
// Types Futhark lacks: i128 and u128 take the integer syntax with an
// optional i128 or u128 suffix; char takes a code point (97, 0x61, 97u32)
// or a single character that is not a digit; c64 and c128 take the array
// AppendText prints, [re, im], or a real literal alone (imaginary part
// zero). Surrounding white space is ignored.
//
// Errors wrap ErrSyntax or ErrRange and name the input.
func ParseText(t Type, s string) ([]byte, error) {
	v := strings.TrimSpace(s)
	out := make([]byte, t.Size())
	var err error
	switch {
	case isPrim(t):
		err = parsePrim(out, t, v)
	case t == I128 || t == U128:
		err = parse128(out, t, v)
	case t == JuliaChar:
		err = parseChar(out, v)
	case t.IsComplex():
		err = parseComplex(out, t, v)
	default:
		return nil, fmt.Errorf("layout: cannot parse elements of type %v", t)
	}
	if err != nil {
		return nil, fmt.Errorf("layout: %q is not a %v literal: %w", s, t, err)
	}
	return out, nil
}

// textErr describes a scanner error in terms of the input v.
func textErr(v string, err error) error {
	te, ok := err.(*TextError)
	if !ok {
		return err
	}
	if te.Msg != "" {
		// One literal: where it starts goes without saying.
		if te.Off == 0 {
			return &rangeError{msg: te.Msg, err: te.Err}
		}
		return &rangeError{msg: fmt.Sprintf("%s at byte %d", te.Msg, te.Off), err: te.Err}
	}
	if te.Off >= len(v) {
		return fmt.Errorf("it ends where %s should follow: %w", te.Want, te.Err)
	}
	return fmt.Errorf("unexpected %q at byte %d, expected %s: %w", v[te.Off], te.Off, te.Want, te.Err)
}

// rangeError is a literal its type cannot hold: it says why, and wraps
// ErrRange without repeating its text.
type rangeError struct {
	msg string
	err error
}

func (e *rangeError) Error() string { return e.msg }
func (e *rangeError) Unwrap() error { return e.err }

// trailing reports text left after a literal.
func trailing(v string, n int) error {
	return fmt.Errorf("unexpected %q after the literal: %w", v[n:], ErrSyntax)
}

func parsePrim(out []byte, t Type, v string) error {
	if t.IsFloat() {
		switch v {
		case "inf", "-inf", "nan":
			name := v
			if v[0] == '-' {
				name = "-" + t.String() + ".inf"
			} else {
				name = t.String() + "." + v
			}
			v = name
		}
	}
	_, bits, n, err := ScanText([]byte(v), t, 0)
	if err != nil {
		return textErr(v, err)
	}
	if n != len(v) {
		return trailing(v, n)
	}
	PutUint(out, binary.NativeEndian, bits)
	return nil
}

func parse128(out []byte, t Type, v string) error {
	s := scanner{b: []byte(v)}
	neg, base, from, to, ok := s.intSpan(0)
	if !ok {
		return textErr(v, s.error())
	}
	digits := strings.ReplaceAll(v[from:to], "_", "")
	x, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return fmt.Errorf("bad digits %q: %w", digits, ErrSyntax)
	}
	if neg {
		x.Neg(x)
	}
	n := to
	if strings.HasPrefix(v[n:], t.String()) {
		n += len(t.String())
	}
	if n != len(v) {
		return trailing(v, n)
	}
	if t == I128 {
		y, err := Int128FromBig(x)
		if err != nil {
			return fmt.Errorf("integer literal out of range for i128: %w", ErrRange)
		}
		putWords128(out, y.Lo, uint64(y.Hi))
		return nil
	}
	y, err := Uint128FromBig(x)
	if err != nil {
		return fmt.Errorf("integer literal out of range for u128: %w", ErrRange)
	}
	putWords128(out, y.Lo, y.Hi)
	return nil
}

func parseChar(out []byte, v string) error {
	var r rune
	if c, size := utf8.DecodeRuneInString(v); size == len(v) && size > 0 && (c < '0' || c > '9') && c != utf8.RuneError {
		r = c
	} else {
		var cp [4]byte
		if err := parsePrim(cp[:], U32, v); err != nil {
			return err
		}
		r = rune(binary.NativeEndian.Uint32(cp[:]))
	}
	c, err := CharFrom(r)
	if err != nil {
		return fmt.Errorf("%v: %w", err, ErrRange)
	}
	binary.NativeEndian.PutUint32(out, uint32(c))
	return nil
}

func parseComplex(out []byte, t Type, v string) error {
	p := t.Part()
	n := p.Size()
	if !strings.HasPrefix(v, "[") {
		return parsePrim(out[:n], p, v) // imaginary part zero
	}
	inner, ok := strings.CutSuffix(v[1:], "]")
	re, im, ok2 := strings.Cut(inner, ",")
	if !ok || !ok2 {
		return fmt.Errorf("want [re, im]: %w", ErrSyntax)
	}
	if err := parsePrim(out[:n], p, strings.TrimSpace(re)); err != nil {
		return err
	}
	return parsePrim(out[n:], p, strings.TrimSpace(im))
}
