package format

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// TextType is what the elements of a text record are, as its TypeName
// says: fixed-size bytes (NumPy's |S<n>, HDF5's fixed strings), fixed-size
// NumPy str of n characters (<U<n>), or text of any length (CSV and SciDB
// string columns, HDF5's variable-length strings).
type TextType struct {
	// Kind is 'S' for bytes of Size bytes, 'U' for str of Size
	// characters, 0 for text of any length (Size 0).
	Kind byte
	Size int
}

// TextTypeOf reports the text type of record r: one whose Type is not
// Valid and whose TypeName is "string", "bytes<n>" or "str<n>" (n with or
// without the angle brackets, as the formats spell it).
func TextTypeOf(r *Record) (TextType, bool) {
	if r.Type.Valid() || r.Kind == KindString {
		return TextType{}, false
	}
	if r.TypeName == "string" {
		return TextType{}, true
	}
	for _, k := range []struct {
		prefix string
		kind   byte
	}{{"bytes", 'S'}, {"str", 'U'}} {
		rest, ok := strings.CutPrefix(r.TypeName, k.prefix)
		if !ok {
			continue
		}
		if inner, ok := strings.CutPrefix(rest, "<"); ok {
			if rest, ok = strings.CutSuffix(inner, ">"); !ok {
				return TextType{}, false
			}
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n <= 0 || strconv.Itoa(n) != rest {
			return TextType{}, false
		}
		return TextType{Kind: k.kind, Size: n}, true
	}
	return TextType{}, false
}

// ReadText calls fn with the text elements of record i of src in logical
// row-major order, a batch at a time (see TextReader): through the
// TextReader of src, also behind Select, Rename and Arrays, or, for a
// column of a table that has none, from a scan of the table (a null cell
// as ""). The batch may be reused after fn returns. A record that holds
// no text gives an error wrapping errors.ErrUnsupported.
func ReadText(src Source, i int, fn func(batch []string) error) error {
	switch s := src.(type) {
	case *view:
		return ReadText(s.src, s.index[i], fn)
	case *withReasons:
		if s.index[i] < 0 {
			return fmt.Errorf("record %q is no text: %w", s.recs[i].Name, errors.ErrUnsupported)
		}
		return ReadText(s.src, s.index[i], fn)
	case TextReader:
		return s.ReadText(i, fn)
	}
	r := RecordAt(src, i)
	if r.Kind != KindColumn || r.Type.Valid() {
		return fmt.Errorf("record %q (%s) is no text: %w", r.Name, r.TypeString(), errors.ErrUnsupported)
	}
	k, at := -1, 0
	err := eachColumn(src, func(rec, _ int, _ *Record) error {
		if rec == i {
			k = at
			return errStop
		}
		at++
		return nil
	})
	if err != nil && err != errStop {
		return err
	}
	if k < 0 {
		return fmt.Errorf("record %q is not a column of the table: %w", r.Name, errors.ErrUnsupported)
	}
	return ScanTable(src, 1<<14, func(_ int64, cols []Column) error {
		vals, ok := cols[k].Values.([]string)
		if !ok {
			return fmt.Errorf("record %q: text expected, got %T", r.Name, cols[k].Values)
		}
		return fn(vals)
	})
}
