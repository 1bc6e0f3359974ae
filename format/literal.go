package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/layout"
)

// ParseLiteral parses one element of type t written as a Futhark literal —
// decimal or 0x… hex integers, floats with inf and nan (also f32.inf,
// -f64.inf, f32.nan), true and false, an optional matching type suffix
// such as 1.5f32 — and returns its bytes in byte order bo (bool as 0 or
// 1). Julia Chars take a code point in decimal or one character. It is what
// Setter.SetText implementations use for layout element types.
func ParseLiteral(t layout.Type, s string, bo binary.ByteOrder) ([]byte, error) {
	v := strings.TrimSpace(s)
	bad := func(err error) ([]byte, error) {
		return nil, fmt.Errorf("value %q is not a valid %s: %v", s, t, err)
	}
	if t != layout.JuliaChar && t != layout.Bool {
		v = strings.TrimSuffix(v, t.String())
	}
	b := make([]byte, t.Size())
	switch {
	case t == layout.Bool:
		if v != "true" && v != "false" {
			return bad(errors.New("want true or false"))
		}
		if v == "true" {
			b[0] = 1
		}
	case t == layout.I128 || t == layout.U128:
		x, ok := new(big.Int).SetString(v, 0)
		if !ok {
			return bad(errors.New("not an integer"))
		}
		var lo, hi uint64
		if t == layout.I128 {
			y, err := layout.Int128FromBig(x)
			if err != nil {
				return bad(err)
			}
			lo, hi = y.Lo, uint64(y.Hi)
		} else {
			y, err := layout.Uint128FromBig(x)
			if err != nil {
				return bad(err)
			}
			lo, hi = y.Lo, y.Hi
		}
		if bo == binary.BigEndian {
			bo.PutUint64(b, hi)
			bo.PutUint64(b[8:], lo)
		} else {
			bo.PutUint64(b, lo)
			bo.PutUint64(b[8:], hi)
		}
	case t == layout.JuliaChar:
		var r rune
		if n, err := strconv.ParseUint(v, 10, 32); err == nil {
			r = rune(n)
		} else if utf8.RuneCountInString(v) == 1 {
			r, _ = utf8.DecodeRuneInString(v)
		} else {
			return bad(errors.New("want a code point in decimal or one character"))
		}
		c, err := layout.CharFrom(r)
		if err != nil {
			return bad(err)
		}
		bo.PutUint32(b, uint32(c))
	case t.IsSigned():
		x, err := strconv.ParseInt(v, 0, t.Size()*8)
		if err != nil {
			return bad(err)
		}
		putUint(bo, b, uint64(x))
	case t.IsUnsigned():
		x, err := strconv.ParseUint(v, 0, t.Size()*8)
		if err != nil {
			return bad(err)
		}
		putUint(bo, b, x)
	case t == layout.F16:
		x, err := parseFloat(v, t, 64)
		if err != nil {
			return bad(err)
		}
		bo.PutUint16(b, uint16(layout.Float16FromFloat64(x)))
	case t == layout.F32:
		x, err := parseFloat(v, t, 32)
		if err != nil {
			return bad(err)
		}
		bo.PutUint32(b, math.Float32bits(float32(x)))
	case t == layout.F64:
		x, err := parseFloat(v, t, 64)
		if err != nil {
			return bad(err)
		}
		bo.PutUint64(b, math.Float64bits(x))
	default:
		return nil, fmt.Errorf("cannot parse elements of type %s: %w", t, errors.ErrUnsupported)
	}
	return b, nil
}

// parseFloat parses a float, also in Futhark's spellings of the specials
// (f32.nan, -f64.inf).
func parseFloat(v string, t layout.Type, bits int) (float64, error) {
	switch v {
	case t.String() + ".nan":
		return math.NaN(), nil
	case t.String() + ".inf":
		return math.Inf(1), nil
	case "-" + t.String() + ".inf":
		return math.Inf(-1), nil
	}
	x, err := strconv.ParseFloat(v, bits)
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return x, nil // ±Inf or 0, as the type rounds it
	}
	return x, err
}

func putUint(bo binary.ByteOrder, b []byte, x uint64) {
	switch len(b) {
	case 1:
		b[0] = byte(x)
	case 2:
		bo.PutUint16(b, uint16(x))
	case 4:
		bo.PutUint32(b, uint32(x))
	default:
		bo.PutUint64(b, x)
	}
}
