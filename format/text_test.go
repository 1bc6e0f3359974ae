package format

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/layout"
)

func TestTextTypeOf(t *testing.T) {
	for _, c := range []struct {
		typeName string
		typ      layout.Type
		kind     Kind
		want     TextType
		ok       bool
	}{
		{"string", layout.Invalid, KindColumn, TextType{}, true},
		{"bytes5", layout.Invalid, KindArray, TextType{Kind: 'S', Size: 5}, true},
		{"bytes<16>", layout.Invalid, KindOpaque, TextType{Kind: 'S', Size: 16}, true},
		{"str3", layout.Invalid, KindColumn, TextType{Kind: 'U', Size: 3}, true},
		{"str<3>", layout.Invalid, KindOpaque, TextType{Kind: 'U', Size: 3}, true},
		{"bytes0", layout.Invalid, KindArray, TextType{}, false},
		{"bytes05", layout.Invalid, KindArray, TextType{}, false},
		{"bytes<5", layout.Invalid, KindArray, TextType{}, false},
		{"bytes", layout.Invalid, KindOpaque, TextType{}, false},
		{"void4", layout.Invalid, KindArray, TextType{}, false},
		{"datetime", layout.Invalid, KindColumn, TextType{}, false},
		{"string", layout.U8, KindString, TextType{}, false}, // ABF's String: bytes of a type
		{"", layout.F64, KindArray, TextType{}, false},
	} {
		r := Record{Array: layout.Array{Type: c.typ}, Kind: c.kind, TypeName: c.typeName}
		got, ok := TextTypeOf(&r)
		assert.Equal(t, c.ok, ok, c.typeName)
		assert.Equal(t, c.want, got, c.typeName)
	}
}

// texts is a source of one text record that reads as text, and one of
// numbers that does not.
type texts struct{ vals []string }

func (s *texts) Records() []Record {
	return []Record{
		{Array: layout.Array{Name: "n", Type: layout.I8, Shape: []int64{1}}, Kind: KindArray},
		{Array: layout.Array{Name: "t", Shape: []int64{int64(len(s.vals))}}, Kind: KindOpaque, TypeName: "string"},
	}
}

func (s *texts) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	return errors.ErrUnsupported
}

func (s *texts) ReadText(i int, fn func([]string) error) error {
	if i != 1 {
		return errors.ErrUnsupported
	}
	return fn(s.vals)
}

// ReadText reads a text record through the views that Select, Rename and
// ArraysWithText make.
func TestReadTextThroughViews(t *testing.T) {
	src := &texts{vals: []string{"a", "", "ß"}}
	sel, err := Select(src, "t")
	require.NoError(t, err)
	ren, err := Rename(sel, []string{"u"})
	require.NoError(t, err)
	arr, err := ArraysWithText(ren)
	require.NoError(t, err)
	for name, s := range map[string]Source{"file": src, "select": sel, "rename": ren, "arrays": arr} {
		i := NumRecords(s) - 1
		var got []string
		require.NoError(t, ReadText(s, i, func(b []string) error { got = append(got, b...); return nil }), name)
		assert.Equal(t, src.vals, got, name)
	}
	sel, err = Select(src, "n")
	require.NoError(t, err)
	assert.ErrorIs(t, ReadText(sel, 0, func([]string) error { return nil }), errors.ErrUnsupported)
}

// frame is a table whose text column only ScanTable gives.
type frame struct{}

func (frame) Records() []Record {
	return []Record{
		{Array: layout.Array{Name: "k", Type: layout.I8, Shape: []int64{3}}, Kind: KindColumn},
		{Array: layout.Array{Name: "s", Shape: []int64{3}}, Kind: KindColumn, TypeName: "string", Nullable: true},
	}
}

func (frame) ReadArray(int, []byte, int64, layout.Order, binary.ByteOrder) error {
	return errors.ErrUnsupported
}

func (frame) ScanTable(batch int, fn func(first int64, cols []Column) error) error {
	if err := fn(0, []Column{{Values: []int8{1, 2}}, {Values: []string{"x", ""}, Reason: []int8{-1, 0}}}); err != nil {
		return err
	}
	return fn(2, []Column{{Values: []int8{3}}, {Values: []string{"z"}, Reason: []int8{-1}}})
}

// A table's text column without a TextReader is read from the table's
// scan, a null cell as "".
func TestReadTextFromScan(t *testing.T) {
	var got []string
	require.NoError(t, ReadText(frame{}, 1, func(b []string) error { got = append(got, b...); return nil }))
	assert.Equal(t, []string{"x", "", "z"}, got)
	assert.ErrorIs(t, ReadText(frame{}, 0, func([]string) error { return nil }), errors.ErrUnsupported)
}
