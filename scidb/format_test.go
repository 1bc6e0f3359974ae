package scidb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/memsource"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func params(kv ...string) *format.Options {
	o := &format.Options{Params: map[string]string{}}
	for i := 0; i < len(kv); i += 2 {
		o.Params[kv[i]] = kv[i+1]
	}
	return o
}

func TestFormatRegistered(t *testing.T) {
	f, ok := format.Lookup("scidb")
	require.True(t, ok)
	assert.Equal(t, []string{".scidb"}, f.Extensions)
	assert.Nil(t, f.Sniff, "SciDB files have no header: never sniffed")
	want := map[string][2]bool{"scidb-format": {false, true}, "scidb-names": {false, false}, "out-scidb-format": {true, false}}
	require.Len(t, f.Params, len(want))
	for _, p := range f.Params {
		assert.Equal(t, want[p.Name], [2]bool{p.Write, p.Implies}, p.Name)
	}

	// The format string names the format, whatever the file's name.
	p := writeTemp(t, flatArray)
	q := filepath.Join(t.TempDir(), "flat.bin")
	require.NoError(t, os.Rename(p, q))
	file, err := format.Open(q, params("scidb-format", flatFormat, "scidb-names", "A,B,C,D"))
	require.NoError(t, err)
	assert.Equal(t, "scidb", file.Format())
	assert.Equal(t, "", file.Version())
	require.NoError(t, file.Close())
	assert.ErrorIs(t, file.Close(), mmapfile.ErrClosed)

	// A .scidb file without a format string, or with a bad one.
	r := filepath.Join(t.TempDir(), "x.scidb")
	require.NoError(t, os.WriteFile(r, flatArray, 0o644))
	_, err = format.Open(r, nil)
	assert.ErrorIs(t, err, ErrNoFormat)
	assert.ErrorContains(t, err, r)
	_, err = format.Open(r, params("scidb-format", "(int64,)"))
	var fse *FormatStringError
	require.ErrorAs(t, err, &fse)
	assert.Equal(t, 8, fse.Pos)
	_, err = format.Open(r, params("scidb-format", flatFormat, "scidb-names", "a,b"))
	assert.ErrorContains(t, err, "scidb-names")
}

func TestFormatRecords(t *testing.T) {
	file, err := format.Open(writeTemp(t, flatArray), params("scidb-format", flatFormat, "scidb-names", "A,B,C,D"))
	require.NoError(t, err)
	defer file.Close()
	col := func(name string, typ layout.Type, typeName string, nullable bool, size int64) format.Record {
		return format.Record{Array: layout.Array{Name: name, Type: typ, Shape: []int64{2}, Offset: -1, Size: size},
			Kind: format.KindColumn, TypeName: typeName, Nullable: nullable}
	}
	assert.Equal(t, []format.Record{
		col("A", layout.I8, "int8", false, 2),
		col("B", layout.I16, "int16", true, 4),
		col("C", layout.Invalid, "string", true, 5),
		col("D", layout.Invalid, "string", false, 1),
	}, file.Records())

	fixed, err := format.Open(writeTemp(t, fixedCells), &format.Options{Lenient: true, Params: map[string]string{"scidb-format": fixedFormat}})
	require.NoError(t, err)
	defer fixed.Close()
	var types []layout.Type
	var names []string
	for _, r := range fixed.Records() {
		types = append(types, r.Type)
		names = append(names, r.TypeName)
	}
	assert.Equal(t, []layout.Type{layout.I8, layout.I16, layout.Invalid, layout.Bool, layout.Invalid, layout.Invalid, layout.Invalid}, types)
	assert.Equal(t, []string{"int8", "int16", "char", "bool", "datetimetz", "string(4)", "binary(2)"}, names)
}

func TestFormatReadArray(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	for _, tc := range []struct {
		name   string
		format string
		data   []byte
		attr   int
		first  int64
		bo     binary.ByteOrder
		want   []byte
	}{
		{"var int8", flatFormat, flatArray, 0, 0, le, []byte{1, 0xfe}},
		{"var int16 null", flatFormat, flatArray, 1, 0, be, []byte{0, 0, 1, 2}},
		{"var from 1", flatFormat, flatArray, 1, 1, le, []byte{2, 1}},
		{"fixed int16 null", fixedFormat, fixedCells, 1, 0, le, []byte{2, 1, 0, 0, 0xff, 0xff}},
		{"fixed int16 big-endian", fixedFormat, fixedCells, 1, 2, be, []byte{0xff, 0xff}},
		{"fixed bool null", fixedFormat, fixedCells, 3, 0, le, []byte{1, 0, 1}},
		{"fixed int8", fixedFormat, fixedCells, 0, 1, le, []byte{0xfe, 0x7f}},
	} {
		m, err := Open(writeTemp(t, tc.data), &Options{Format: mustFormat(t, tc.format), Lenient: true})
		require.NoError(t, err, tc.name)
		dst := make([]byte, len(tc.want))
		require.NoError(t, m.ReadArray(tc.attr, dst, tc.first, layout.RowMajor, tc.bo), tc.name)
		assert.Equal(t, tc.want, dst, tc.name)
		err = m.ReadArray(tc.attr, make([]byte, len(tc.want)+m.Records()[tc.attr].Type.Size()), tc.first, layout.RowMajor, le)
		assert.ErrorIs(t, err, mmapfile.ErrOutOfRange, tc.name)
		require.NoError(t, m.Close())
	}
	m, err := Open(writeTemp(t, flatArray), &Options{Format: mustFormat(t, flatFormat)})
	require.NoError(t, err)
	err = m.ReadArray(2, make([]byte, 2), 0, layout.RowMajor, le)
	assert.ErrorIs(t, err, errors.ErrUnsupported, "text attributes are scanned")
	require.NoError(t, m.Close())
}

func TestFormatScanTable(t *testing.T) {
	m, err := Open(writeTemp(t, flatArray), &Options{Format: mustFormat(t, flatFormat)})
	require.NoError(t, err)
	defer m.Close()
	for _, batch := range []int{1, 2, 100} {
		var got [4][]any
		var reasons [4][]int8
		require.NoError(t, m.ScanTable(batch, func(first int64, cols []format.Column) error {
			for a, c := range cols {
				switch v := c.Values.(type) {
				case []int8:
					for _, x := range v {
						got[a] = append(got[a], x)
					}
				case []int16:
					for _, x := range v {
						got[a] = append(got[a], x)
					}
				case []string:
					for _, x := range v {
						got[a] = append(got[a], x)
					}
				}
				reasons[a] = append(reasons[a], c.Reason...)
			}
			return nil
		}))
		assert.Equal(t, [4][]any{{int8(1), int8(-2)}, {int16(0), int16(258)}, {"Hello", ""}, {"W", ""}}, got, batch)
		assert.Equal(t, [4][]int8{nil, {0, -1}, {-1, 7}, nil}, reasons, batch)
	}

	// SciDB's text for the types layout lacks.
	f, err := Open(writeTemp(t, fixedCells), &Options{Format: mustFormat(t, fixedFormat), Lenient: true})
	require.NoError(t, err)
	defer f.Close()
	var text [][]string
	require.NoError(t, f.ScanTable(2, func(first int64, cols []format.Column) error {
		for k := range cols[2].Values.([]string) {
			text = append(text, []string{cols[2].Values.([]string)[k], cols[4].Values.([]string)[k], cols[5].Values.([]string)[k], cols[6].Values.([]string)[k]})
		}
		return nil
	}))
	assert.Equal(t, [][]string{
		{"A", "2019-01-01 12:00:00 +02:00", "ab", "0x0102"},
		{"B", "", "", "0x0304"},
		{"C", "2020-02-29 23:59:59 -05:30", "abcd", "0x0506"},
	}, text)
}

func TestFormatSetText(t *testing.T) {
	p := writeTemp(t, fixedCells)
	f := mustFormat(t, fixedFormat)
	file, err := format.OpenFile(p, mmapfile.ReadWrite, &format.Options{Lenient: true, Params: map[string]string{"scidb-format": fixedFormat}})
	require.NoError(t, err)
	s := file.(format.Setter)
	for _, c := range []struct {
		attr  int
		cell  int64
		value string
	}{
		{0, 0, "-0x10"}, {1, 1, "300"}, {1, 2, "?9"}, {2, 0, "Z"}, {3, 1, "true"},
		{4, 1, "2024-05-06 07:08:09 +01:00"}, {5, 2, "xy"}, {6, 1, "0xfeff"},
	} {
		require.NoError(t, s.SetText(c.attr, []int64{c.cell}, c.value), c.value)
	}
	for _, c := range []struct {
		attr  int
		idx   []int64
		value string
		is    error
	}{
		{0, []int64{0}, "128", nil}, {0, []int64{3}, "1", mmapfile.ErrOutOfRange}, {0, []int64{0, 0}, "1", mmapfile.ErrOutOfRange},
		{0, []int64{0}, "?1", nil}, {5, []int64{0}, "abcde", ErrWidth}, {7, []int64{0}, "1", format.ErrNoRecord},
	} {
		err := s.SetText(c.attr, c.idx, c.value)
		require.Error(t, err, c.value)
		assert.ErrorContains(t, err, p, c.value)
		if c.is != nil {
			assert.ErrorIs(t, err, c.is, c.value)
		}
	}
	require.NoError(t, s.Sync())
	require.NoError(t, file.Close())
	m, err := Open(p, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	defer m.Close()
	row := make(Row, 7)
	require.NoError(t, m.Read(0, row))
	assert.Equal(t, int8(-16), row[0].Int8())
	assert.Equal(t, byte('Z'), row[2].Char())
	require.NoError(t, m.Read(1, row))
	assert.Equal(t, int16(300), row[1].Int16())
	assert.True(t, row[3].Bool())
	assert.Equal(t, "2024-05-06 07:08:09 +01:00", row[4].Text(f.Attr(4)))
	assert.Equal(t, "0xfeff", row[6].Text(f.Attr(6)))
	require.NoError(t, m.Read(2, row))
	assert.Equal(t, NullValue(9), row[1])
	assert.Equal(t, "xy", row[5].String())

	// Variable-size formats cannot change in place.
	v, err := format.OpenFile(writeTemp(t, flatArray), mmapfile.ReadWrite, params("scidb-format", flatFormat))
	require.NoError(t, err)
	assert.ErrorIs(t, v.(format.Setter).SetText(0, []int64{0}, "1"), ErrNotFixed)
	require.NoError(t, v.Close())
}

// TestFormatConvertRoundTrip: SciDB to SciDB through the registry gives
// the same bytes, with the input's types or with out-scidb-format.
func TestFormatConvertRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, format string
		data         []byte
		out          string // out-scidb-format
	}{
		{"flatArray", flatFormat, flatArray, ""},
		{"alltypes", allTypesFormat, allTypesFile(t), allTypesFormat},
		{"fixed", fixedFormat, fixedCells[:66], ""},
	} {
		in := writeTemp(t, tc.data)
		out := filepath.Join(t.TempDir(), "out.scidb")
		var outOpts *format.Options
		if tc.out != "" {
			outOpts = params("out-scidb-format", tc.out)
		}
		require.NoError(t, format.Convert(in, out, &format.Options{Lenient: true, Params: map[string]string{"scidb-format": tc.format}}, outOpts), tc.name)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		if tc.name == "fixed" {
			// save() writes zeros in null slots and skips, where the
			// input had other bytes: what Encode writes.
			tb, err := Decode(tc.data, &Options{Format: mustFormat(t, tc.format), Lenient: true})
			require.NoError(t, err)
			var enc bytes.Buffer
			require.NoError(t, Encode(&enc, tb))
			assert.Equal(t, enc.Bytes(), got, tc.name)
			continue
		}
		assert.Equal(t, tc.data, got, tc.name)
	}
}

// arraySource is 1-D arrays in memory (little-endian), for Write.
type arraySource struct{ memsource.Source }

func (s *arraySource) add(name string, t layout.Type, shape []int64, le []byte) *arraySource {
	s.Add(format.Record{Array: layout.Array{Name: name, Type: t, Shape: shape, Offset: -1, Size: int64(len(le))}}, le)
	return s
}

func TestFormatWrite(t *testing.T) {
	i64 := func(v ...int64) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		}
		return b
	}
	src := (&arraySource{}).
		add("id", layout.I64, []int64{3}, i64(1, -2, 300)).
		add("x", layout.F64, []int64{3}, hx("000000000000f83f 0000000000000000 000000000000f0bf")).
		add("x.reason", layout.I8, []int64{3}, []byte{0xff, 4, 0xff}).
		add("k", layout.U16, []int64{3}, hx("0100 0200 0300")).
		add("b", layout.Bool, []int64{3}, []byte{1, 0, 1})
	dir := t.TempDir()

	// Derived: the layout types, nulls as "null" entries.
	p := filepath.Join(dir, "d.scidb")
	require.NoError(t, format.Write(p, src, nil))
	tb, err := DecodeFile(p, &Options{Format: mustFormat(t, "(int64, double null, uint16, bool)")})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, -2, 300}, tb.Cols[0].Data)
	assert.Equal(t, []float64{1.5, 0, -1}, tb.Cols[1].Data)
	assert.Equal(t, []int8{-1, 4, -1}, tb.Cols[1].Reason)
	var buf bytes.Buffer
	require.NoError(t, EncodeSource(&buf, src, nil))
	assert.Equal(t, mustReadFile(t, p), buf.Bytes(), "EncodeSource writes what Write does")

	// Narrowed to out-scidb-format where every value fits.
	p = filepath.Join(dir, "n.scidb")
	require.NoError(t, format.Write(p, src, params("out-scidb-format", "(int16, float null, uint16, bool)")))
	tb, err = DecodeFile(p, &Options{Format: mustFormat(t, "(int16, float null, uint16, bool)")})
	require.NoError(t, err)
	assert.Equal(t, []int16{1, -2, 300}, tb.Cols[0].Data)
	assert.Equal(t, []float32{1.5, 0, -1}, tb.Cols[1].Data)

	for _, tc := range []struct {
		name, out string
		src       *arraySource
		is        error
		msg       string
	}{
		{"value too wide", "(int8, double null, uint16, bool)", src, ErrWidth, `column "id", row 2`},
		{"null into a non-null entry", "(int64, double, uint16, bool)", src, ErrNull, "x"},
		{"u16 into int8", "(int64, double null, int8, bool)", src, format.ErrNotRepresentable, `"k"`},
		{"f64 into int32", "(int64, int32 null, uint16, bool)", src, format.ErrNotRepresentable, `"x"`},
		{"attribute count", "(int64)", src, format.ErrNotRepresentable, "1 attributes"},
		{"complex", "", (&arraySource{}).add("z", layout.C64, []int64{1}, make([]byte, 8)), format.ErrNotRepresentable, `"z"`},
		{"2-D", "", (&arraySource{}).add("m", layout.F64, []int64{1, 1}, make([]byte, 8)), format.ErrNotRepresentable, `"m"`},
		{"no records", "", &arraySource{}, format.ErrNotRepresentable, "no records"}, // it panicked
		{"no records, a format", "(int64)", &arraySource{}, format.ErrNotRepresentable, "no records"},
		{"lengths", "", (&arraySource{}).add("a", layout.I8, []int64{1}, []byte{1}).add("b", layout.I8, []int64{2}, []byte{1, 2}), format.ErrNotRepresentable, `"a"`},
	} {
		var o *format.Options
		if tc.out != "" {
			o = params("out-scidb-format", tc.out)
		}
		q := filepath.Join(dir, "bad.scidb")
		err := format.Write(q, tc.src, o)
		require.Error(t, err, tc.name)
		assert.ErrorIs(t, err, tc.is, tc.name)
		assert.ErrorContains(t, err, tc.msg, tc.name)
		_, serr := os.Stat(q)
		assert.ErrorIs(t, serr, os.ErrNotExist, tc.name)
	}
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

// TestFormatNamesOnce: attribute names find one attribute each, so a name
// given twice (or an empty one) is refused, naming it.
func TestFormatNamesOnce(t *testing.T) {
	f, err := ParseFormat("(int64, double)")
	require.NoError(t, err)
	err = f.SetNames("a", "a")
	assert.ErrorContains(t, err, `the name "a" is given twice`)
	assert.ErrorContains(t, f.SetNames("a", ""), "empty")
	require.NoError(t, f.SetNames("a", "b"))

	_, err = format.Open(writeTemp(t, flatArray), params("scidb-format", flatFormat, "scidb-names", "A,B,A,D"))
	assert.ErrorContains(t, err, "scidb-names")
	assert.ErrorContains(t, err, `"A" is given twice`)
}
