package dataset

import (
	"math"
	"strconv"
	"strings"
)

// readsInt reads an integer as Haskell's `reads :: Int` with a whole-input
// match: leading spaces, parentheses, '-', decimal, 0x/0o; no '+'. The
// value wraps modulo 2^64.
func readsInt(s string) (uint64, bool) {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	s = strings.TrimRight(s, " \t\n\r\f\v")
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		return readsInt(s[1 : len(s)-1])
	}
	neg := false
	if strings.HasPrefix(s, "-") {
		neg = true
		s = strings.TrimLeft(s[1:], " \t\n\r\f\v")
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) > 2 && (s[:2] == "0o" || s[:2] == "0O"):
		base, s = 8, s[2:]
	}
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		v = v*base + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// readsFloat reads a finite float as Haskell's `reads :: Double`:
// leading spaces, parentheses, '-', digits with an optional fraction and
// exponent. Infinity and NaN are refused.
func readsFloat(s string) (float64, bool) {
	s = strings.Trim(s, " \t\n\r\f\v")
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		return readsFloat(s[1 : len(s)-1])
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
