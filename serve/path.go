package serve

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// ErrBadPath: a request path that the server refuses (403).
var ErrBadPath = errors.New("refused path")

// Segments percent-decodes the escaped path p exactly once and splits it
// into its segments, refusing a path with a segment that is empty, "." or
// "..", or that holds a NUL or a backslash: so "%2e%2e", "..%2f", "//" and
// a "%2F"-absolute path are all refused, and "%252e" is the literal name
// "%2e".
func Segments(p string) ([]string, error) {
	dec, err := url.PathUnescape(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPath, err)
	}
	segs := strings.Split(dec, "/")
	for _, s := range segs {
		switch {
		case s == "" || s == "." || s == "..":
			return nil, fmt.Errorf("%w: %q has an empty, \".\" or \"..\" segment", ErrBadPath, p)
		case strings.ContainsAny(s, "\x00\\"):
			return nil, fmt.Errorf("%w: %q has a segment with a NUL or a backslash", ErrBadPath, p)
		}
	}
	return segs, nil
}

// ErrRangeSyntax: a Range header that is not bytes=first-last,... (the
// server then ignores it and sends the whole file).
var ErrRangeSyntax = errors.New("bad Range syntax")

// ErrRangeNotSatisfiable: no range of the header starts within the file
// (416).
var ErrRangeNotSatisfiable = errors.New("range not satisfiable")

// Range is one byte range, Start to Start+Length.
type Range struct{ Start, Length int64 }

// ParseRange parses a Range header value (RFC 9110: "bytes=" and a list of
// "a-b", "a-" or "-n") against a file of size bytes. Ranges that start
// past the end are dropped; if none is left it returns
// ErrRangeNotSatisfiable; a value that does not parse, ErrRangeSyntax.
func ParseRange(v string, size int64) ([]Range, error) {
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok {
		return nil, ErrRangeSyntax
	}
	var out []Range
	any := false
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		first, last, ok := strings.Cut(part, "-")
		if !ok {
			return nil, ErrRangeSyntax
		}
		first, last = strings.TrimSpace(first), strings.TrimSpace(last)
		any = true
		if first == "" { // a suffix: the last n bytes
			n, err := parseUint(last)
			if err != nil {
				return nil, err
			}
			if n = min(n, size); n == 0 {
				continue // "-0", or any suffix of an empty file
			}
			out = append(out, Range{size - n, n})
			continue
		}
		a, err := parseUint(first)
		if err != nil {
			return nil, err
		}
		b := size - 1
		if last != "" {
			if b, err = parseUint(last); err != nil {
				return nil, err
			}
			if b < a {
				return nil, ErrRangeSyntax
			}
			b = min(b, size-1)
		}
		if a >= size {
			continue
		}
		out = append(out, Range{a, b - a + 1})
	}
	if !any {
		return nil, ErrRangeSyntax
	}
	if len(out) == 0 {
		return nil, ErrRangeNotSatisfiable
	}
	return out, nil
}

func parseUint(s string) (int64, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, ErrRangeSyntax
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, ErrRangeSyntax
	}
	return n, nil
}
