package zarr

import (
	"bytes"
	"encoding/json"
	"strings"
)

// entry is what an open store keeps of an array: its path, its metadata
// without path and attributes — shared by the arrays whose documents
// differ in nothing else, as most of a large group's do — and its
// attributes as compact JSON, decoded when they are asked for. A group of
// many arrays then costs a few dozen bytes an array.
type entry struct {
	path  string
	m     *meta
	attrs []byte // a JSON object; nil for none
}

// loader reads the documents of a store's arrays: each document that
// equals one read before (in a version 3 document, apart from the
// value of "attributes") takes that one's meta instead of being parsed.
type loader struct {
	alike map[string]*meta
	key   []byte // the key being looked up
	buf   bytes.Buffer
	// doc and attrs are the buffers documents are read into (an array's,
	// and its .zattrs), reused from array to array.
	doc, attrs [4096]byte
}

// maxAlike bounds the documents a loader remembers: past it, the new
// ones are parsed each time.
const maxAlike = 4096

// v2 returns the meta of an array's .zarray document, parsed unless an
// equal document was.
func (l *loader) v2(doc []byte) (*meta, *metaError) {
	if m := l.alike[string(doc)]; m != nil {
		return m, nil
	}
	m, merr := parseV2(doc, nil)
	if merr == nil {
		l.remember(string(doc), m)
	}
	return m, merr
}

func (l *loader) remember(key string, m *meta) {
	if l.alike == nil {
		l.alike = map[string]*meta{}
	}
	if len(l.alike) < maxAlike {
		l.alike[key] = m
	}
}

// arrayV3 returns the meta and the attributes of the array zarr.json doc
// describes when a document equal to it but for its attributes was
// parsed before; ok is false when doc must be parsed (a group, a new
// document, an error to report as parseNodeV3 reports it).
func (l *loader) arrayV3(doc []byte) (m *meta, attrs []byte, ok bool) {
	if len(l.alike) == 0 || !json.Valid(doc) {
		return nil, nil, false
	}
	start, end, ok := attributesValue(doc)
	if !ok {
		return nil, nil, false
	}
	l.key = withoutAttributes(doc, l.key[:0])
	if m = l.alike[string(l.key)]; m == nil {
		return nil, nil, false
	}
	if start < 0 {
		return m, nil, true
	}
	attrs, err := l.attributes(doc[start:end])
	if err != nil {
		return nil, nil, false
	}
	return m, attrs, true
}

// v3 parses the array document doc, decoded as z, noting its meta for
// the arrays described alike: the meta as an entry keeps it, without its
// attributes, and their compact JSON apart.
func (l *loader) v3(doc []byte, z *zarrJSONDoc) (*meta, []byte, *metaError) {
	m, merr := parseV3(z)
	if merr != nil {
		return nil, nil, merr
	}
	m.attrs = nil
	if z.DimNames == nil {
		m.dims = nil // taken from the attributes: each array's own
	}
	start, end, ok := attributesValue(doc)
	if ok {
		l.key = withoutAttributes(doc, l.key[:0])
		l.remember(string(l.key), m)
	}
	switch {
	case z.Attributes == nil:
		return m, nil, nil
	case ok && start >= 0:
		return m, l.compact(doc[start:end], false), nil
	}
	return m, l.compact(mustJSON(z.Attributes), false), nil
}

// attributes checks that raw, valid JSON, decodes as attributes do (an
// object or null) and returns it compact, nil for null.
func (l *loader) attributes(raw []byte) ([]byte, error) {
	var attrs map[string]any
	if err := json.Unmarshal(raw, &attrs); err != nil {
		return nil, err
	}
	return l.compact(raw, attrs == nil), nil
}

// compact returns the attributes object raw (valid JSON) compact, nil
// where null is.
func (l *loader) compact(raw []byte, null bool) []byte {
	if null {
		return nil
	}
	l.buf.Reset()
	json.Compact(&l.buf, raw)
	if l.buf.Len() == 2 {
		return emptyObject
	}
	return bytes.Clone(l.buf.Bytes())
}

var emptyObject = []byte("{}")

// decodeAttrs decodes attributes an entry keeps (checked when the store
// was opened).
func decodeAttrs(raw []byte) map[string]any {
	if raw == nil {
		return nil
	}
	var attrs map[string]any
	json.Unmarshal(raw, &attrs)
	if attrs == nil {
		attrs = map[string]any{}
	}
	return attrs
}

// withoutAttributes appends to dst the JSON object doc (valid JSON)
// without the value of its member "attributes": the same for documents
// that differ in nothing else. Where attributesValue gives up, it is doc.
func withoutAttributes(doc, dst []byte) []byte {
	start, end, ok := attributesValue(doc)
	if !ok || start < 0 {
		return append(dst, doc...)
	}
	return append(append(dst, doc[:start]...), doc[end:]...)
}

// attributesValue finds the value of the member "attributes" of the JSON
// object doc (valid JSON): [start, end), or -1, -1 where there is none. ok
// is false where doc is not an object, or the member is there twice, or a
// member name could stand for it in encoding/json's eyes (escaped, or in
// other case).
func attributesValue(doc []byte) (start, end int, ok bool) {
	start, end = -1, -1
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return -1, -1, false
	}
	i++
	for {
		i = skipSpace(doc, i)
		switch doc[i] {
		case '}':
			return start, end, true
		case ',':
			i = skipSpace(doc, i+1)
		}
		after := skipString(doc, i)
		name := doc[i+1 : after-1]
		i = skipSpace(doc, skipSpace(doc, after)+1) // past the ':'
		v := i
		i = skipValue(doc, i)
		switch {
		case bytes.IndexByte(name, '\\') >= 0:
			return -1, -1, false
		case string(name) == "attributes":
			if start >= 0 {
				return -1, -1, false
			}
			start, end = v, i
		case bytes.EqualFold(name, []byte("attributes")):
			return -1, -1, false
		}
	}
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at doc[i].
func skipString(doc []byte, i int) int {
	for i++; doc[i] != '"'; i++ {
		if doc[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// skipValue returns the end of the value that starts at doc[i].
func skipValue(doc []byte, i int) int {
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		depth := 0
		for {
			switch doc[i] {
			case '"':
				i = skipString(doc, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(doc) && strings.IndexByte(",}] \t\r\n", doc[i]) < 0 {
		i++
	}
	return i
}
