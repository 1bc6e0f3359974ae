package futhark

import "errors"

// Sniff reports whether head, the first bytes of an input, looks like
// Futhark values: after whitespace and comments, a binary header with
// version 2 and a known type, or a text value that parses (or is cut
// short only by the end of head). Empty or comment-only input is not
// sniffed as Futhark.
func Sniff(head []byte) bool {
	i := dropSpaces(head, 0)
	if i >= len(head) {
		return false
	}
	if head[i] == 'b' {
		if len(head) > i+1 && head[i+1] != 2 {
			return false
		}
		_, _, err := parseBinHeader(head[i:], int64(i))
		return err == nil || errors.Is(err, ErrTruncated)
	}
	p := &textParser{d: head, end: windowEnd(head, i), i: i}
	if p.parse() {
		return true
	}
	// A value cut by the end of a long head (mid-token) still counts.
	return p.errSen == ErrTruncated || len(head) >= 256 && p.end == len(head) && p.errOff >= len(head)-32
}
