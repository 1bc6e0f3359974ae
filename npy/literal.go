package npy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file is the parser of .npy headers: the subset of Python literals
// that ast.literal_eval reads and that a header can hold (dicts, tuples,
// lists, strings, integers, True, False, None), over untrusted bytes. It is
// iterative where input controls the work and recursive only to a bounded
// depth; nothing is evaluated.

// maxDepth bounds the nesting of brackets, as Python's tokenizer does
// (MAXLEVEL, 200): deeper input is an error, never a stack overflow.
const maxDepth = 200

// pyKind is the type of a parsed literal.
type pyKind uint8

const (
	pyStr pyKind = iota + 1
	pyBytes
	pyInt
	pyFloat // floats and complex numbers: parsed only to be refused
	pyBool
	pyNone
	pyTuple
	pyList
	pyDict
	pySet
)

func (k pyKind) String() string {
	return [...]string{"?", "str", "bytes", "int", "float", "bool", "None", "tuple", "list", "dict", "set"}[k]
}

// pyValue is one parsed literal. pos and end are byte offsets of its text
// in the header.
type pyValue struct {
	kind     pyKind
	s        string // str (UTF-8) or bytes
	i        int64
	overflow bool // an int beyond int64
	b        bool
	items    []pyValue // tuple, list, set; dict keys and values alternate
	pos, end int
}

// syntaxError is a parse error at a byte offset of the header.
type syntaxError struct {
	pos int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// parser reads one literal from src. latin1: the text is latin-1 (headers
// of versions 1.0 and 2.0), else UTF-8 (3.0). dropL: an identifier L right
// after a number is skipped, as NumPy does for Python 2 headers (5L).
type parser struct {
	src    []byte
	p      int
	latin1 bool
	dropL  bool
	// stack holds the items of the containers being parsed, innermost
	// last: a container's items move to a slice of their exact number
	// when it closes, so that a long list or many short tuples take no
	// more than their items.
	stack []pyValue
	// text is src as a string, made at the first string literal that
	// can be a part of it.
	text string
	// scans read the fields of the descr lists of the header's dict.
	scans []*fieldScan
}

// str is the header's text as a string, made once.
func (ps *parser) str() string {
	if ps.text == "" {
		ps.text = string(ps.src)
	}
	return ps.text
}

// itemBound is the most items a container may hold, and what to say when
// it holds more.
type itemBound struct {
	max int
	msg string
}

// headerKeys bound the values of a header's dict before they are parsed,
// so that a value cannot take memory out of proportion to what NumPy
// would accept: a key other than these is refused on sight, a shape
// holds at most MaxRank entries, fortran_order is a single name.
var headerKeys = map[string]*itemBound{
	"descr":         nil,
	"fortran_order": {1, "fortran_order is not True or False"},
	"shape":         {MaxRank, fmt.Sprintf("shape has more than %d entries; NumPy arrays have at most %d dimensions", MaxRank, MaxRank)},
}

func (ps *parser) fail(pos int, format string, args ...any) error {
	return &syntaxError{pos: pos, msg: fmt.Sprintf(format, args...)}
}

// push adds items to the stack, which doubles as it grows (append's
// smaller steps for large slices would leave four times a long list's
// items behind).
func (ps *parser) push(items ...pyValue) {
	if len(ps.stack)+len(items) > cap(ps.stack) {
		ps.stack = slices.Grow(ps.stack, max(len(items), cap(ps.stack), 16))
	}
	ps.stack = append(ps.stack, items...)
}

// stacks keeps the parsers' stacks of up to a thousand items between
// headers: an archive of many members parses many small ones.
var stacks = sync.Pool{New: func() any { return new([]pyValue) }}

// parseLiteral parses the whole of src as one Python literal expression,
// a header's dict, and hands it to use. The fields of a descr list are
// read as the list is parsed (descrList): that list's value has no items,
// and its i is one more than the index of its scan in scans. The dict's
// own items are lent from the parser's stack, valid only during use: an
// archive's hundred thousand headers then leave no copy of them.
func parseLiteral(src []byte, latin1, dropL bool, use func(v pyValue, scans []*fieldScan)) error {
	ps := &parser{src: src, latin1: latin1, dropL: dropL}
	stack := stacks.Get().(*[]pyValue)
	ps.stack = (*stack)[:0]
	defer func() {
		if cap(ps.stack) <= 1000 {
			clear(ps.stack[:cap(ps.stack)])
			*stack = ps.stack[:0]
			stacks.Put(stack)
		}
	}()
	if err := ps.space(); err != nil {
		return err
	}
	var v pyValue
	var err error
	if ps.p < len(src) && src[ps.p] == '{' {
		if v, _, err = ps.items(0, nil); err == nil {
			v.items = ps.stack // a dict is never a parenthesised value
		}
	} else {
		v, err = ps.value(0, nil)
	}
	if err != nil {
		return err
	}
	if err := ps.space(); err != nil {
		return err
	}
	if ps.p < len(src) {
		return ps.fail(ps.p, "unexpected %s after the header's dict", ps.what(ps.p))
	}
	use(v, ps.scans)
	return nil
}

// what describes the character at i for error messages.
func (ps *parser) what(i int) string {
	if i >= len(ps.src) {
		return "end of header"
	}
	c := ps.src[i]
	if c >= 0x20 && c < 0x7f {
		return strconv.Quote(string(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// space skips whitespace, comments and backslash line continuations.
func (ps *parser) space() error {
	for ps.p < len(ps.src) {
		switch c := ps.src[ps.p]; c {
		case ' ', '\t', '\f', '\r', '\n':
			ps.p++
		case '#':
			for ps.p < len(ps.src) && ps.src[ps.p] != '\n' && ps.src[ps.p] != '\r' {
				ps.p++
			}
		case '\\':
			q := ps.p + 1
			if q < len(ps.src) && ps.src[q] == '\r' {
				q++
			}
			if q < len(ps.src) && ps.src[q] == '\n' {
				q++
			}
			if q == ps.p+1 {
				return ps.fail(ps.p, "unexpected character after line continuation")
			}
			ps.p = q
		default:
			return nil
		}
	}
	return nil
}

// value parses one literal at nesting depth d; a container holds at most
// limit's items when limit is not nil.
func (ps *parser) value(d int, limit *itemBound) (pyValue, error) {
	if err := ps.space(); err != nil {
		return pyValue{}, err
	}
	if ps.p >= len(ps.src) {
		return pyValue{}, ps.fail(ps.p, "unexpected end of header")
	}
	start := ps.p
	c := ps.src[ps.p]
	switch {
	case c == '{' || c == '(' || c == '[':
		if d >= maxDepth {
			return pyValue{}, ps.fail(ps.p, "brackets nested more than %d deep", maxDepth)
		}
		return ps.container(d, limit)
	case c == '\'' || c == '"':
		return ps.strings()
	case isDigit(c) || (c == '.' && ps.p+1 < len(ps.src) && isDigit(ps.src[ps.p+1])):
		return ps.number(start, false)
	case c == '+' || c == '-':
		ps.p++
		if err := ps.space(); err != nil {
			return pyValue{}, err
		}
		// Python allows a sign only before a number (parentheses
		// around it make no node of their own).
		open := 0
		for ps.p < len(ps.src) && ps.src[ps.p] == '(' {
			open++
			ps.p++
			if err := ps.space(); err != nil {
				return pyValue{}, err
			}
		}
		if open > maxDepth-d {
			return pyValue{}, ps.fail(ps.p, "brackets nested more than %d deep", maxDepth)
		}
		if ps.p >= len(ps.src) || !(isDigit(ps.src[ps.p]) || ps.src[ps.p] == '.') {
			return pyValue{}, ps.fail(ps.p, "a sign must be followed by a number, not %s", ps.what(ps.p))
		}
		v, err := ps.number(ps.p, c == '-')
		if err != nil {
			return pyValue{}, err
		}
		for ; open > 0; open-- {
			if err := ps.space(); err != nil {
				return pyValue{}, err
			}
			if ps.p >= len(ps.src) || ps.src[ps.p] != ')' {
				return pyValue{}, ps.fail(ps.p, "expected ')', found %s", ps.what(ps.p))
			}
			ps.p++
		}
		v.pos, v.end = start, ps.p
		return v, nil
	case isIdentStart(c):
		name := ps.ident()
		if ps.p < len(ps.src) && (ps.src[ps.p] == '\'' || ps.src[ps.p] == '"') && isStringPrefix(name) {
			ps.p = start
			return ps.strings()
		}
		switch name {
		case "True", "False":
			return pyValue{kind: pyBool, b: name == "True", pos: start, end: ps.p}, nil
		case "None":
			return pyValue{kind: pyNone, pos: start, end: ps.p}, nil
		}
		return pyValue{}, ps.fail(start, "name %q is not a literal", name)
	}
	return pyValue{}, ps.fail(ps.p, "unexpected %s", ps.what(ps.p))
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

func (ps *parser) ident() string {
	s := ps.p
	for ps.p < len(ps.src) && isIdentChar(ps.src[ps.p]) {
		ps.p++
	}
	return string(ps.src[s:ps.p])
}

func isStringPrefix(s string) bool {
	switch strings.ToLower(s) {
	case "r", "u", "b", "br", "rb":
		return true
	}
	return false
}

// container parses a dict or set ({…}), a tuple or parenthesised value
// ((…)) or a list ([…]). Each item is parsed at depth d+1.
//
// A non-nil limit bounds the items: the parse stops there, before the
// items take memory.
func (ps *parser) container(d int, limit *itemBound) (pyValue, error) {
	base := len(ps.stack)
	v, single, err := ps.items(d, limit)
	if err != nil {
		return pyValue{}, err
	}
	if !single && len(ps.stack) > base {
		v.items = slices.Clone(ps.stack[base:])
	}
	clear(ps.stack[base:]) // no strings kept alive by the stack
	ps.stack = ps.stack[:base]
	return v, nil
}

// items parses a container as container does, leaving its items on the
// stack from its length at the call on; single: it was a parenthesised
// value, which v is.
func (ps *parser) items(d int, limit *itemBound) (v pyValue, single bool, err error) {
	start := ps.p
	open := ps.src[ps.p]
	ps.p++
	v = pyValue{pos: start}
	var close byte
	switch open {
	case '{':
		v.kind, close = pyDict, '}'
	case '(':
		v.kind, close = pyTuple, ')'
	case '[':
		v.kind, close = pyList, ']'
	}
	header := d == 0 && open == '{' // the header's own dict
	base := len(ps.stack)
	count := func() int { return len(ps.stack) - base }
	comma := false // a comma was seen: (x,) is a tuple, (x) is x
	for n := 0; ; n++ {
		if err := ps.space(); err != nil {
			return pyValue{}, false, err
		}
		if ps.p < len(ps.src) && ps.src[ps.p] == close {
			ps.p++
			break
		}
		if n > 0 {
			if ps.p >= len(ps.src) || ps.src[ps.p] != ',' {
				return pyValue{}, false, ps.fail(ps.p, "expected ',' or %q, found %s", close, ps.what(ps.p))
			}
			ps.p++
			comma = true
			if err := ps.space(); err != nil {
				return pyValue{}, false, err
			}
			if ps.p < len(ps.src) && ps.src[ps.p] == close {
				ps.p++
				break
			}
		}
		if limit != nil && count() >= limit.max {
			return pyValue{}, false, ps.fail(ps.p, "%s", limit.msg)
		}
		// (x) is x: the bound of a parenthesised value is its item's.
		var itemLimit *itemBound
		if open == '(' && count() == 0 {
			itemLimit = limit
		}
		item, err := ps.value(d+1, itemLimit)
		if err != nil {
			return pyValue{}, false, err
		}
		if open == '{' {
			if err := ps.space(); err != nil {
				return pyValue{}, false, err
			}
			isPair := ps.p < len(ps.src) && ps.src[ps.p] == ':'
			if n == 0 && !isPair {
				v.kind = pySet
			}
			if (v.kind == pyDict) != isPair {
				return pyValue{}, false, ps.fail(ps.p, "a dict entry needs 'key: value', found %s", ps.what(ps.p))
			}
			if isPair {
				ps.p++
				var valueLimit *itemBound
				if header {
					if item.kind != pyStr {
						return pyValue{}, false, ps.fail(item.pos, "a header key is a %s; the keys are 'descr', 'fortran_order' and 'shape'", item.kind)
					}
					var known bool
					if valueLimit, known = headerKeys[item.s]; !known {
						return pyValue{}, false, ps.fail(start, "unexpected key %s; the keys are 'descr', 'fortran_order' and 'shape'", pyRepr(item.s))
					}
				}
				var val pyValue
				if header && item.s == "descr" {
					val, err = ps.descr(d + 1)
				} else {
					val, err = ps.value(d+1, valueLimit)
				}
				if err != nil {
					return pyValue{}, false, err
				}
				ps.push(item, val)
				continue
			}
		}
		ps.push(item)
	}
	v.end = ps.p
	if open == '(' && count() == 1 && !comma {
		return ps.stack[base], true, nil
	}
	return v, false, nil
}

// descr parses the value of the header's descr key at depth d. A list
// (a structured dtype) is read field by field as it is parsed: each item
// is handed to a fieldScan with its own items still on the stack, and
// nothing of it is kept, so that a hundred thousand fields leave no tree
// behind. The list's value has no items; its i says which scan read it.
func (ps *parser) descr(d int) (pyValue, error) {
	if err := ps.space(); err != nil {
		return pyValue{}, err
	}
	if ps.p >= len(ps.src) || ps.src[ps.p] != '[' {
		return ps.value(d, nil)
	}
	scan := newFieldScan(ps.str())
	v := pyValue{kind: pyList, pos: ps.p}
	ps.p++
	for n := 0; ; n++ {
		if err := ps.space(); err != nil {
			return pyValue{}, err
		}
		if ps.p < len(ps.src) && ps.src[ps.p] == ']' {
			ps.p++
			break
		}
		if n > 0 {
			if ps.p >= len(ps.src) || ps.src[ps.p] != ',' {
				return pyValue{}, ps.fail(ps.p, "expected ',' or %q, found %s", ']', ps.what(ps.p))
			}
			ps.p++
			if err := ps.space(); err != nil {
				return pyValue{}, err
			}
			if ps.p < len(ps.src) && ps.src[ps.p] == ']' {
				ps.p++
				break
			}
		}
		base := len(ps.stack)
		var item pyValue
		if ps.p < len(ps.src) && (ps.src[ps.p] == '(' || ps.src[ps.p] == '[') {
			var single bool
			var err error
			if item, single, err = ps.items(d+1, nil); err != nil {
				return pyValue{}, err
			}
			if !single {
				item.items = ps.stack[base:] // borrowed until the scan returns
			}
		} else {
			var err error
			if item, err = ps.value(d+1, nil); err != nil {
				return pyValue{}, err
			}
		}
		scan.add(item)
		clear(ps.stack[base:])
		ps.stack = ps.stack[:base]
	}
	v.end = ps.p
	ps.scans = append(ps.scans, scan)
	v.i = int64(len(ps.scans))
	return v, nil
}

// number parses an integer (decimal without leading zeros, 0x, 0o, 0b) or
// a float; neg negates it.
func (ps *parser) number(start int, neg bool) (pyValue, error) {
	s := ps.p
	base := 10
	digits := s
	if ps.src[s] == '0' && s+1 < len(ps.src) {
		switch ps.src[s+1] | 0x20 {
		case 'x':
			base = 16
		case 'o':
			base = 8
		case 'b':
			base = 2
		}
	}
	if base != 10 {
		ps.p += 2
		digits = ps.p
		for ps.p < len(ps.src) && isBaseDigit(ps.src[ps.p], base) {
			ps.p++
		}
		if ps.p == digits {
			return pyValue{}, ps.fail(s, "invalid number literal")
		}
	} else {
		for ps.p < len(ps.src) && isDigit(ps.src[ps.p]) {
			ps.p++
		}
		isFloat := false
		if ps.p < len(ps.src) && ps.src[ps.p] == '.' {
			isFloat = true
			ps.p++
			for ps.p < len(ps.src) && isDigit(ps.src[ps.p]) {
				ps.p++
			}
		}
		if ps.p < len(ps.src) && ps.src[ps.p]|0x20 == 'e' {
			q := ps.p + 1
			if q < len(ps.src) && (ps.src[q] == '+' || ps.src[q] == '-') {
				q++
			}
			if q < len(ps.src) && isDigit(ps.src[q]) {
				isFloat = true
				for ps.p = q; ps.p < len(ps.src) && isDigit(ps.src[ps.p]); ps.p++ {
				}
			}
		}
		if ps.p < len(ps.src) && ps.src[ps.p]|0x20 == 'j' {
			isFloat = true
			ps.p++
		}
		if isFloat {
			if ps.p < len(ps.src) && isIdentChar(ps.src[ps.p]) {
				return pyValue{}, ps.fail(s, "invalid number literal")
			}
			return pyValue{kind: pyFloat, pos: start, end: ps.p}, nil
		}
		if ps.src[s] == '0' {
			for _, c := range ps.src[s:ps.p] {
				if c != '0' {
					return pyValue{}, ps.fail(s, "leading zeros in a decimal integer are not permitted")
				}
			}
		}
	}
	text := string(ps.src[digits:ps.p])
	end := ps.p
	// What follows a number: Python 2's long suffix (dropped in 1.0 and
	// 2.0 headers, as NumPy does, also after spaces), else nothing that
	// continues a name.
	if ps.dropL {
		q := ps.p
		for q < len(ps.src) && (ps.src[q] == ' ' || ps.src[q] == '\t') {
			q++
		}
		if q < len(ps.src) && ps.src[q] == 'L' && (q+1 >= len(ps.src) || !isIdentChar(ps.src[q+1])) {
			ps.p = q + 1
		}
	}
	if ps.p < len(ps.src) && isIdentChar(ps.src[ps.p]) {
		return pyValue{}, ps.fail(s, "invalid number literal %q", string(ps.src[s:ps.p+1]))
	}
	v := pyValue{kind: pyInt, pos: start, end: end}
	u, err := strconv.ParseUint(text, base, 64)
	switch {
	case err != nil:
		v.overflow = true
	case neg && u <= 1<<63:
		v.i = -int64(u)
	case !neg && u < 1<<63:
		v.i = int64(u)
	default:
		v.overflow = true
	}
	return v, nil
}

func isBaseDigit(c byte, base int) bool {
	switch base {
	case 16:
		return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f')
	case 8:
		return c >= '0' && c <= '7'
	}
	return c == '0' || c == '1'
}

// strings parses one or more adjacent string literals, which Python
// concatenates ('<' 'f8' is '<f8'). Mixing bytes and str is an error.
func (ps *parser) strings() (pyValue, error) {
	start := ps.p
	if v, ok := ps.plainString(); ok {
		return v, nil
	}
	v := pyValue{pos: start}
	var b strings.Builder
	for n := 0; ; n++ {
		if n > 0 {
			save := ps.p
			if err := ps.space(); err != nil {
				return pyValue{}, err
			}
			if ps.p >= len(ps.src) {
				ps.p = save
				break
			}
			c := ps.src[ps.p]
			q := ps.p
			for q < len(ps.src) && isIdentChar(ps.src[q]) && q-ps.p < 2 {
				q++
			}
			if !(c == '\'' || c == '"' || (q < len(ps.src) && (ps.src[q] == '\'' || ps.src[q] == '"') && isStringPrefix(string(ps.src[ps.p:q])))) {
				ps.p = save
				break
			}
		}
		litStart := ps.p
		kind, err := ps.string1(&b)
		if err != nil {
			return pyValue{}, err
		}
		if n > 0 && kind != v.kind {
			return pyValue{}, ps.fail(litStart, "cannot mix bytes and str literals")
		}
		v.kind = kind
	}
	v.s, v.end = b.String(), ps.p
	return v, nil
}

// plainString parses the most common string literal, one in single or
// double quotes of printable ASCII without backslashes and not followed
// by another literal, as a part of the header's text rather than a copy:
// the names of a hundred thousand fields then take no memory of their
// own. It reports false, having read nothing, for any other literal.
func (ps *parser) plainString() (pyValue, bool) {
	q := ps.src[ps.p]
	end := ps.p + 1
	for ; end < len(ps.src) && ps.src[end] != q; end++ {
		if c := ps.src[end]; c < 0x20 || c >= 0x7f || c == '\\' {
			return pyValue{}, false
		}
	}
	if end >= len(ps.src) || end == ps.p+1 && end+1 < len(ps.src) && ps.src[end+1] == q {
		return pyValue{}, false // unterminated, or a triple quote
	}
	// What follows, past spaces, must not be another literal that
	// Python would join to this one.
	next := end + 1
	for next < len(ps.src) && (ps.src[next] == ' ' || ps.src[next] == '\t') {
		next++
	}
	if next < len(ps.src) && (ps.src[next] == '\'' || ps.src[next] == '"' || isIdentChar(ps.src[next]) || ps.src[next] == '\\' || ps.src[next] == '#' || ps.src[next] == '\n' || ps.src[next] == '\r' || ps.src[next] == '\f') {
		return pyValue{}, false
	}
	v := pyValue{kind: pyStr, pos: ps.p, end: end + 1}
	switch b := ps.src[ps.p+1 : end]; {
	case len(ps.src) <= 1<<12:
		// A header of an array's usual size: a copy of each string
		// keeps less than its whole text would.
		v.s = headerWord(b)
	default:
		v.s = ps.str()[ps.p+1 : end]
	}
	ps.p = end + 1
	return v, true
}

// headerWord is b as a string, without an allocation for the words
// every header has.
func headerWord(b []byte) string {
	switch string(b) {
	case "descr":
		return "descr"
	case "fortran_order":
		return "fortran_order"
	case "shape":
		return "shape"
	case "<f8":
		return "<f8"
	case "<i8":
		return "<i8"
	}
	return string(b)
}

// string1 parses one string literal (with its prefix) and appends its
// value to b.
func (ps *parser) string1(b *strings.Builder) (pyKind, error) {
	start := ps.p
	raw, bytesLit := false, false
	for ps.p < len(ps.src) && isIdentChar(ps.src[ps.p]) {
		switch ps.src[ps.p] | 0x20 {
		case 'r':
			raw = true
		case 'b':
			bytesLit = true
		}
		ps.p++
	}
	q := ps.src[ps.p]
	triple := ps.p+2 < len(ps.src) && ps.src[ps.p+1] == q && ps.src[ps.p+2] == q
	if triple {
		ps.p += 3
	} else {
		ps.p++
	}
	kind := pyStr
	if bytesLit {
		kind = pyBytes
	}
	for {
		if ps.p >= len(ps.src) {
			return 0, ps.fail(start, "unterminated string literal")
		}
		c := ps.src[ps.p]
		switch {
		case c == q && (!triple || (ps.p+2 < len(ps.src) && ps.src[ps.p+1] == q && ps.src[ps.p+2] == q)):
			if triple {
				ps.p += 3
			} else {
				ps.p++
			}
			return kind, nil
		case (c == '\n' || c == '\r') && !triple:
			return 0, ps.fail(start, "unterminated string literal")
		case c == '\\':
			if err := ps.escape(b, raw, bytesLit); err != nil {
				return 0, err
			}
		default:
			if err := ps.char(b, bytesLit); err != nil {
				return 0, err
			}
		}
	}
}

// char appends the character at ps.p (one latin-1 byte, or one UTF-8
// sequence) to b.
func (ps *parser) char(b *strings.Builder, bytesLit bool) error {
	c := ps.src[ps.p]
	if c == 0 {
		return ps.fail(ps.p, "NUL byte in the header")
	}
	if c < 0x80 {
		b.WriteByte(c)
		ps.p++
		return nil
	}
	if bytesLit {
		return ps.fail(ps.p, "bytes literals can only contain ASCII characters")
	}
	if ps.latin1 {
		b.WriteRune(rune(c))
		ps.p++
		return nil
	}
	r, n := utf8.DecodeRune(ps.src[ps.p:])
	if r == utf8.RuneError && n <= 1 {
		return ps.fail(ps.p, "invalid UTF-8 in a version 3.0 header")
	}
	b.WriteRune(r)
	ps.p += n
	return nil
}

// escape handles a backslash sequence in a string literal.
func (ps *parser) escape(b *strings.Builder, raw, bytesLit bool) error {
	at := ps.p
	if ps.p+1 >= len(ps.src) {
		return ps.fail(at, "unterminated string literal")
	}
	n := ps.src[ps.p+1]
	if raw {
		// A backslash keeps the next character (a quote does not end
		// the string), and both stay in the value.
		b.WriteByte('\\')
		ps.p++
		if n == '\n' || n == '\r' || n == '\\' || n == '\'' || n == '"' {
			b.WriteByte(n)
			ps.p++
		}
		return nil
	}
	ps.p += 2
	put := func(r rune) {
		if bytesLit {
			b.WriteByte(byte(r))
		} else {
			b.WriteRune(r)
		}
	}
	switch n {
	case '\n':
	case '\r':
		if ps.p < len(ps.src) && ps.src[ps.p] == '\n' {
			ps.p++
		}
	case '\\', '\'', '"':
		b.WriteByte(n)
	case 'a':
		b.WriteByte(7)
	case 'b':
		b.WriteByte(8)
	case 'f':
		b.WriteByte(12)
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'v':
		b.WriteByte(11)
	case '0', '1', '2', '3', '4', '5', '6', '7':
		r := rune(n - '0')
		for k := 0; k < 2 && ps.p < len(ps.src) && ps.src[ps.p] >= '0' && ps.src[ps.p] <= '7'; k++ {
			r = r*8 + rune(ps.src[ps.p]-'0')
			ps.p++
		}
		if bytesLit && r > 0xff {
			return ps.fail(at, "octal escape out of range in a bytes literal")
		}
		put(r)
	case 'x', 'u', 'U':
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[n]
		if n != 'x' && bytesLit {
			b.WriteByte('\\')
			b.WriteByte(n)
			return nil
		}
		if ps.p+width > len(ps.src) {
			return ps.fail(at, "truncated \\%c escape", n)
		}
		x, err := strconv.ParseUint(string(ps.src[ps.p:ps.p+width]), 16, 32)
		if err != nil || x > utf8.MaxRune {
			return ps.fail(at, "invalid \\%c escape", n)
		}
		ps.p += width
		put(rune(x))
	case 'N':
		if !bytesLit {
			return ps.fail(at, "\\N{...} escapes are not supported in headers")
		}
		b.WriteString("\\N")
	default:
		// Python keeps unknown escapes as they are.
		b.WriteByte('\\')
		ps.p--
		return ps.char(b, bytesLit)
	}
	return nil
}
