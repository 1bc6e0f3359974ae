package scidb

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/layout"
)

func TestParseFormatValid(t *testing.T) {
	cases := []struct {
		in, canon string
		stride    int // 0 = variable
		attrs     int
	}{
		{"(int64)", "(int64)", 8, 1},
		{"( int64 , double null )", "(int64, double null)", 17, 2},
		{"(string, int64, int64 null)", "(string, int64, int64 null)", 0, 3},
		{"(skip,int64,int64 null)", "(skip, int64, int64 null)", 0, 2},
		{"(string,skip(8),skip(8) null)", "(string, skip(8), skip(8) null)", 0, 1},
		{"(float,string(10))", "(float, string(10))", 14, 2},
		{"(int32 NULL,float Null)", "(int32 null, float null)", 10, 2},
		{"(binary)", "(binary)", 0, 1},
		{"(string (10))", "(string(10))", 10, 1},
		{"(skip ( 8 ))", "(skip(8))", 8, 0},
		{"(string(10) null)", "(string(10) null)", 11, 1},
		{"(skip(2147483647))", "(skip(2147483647))", 2147483647, 0},
		{"(int64)   \t\n", "(int64)", 8, 1},
		{"(SKIP(2), Skip null, bool, char, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float, double, datetime, datetimetz, binary(3) null)",
			"(skip(2), skip null, bool, char, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float, double, datetime, datetimetz, binary(3) null)", 0, 15},
		{"(int8, int16 null, char)", "(int8, int16 null, char)", 5, 3},
		{"(datetimetz null, bool)", "(datetimetz null, bool)", 18, 2},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			f, err := ParseFormat(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.canon, f.String())
			s, ok := f.Stride()
			assert.Equal(t, c.stride, s)
			assert.Equal(t, c.stride > 0, ok)
			assert.Len(t, f.Attrs, c.attrs)
			assert.Len(t, f.Names, c.attrs)
			g, err := ParseFormat(f.String())
			require.NoError(t, err)
			assert.Equal(t, f.String(), g.String())
		})
	}
}

func TestParseFormatColumns(t *testing.T) {
	f, err := ParseFormat("(int8, int16 null, string null, string)")
	require.NoError(t, err)
	assert.Equal(t, []Column{
		{Type: TypeInt8, Pos: 1},
		{Type: TypeInt16, Nullable: true, Pos: 7},
		{Type: TypeString, Nullable: true, Pos: 19},
		{Type: TypeString, Pos: 32},
	}, f.Columns)
	assert.Equal(t, []int{0, 1, 2, 3}, f.Attrs)
	assert.Equal(t, []string{"a0", "a1", "a2", "a3"}, f.Names)

	f, err = ParseFormat("(skip(4), int32, skip null, string(3))")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 3}, f.Attrs)
	assert.Equal(t, Column{Type: TypeString, Width: 3, Pos: 28}, f.Attr(1))
	require.NoError(t, f.SetNames("x", "y"))
	assert.Equal(t, []string{"x", "y"}, f.Names)
	assert.Error(t, f.SetNames("x"))
}

func TestParseFormatInvalid(t *testing.T) {
	cases := []struct {
		in    string
		kind  error
		pos   int
		entry int
	}{
		{"()", layout.ErrSyntax, 2, 1},
		{"( )", layout.ErrSyntax, 3, 1},
		{"(int64,)", layout.ErrSyntax, 8, 2},
		{"(int64,,int8)", layout.ErrSyntax, 8, 2},
		{"(int64 not null)", layout.ErrSyntax, 10, 1},
		{"(int64 nullable)", layout.ErrSyntax, 15, 1},
		{"(8)", layout.ErrSyntax, 2, 1},
		{"(INT64)", ErrUnknownType, 6, 1},
		{"(Int64)", ErrUnknownType, 6, 1},
		{"(int)", ErrUnknownType, 4, 1},
		{"(foo,)", ErrUnknownType, 4, 1},
		{"(int64null)", ErrUnknownType, 10, 1},
		{" (int64)", ErrUnsupportedFormat, 0, 0},
		{"", ErrUnsupportedFormat, 0, 0},
		{"(int64 null null)", layout.ErrSyntax, 16, 1},
		{"(int64", layout.ErrSyntax, 6, 1},
		{"(int64 8)", layout.ErrSyntax, 8, 1},
		{"(int64) x", layout.ErrSyntax, 9, 0},
		{"(int64):x", layout.ErrSyntax, 7, 0},
		{"(string(-1))", layout.ErrSyntax, 8, 1},
		{"(skip(0))", layout.ErrSyntax, 7, 1},
		{"(skip(2147483648))", layout.ErrSyntax, 16, 1},
		{"(skip(99999999999999999999999))", layout.ErrSyntax, 29, 1},
		{"(int64(8))", ErrFixedSizeWidth, 8, 1},
		{"(indicator)", ErrUnknownType, 10, 1},
		{"(void)", ErrUnknownType, 5, 1},
		{"(rational)", ErrUnknownType, 9, 1},
		{"opaque", ErrOpaque, 0, 0},
		{"OPAQUE", ErrOpaque, 0, 0},
		{"csv", ErrUnsupportedFormat, 0, 0},
		{"binary", ErrUnsupportedFormat, 0, 0},
		{"(int64, null)", ErrUnknownType, 12, 2},
		{"(string(10)", layout.ErrSyntax, 11, 1},
		{"(string(10 null)", layout.ErrSyntax, 15, 1},
		{"(string(x))", layout.ErrSyntax, 9, 1},
		{"(int64 \"x\")", layout.ErrSyntax, 7, 1},
		{"(int64)(int8)", layout.ErrSyntax, 8, 0},
		{"(int64 [)", layout.ErrSyntax, 7, 1},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			f, err := ParseFormat(c.in)
			require.Error(t, err)
			assert.Nil(t, f)
			var fe *FormatStringError
			require.True(t, errors.As(err, &fe), "%T", err)
			assert.ErrorIs(t, err, c.kind)
			assert.Equal(t, c.pos, fe.Pos, "position: %v", err)
			assert.Equal(t, c.entry, fe.Entry, "entry: %v", err)
			assert.Equal(t, c.in, fe.Format)
		})
	}
}

func TestFormatErrorMessage(t *testing.T) {
	_, err := ParseFormat("(int64,)")
	assert.EqualError(t, err, `scidb: format "(int64,)": position 8, entry 2: empty entry`)
	_, err = ParseFormat("(INT64)")
	assert.EqualError(t, err, `scidb: format "(INT64)": position 6, entry 1: type "INT64" is not registered`)
	_, err = ParseFormat("opaque")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = ParseFormat("x")
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

func TestNewFormat(t *testing.T) {
	f, err := NewFormat(Column{Type: TypeInt64}, Column{Type: TypeString, Width: 4, Nullable: true}, Column{Type: TypeSkip})
	require.NoError(t, err)
	assert.Equal(t, "(int64, string(4) null, skip)", f.String())
	_, err = NewFormat(Column{Type: TypeInt64, Width: 3})
	assert.ErrorIs(t, err, ErrFixedSizeWidth)
	_, err = NewFormat(Column{})
	assert.Error(t, err)
}

func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"(int64)", "( int64 , double null )", "(string,skip(8),skip(8) null)", "(float,string(10))",
		"(int32 NULL,float Null)", "(skip(2147483647))", "()", "(int64,)", "(int64 not null)", "(int64(8))", "opaque",
		"(int64):x", "(string(-1))", "(int8, int16 null, string null, string)", "(datetimetz null, binary(4), skip null)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fm, err := ParseFormat(s)
		if err != nil {
			var fe *FormatStringError
			if !errors.As(err, &fe) {
				t.Fatalf("%q: error %T is not a *FormatStringError", s, err)
			}
			if fe.Pos < 0 || fe.Pos > len(s) {
				t.Fatalf("%q: position %d outside the string", s, fe.Pos)
			}
			return
		}
		canon := fm.String()
		g, err := ParseFormat(canon)
		if err != nil {
			t.Fatalf("%q: canonical %q does not parse: %v", s, canon, err)
		}
		if g.String() != canon {
			t.Fatalf("%q: canonical form not stable: %q vs %q", s, canon, g.String())
		}
		if len(g.Columns) != len(fm.Columns) {
			t.Fatalf("%q: column count changed", s)
		}
		for i := range g.Columns {
			a, b := g.Columns[i], fm.Columns[i]
			if a.Type != b.Type || a.Width != b.Width || a.Nullable != b.Nullable {
				t.Fatalf("%q: entry %d changed: %+v vs %+v", s, i, a, b)
			}
		}
	})
}

func TestHandBuiltFormat(t *testing.T) {
	f := &Schema{Columns: []Column{{Type: TypeInt8}, {Type: TypeInt16, Nullable: true}, {Type: TypeString, Nullable: true}, {Type: TypeString}}}
	s, ok := f.Stride()
	assert.False(t, ok)
	assert.Zero(t, s)
	tb, err := Decode(flatArray, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"W", ""}, tb.Cols[3].Data)
	assert.Equal(t, "a3", tb.Cols[3].Name)

	// Changing a parsed format's entries is seen by every reader.
	g := mustFormat(t, "(int64, int64)")
	g.Columns[1] = Column{Type: TypeInt8}
	s, ok = g.Stride()
	assert.True(t, ok)
	assert.Equal(t, 9, s)
	tb, err = Decode(hx("0100000000000000 02 0300000000000000 04"), &Options{Format: g, Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, []int8{2, 4}, tb.Cols[1].Data)

	for _, bad := range []*Schema{nil, {}, {Columns: []Column{{}}}, {Columns: []Column{{Type: TypeInt64, Width: 3}}}, {Columns: []Column{{Type: 99}}}} {
		_, err := Decode(flatArray, &Options{Format: bad, Lenient: true})
		assert.Error(t, err)
		assert.Error(t, NewDecoder(bytes.NewReader(flatArray), &Options{Format: bad, Lenient: true}).Read(Row{}))
		assert.Error(t, NewEncoder(io.Discard, bad).Write(Row{}))
	}
}

func TestPrepareKeepsParsedFormats(t *testing.T) {
	for _, s := range []string{flatFormat, fixedFormat, "(skip)", "(int64, double, int32 null)", "(skip(2147483647), skip(2147483647))"} {
		f := mustFormat(t, s)
		g, err := f.prepare()
		require.NoError(t, err)
		assert.Same(t, f, g, s)
	}
	f := mustFormat(t, "(int8, int16 null, char)")
	assert.Equal(t, []int{0, 1, 4}, f.offsets)
	assert.Equal(t, 5, f.stride)
}
