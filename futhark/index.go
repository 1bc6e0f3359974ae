package futhark

import (
	"github.com/mmapkit/mmapkit/layout"
)

// ReadOptions configures reading. A nil *ReadOptions means the defaults:
// exactly what futhark-data 1.1.3.0 accepts.
type ReadOptions struct {
	// Legacy also accepts the pre-2018 spellings of non-finite floats that
	// old compiled programs printed: nanf32, -nanf32, inff32, -inff32
	// (and f64).
	Legacy bool
	// StrictIntegers makes integer literals out of their type's range an
	// error instead of wrapping around as futhark-data does.
	StrictIntegers bool
	// Lenient salvages what precedes malformed input (a torn tail, say):
	// Open and NewReader keep the values before the first bad one, and
	// File.TailError reports what was wrong. futhark-data rejects the
	// whole input instead, as the default does.
	Lenient bool
}

func (o *ReadOptions) get() ReadOptions {
	if o == nil {
		return ReadOptions{}
	}
	return *o
}

// lineTracker computes line and column of increasing offsets in one pass.
type lineTracker struct {
	d         []byte
	off, line int
	lineStart int
}

func (t *lineTracker) at(off int) (int, int) {
	if off < t.off {
		t.off, t.line, t.lineStart = 0, 1, 0
	}
	if t.line == 0 {
		t.line = 1
	}
	for i := t.off; i < off && i < len(t.d); i++ {
		if t.d[i] == '\n' {
			t.line++
			t.lineStart = i + 1
		}
	}
	t.off = off
	return t.line, off - t.lineStart + 1
}

// keepDecoded bounds the text payloads that index keeps per input: parsing
// a text value to validate it costs as much as decoding it, so the decoded
// bytes are kept for the first reads, up to this many in all.
var keepDecoded = 64 << 20 // a variable for tests

// index scans d and returns one entry per value, validating everything and
// decoding no binary payload; text payloads are decoded while validating
// and kept (by entry, nil where not) while they fit in keepDecoded. Errors
// are *FormatError with offsets into d.
func index(d []byte, o ReadOptions) ([]Entry, [][]byte, error) {
	var entries []Entry
	var kept [][]byte
	budget := keepDecoded
	lt := lineTracker{d: d}
	p := &textParser{d: d, legacy: o.Legacy, strict: o.StrictIntegers}
	win := -1 // cached window end: valid for every start < win
	i := dropSpaces(d, 0)
	for i < len(d) {
		if d[i] == 'b' {
			h, _, err := parseBinHeader(d[i:], int64(i))
			if err != nil {
				return entries, kept, err
			}
			data := int64(i + h.hlen)
			end, ok := layout.Add(data, h.size)
			if !ok || end > int64(len(d)) {
				return entries, kept, &FormatError{Offset: data, Err: ErrTruncated,
					Msg: "binary payload of " + TypeString(h.typ, h.shape) + " extends past the end of the input"}
			}
			entries = append(entries, Entry{Binary: true, Type: h.typ, Shape: h.shape, Start: int64(i), End: end, Data: data})
			kept = append(kept, nil)
			i = dropSpaces(d, int(end))
			continue
		}
		if win <= i {
			win = windowEnd(d, i)
		}
		p.end, p.i, p.errMsg = win, i, ""
		p.emit, p.keep, p.out = budget > 0, budget, nil
		if !p.parse() {
			return entries, kept, textError(&lt, p)
		}
		line, col := lt.at(i)
		shape := append([]int64{}, p.dims[:p.rank]...)
		entries = append(entries, Entry{Type: p.typ, Shape: shape, Start: int64(i), End: int64(p.tokEnd), Data: int64(i), Line: line, Col: col})
		var dec []byte
		if p.emit && len(p.out) > 0 {
			dec = p.out
			budget -= cap(dec) // what is held, growth slack included
		}
		kept = append(kept, dec)
		i = p.i
	}
	return entries, kept, nil
}

func textError(lt *lineTracker, p *textParser) error {
	line, col := lt.at(p.errOff)
	return &FormatError{Offset: int64(p.errOff), Line: line, Col: col, Msg: p.errMsg, Err: p.errSen}
}

// decodeText decodes the text value at d[start:] into its payload.
// end is the value's End from the index: the window need not reach further
// than the few bytes of lookahead past it.
func decodeText(d []byte, start, end int, o ReadOptions, sizeHint int64) (Value, error) {
	p := &textParser{d: d, legacy: o.Legacy, strict: o.StrictIntegers, emit: true}
	lim := len(d)
	if end >= 0 && end+16 < lim {
		lim = end + 16
	}
	p.end, p.i = windowEnd(d[:lim], start), start
	if sizeHint > 0 {
		p.out = make([]byte, 0, sizeHint)
	}
	if !p.parse() {
		lt := lineTracker{d: d}
		return Value{}, textError(&lt, p)
	}
	return Value{Type: p.typ, Shape: append([]int64{}, p.dims[:p.rank]...), Data: p.out}, nil
}
