package csvtable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cell is a parsed field for the tests: its text, or null.
type cell struct {
	text string
	null bool
}

func parse(in string) ([][]cell, error) {
	data := []byte(in)
	var out [][]cell
	var fields []field
	for off := 0; off < len(data); {
		var err error
		fields, off, _, err = parseRow(data, off, fields, DefaultMaxField)
		if err != nil {
			return out, err
		}
		row := make([]cell, len(fields))
		for i, f := range fields {
			row[i] = cell{text: f.text(data), null: f.null()}
		}
		out = append(out, row)
	}
	return out, nil
}

func TestParseRow(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [][]cell
		err  string
	}{
		{"a,b\n1,2\n", [][]cell{{{text: "a"}, {text: "b"}}, {{text: "1"}, {text: "2"}}}, ""},
		{"a,b\r\n1,\r\n", [][]cell{{{text: "a"}, {text: "b"}}, {{text: "1"}, {null: true}}}, ""},
		{"a\n\"\"\n", [][]cell{{{text: "a"}}, {{text: ""}}}, ""},
		{"a\n\"x\"\"y\"\n", [][]cell{{{text: "a"}}, {{text: `x"y`}}}, ""},
		{"a\n\"two\nlines\",", [][]cell{{{text: "a"}}, {{text: "two\nlines"}, {null: true}}}, ""},
		{"a\n\"open", nil, "not closed"},
		{"a\n\"q\"x\n", nil, "text after a quoted field"},
		{"", nil, ""},
		{"a", [][]cell{{{text: "a"}}}, ""},
	} {
		got, err := parse(c.in)
		if c.err != "" {
			require.Error(t, err, "%q", c.in)
			assert.Contains(t, err.Error(), c.err, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		assert.Equal(t, c.want, got, "%q", c.in)
	}
}

func writeCSV(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestOpenInfersTypesAndReads(t *testing.T) {
	p := writeCSV(t, "\xEF\xBB\xBFid,x,label,ok,big\n1,0.5,\"a,b\",true,9007199254740993\n-2,,,false,1.5\n3,1e300,\"say \"\"hi\"\"\",true,2\n")
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	recs := f.Records()
	require.Len(t, recs, 5)
	assert.Equal(t, "id", recs[0].Name, "the byte-order mark is not part of the name")
	want := []struct {
		typ      layout.Type
		name     string
		nullable bool
	}{{layout.I64, "i64", false}, {layout.F64, "f64", true}, {layout.Invalid, "string", true}, {layout.Bool, "bool", false},
		// 2^53+1 does not survive f64: the column keeps its text.
		{layout.Invalid, "string", false}}
	for i, w := range want {
		assert.Equal(t, w.typ, recs[i].Type, recs[i].Name)
		assert.Equal(t, w.name, recs[i].TypeString(), recs[i].Name)
		assert.Equal(t, w.nullable, recs[i].Nullable, recs[i].Name)
		assert.Equal(t, []int64{3}, recs[i].Shape)
		assert.Equal(t, format.KindColumn, recs[i].Kind)
	}
	dst := make([]byte, 16)
	require.NoError(t, f.ReadArray(0, dst, 1, layout.RowMajor, binary.LittleEndian))
	assert.Equal(t, int64(-2), int64(binary.LittleEndian.Uint64(dst)))
	assert.Equal(t, int64(3), int64(binary.LittleEndian.Uint64(dst[8:])))
	err = f.ReadArray(2, make([]byte, 8), 0, layout.RowMajor, binary.LittleEndian)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	err = f.ReadArray(0, make([]byte, 8), 3, layout.RowMajor, binary.LittleEndian)
	assert.ErrorIs(t, err, mmapfile.ErrOutOfRange)

	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, f))
	assert.Equal(t, "id,x,label,ok,big\n1,0.5,\"a,b\",true,9007199254740993\n-2,,,false,1.5\n3,1e+300,\"say \"\"hi\"\"\",true,2\n", buf.String())
}

func TestOpenRefusesBadFiles(t *testing.T) {
	for _, c := range []struct {
		in, err string
		line    int
		off     int64
		is      error
	}{
		{"", "no header line", 0, 0, nil},
		{"\xef\xbb\xbf", "no header line", 0, 3, nil},
		{"a,b\n1\n", "1 fields, the header has 2", 2, 4, nil},
		{"a,a\n1,2\n", `column name "a" is given twice`, 1, 2, nil},
		{"a\n\"open\n", "a quoted field is not closed", 2, 2, mmapfile.ErrTruncated},
		{"\"open", "a quoted field is not closed", 1, 0, mmapfile.ErrTruncated},
		{"a,b\n1,2\n3", "cuts the row short: 1 fields, the header has 2", 3, 8, mmapfile.ErrTruncated},
		{"a\n\"q\"x\n", "text after a quoted field", 2, 5, nil},
		{"a\n1\n\"two\nlines\",x\n3,4\n", "2 fields, the header has 1", 3, 4, nil},
	} {
		p := writeCSV(t, c.in)
		_, err := Open(p, nil)
		require.Error(t, err, "%q", c.in)
		var ce *FormatError
		require.True(t, errors.As(err, &ce), "%q: %v", c.in, err)
		assert.Contains(t, err.Error(), c.err, "%q", c.in)
		assert.Equal(t, c.line, ce.Line, "%q", c.in)
		assert.Equal(t, c.off, ce.Offset, "%q", c.in)
		assert.Equal(t, p, ce.File, "%q", c.in)
		if c.is != nil {
			assert.ErrorIs(t, err, c.is, "%q", c.in)
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "%q", c.in)
		}
		assert.True(t, strings.HasPrefix(err.Error(), "csvtable: "+p+": offset "), "%q: %v", c.in, err)
	}
}

// TestTruncatedAtEveryByte cuts a file at every byte: each cut opens (a
// cut at a field boundary is a shorter table) with the rows before the
// cut, or fails with mmapfile.ErrTruncated at the start of the row the
// cut tears; with Salvage it opens with the rows before that one, and
// Damage says what was lost. NewReader reads the same.
func TestTruncatedAtEveryByte(t *testing.T) {
	whole := []byte("id,label,x\n1,\"a,b\",0.5\n2,\"say \"\"hi\"\"\",1e+300\n3,,-2\n")
	rowStarts := []int64{11, 23, 45}
	p := filepath.Join(t.TempDir(), "cut.csv")
	for cut := 0; cut < len(whole); cut++ {
		require.NoError(t, os.WriteFile(p, whole[:cut], 0o644))
		f, err := Open(p, nil)
		osf, oerr := os.Open(p)
		require.NoError(t, oerr)
		g, rerr := NewReader(osf, int64(cut), nil)
		osf.Close()
		if err == nil {
			require.NoError(t, rerr)
			assert.Equal(t, f.Records(), g.Records(), "cut at %d", cut)
			require.NoError(t, f.Close())
			continue
		}
		for _, err := range []error{err, rerr} {
			var fe *FormatError
			require.ErrorAs(t, err, &fe, "cut at %d", cut)
			assert.Equal(t, p, fe.File, "cut at %d", cut)
			if cut < 11 {
				continue // the header line cut short
			}
			require.ErrorIs(t, err, mmapfile.ErrTruncated, "cut at %d", cut)
			torn := 0
			for torn+1 < len(rowStarts) && rowStarts[torn+1] <= int64(cut) {
				torn++
			}
			require.Equal(t, rowStarts[torn], fe.Offset, "cut at %d: %v", cut, err)
			s, err := Open(p, &Options{Salvage: true})
			require.NoError(t, err, "cut at %d", cut)
			assert.Equal(t, int64(torn), s.Len(), "cut at %d: the rows kept", cut)
			assert.ErrorIs(t, s.Damage(), mmapfile.ErrTruncated)
			require.NoError(t, s.Close())
		}
	}
}

func TestWriteAndScanEmptyAndNull(t *testing.T) {
	f, err := Open(writeCSV(t, "x,y\n"), nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, f))
	assert.Equal(t, "x,y\n", buf.String())
	require.NoError(t, f.Close())
	assert.ErrorIs(t, f.Close(), mmapfile.ErrClosed)
}

// FuzzOpen: no input panics the reader, and what it reads, written back,
// reads back as the same table.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a\n\"\"\n\n", "x,y\r\n\"q\"\"\",\r\n", "a\n\"multi\nline\"\n", "id,x\n1,0.5\n-2,\n", "b\ntrue\nfalse\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p := filepath.Join(t.TempDir(), "f.csv")
		require.NoError(t, os.WriteFile(p, []byte(in), 0o644))
		a, err := Open(p, nil)
		if err != nil {
			return
		}
		defer a.Close()
		var buf bytes.Buffer
		require.NoError(t, Encode(&buf, a))
		q := filepath.Join(t.TempDir(), "g.csv")
		require.NoError(t, os.WriteFile(q, buf.Bytes(), 0o644))
		b, err := Open(q, nil)
		require.NoError(t, err, "re-reading %q", buf.String())
		defer b.Close()
		var again bytes.Buffer
		require.NoError(t, Encode(&again, b))
		assert.Equal(t, buf.String(), again.String(), "%q", in)
		assert.Equal(t, len(a.Records()), len(b.Records()))
		// Names survive; types may narrow (0.0 prints as 0, an i64 on
		// the second read), values do not change.
		for i := range a.Records() {
			assert.Equal(t, a.Records()[i].Name, b.Records()[i].Name)
		}
	})
}

// TestScanTableText: the columns asked for come as their cells' text,
// whatever their inferred type (an i64 column keeps "007", an f64 one
// 2^63's digits), also through format.Select; the others as ScanTable
// gives them.
func TestScanTableText(t *testing.T) {
	f, err := Open(writeCSV(t, "z,u,b\n007,9223372036854775808,true\n12,,false\n"), nil)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, []layout.Type{layout.I64, layout.F64, layout.Bool}, f.types)
	require.True(t, format.HasText(f))
	var got []format.Column
	require.NoError(t, format.ScanTableText(f, 0, []bool{true, true, false}, func(first int64, cols []format.Column) error {
		got = append([]format.Column(nil), cols...)
		return nil
	}))
	assert.Equal(t, []string{"007", "12"}, got[0].Values)
	assert.Equal(t, []string{"9223372036854775808", ""}, got[1].Values)
	assert.Equal(t, []int8{-1, 0}, got[1].Reason)
	assert.Equal(t, []bool{true, false}, got[2].Values)

	sel, err := format.Select(f, "b", "u")
	require.NoError(t, err)
	require.True(t, format.HasText(sel))
	require.NoError(t, format.ScanTableText(sel, 0, []bool{false, true}, func(first int64, cols []format.Column) error {
		got = append([]format.Column(nil), cols...)
		return nil
	}))
	assert.Equal(t, []bool{true, false}, got[0].Values)
	assert.Equal(t, []string{"9223372036854775808", ""}, got[1].Values)

	// Without text flags it is ScanTable; with flags of the wrong count,
	// an error.
	require.NoError(t, format.ScanTableText(f, 0, nil, func(first int64, cols []format.Column) error {
		assert.Equal(t, []int64{7, 12}, cols[0].Values)
		return nil
	}))
	assert.Error(t, f.ScanTableText(0, []bool{true}, func(int64, []format.Column) error { return nil }))
}

// A CSV of very many columns opens into a compact index (its Records are
// built on demand: a column costs its name and two bytes, where a Record
// was over a hundred), and its scan reads at most 8 MiB of rows at once:
// 200,000 i64 columns of 10 rows come in batches of 5 rows.
func TestWideCSV(t *testing.T) {
	const cols, rows = 200_000, 10
	var b strings.Builder
	for r := -1; r < rows; r++ {
		for c := range cols {
			if c > 0 {
				b.WriteByte(',')
			}
			if r < 0 {
				fmt.Fprintf(&b, "c%d", c)
			} else {
				fmt.Fprint(&b, c*rows+r)
			}
		}
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "wide.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	runtime.GC()
	runtime.ReadMemStats(&after)
	kept := int64(after.HeapAlloc-before.HeapAlloc) / cols
	t.Logf("%d bytes kept per column", kept)
	assert.LessOrEqual(t, kept, int64(48))

	require.Equal(t, cols, f.NumRecords())
	last := f.Record(cols - 1)
	assert.Equal(t, "c199999", last.Name)
	assert.Equal(t, layout.I64, last.Type)
	assert.Equal(t, []int64{rows}, last.Shape)
	assert.Equal(t, last, f.Records()[cols-1])

	var batches []int
	require.NoError(t, f.ScanTable(1<<14, func(first int64, cs []format.Column) error {
		require.Len(t, cs, cols)
		v := cs[cols-1].Values.([]int64)
		batches = append(batches, len(v))
		for k := range v {
			require.Equal(t, int64((cols-1)*rows)+first+int64(k), v[k])
		}
		return nil
	}))
	assert.Equal(t, []int{5, 5}, batches)
}

// TestFloatColumnsPrintBack: a column is f64 only when every value comes
// back from f64 as the same decimal value; else it is text and keeps its
// values as written.
func TestFloatColumnsPrintBack(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   layout.Type
	}{
		{"plain decimals", []string{"0.1", "1.50", "-2e3", ".5", "7."}, layout.F64},
		{"a negative zero", []string{"-0.0", "1.5"}, layout.F64},
		{"inf and nan", []string{"inf", "-Infinity", "nan", "1.5"}, layout.F64},
		{"the smallest subnormal as Go prints it", []string{"5e-324", "1.5"}, layout.F64},
		{"17 digits that f64 keeps", []string{"1.0000000000000002"}, layout.F64},
		{"overflow to +Inf", []string{"1e400", "1.5"}, layout.Invalid},
		{"overflow to -Inf", []string{"-1e400", "1.5"}, layout.Invalid},
		{"underflow to 0", []string{"1e-400", "1.5"}, layout.Invalid},
		{"below the smallest subnormal", []string{"4.9e-325", "1.5"}, layout.Invalid},
		{"a subnormal that prints back otherwise", []string{"4.9e-324", "1.5"}, layout.Invalid},
		{"a 17th digit that f64 loses", []string{"0.12345678901234567"}, layout.Invalid},
		{"an integer past 2^53 written as a float", []string{"9007199254740993.0"}, layout.Invalid},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.csv")
			require.NoError(t, os.WriteFile(path, []byte("x\n"+strings.Join(c.values, "\n")+"\n"), 0o644))
			f, err := Open(path, nil)
			require.NoError(t, err)
			defer f.Close()
			require.Equal(t, c.want, f.Record(0).Type)
			if c.want != layout.Invalid {
				return
			}
			var got []string
			require.NoError(t, f.ScanTable(1<<10, func(_ int64, cs []format.Column) error {
				got = append(got, cs[0].Values.([]string)...)
				return nil
			}))
			assert.Equal(t, c.values, got)
		})
	}
}
