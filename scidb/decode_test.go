package scidb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hx decodes hex with spaces.
func hx(s string) []byte {
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		panic(err)
	}
	return b
}

func mustFormat(t testing.TB, s string) *Schema {
	t.Helper()
	f, err := ParseFormat(s)
	require.NoError(t, err)
	return f
}

// flatArray is spec §7's test vector.
var flatArray = hx(`0100 0000 ff06 0000 0048 656c 6c6f 0002
0000 0057 00fe ff02 0107 0000 0000 0100
0000 00`)

const flatFormat = "(int8, int16 null, string null, string)"

func TestFlatArrayDecode(t *testing.T) {
	require.Len(t, flatArray, 35)
	f := mustFormat(t, flatFormat)
	for _, strict := range []bool{false, true} {
		tb, err := Decode(flatArray, &Options{Format: f, Lenient: !strict})
		require.NoError(t, err)
		require.Equal(t, 2, tb.Len)
		require.Len(t, tb.Cols, 4)
		assert.Equal(t, []int8{1, -2}, tb.Cols[0].Data)
		assert.Nil(t, tb.Cols[0].Null)
		assert.Nil(t, tb.Cols[0].Reason)
		assert.Equal(t, []int16{0, 258}, tb.Cols[1].Data)
		assert.Equal(t, []bool{true, false}, tb.Cols[1].Null)
		assert.Equal(t, []int8{0, -1}, tb.Cols[1].Reason)
		assert.Equal(t, []string{"Hello", ""}, tb.Cols[2].Data)
		assert.Equal(t, []bool{false, true}, tb.Cols[2].Null)
		assert.Equal(t, []int8{-1, 7}, tb.Cols[2].Reason)
		assert.Equal(t, []string{"W", ""}, tb.Cols[3].Data)
		assert.Equal(t, "a2", tb.Cols[2].Name)

		var out bytes.Buffer
		require.NoError(t, Encode(&out, tb))
		assert.Equal(t, flatArray, out.Bytes())
	}
}

func TestFlatArrayStream(t *testing.T) {
	f := mustFormat(t, flatFormat)
	r := NewDecoder(bytes.NewReader(flatArray), &Options{Format: f})
	row := make(Row, 4)
	require.NoError(t, r.Read(row))
	assert.Equal(t, int8(1), row[0].Int8())
	assert.True(t, row[1].Null)
	assert.Equal(t, int8(0), row[1].Reason)
	assert.Equal(t, "Hello", row[2].String())
	assert.Equal(t, "W", row[3].String())
	assert.Equal(t, int64(1), r.Cell())
	assert.Equal(t, int64(21), r.Offset())
	require.NoError(t, r.Read(row))
	assert.Equal(t, int8(-2), row[0].Int8())
	assert.Equal(t, int16(258), row[1].Int16())
	assert.Equal(t, int8(-1), row[1].Reason)
	assert.True(t, row[2].Null)
	assert.Equal(t, int8(7), row[2].Reason)
	assert.Equal(t, "", row[3].String())
	assert.Equal(t, io.EOF, r.Read(row))
	assert.Equal(t, io.EOF, r.Read(row))

	var out bytes.Buffer
	w := NewEncoder(&out, f)
	require.NoError(t, w.Write(Row{Int8Value(1), NullValue(0), StringValue("Hello"), StringValue("W")}))
	require.NoError(t, w.Write(Row{Int8Value(-2), Int16Value(258), NullValue(7), StringValue("")}))
	require.NoError(t, w.Flush())
	assert.Equal(t, flatArray, out.Bytes())
	assert.Equal(t, int64(2), w.Count())
}

func TestFlatArrayTruncated(t *testing.T) {
	f := mustFormat(t, flatFormat)
	for n := 0; n <= len(flatArray); n++ {
		data := flatArray[:n]
		tb, err := Decode(data, &Options{Format: f, Lenient: true})
		_, serr := readAll(data, &Options{Format: f, Lenient: true})
		switch n {
		case 0, 21, 35:
			require.NoError(t, err, "t=%d", n)
			require.NoError(t, serr, "t=%d", n)
			assert.Equal(t, map[int]int{0: 0, 21: 1, 35: 2}[n], tb.Len)
		default:
			for _, e := range []error{err, serr} {
				var de *FormatError
				require.True(t, errors.As(e, &de), "t=%d: %v", n, e)
				want := int64(0)
				if n > 21 {
					want = 1
				}
				assert.Equal(t, want, de.Cell, "t=%d", n)
				assert.True(t, errors.Is(e, mmapfile.ErrTruncated) || errors.Is(e, ErrLength), "t=%d: %v", n, e)
				assert.LessOrEqual(t, de.Offset, int64(n))
			}
		}
	}
}

func TestFlatArraySkips(t *testing.T) {
	f := mustFormat(t, "(int8, skip(2) null, skip null, string)")
	tb, err := Decode(flatArray, &Options{Format: f})
	require.NoError(t, err)
	require.Len(t, tb.Cols, 2)
	assert.Equal(t, []int8{1, -2}, tb.Cols[0].Data)
	assert.Equal(t, []string{"W", ""}, tb.Cols[1].Data)
	var out bytes.Buffer
	require.NoError(t, Encode(&out, tb))
	want := hx("01 000000 0000000000 02000000 5700 fe 000000 0000000000 01000000 00")
	assert.Len(t, want, 29)
	assert.Equal(t, want, out.Bytes())
}

// readAll reads data with a Reader and returns one Row copy per cell.
func readAll(data []byte, o *Options) ([]Row, error) {
	r := NewDecoder(bytes.NewReader(data), o)
	var rows []Row
	for {
		row := make(Row, len(o.Format.Attrs))
		err := r.Read(row)
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		for i := range row {
			if row[i].Raw != nil {
				row[i].Raw = bytes.Clone(row[i].Raw)
			}
		}
		rows = append(rows, row)
	}
}

// TestCases runs spec §7's table of cases through Decode, the streaming
// Decoder.
func TestCases(t *testing.T) {
	cases := []struct {
		name   string
		format string
		data   string
		want   []any // per attribute: the Data of one cell (nil = null)
		reason []int8
		// strictErr: error in strict mode; nil = strict reads the same.
		strictErr error
		err       error // error in lenient mode
		cell      int64
		attr      int
		off       int64
		write     string // bytes the writer produces for want; "" = data
	}{
		{name: "empty string", format: "(string)", data: "01000000 00", want: []any{""}},
		{name: "L=0", format: "(string)", data: "00000000", want: []any{""}, strictErr: ErrString, write: "01000000 00"},
		{name: "no NUL", format: "(string)", data: "02000000 4142", want: []any{"AB"}, strictErr: ErrString, write: "03000000 414200"},
		{name: "embedded NUL", format: "(string)", data: "04000000 41004200", want: []any{"A\x00B"}, strictErr: ErrString, write: "-"},
		{name: "null string", format: "(string null)", data: "00 00000000", want: []any{nil}, reason: []int8{0}},
		{name: "null with length", format: "(string null)", data: "03 02000000 4100", want: []any{nil}, reason: []int8{3}, strictErr: ErrNull, write: "03 00000000"},
		{name: "garbage length", format: "(string null)", data: "00 ffffff7f", err: ErrLength, cell: 0, attr: 0, off: 5},
		{name: "null garbage payload", format: "(int64 null)", data: "00 deadbeef01020304", want: []any{nil}, reason: []int8{0}, write: "00 0000000000000000"},
		{name: "SciDB-Py #99", format: "(uint32 null)", data: "05 00000080", want: []any{nil}, reason: []int8{5}, write: "05 00000000"},
		{name: "reason 127", format: "(int8 null)", data: "7f 2a", want: []any{nil}, reason: []int8{127}, write: "7f 00"},
		{name: "prefix 80", format: "(int16 null)", data: "80 2a00", want: []any{int16(42)}, reason: []int8{-1}, strictErr: ErrPrefix, write: "ff 2a00"},
		{name: "prefix fe", format: "(int16 null)", data: "fe 2a00", want: []any{int16(42)}, reason: []int8{-1}, strictErr: ErrPrefix, write: "ff 2a00"},
		{name: "prefix ff", format: "(int16 null)", data: "ff 2a00", want: []any{int16(42)}, reason: []int8{-1}},
		{name: "bool 02", format: "(bool)", data: "02", want: []any{true}, strictErr: ErrBool, write: "01"},
		{name: "bool", format: "(bool, bool null, bool null)", data: "00 ff01 0000", want: []any{false, true, nil}, reason: []int8{-1, 0}},
		{name: "skips in", format: "(skip, int32, skip(3), skip null, skip(2) null, int8)",
			data: "02000000 aabb 07000000 112233 55 01000000 cc 66 ddee 09", want: []any{int32(7), int8(9)},
			write: "00000000 07000000 000000 0000000000 000000 09"},
		{name: "string(N)", format: "(string(8))", data: "616263 00 00000000", want: []any{"abc"}},
		{name: "string(N) junk", format: "(string(8))", data: "616263 00 7879 0000", want: []any{"abc"}, write: "616263 00 00000000"},
		{name: "string(N) full", format: "(string(4))", data: "61626364", want: []any{"abcd"}, strictErr: ErrString, write: "-"},
		{name: "string(9)", format: "(string(9))", data: "6162636465666768 00", want: []any{"abcdefgh"}},
		{name: "null string(N)", format: "(string(4) null)", data: "00 00000000", want: []any{nil}, reason: []int8{0}},
		{name: "binary(N)", format: "(binary(4))", data: "01020000", want: []any{[]byte{1, 2, 0, 0}}},
		{name: "binary NULs", format: "(binary)", data: "03000000 004100", want: []any{[]byte{0, 0x41, 0}}},
		{name: "binary empty", format: "(binary null, binary null)", data: "ff 00000000 00 00000000", want: []any{[]byte{}, nil}, reason: []int8{-1, 0}},
		{name: "float, double", format: "(float, double)", data: "0000c0bf 9a9999999999b93f", want: []any{float32(-1.5), 0.1}},
		{name: "datetime", format: "(datetime)", data: "dcfb525c00000000", want: []any{Datetime(1548942300)}},
		{name: "datetimetz", format: "(datetimetz)", data: "40562b5c00000000 201c000000000000", want: []any{DatetimeTZ{1546344000, 7200}}},
		{name: "datetimetz -5:30", format: "(datetimetz)", data: "fffa5a5e00000000 a8b2ffffffffffff", want: []any{DatetimeTZ{1583020799, -19800}}},
		{name: "ints", format: "(int8, int16, int32, int64, uint8, uint16, uint32, uint64, char)",
			data: "80 0080 00000080 0000000000000080 ff ffff ffffffff ffffffffffffffff 41",
			want: []any{int8(-128), int16(-32768), int32(-2147483648), int64(-9223372036854775808), uint8(255), uint16(65535), uint32(4294967295), uint64(18446744073709551615), byte('A')}},
		{name: "truncated", format: "(int64, string)", data: "0100000000000000 05000000 61", err: ErrLength, cell: 0, attr: 1, off: 12},
		{name: "stride", format: "(int8, int16 null, char)", data: "01 ff0200 41 02 ff0300 42 03 ff", err: mmapfile.ErrTruncated, cell: 2, attr: 1, off: 12},
		{name: "empty file", format: "(int64, string null)", data: "", want: nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := mustFormat(t, c.format)
			data := hx(c.data)
			for _, strict := range []bool{false, true} {
				o := &Options{Format: f, Lenient: !strict}
				wantErr := c.err
				if strict && c.strictErr != nil {
					wantErr = c.strictErr
				}
				tb, err := Decode(data, o)
				rows, serr := readAll(data, o)
				if wantErr != nil {
					for _, e := range []error{err, serr} {
						require.ErrorIs(t, e, wantErr, "strict=%v", strict)
						var de *FormatError
						require.ErrorAs(t, e, &de)
						if c.err != nil && wantErr == c.err {
							assert.Equal(t, c.cell, de.Cell)
							assert.Equal(t, c.attr, de.Attr)
							assert.Equal(t, c.off, de.Offset)
						}
					}
					continue
				}
				require.NoError(t, err, "strict=%v", strict)
				require.NoError(t, serr, "strict=%v", strict)
				if c.want == nil {
					assert.Equal(t, 0, tb.Len)
					assert.Empty(t, rows)
					continue
				}
				require.Equal(t, 1, tb.Len)
				require.Len(t, rows, 1)
				ri := 0
				for a, w := range c.want {
					col := tb.Cols[a]
					v := rows[0][a]
					if w == nil {
						require.NotNil(t, col.Null)
						assert.True(t, col.Null[0])
						assert.True(t, v.Null)
					} else {
						assert.Equal(t, w, indexData(col.Data, 0), "attr %d", a)
						assert.Equal(t, w, valueAs(v, col.Column), "attr %d", a)
						assert.False(t, v.Null)
					}
					if col.Column.Nullable {
						assert.Equal(t, c.reason[ri], col.Reason[0], "attr %d", a)
						assert.Equal(t, c.reason[ri], v.Reason, "attr %d", a)
						ri++
					} else {
						assert.Nil(t, col.Reason)
					}
				}
				if strict && c.strictErr != nil {
					continue
				}
				want := data
				if c.write == "-" {
					var out bytes.Buffer
					assert.Error(t, Encode(&out, tb))
					continue
				} else if c.write != "" {
					want = hx(c.write)
				}
				var out bytes.Buffer
				require.NoError(t, Encode(&out, tb))
				assert.Equal(t, want, out.Bytes())
				out.Reset()
				w := NewEncoder(&out, f)
				require.NoError(t, w.Write(rows[0]))
				require.NoError(t, w.Flush())
				assert.Equal(t, want, out.Bytes())
			}
		})
	}
}

// indexData returns element i of a Col's Data.
func indexData(data any, i int) any {
	switch d := data.(type) {
	case []bool:
		return d[i]
	case []uint8:
		return d[i]
	case []int8:
		return d[i]
	case []int16:
		return d[i]
	case []uint16:
		return d[i]
	case []int32:
		return d[i]
	case []uint32:
		return d[i]
	case []int64:
		return d[i]
	case []uint64:
		return d[i]
	case []float32:
		return d[i]
	case []float64:
		return d[i]
	case []Datetime:
		return d[i]
	case []DatetimeTZ:
		return d[i]
	case []string:
		return d[i]
	case [][]byte:
		return d[i]
	}
	return nil
}

// valueAs converts a Value with the typed accessor of entry c.
func valueAs(v Value, c Column) any {
	switch c.Type {
	case TypeBool:
		return v.Bool()
	case TypeChar:
		return v.Char()
	case TypeInt8:
		return v.Int8()
	case TypeInt16:
		return v.Int16()
	case TypeInt32:
		return v.Int32()
	case TypeInt64:
		return v.Int64()
	case TypeUint8:
		return v.Uint8()
	case TypeUint16:
		return v.Uint16()
	case TypeUint32:
		return v.Uint32()
	case TypeUint64:
		return v.Uint64()
	case TypeFloat:
		return v.Float32()
	case TypeDouble:
		return v.Float64()
	case TypeDatetime:
		return v.Datetime()
	case TypeDatetimeTZ:
		return v.DatetimeTZ()
	case TypeString:
		return v.String()
	case TypeBinary:
		return v.Bytes()
	}
	return nil
}

func TestWriterErrors(t *testing.T) {
	cases := []struct {
		format string
		row    Row
		kind   error
		attr   int
	}{
		{"(int64)", Row{NullValue(0)}, ErrNull, 0},
		{"(int64, int8 null)", Row{Int64Value(1), NullValue(-1)}, ErrReason, 1},
		{"(string(8))", Row{StringValue("abcdefgh")}, ErrWidth, 0},
		{"(binary(2))", Row{BinaryValue([]byte{1, 2, 3})}, ErrWidth, 0},
		{"(string)", Row{StringValue("a\x00b")}, ErrString, 0},
		{"(string(8))", Row{StringValue("a\x00b")}, ErrString, 0},
		{"(int64)", Row{Int32Value(1)}, ErrWidth, 0},
		{"(datetimetz)", Row{DatetimeValue(1)}, ErrWidth, 0},
		{"(int64, int64)", Row{Int64Value(1)}, ErrWidth, -1},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			f := mustFormat(t, c.format)
			var out bytes.Buffer
			w := NewEncoder(&out, f)
			err := w.Write(c.row)
			require.ErrorIs(t, err, c.kind)
			var de *FormatError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, c.attr, de.Attr)
			assert.Equal(t, int64(-1), de.Offset)
			require.NoError(t, w.Flush())
			assert.Zero(t, out.Len(), "nothing of a bad row is written")
		})
	}
	f := mustFormat(t, "(string(9))")
	var out bytes.Buffer
	w := NewEncoder(&out, f)
	require.NoError(t, w.Write(Row{StringValue("abcdefgh")}))
	require.NoError(t, w.Flush())
	assert.Equal(t, hx("6162636465666768 00"), out.Bytes())

	f = mustFormat(t, "(int64, string null)")
	assert.NoError(t, NewEncoder(io.Discard, f).Write(Row{Int64Value(1), NullValue(0)}))
	assert.Error(t, NewEncoder(io.Discard, f).Write(Row{Int64Value(1), NullValue(3), StringValue("")}))
	de := newError("", -1, ErrNull, "null value for an entry without null")
	de.Cell, de.Attr, de.Column, de.Name = 3, 1, 2, "b: string null"
	assert.Equal(t, "scidb: row 3, attribute 1 (b: string null): null value for an entry without null: bad null value", de.Error())
}

func TestDataErrorMessage(t *testing.T) {
	f := mustFormat(t, "(int8, int16 null, string null)")
	require.NoError(t, f.SetNames("a", "b", "c"))
	_, err := Decode(hx("01 ff0100 ff 0c000000 48656c6c6f20776f726c6400 02 ff0200 00 ffffffff 0102030405"), &Options{Format: f, Lenient: true})
	assert.EqualError(t, err, "scidb: offset 30: cell 1, attribute 2 (c: string null): length 4294967295 exceeds the 5 bytes left: length exceeds the input: file is truncated: unexpected EOF")
	f = mustFormat(t, "(int8, skip null)")
	_, err = Decode(hx("01 00 0500"), &Options{Format: f, Lenient: true})
	assert.EqualError(t, err, "scidb: offset 2: cell 0, entry 1 (skip null): 4-byte length, input ends after 2: file is truncated: unexpected EOF")
}

func TestTimes(t *testing.T) {
	assert.Equal(t, "2019-01-31 13:45:00", Datetime(1548942300).String())
	assert.Equal(t, time.Date(2019, 1, 31, 13, 45, 0, 0, time.UTC), Datetime(1548942300).Time())
	tz := DatetimeTZ{1546344000, 7200}
	assert.Equal(t, "2019-01-01 12:00:00 +02:00", tz.String())
	assert.True(t, tz.Time().Equal(time.Date(2019, 1, 1, 10, 0, 0, 0, time.UTC)))
	_, off := tz.Time().Zone()
	assert.Equal(t, 7200, off)
	assert.Equal(t, tz, DatetimeTZOf(tz.Time()))
	tz = DatetimeTZ{1583020799, -19800}
	assert.Equal(t, "2020-02-29 23:59:59 -05:30", tz.String())
	assert.Equal(t, tz, DatetimeTZOf(tz.Time()))
	assert.Equal(t, "2019-01-01 12:00:00 -00:00", DatetimeTZ{1546344000, 0}.String())
	assert.Equal(t, Datetime(1548942300), DatetimeOf(time.Date(2019, 1, 31, 14, 45, 0, 0, time.FixedZone("", 3600))))
}
