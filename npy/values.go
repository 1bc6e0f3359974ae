package npy

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// The literals SetText takes: Futhark's for numbers (decimal, 0x… hex, a
// type suffix, inf, nan, f64.nan), Python's complex literals.

func parseInt(v string, bits int) (int64, error) {
	return strconv.ParseInt(v, 0, bits)
}

func parseUint(v string, bits int) (uint64, error) {
	return strconv.ParseUint(v, 0, bits)
}

// parseFloat parses a float of type t, also in Futhark's spellings of
// the specials (f32.nan, -f64.inf); values beyond the type's range round
// to ±inf as the type would.
func parseFloat(v string, t layout.Type) (float64, error) {
	neg := strings.HasPrefix(v, "-")
	switch strings.TrimPrefix(v, "-") {
	case t.String() + ".nan":
		return math.NaN(), nil
	case t.String() + ".inf":
		if neg {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	bits := 64
	if t == layout.F32 {
		bits = 32
	}
	x, err := strconv.ParseFloat(v, bits)
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return x, nil
	}
	return x, err
}

// parseComplex parses "1.5", "2j", "1+2j", "(1-2j)" (Python's spelling)
// or Go's with i.
func parseComplex(v string, part layout.Type) (complex128, error) {
	s := strings.TrimSuffix(strings.TrimPrefix(v, "("), ")")
	if strings.HasSuffix(s, "j") {
		s = strings.TrimSuffix(s, "j") + "i"
	}
	bits := 128
	if part == layout.F32 {
		bits = 64
	}
	c, err := strconv.ParseComplex(s, bits)
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return c, nil
	}
	return c, err
}
