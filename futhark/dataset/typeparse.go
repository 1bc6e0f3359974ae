package dataset

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// valueType is a generatable Futhark type: dims and a primitive type.
type valueType struct {
	dims []int64
	elem layout.Type
}

var primByName = map[string]layout.Type{
	"i8": layout.I8, "i16": layout.I16, "i32": layout.I32, "i64": layout.I64,
	"u8": layout.U8, "u16": layout.U16, "u32": layout.U32, "u64": layout.U64,
	"f16": layout.F16, "f32": layout.F32, "f64": layout.F64, "bool": layout.Bool,
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *typeParser) peek() byte {
	p.ws()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c >= '0' && c <= '9' || c == '\'' }

func (p *typeParser) syntax() error {
	if p.i >= len(p.s) {
		return fmt.Errorf("syntax error in type %q: unexpected end", p.s)
	}
	return fmt.Errorf("syntax error in type %q at column %d: unexpected %q", p.s, p.i+1, p.s[p.i])
}

// parseType reads a Futhark type of the forms `futhark dataset -g` can
// generate, with upstream's error messages for the others.
func parseType(s string) (valueType, error) {
	p := &typeParser{s: s}
	t, err := p.typ()
	if err != nil {
		return t, err
	}
	if p.peek() != 0 {
		return t, p.syntax()
	}
	return t, nil
}

func (p *typeParser) typ() (valueType, error) {
	t, err := p.app()
	if err != nil {
		return t, err
	}
	if p.peek() == '-' && strings.HasPrefix(p.s[p.i:], "->") {
		return t, errors.New("Cannot generate functions.")
	}
	return t, nil
}

// app parses an atom and refuses type applications (an atom followed by
// another).
func (p *typeParser) app() (valueType, error) {
	t, named, err := p.atom()
	if err != nil {
		return t, err
	}
	if c := p.peek(); named && (isIdentStart(c) || c == '(' || c == '[' || c >= '0' && c <= '9') {
		return t, errors.New("Cannot handle type applications yet.")
	}
	return t, nil
}

func (p *typeParser) atom() (valueType, bool, error) {
	switch c := p.peek(); {
	case c == '*':
		p.i++
		t, _, err := p.atom()
		return t, false, err
	case c == '[':
		p.i++
		p.ws()
		start := p.i
		for p.i < len(p.s) && (isIdent(p.s[p.i])) {
			p.i++
		}
		word := p.s[start:p.i]
		if word == "" || !(word[0] >= '0' && word[0] <= '9') {
			return valueType{}, false, errors.New("Array has non-constant dimension declaration.")
		}
		d, ok := parseDim(word)
		if !ok {
			return valueType{}, false, fmt.Errorf("invalid dimension %q in type %q", word, p.s)
		}
		if p.peek() != ']' {
			return valueType{}, false, p.syntax()
		}
		p.i++
		elem, _, err := p.atom()
		if err != nil {
			return elem, false, err
		}
		return valueType{dims: append([]int64{d}, elem.dims...), elem: elem.elem}, false, nil
	case c == '(':
		p.i++
		if p.peek() == ')' {
			return valueType{}, false, errors.New("Cannot handle tuples yet.")
		}
		t, err := p.typ()
		if err != nil {
			return t, false, err
		}
		switch p.peek() {
		case ',':
			return t, false, errors.New("Cannot handle tuples yet.")
		case ')':
			p.i++
			return t, false, nil
		}
		return t, false, p.syntax()
	case c == '{':
		return valueType{}, false, errors.New("Cannot handle records yet.")
	case c == '#':
		return valueType{}, false, errors.New("Cannot handle sumtypes yet.")
	case c == '?':
		return valueType{}, false, errors.New("Cannot handle existential sizes.")
	case isIdentStart(c):
		start := p.i
		for p.i < len(p.s) && (isIdent(p.s[p.i]) || p.s[p.i] == '.') {
			p.i++
		}
		name := p.s[start:p.i]
		t, ok := primByName[name]
		if !ok {
			if p.peek() != 0 && p.peek() != ')' && p.peek() != ',' && p.peek() != '-' {
				return valueType{}, true, errors.New("Cannot handle type applications yet.")
			}
			return valueType{}, true, fmt.Errorf("Unknown type %s", name)
		}
		return valueType{elem: t}, true, nil
	}
	return valueType{}, false, p.syntax()
}

// parseDim reads a Futhark integer literal used as a size: decimal, 0x,
// 0b, underscores, an optional integer suffix.
func parseDim(w string) (int64, bool) {
	for _, suf := range []string{"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"} {
		if strings.HasSuffix(w, suf) && !strings.HasPrefix(w, "0x") {
			w = strings.TrimSuffix(w, suf)
			break
		}
	}
	base := uint64(10)
	switch {
	case strings.HasPrefix(w, "0x") || strings.HasPrefix(w, "0X"):
		base, w = 16, w[2:]
	case strings.HasPrefix(w, "0b") || strings.HasPrefix(w, "0B"):
		base, w = 2, w[2:]
	}
	if w == "" || w[0] == '_' {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(w); i++ {
		if w[i] == '_' {
			continue
		}
		d := uint64(layout.DigitValue(w[i]))
		if d >= base || v > (math.MaxInt64-d)/base {
			return 0, false
		}
		v = v*base + d
	}
	return int64(v), true
}
