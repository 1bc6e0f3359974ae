package format

import (
	"encoding/binary"
	"errors"
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
		{layout.F32, "nan", le, []byte{0, 0, 0xc0, 0x7f}},
		{layout.F32, "-f32.inf", le, []byte{0, 0, 0x80, 0xff}},
		{layout.F32, "1e39", le, []byte{0, 0, 0x80, 0x7f}},
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
		{layout.JuliaChar, "ab"}, {layout.I32, "1i64"}, {layout.U128, "-1"}, {layout.C64, "1"},
	} {
		_, err := ParseLiteral(c.t, c.in, le)
		assert.Error(t, err, "%s %s", c.t, c.in)
	}
	_, err := ParseLiteral(layout.C128, "1", le)
	assert.True(t, errors.Is(err, errors.ErrUnsupported))
}
