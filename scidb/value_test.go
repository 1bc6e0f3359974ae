package scidb

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValueAccessors(t *testing.T) {
	assert.Equal(t, int64(-5), Int64Value(-5).Int64())
	assert.Equal(t, uint16(65535), Uint16Value(65535).Uint16())
	assert.Equal(t, float32(-1.5), Float32Value(-1.5).Float32())
	nan := math.Float64frombits(0x7ff8000000000123)
	assert.Equal(t, uint64(0x7ff8000000000123), math.Float64bits(Float64Value(nan).Float64()), "NaN payload kept")
	assert.Equal(t, DatetimeTZ{1, -2}, DatetimeTZValue(DatetimeTZ{1, -2}).DatetimeTZ())
	assert.Equal(t, "abc", StringValue("abc").String())
	// Wrong widths give zero values, never a panic.
	assert.Zero(t, Int64Value(7).Int32())
	assert.Zero(t, Int8Value(7).Int64())
	assert.Zero(t, StringValue("abcdefgh").DatetimeTZ())
	assert.Zero(t, NullValue(3).Int64())
	assert.Zero(t, Value{}.Float64())
	assert.True(t, RawValue([]byte{2}).Bool())
	assert.True(t, NullValue(0).IsNull())
	assert.Equal(t, int8(-1), Int64Value(0).Reason)
	assert.Equal(t, []byte{1, 0}, Int16Value(1).Bytes())
}

func TestNoAllocationPerFixedValue(t *testing.T) {
	f := mustFormat(t, "(int64, double null, int32 null, bool, datetimetz)")
	w := NewEncoder(io.Discard, f)
	row := make(Row, 5)
	n := testing.AllocsPerRun(100, func() {
		row[0] = Int64Value(1)
		row[1] = Float64Value(2)
		row[2] = NullValue(4)
		row[3] = BoolValue(true)
		row[4] = DatetimeTZValue(DatetimeTZ{1, 2})
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, n, "Writer.Write")

	var buf bytes.Buffer
	w = NewEncoder(&buf, f)
	for i := 0; i < 200; i++ {
		require.NoError(t, w.Write(row))
	}
	require.NoError(t, w.Flush())
	r := NewDecoder(bytes.NewReader(buf.Bytes()), &Options{Format: f})
	require.NoError(t, r.Read(row))
	var sum, runs int64
	n = testing.AllocsPerRun(100, func() {
		runs++
		if err := r.Read(row); err != nil {
			t.Fatal(err)
		}
		sum += row[0].Int64() + int64(row[1].Float64()) + int64(row[2].Int32())
	})
	assert.Zero(t, n, "Reader.Read")
	assert.Equal(t, 3*runs, sum)

	p := writeTemp(t, buf.Bytes())
	m, err := Open(p, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	defer m.Close()
	n = testing.AllocsPerRun(100, func() {
		if err := m.Read(7, row); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, n, "File.Read")
}

func TestText(t *testing.T) {
	cases := []struct {
		entry string
		v     Value
		text  string
	}{
		{"bool", BoolValue(true), "true"},
		{"bool null", NullValue(3), ""},
		{"char", CharValue('z'), "z"},
		{"int8", Int8Value(-128), "-128"},
		{"int16", Int16Value(-300), "-300"},
		{"int32", Int32Value(70000), "70000"},
		{"int64", Int64Value(-1 << 62), "-4611686018427387904"},
		{"uint8", Uint8Value(255), "255"},
		{"uint16", Uint16Value(65535), "65535"},
		{"uint32", Uint32Value(4294967295), "4294967295"},
		{"uint64", Uint64Value(18446744073709551615), "18446744073709551615"},
		{"float", Float32Value(0.1), "0.1"},
		{"double", Float64Value(0.1), "0.1"},
		{"double", Float64Value(1e300), "1e+300"},
		{"datetime", DatetimeValue(1548942300), "2019-01-31 13:45:00"},
		{"datetimetz", DatetimeTZValue(DatetimeTZ{1583020799, -19800}), "2020-02-29 23:59:59 -05:30"},
		{"datetimetz", DatetimeTZValue(DatetimeTZ{1546344000, 7200}), "2019-01-01 12:00:00 +02:00"},
		{"string", StringValue("a,b"), "a,b"},
		{"string(4)", StringValue("ab"), "ab"},
		{"binary", BinaryValue([]byte{0, 0xff}), "0x00ff"},
		{"binary(2)", BinaryValue([]byte{1, 2}), "0x0102"},
	}
	for _, c := range cases {
		t.Run(c.entry+"/"+c.text, func(t *testing.T) {
			f := mustFormat(t, "("+c.entry+")")
			col := f.Attr(0)
			assert.Equal(t, c.text, c.v.Text(col))
			back, err := ParseText(col, c.text)
			require.NoError(t, err)
			assert.Equal(t, c.v.Null, back.Null)
			if !c.v.Null { // the text of a null keeps no reason
				assert.Equal(t, c.v.Reason, back.Reason)
			}
			assert.Equal(t, c.v.Bytes(), back.Bytes())
		})
	}
	sn := Column{Type: TypeString, Nullable: true}
	v, err := ParseText(sn, "")
	require.NoError(t, err)
	assert.False(t, v.Null, "an empty string field is the empty string")
	v, err = ParseText(sn, "?7")
	require.NoError(t, err)
	assert.Equal(t, NullValue(7), v)
	v, err = ParseText(Column{Type: TypeInt32, Nullable: true}, `\N`)
	require.NoError(t, err)
	assert.Equal(t, NullValue(0), v)
	_, err = ParseText(Column{Type: TypeInt32, Nullable: true}, "?128")
	assert.ErrorIs(t, err, ErrReason)
	for _, bad := range []struct {
		t Type
		s string
	}{{TypeInt8, "128"}, {TypeUint8, "-1"}, {TypeBool, "yes"}, {TypeChar, "ab"}, {TypeBinary, "00"}, {TypeBinary, "0xg"},
		{TypeDatetime, "2019-01-31"}, {TypeDatetimeTZ, "2019-01-31 13:45:00"}, {TypeDouble, "x"}, {TypeInt64, ""}} {
		_, err := ParseText(Column{Type: bad.t}, bad.s)
		assert.Error(t, err, "%s %q", bad.t, bad.s)
	}
}

func TestTableEncodeChecks(t *testing.T) {
	f := mustFormat(t, flatFormat)
	require.NoError(t, f.SetNames("A", "B", "C", "D"))
	tb, err := Decode(flatArray, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, "A", tb.Cols[0].Name)

	bad := *tb
	bad.Cols = append([]Col(nil), tb.Cols...)
	bad.Cols[0].Data = []int16{1, 2}
	assert.ErrorIs(t, Encode(io.Discard, &bad), mmapfile.ErrTypeMismatch)
	bad.Cols[0].Data = []int8{1}
	assert.Error(t, Encode(io.Discard, &bad))
	bad.Cols = bad.Cols[:3]
	assert.Error(t, Encode(io.Discard, &bad))
	assert.Equal(t, "[]scidb.DatetimeTZ", GoType(TypeDatetimeTZ))
	assert.Equal(t, "[]int16", GoType(TypeInt16))
}

func TestEncodeFile(t *testing.T) {
	f := mustFormat(t, flatFormat)
	tb, err := Decode(flatArray, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "out.scidb")
	require.NoError(t, EncodeFile(p, tb))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, flatArray, b)

	// A failing write leaves the file as it was, and no temporary behind.
	tb.Cols[3].Data = []string{"ok", "bad\x00"}
	assert.ErrorIs(t, EncodeFile(p, tb), ErrString)
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, flatArray, b)
	ents, err := os.ReadDir(filepath.Dir(p))
	require.NoError(t, err)
	assert.Len(t, ents, 1)

	_, err = DecodeFile(filepath.Join(t.TempDir(), "missing"), &Options{Format: f, Lenient: true})
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = DecodeFile(writeTemp(t, flatArray[:30]), &Options{Format: f, Lenient: true})
	var de *FormatError
	require.ErrorAs(t, err, &de)
	assert.NotEmpty(t, de.File)
}

func TestEncodeFixedBlocks(t *testing.T) {
	f := mustFormat(t, "(int64, int32 null, bool, string(3) null, binary(2), skip(1) null, datetimetz)")
	n := 3*encodeBlock + 17
	ids := make([]int64, n)
	ks := make([]int32, n)
	null := make([]bool, n)
	reason := make([]int8, n)
	bs := make([]bool, n)
	ss := make([]string, n)
	bins := make([][]byte, n)
	tzs := make([]DatetimeTZ, n)
	for i := range ids {
		ids[i] = int64(i) * 1000003
		ks[i] = int32(-i)
		null[i] = i%5 == 0
		reason[i] = -1
		if null[i] {
			reason[i] = int8(i % 128)
			ks[i] = 12345 // a null's value is not written
		}
		bs[i] = i%3 == 0
		ss[i] = strconv.Itoa(i % 100)
		bins[i] = []byte{byte(i)}
		tzs[i] = DatetimeTZ{int64(i), int64(-i)}
	}
	tb := &Table{Format: f, Len: n, Cols: []Col{
		{Name: "id", Column: f.Attr(0), Data: ids},
		{Name: "k", Column: f.Attr(1), Data: ks, Null: null, Reason: reason},
		{Name: "b", Column: f.Attr(2), Data: bs},
		{Name: "s", Column: f.Attr(3), Data: ss, Null: make([]bool, n), Reason: nil},
		{Name: "bin", Column: f.Attr(4), Data: bins},
		{Name: "tz", Column: f.Attr(5), Data: tzs},
	}}
	var fast bytes.Buffer
	require.NoError(t, Encode(&fast, tb))
	// The same rows through the row writer.
	var slow bytes.Buffer
	w := NewEncoder(&slow, f)
	row := make(Row, 6)
	for i := 0; i < n; i++ {
		for a := range row {
			row[a] = tb.Value(i, a)
		}
		require.NoError(t, w.Write(row))
	}
	require.NoError(t, w.Flush())
	require.Equal(t, slow.Bytes(), fast.Bytes())

	back, err := Decode(fast.Bytes(), &Options{Format: f})
	require.NoError(t, err)
	assert.Equal(t, ids, back.Cols[0].Data)
	assert.Equal(t, reason, back.Cols[1].Reason)
	assert.Equal(t, int32(0), back.Cols[1].Data.([]int32)[5])
	assert.Equal(t, ss, back.Cols[3].Data)
	assert.Equal(t, tzs, back.Cols[5].Data)

	// A bad value in a later block is reported at its row.
	reason[2*encodeBlock+5] = -3
	null[2*encodeBlock+5] = true
	err = Encode(io.Discard, tb)
	var de *FormatError
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, ErrReason)
	assert.Equal(t, int64(2*encodeBlock+5), de.Cell)
	reason[2*encodeBlock+5] = 1
	ss[encodeBlock+1] = "long"
	err = Encode(io.Discard, tb)
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, ErrWidth)
	assert.Equal(t, int64(encodeBlock+1), de.Cell)
	assert.Equal(t, 3, de.Attr)
}
