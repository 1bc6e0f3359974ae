package format

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
)

func TestNumPyDType(t *testing.T) {
	for _, c := range []struct {
		t        layout.Type
		typeName string
		big      bool
		want     string
	}{
		{layout.F64, "", false, "<f8"},
		{layout.I32, "", true, ">i4"},
		{layout.U16, "", false, "<u2"},
		{layout.Bool, "", true, "|b1"},
		{layout.I8, "", false, "|i1"},
		{layout.C128, "", false, "<c16"},
		{layout.F16, "", true, ">f2"},
		{layout.I64, "datetime64[ns]", false, "<M8[ns]"},
		{layout.I64, "timedelta64[s]", true, ">m8[s]"},
	} {
		if got := NumPyDType(c.t, c.typeName, c.big); got != c.want {
			t.Errorf("NumPyDType(%v, %q, %v) = %q, want %q", c.t, c.typeName, c.big, got, c.want)
		}
	}
}

func TestChunkKey(t *testing.T) {
	for _, c := range []struct {
		idx  []int64
		sep  string
		want string
	}{
		{nil, ".", "0"},
		{[]int64{3}, ".", "3"},
		{[]int64{1, 0, 12}, ".", "1.0.12"},
		{[]int64{1, 2}, "/", "1/2"},
	} {
		ch := Chunk{Index: c.idx}
		if got := ch.Key(c.sep); got != c.want {
			t.Errorf("Key(%v, %q) = %q, want %q", c.idx, c.sep, got, c.want)
		}
	}
}

func TestDimensionsName(t *testing.T) {
	d := Dimensions{}
	steps := []struct {
		path  string
		shape []int64
		given []string
		want  []string
	}{
		{"a", []int64{10, 4}, nil, []string{"dim_0", "dim_1"}},
		{"b", []int64{10, 5}, nil, []string{"dim_0", "b_dim_1"}},
		{"c", []int64{7}, []string{"time"}, []string{"time"}},
		{"d", []int64{8}, []string{"time"}, []string{"d_dim_0"}}, // "time" is 7 long, dim_0 10
		{"b_dim_1", []int64{9, 9}, nil, []string{"b_dim_1_dim_0", "b_dim_1_dim_1"}},
		{"g/e", []int64{3}, nil, []string{"dim_0"}}, // another group
	}
	for _, s := range steps {
		if got := d.Name(s.path, s.shape, s.given); !slices.Equal(got, s.want) {
			t.Errorf("Name(%q, %v, %v) = %q, want %q", s.path, s.shape, s.given, got, s.want)
		}
	}
}

func TestPayloadLocation(t *testing.T) {
	p := &Payload{Array: layout.Array{Type: layout.F32, Shape: []int64{3, 2}, Order: layout.ColMajor, BigEndian: true, Offset: 40, Size: 24}}
	loc, err := PayloadLocation(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if loc.DType != ">f4" || loc.Offset != 40 || loc.Length != 24 || loc.Order != layout.ColMajor || !slices.Equal(loc.Shape, []int64{3, 2}) || loc.Grid != nil || loc.Path != "" {
		t.Errorf("location %+v", loc)
	}
	for _, bad := range []*Payload{
		{Array: layout.Array{Type: layout.F32, Offset: -1}, NoView: errors.New("a deflated member")},
		{Array: layout.Array{Type: layout.I128, Offset: 0, Size: 16}},
		{Array: layout.Array{Type: layout.JuliaChar, Offset: 0, Size: 4}},
	} {
		if _, err := PayloadLocation(bad, ""); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("PayloadLocation(%v) = %v, want ErrUnsupported", bad.Array.Type, err)
		}
	}
}

func TestFillJSON(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	for _, c := range []struct {
		b    []byte
		t    layout.Type
		bo   binary.ByteOrder
		want any
	}{
		{[]byte{1}, layout.Bool, le, true},
		{[]byte{0}, layout.Bool, le, false},
		{[]byte{0xff}, layout.I8, le, int64(-1)},
		{[]byte{0xff}, layout.U8, le, uint64(255)},
		{[]byte{0xff, 0xfe}, layout.I16, be, int64(-2)},
		{[]byte{0, 0, 0, 0x80}, layout.I32, le, int64(math.MinInt32)},
		{[]byte{0, 0, 0, 0x80}, layout.U32, le, uint64(1 << 31)},
		{[]byte{0x3e, 0x00}, layout.F16, be, 1.5},
		{[]byte{0, 0, 0xc0, 0x7f}, layout.F32, le, "NaN"},
		{[]byte{0, 0, 0x80, 0x7f}, layout.F32, le, "Infinity"},
		{[]byte{0xff, 0xf0, 0, 0, 0, 0, 0, 0}, layout.F64, be, "-Infinity"},
		{[]byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}, layout.F64, le, 1.5},
		{[]byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}, layout.C64, le, []any{1.0, -2.0}},
	} {
		got := FillJSON(c.b, c.t, c.bo)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("FillJSON(% x, %s) = %#v, want %#v", c.b, c.t, got, c.want)
		}
	}
}
