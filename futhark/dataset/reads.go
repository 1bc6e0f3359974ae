package dataset

import (
	"math"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// readsInt reads an integer as Haskell's `reads :: Int` with a whole-input
// match: leading spaces, parentheses (spaces allowed inside), '-',
// decimal, 0x/0o; no '+', nothing after. The value wraps modulo 2^64.
func readsInt(s string) (uint64, bool) {
	v, rest, ok := readsIntP(s)
	return v, ok && rest == ""
}

const hsSpace = " \t\n\r\f\v"

func readsIntP(s string) (uint64, string, bool) {
	s = strings.TrimLeft(s, hsSpace)
	if strings.HasPrefix(s, "(") {
		v, rest, ok := readsIntP(s[1:])
		rest = strings.TrimLeft(rest, hsSpace)
		if !ok || !strings.HasPrefix(rest, ")") {
			return 0, s, false
		}
		return v, rest[1:], true
	}
	neg := false
	if strings.HasPrefix(s, "-") {
		neg = true
		s = strings.TrimLeft(s[1:], hsSpace)
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") && layout.DigitValue(s[2]) < 16:
		base, s = 16, s[2:]
	case len(s) > 2 && (s[:2] == "0o" || s[:2] == "0O") && layout.DigitValue(s[2]) < 8:
		base, s = 8, s[2:]
	}
	i := 0
	var v uint64
	for ; i < len(s); i++ {
		d := uint64(layout.DigitValue(s[i]))
		if d >= base {
			break
		}
		v = v*base + d
	}
	if i == 0 {
		return 0, s, false
	}
	if neg {
		v = -v
	}
	return v, s[i:], true
}

// readsFloat reads a finite float as Haskell's `reads :: Double`:
// leading spaces, parentheses, '-', digits with an optional fraction and
// exponent. Infinity and NaN are refused.
func readsFloat(s string) (float64, bool) {
	s = strings.TrimLeft(s, hsSpace)
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		return readsFloat(strings.TrimRight(s[1:len(s)-1], hsSpace))
	}
	neg := false
	if strings.HasPrefix(s, "-") {
		neg = true
		s = strings.TrimLeft(s[1:], " \t\n\r\f\v")
	}
	i := 0
	digits := func() bool {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if !digits() {
		if v, ok := readsInt(s); ok && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0o")) {
			x := float64(v)
			if neg {
				x = -x
			}
			return x, true
		}
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	if i != len(s) {
		if v, ok := readsInt(s); ok {
			x := float64(v)
			if neg {
				x = -x
			}
			return x, true
		}
		return 0, false
	}
	x, _ := strconv.ParseFloat(s, 64) // overflow gives ±Inf, refused below
	if neg {
		x = -x
	}
	return x, !math.IsInf(x, 0) && !math.IsNaN(x)
}
