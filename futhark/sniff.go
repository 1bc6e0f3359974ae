package futhark

import (
	"errors"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Sniff reports whether head, the first bytes of an input, holds Futhark
// values: after whitespace and "--" comments, a binary value ('b',
// version 2, a known type) or the start of a text value ('[', a sign or
// digit, '"', true, false, empty(, f16., f32., f64.) whose first value
// parses and is followed by nothing or another value, or is cut short
// only by the end of head. Comments alone are a
// Futhark input with no values; empty or blank input is not sniffed.
func Sniff(head []byte) bool {
	i := dropSpaces(head, 0)
	if i >= len(head) {
		return bytesHasComment(head)
	}
	if head[i] == 'b' {
		if len(head) > i+1 && head[i+1] != 2 {
			return false
		}
		_, _, err := parseBinHeader(head[i:], int64(i))
		return err == nil || errors.Is(err, mmapfile.ErrTruncated)
	}
	if !textStart(head[i:]) {
		return false
	}
	p := &textParser{d: head, end: windowEnd(head, i), i: i}
	if p.parse() {
		// What follows must be another value or nothing ("1,2" is CSV).
		return p.i >= len(head) || head[p.i] == 'b' || textStart(head[p.i:])
	}
	// A value cut by the end of a long head (mid-token) still counts.
	return p.errSen == mmapfile.ErrTruncated || len(head) >= 256 && p.end == len(head) && p.errOff >= len(head)-32
}

// textStart reports whether b starts like a text value.
func textStart(b []byte) bool {
	switch c := b[0]; {
	case c == '[' || c == '-' || c == '+' || c == '"' || c >= '0' && c <= '9':
		return true
	}
	for _, p := range []string{"true", "false", "empty(", "f16.", "f32.", "f64."} {
		if len(b) >= len(p) && string(b[:len(p)]) == p {
			return true
		}
	}
	return false
}

// bytesHasComment reports whether b holds a "--" comment.
func bytesHasComment(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '-' && b[i+1] == '-' {
			return true
		}
	}
	return false
}
