package format

import (
	"encoding/binary"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLiteral(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	for _, c := range []struct {
		t    layout.Type
		in   string
		bo   binary.ByteOrder
		want []byte
	}{
		{layout.I32, "42i32", le, []byte{42, 0, 0, 0}},
		{layout.I32, "258", be, []byte{0, 0, 1, 2}},
		{layout.I8, "-1", le, []byte{0xff}},
		{layout.U16, "0x102", le, []byte{2, 1}},
		{layout.U8, "0x1f", le, []byte{0x1f}},
		{layout.F64, "1.5", le, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}},
		{layout.F64, "-1.5e3", be, []byte{0xc0, 0x97, 0x70, 0, 0, 0, 0, 0}},
		{layout.F64, "inf", le, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x7f}},
		{layout.F32, "nan", le, []byte{0, 0, 0xc0, 0xff}}, // the NaN futhark-data reads f32.nan as
		{layout.F32, "-f32.inf", le, []byte{0, 0, 0x80, 0xff}},
		{layout.I32, "010", le, []byte{10, 0, 0, 0}}, // Futhark's decimal, not Go's octal
		{layout.C64, "[1, -2]", be, []byte{0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}},
		{layout.F16, "1.0f16", le, []byte{0, 0x3c}},
		{layout.Bool, "true", le, []byte{1}},
		{layout.Bool, "false", le, []byte{0}},
		{layout.JuliaChar, "ζ", le, []byte{0, 0, 0xb6, 0xce}},
		{layout.JuliaChar, "97", be, []byte{0x61, 0, 0, 0}},
		{layout.I128, "-2", le, []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{layout.U128, "1", be, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
	} {
		got, err := ParseLiteral(c.t, c.in, c.bo)
		require.NoError(t, err, "%s %s", c.t, c.in)
		assert.Equal(t, c.want, got, "%s %s", c.t, c.in)
	}
	for _, c := range []struct {
		t  layout.Type
		in string
	}{
		{layout.I8, "128"}, {layout.U8, "-1"}, {layout.Bool, "1"}, {layout.F64, "x"},
		{layout.JuliaChar, "ab"}, {layout.I32, "1i64"}, {layout.U128, "-1"},
		// Overflow, and a nonzero value that rounds to zero, are errors
		// unless the value is spelt inf.
		{layout.F32, "1e39"}, {layout.F32, "1e400"}, {layout.F16, "1e-8"},
	} {
		_, err := ParseLiteral(c.t, c.in, le)
		assert.Error(t, err, "%s %s", c.t, c.in)
	}
}
