package layout

import (
	"errors"
	"fmt"
)

// Char is Julia's Char: a 32-bit value holding the character's UTF-8 bytes
// left-justified and big-endian, low bytes zero ('a' is 0x61000000, 'ζ' is
// 0xCEB60000). Julia stores invalid Chars too, so Char keeps the raw value
// and every one round-trips; [Char.Rune] and [CharFrom] convert.
type Char uint32

// ErrInvalidChar reports a Char that is not the encoding of a code point.
var ErrInvalidChar = errors.New("invalid Char")

// Rune decodes c as Julia's UInt32(::Char) does. Values below 0x80000000
// are ASCII (the low bytes are ignored, as Julia does). Malformed
// encodings — a lone continuation byte, five or more leading ones, bad
// continuation bytes, an overlong form — give ErrInvalidChar. Surrogates and
// code points up to 0x1FFFFF are returned as Julia returns them.
func (c Char) Rune() (rune, error) {
	u := uint32(c)
	if u < 0x80000000 {
		return rune(u >> 24), nil
	}
	lead := byte(u >> 24)
	n := 0 // leading ones
	for b := lead; b&0x80 != 0; b <<= 1 {
		n++
	}
	bad := func() (rune, error) { return 0, fmt.Errorf("%w: 0x%08X", ErrInvalidChar, u) }
	if n == 1 || n > 4 {
		return bad()
	}
	// The continuation bytes must be 10xxxxxx and everything after the
	// encoding must be zero.
	for i := 1; i < 4; i++ {
		b := byte(u >> (24 - 8*i))
		if i < n {
			if b&0xC0 != 0x80 {
				return bad()
			}
		} else if b != 0 {
			return bad()
		}
	}
	// Overlong forms: C0/C1, E0 80–9F, F0 80–8F.
	if lead == 0xC0 || lead == 0xC1 || (lead == 0xE0 && byte(u>>16) < 0xA0) || (lead == 0xF0 && byte(u>>16) < 0x90) {
		return bad()
	}
	var r uint32
	switch n {
	case 2:
		r = uint32(lead&0x1F)<<6 | (u>>16)&0x3F
	case 3:
		r = uint32(lead&0x0F)<<12 | ((u>>16)&0x3F)<<6 | (u>>8)&0x3F
	case 4:
		r = uint32(lead&0x07)<<18 | ((u>>16)&0x3F)<<12 | ((u>>8)&0x3F)<<6 | u&0x3F
	}
	return rune(r), nil
}

// CharFrom encodes r as Julia's Char(::UInt32) does: below 0x80 it is r<<24;
// below 0x200000 the UTF-8 bit pattern is packed into the top bytes, with
// surrogates and values above 0x10FFFF encoded as they are (unlike
// utf8.EncodeRune, which would give U+FFFD). Anything else is an error.
func CharFrom(r rune) (Char, error) {
	u := uint32(r)
	switch {
	case r < 0:
		return 0, fmt.Errorf("%w: code point %d", ErrInvalidChar, r)
	case u < 0x80:
		return Char(u << 24), nil
	case u < 0x800:
		return Char((0xC0|u>>6)<<24 | (0x80|u&0x3F)<<16), nil
	case u < 0x10000:
		return Char((0xE0|u>>12)<<24 | (0x80|(u>>6)&0x3F)<<16 | (0x80|u&0x3F)<<8), nil
	case u < 0x200000:
		return Char((0xF0|u>>18)<<24 | (0x80|(u>>12)&0x3F)<<16 | (0x80|(u>>6)&0x3F)<<8 | (0x80 | u&0x3F)), nil
	}
	return 0, fmt.Errorf("%w: code point 0x%X is above 0x1FFFFF", ErrInvalidChar, u)
}
