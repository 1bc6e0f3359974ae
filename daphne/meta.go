package daphne

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/layout"
)

// Meta is the JSON sidecar DAPHNE keeps beside a data file as
// "<file>.meta". DaphneDSL reads it at compile time to learn a matrix's
// value type and sparsity; at run time DAPHNE ignores it.
type Meta struct {
	NumRows uint64
	NumCols uint64
	// ValueType is the top-level "valueType" as written ("" when absent).
	// Unknown names are kept; DAPHNE maps them to INVALID.
	ValueType string
	// NumNonZeros is -1 when absent; DAPHNE writes it only when ≠ -1.
	NumNonZeros int64
	// Schema is nil for a matrix and non-nil (possibly empty) for a frame.
	Schema []SchemaColumn
	// HDFS is the optional "hdfs" object; nil when absent.
	HDFS *HDFS
}

// SchemaColumn is one entry of a frame's schema.
type SchemaColumn struct {
	Label     string
	ValueType string
}

// HDFS is the "hdfs" object of a .meta file.
type HDFS struct {
	IsHDFS   bool
	Filename string // "HDFSFilename"
}

// maxJSONDepth bounds nesting so that hostile input cannot exhaust the
// stack.
const maxJSONDepth = 128

type metaError struct {
	off int
	msg string
	err error
}

func (e *metaError) Error() string { return fmt.Sprintf("offset %d: %s", e.off, e.msg) }
func (e *metaError) Unwrap() error { return e.err }

// ParseMeta parses a .meta file. Any JSON formatting is accepted and
// unknown keys are ignored, as in DAPHNE; numRows and numCols are required;
// schema entries need both label and valueType. The pre-2022 CSV form
// ("2,3,1,f64") gives an error wrapping errors.ErrUnsupported. Errors are
// *FormatError values with the byte offset in the JSON text.
func ParseMeta(b []byte) (*Meta, error) {
	m, err := parseMeta(b)
	if err != nil {
		var me *metaError
		if errors.As(err, &me) {
			return nil, errAt(".meta", int64(me.off), fmt.Errorf("%w: %w", ErrMeta, me.err), me.msg)
		}
		return nil, errAt(".meta", -1, fmt.Errorf("%w: %w", ErrMeta, err), "")
	}
	return m, nil
}

func parseMeta(b []byte) (*Meta, error) {
	p := &jsonParser{b: b}
	p.space()
	if p.i < len(b) && (b[p.i] == '-' || b[p.i] >= '0' && b[p.i] <= '9') {
		return nil, &metaError{off: p.i, msg: "CSV-style .meta (DAPHNE before 2022-05) is not supported", err: errors.ErrUnsupported}
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(b) {
		return nil, &metaError{off: p.i, msg: "trailing data after JSON value"}
	}
	obj, ok := v.v.(*jsonObject)
	if !ok {
		return nil, &metaError{off: v.off, msg: "top level is not a JSON object"}
	}
	m := &Meta{NumNonZeros: -1}
	rows, ok := obj.get("numRows")
	if !ok {
		return nil, &metaError{off: v.off, msg: `missing key "numRows"`}
	}
	if m.NumRows, err = rows.uint("numRows"); err != nil {
		return nil, err
	}
	cols, ok := obj.get("numCols")
	if !ok {
		return nil, &metaError{off: v.off, msg: `missing key "numCols"`}
	}
	if m.NumCols, err = cols.uint("numCols"); err != nil {
		return nil, err
	}
	if vt, ok := obj.get("valueType"); ok {
		s, ok := vt.v.(string)
		if !ok {
			return nil, &metaError{off: vt.off, msg: `"valueType" is not a string`}
		}
		m.ValueType = s
	}
	if nz, ok := obj.get("numNonZeros"); ok {
		raw, ok := nz.v.(jsonNumber)
		if !ok {
			return nil, &metaError{off: nz.off, msg: `"numNonZeros" is not a number`}
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n < -1 {
			return nil, &metaError{off: nz.off, msg: fmt.Sprintf(`"numNonZeros" %s is not an integer ≥ -1`, raw)}
		}
		m.NumNonZeros = n
	}
	if sc, ok := obj.get("schema"); ok {
		l, ok := sc.v.(*schemaList)
		if !ok {
			return nil, &metaError{off: sc.off, msg: `"schema" is not an array`}
		}
		if l.err != nil {
			return nil, l.err
		}
		m.Schema = l.cols
	}
	if h, ok := obj.get("hdfs"); ok {
		o, ok := h.v.(*jsonObject)
		if !ok {
			return nil, &metaError{off: h.off, msg: `"hdfs" is not an object`}
		}
		m.HDFS = &HDFS{}
		if x, ok := o.get("isHDFS"); ok {
			bv, ok := x.v.(bool)
			if !ok {
				return nil, &metaError{off: x.off, msg: `"isHDFS" is not a boolean`}
			}
			m.HDFS.IsHDFS = bv
		}
		if x, ok := o.get("HDFSFilename"); ok {
			s, ok := x.v.(string)
			if !ok {
				return nil, &metaError{off: x.off, msg: `"HDFSFilename" is not a string`}
			}
			m.HDFS.Filename = s
		}
	}
	return m, nil
}

// Bytes returns the .meta text exactly as DAPHNE's MetaDataParser writes
// it (nlohmann json.dump()): compact, keys in byte order, no trailing
// newline, numNonZeros only when ≠ -1. It fails on strings that are not
// valid UTF-8, which nlohmann refuses to dump.
func (m *Meta) Bytes() ([]byte, error) {
	b := make([]byte, 0, 64+len(m.Schema)*40)
	b = append(b, '{')
	var err error
	if m.HDFS != nil {
		b = append(b, `"hdfs":{"HDFSFilename":`...)
		if b, err = appendJSONString(b, m.HDFS.Filename); err != nil {
			return nil, err
		}
		b = append(b, `,"isHDFS":`...)
		b = strconv.AppendBool(b, m.HDFS.IsHDFS)
		b = append(b, "},"...)
	}
	b = append(b, `"numCols":`...)
	b = strconv.AppendUint(b, m.NumCols, 10)
	if m.NumNonZeros != -1 {
		b = append(b, `,"numNonZeros":`...)
		b = strconv.AppendInt(b, m.NumNonZeros, 10)
	}
	b = append(b, `,"numRows":`...)
	b = strconv.AppendUint(b, m.NumRows, 10)
	if m.Schema != nil {
		b = append(b, `,"schema":[`...)
		for i, c := range m.Schema {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"label":`...)
			if b, err = appendJSONString(b, c.Label); err != nil {
				return nil, err
			}
			b = append(b, `,"valueType":`...)
			if b, err = appendJSONString(b, c.ValueType); err != nil {
				return nil, err
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if m.ValueType != "" {
		b = append(b, `,"valueType":`...)
		if b, err = appendJSONString(b, m.ValueType); err != nil {
			return nil, err
		}
	}
	b = append(b, '}')
	return b, nil
}

// appendJSONString escapes as nlohmann's dump does with ensure_ascii off:
// '"', '\\', \b \f \n \r \t, other control bytes as lowercase \u00xx, and
// everything else as raw UTF-8 (so not encoding/json, which also escapes
// <, >, & and U+2028/9).
func appendJSONString(b []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("daphne: string %q is not valid UTF-8", s)
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"'), nil
}

// A minimal JSON reader: enough for .meta files, with byte offsets in
// its errors, a depth bound, and no reflection.

type jsonNumber string

type jsonValue struct {
	off int
	v   any // nil, bool, string, jsonNumber, []jsonValue, *jsonObject
}

type jsonObject struct {
	keys []string
	vals []jsonValue
}

// get returns the last value of key, as nlohmann keeps the last of
// duplicate keys.
func (o *jsonObject) get(key string) (jsonValue, bool) {
	for i := len(o.keys) - 1; i >= 0; i-- {
		if o.keys[i] == key {
			return o.vals[i], true
		}
	}
	return jsonValue{}, false
}

func (v jsonValue) uint(key string) (uint64, error) {
	raw, ok := v.v.(jsonNumber)
	if !ok {
		return 0, &metaError{off: v.off, msg: fmt.Sprintf("%q is not a number", key)}
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, &metaError{off: v.off, msg: fmt.Sprintf("%q %s is not a non-negative integer", key, raw)}
	}
	return n, nil
}

type jsonParser struct {
	b    []byte
	i    int
	cols int // expected schema entries (numCols)
}

func (p *jsonParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) fail(msg string) error { return &metaError{off: p.i, msg: msg} }

func (p *jsonParser) value(depth int) (jsonValue, error) {
	if depth > maxJSONDepth {
		return jsonValue{}, p.fail("JSON nested too deeply")
	}
	p.space()
	if p.i >= len(p.b) {
		return jsonValue{}, p.fail("unexpected end of JSON")
	}
	start := p.i
	switch c := p.b[p.i]; {
	case c == '{':
		o := &jsonObject{}
		err := p.members(func(k string) error {
			var v jsonValue
			var err error
			if depth == 0 && k == "schema" {
				v, err = p.schema(depth + 1)
			} else {
				v, err = p.value(depth + 1)
			}
			if err != nil {
				return err
			}
			if depth == 0 && k == "numCols" {
				// Room for the schema's entries up front (nlohmann writes
				// numCols before schema), as far as the text can hold them.
				if n, ok := v.v.(jsonNumber); ok {
					if c, err := strconv.ParseUint(string(n), 10, 64); err == nil {
						p.cols = int(min(c, uint64(len(p.b)/16)))
					}
				}
			}
			o.keys = append(o.keys, k)
			o.vals = append(o.vals, v)
			return nil
		})
		if err != nil {
			return jsonValue{}, err
		}
		return jsonValue{start, o}, nil
	case c == '[':
		p.i++
		arr := []jsonValue{}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return jsonValue{start, arr}, nil
		}
		for {
			v, err := p.value(depth + 1)
			if err != nil {
				return jsonValue{}, err
			}
			arr = append(arr, v)
			p.space()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == ']' {
				p.i++
				return jsonValue{start, arr}, nil
			}
			return jsonValue{}, p.fail("expected ',' or ']'")
		}
	case c == '"':
		s, err := p.str()
		return jsonValue{start, s}, err
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return jsonValue{}, p.fail(fmt.Sprintf("unexpected byte 0x%02x", p.b[p.i]))
}

// schemaList is a parsed "schema" array: its entries, or the first entry
// that is not an object with string "label" and "valueType" keys (reported
// after the whole text parsed, so that syntax errors come first).
type schemaList struct {
	cols []SchemaColumn
	err  *metaError
}

// schema parses the value of the top-level "schema" key. An array is read
// straight into SchemaColumns, without a tree of values, so that a frame
// of a million columns costs its labels and little more; anything else is
// parsed as any value (and refused by the caller).
func (p *jsonParser) schema(depth int) (jsonValue, error) {
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return p.value(depth)
	}
	start := p.i
	p.i++
	l := &schemaList{cols: make([]SchemaColumn, 0, p.cols)}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return jsonValue{start, l}, nil
	}
	for i := 0; ; i++ {
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '{' {
			col, err := p.schemaEntry(i, depth+1, l)
			if err != nil {
				return jsonValue{}, err
			}
			l.cols = append(l.cols, col)
		} else {
			e, err := p.value(depth + 1)
			if err != nil {
				return jsonValue{}, err
			}
			if l.err == nil {
				l.err = &metaError{off: e.off, msg: fmt.Sprintf("schema[%d] is not an object", i)}
			}
		}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return jsonValue{start, l}, nil
		}
		return jsonValue{}, p.fail("expected ',' or ']'")
	}
}

// schemaEntry parses schema entry i, an object at p.i. As elsewhere the
// last of duplicate keys counts.
func (p *jsonParser) schemaEntry(i, depth int, l *schemaList) (SchemaColumn, error) {
	if depth > maxJSONDepth {
		return SchemaColumn{}, p.fail("JSON nested too deeply")
	}
	start := p.i
	var col SchemaColumn
	var seen [2]bool
	var bad [2]int // offset of a non-string value of the key, or -1
	bad[0], bad[1] = -1, -1
	err := p.members(func(k string) error {
		p.space()
		key := -1
		switch k {
		case "label":
			key = 0
		case "valueType":
			key = 1
		}
		if key >= 0 && p.i < len(p.b) && p.b[p.i] == '"' {
			var err error
			if key == 0 {
				col.Label, err = p.str()
			} else {
				col.ValueType, err = p.plainStr()
				col.ValueType = internValueType(col.ValueType)
			}
			seen[key], bad[key] = true, -1
			return err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		if key >= 0 {
			seen[key], bad[key] = true, v.off
		}
		return nil
	})
	if err != nil {
		return col, err
	}
	if l.err == nil {
		for k, name := range [...]string{"label", "valueType"} {
			if !seen[k] {
				l.err = &metaError{off: start, msg: fmt.Sprintf("schema[%d] has no %q", i, name)}
				break
			}
			if bad[k] >= 0 {
				l.err = &metaError{off: bad[k], msg: fmt.Sprintf("schema[%d].%s is not a string", i, name)}
				break
			}
		}
	}
	return col, nil
}

// members parses the members of the object at p.i, calling member for each
// key with p.i at its value, which member must consume.
func (p *jsonParser) members(member func(key string) error) error {
	p.i++ // '{'
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return p.fail("expected a string key")
		}
		k, err := p.plainStr()
		if err != nil {
			return err
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return p.fail("expected ':'")
		}
		p.i++
		if err := member(k); err != nil {
			return err
		}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return nil
		}
		return p.fail("expected ',' or '}'")
	}
}

// plainStr is str for keys and names: a string of plain ASCII comes back
// as the one of the package's names it equals without an allocation,
// anything else as str returns it.
func (p *jsonParser) plainStr() (string, error) {
	for j := p.i + 1; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			raw := p.b[p.i+1 : j]
			for _, name := range plainNames {
				if string(raw) == name {
					p.i = j + 1
					return name, nil
				}
			}
			break
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	return p.str()
}

// plainNames are the keys and value type names of a schema entry.
var plainNames = []string{"label", "valueType", "si8", "si32", "si64", "ui8", "ui32", "ui64", "f32", "f64", "str"}

// internValueType returns the package's own copy of a value type name, so
// that a million schema entries share eight strings.
func internValueType(s string) string {
	if vt, ok := ParseValueType(s); ok {
		return vt.String()
	}
	return s
}

func (p *jsonParser) literal(word string, v any) (jsonValue, error) {
	start := p.i
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return jsonValue{}, p.fail("invalid literal")
	}
	p.i += len(word)
	return jsonValue{start, v}, nil
}

func (p *jsonParser) number() (jsonValue, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.b[p.i] == '-' {
		p.i++
	}
	intStart := p.i
	if digits() == 0 {
		return jsonValue{}, p.fail("invalid number")
	}
	if p.b[intStart] == '0' && p.i-intStart > 1 {
		return jsonValue{}, &metaError{off: intStart, msg: "number with a leading zero"}
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return jsonValue{}, p.fail("invalid number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return jsonValue{}, p.fail("invalid number")
		}
	}
	return jsonValue{start, jsonNumber(p.b[start:p.i])}, nil
}

// str parses a JSON string at p.i (which is '"'), rejecting invalid UTF-8
// and lone surrogates as nlohmann does.
func (p *jsonParser) str() (string, error) {
	p.i++
	// Plain ASCII without escapes: one allocation.
	for j := p.i; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			s := string(p.b[p.i:j])
			p.i = j + 1
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	var out []byte
	for {
		if p.i >= len(p.b) {
			return "", p.fail("unterminated string")
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", p.fail("unterminated escape")
			}
			e := p.b[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if r >= 0xD800 && r < 0xDC00 {
					if p.i+1 >= len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
						return "", p.fail("lone high surrogate")
					}
					p.i += 2
					lo, err := p.hex4()
					if err != nil {
						return "", err
					}
					if lo < 0xDC00 || lo > 0xDFFF {
						return "", p.fail("invalid low surrogate")
					}
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				} else if r >= 0xDC00 && r <= 0xDFFF {
					return "", p.fail("lone low surrogate")
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", &metaError{off: p.i - 1, msg: "invalid escape"}
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.i++
		default:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n <= 1 {
				return "", p.fail("invalid UTF-8 in string")
			}
			out = append(out, p.b[p.i:p.i+n]...)
			p.i += n
		}
	}
}

func (p *jsonParser) hex4() (rune, error) {
	if len(p.b)-p.i < 4 {
		return 0, p.fail("short \\u escape")
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		d := layout.DigitValue(c)
		if d >= 16 {
			return 0, p.fail("invalid \\u escape")
		}
		r = r<<4 | rune(d)
	}
	p.i += 4
	return r, nil
}
