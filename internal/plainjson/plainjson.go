// Package plainjson writes JSON as people and tools read it back:
// json.Marshal without escaping <, > and &, so that NumPy's dtype "<f8"
// stays "<f8" in a listing or a reference document (not "\u003cf8"),
// which grep finds and which reads the same to every JSON parser.
//
// What is safe: everything; it keeps no state. What is not safe: the text
// is not for embedding in HTML, where those three characters matter.
package plainjson

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping: the same text but for
// <, > and &, written as themselves, and no trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
