package scidb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allTypes is a cell of every type, present and null, with empty and long
// strings.
const allTypesFormat = "(bool, char null, int8, int16 null, int32, int64 null, uint8, uint16 null, uint32, uint64 null, " +
	"float, double null, datetime, datetimetz null, string, string null, binary null, string(5) null, binary(3), skip(2), skip null)"

func allTypesFile(t testing.TB) []byte {
	f := mustFormat(t, allTypesFormat)
	var buf bytes.Buffer
	w := NewEncoder(&buf, f)
	rows := []Row{
		{BoolValue(true), CharValue('x'), Int8Value(-1), Int16Value(-300), Int32Value(1 << 30), Int64Value(-1 << 40), Uint8Value(200),
			Uint16Value(60000), Uint32Value(4e9), Uint64Value(1 << 63), Float32Value(-1.5), Float64Value(0.1), DatetimeValue(1548942300),
			DatetimeTZValue(DatetimeTZ{1546344000, 7200}), StringValue("héllo"), StringValue(""), BinaryValue([]byte{0, 1, 0}),
			StringValue("abcd"), BinaryValue([]byte{9})},
		{BoolValue(false), NullValue(0), Int8Value(0), NullValue(127), Int32Value(0), NullValue(3), Uint8Value(0), NullValue(1),
			Uint32Value(0), NullValue(2), Float32Value(0), NullValue(4), DatetimeValue(0), NullValue(5), StringValue("x"), NullValue(6),
			NullValue(7), NullValue(8), BinaryValue(nil)},
	}
	for _, r := range rows {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Flush())
	return buf.Bytes()
}

// goldens are the test inputs of the robustness tests: format and bytes.
func goldens(t testing.TB) []struct {
	name, format string
	data         []byte
} {
	return []struct {
		name, format string
		data         []byte
	}{
		{"flatArray", flatFormat, flatArray},
		{"flatArraySkips", "(int8, skip(2) null, skip null, string)", flatArray},
		{"fixed", fixedFormat, fixedCells},
		{"allTypes", allTypesFormat, allTypesFile(t)},
	}
}

// TestGoldenFiles checks the golden files in testdata against the vectors
// they were written from.
func TestGoldenFiles(t *testing.T) {
	for _, g := range []struct {
		file string
		data []byte
	}{{"testdata/flatArray.scidb", flatArray}, {"testdata/fixed.scidb", fixedCells}, {"testdata/alltypes.scidb", allTypesFile(t)}} {
		b, err := os.ReadFile(g.file)
		require.NoError(t, err)
		assert.Equal(t, g.data, b, g.file)
	}
	tb, err := DecodeFile("testdata/alltypes.scidb", &Options{Format: mustFormat(t, allTypesFormat)})
	require.NoError(t, err)
	require.Equal(t, 2, tb.Len)
	assert.Equal(t, []string{"héllo", "x"}, tb.Cols[14].Data)
	assert.Equal(t, []string{"", ""}, tb.Cols[15].Data)
	assert.Equal(t, []bool{false, true}, tb.Cols[15].Null)
	assert.Equal(t, [][]byte{{0, 1, 0}, nil}, tb.Cols[16].Data)
	assert.Equal(t, []string{"abcd", ""}, tb.Cols[17].Data)
	assert.Equal(t, [][]byte{{9, 0, 0}, {0, 0, 0}}, tb.Cols[18].Data)
	assert.Equal(t, []int8{-1, 127}, tb.Cols[3].Reason)
	var out bytes.Buffer
	require.NoError(t, Encode(&out, tb))
	assert.Equal(t, allTypesFile(t), out.Bytes())
}

// checkInput decodes data every way there is and checks that the results
// agree and that what parsed re-encodes stably. It must never panic.
func checkInput(t *testing.T, f *Schema, data []byte) {
	for _, strict := range []bool{false, true} {
		o := &Options{Format: f, Lenient: !strict}
		tb, err := Decode(data, o)
		rows, serr := readAll(data, o)
		if (err == nil) != (serr == nil) {
			t.Fatalf("strict=%v: Decode error %v, Reader error %v", strict, err, serr)
		}
		checkFile(t, o, data, tb, err)
		if err != nil {
			var de, se *FormatError
			if !errors.As(err, &de) {
				if errors.Is(err, ErrOpaque) && errors.Is(serr, ErrOpaque) {
					continue
				}
				t.Fatalf("Decode error %T: %v", err, err)
			}
			if !errors.As(serr, &se) {
				t.Fatalf("Reader error %T: %v", serr, serr)
			}
			if de.Cell != se.Cell || de.Column != se.Column || de.Offset != se.Offset || de.Err != se.Err {
				t.Fatalf("strict=%v: Decode and Reader disagree: %v / %v", strict, err, serr)
			}
			if de.Offset < 0 || de.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside the input", de.Offset)
			}
			continue
		}
		if len(rows) != tb.Len {
			t.Fatalf("Decode %d cells, Reader %d", tb.Len, len(rows))
		}
		var enc1 bytes.Buffer
		if err := Encode(&enc1, tb); err != nil {
			if !errors.Is(err, ErrString) && !errors.Is(err, ErrWidth) {
				t.Fatalf("re-encoding: %v", err)
			}
			continue
		}
		var enc1s bytes.Buffer
		w := NewEncoder(&enc1s, f)
		for _, r := range rows {
			if err := w.Write(r); err != nil {
				t.Fatalf("writing a row the Reader read: %v", err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc1.Bytes(), enc1s.Bytes()) {
			t.Fatalf("Decode and Reader values differ")
		}
		tb2, err := Decode(enc1.Bytes(), &Options{Format: f, NoOpaqueCheck: true})
		if err != nil {
			t.Fatalf("strict decoding of what was written: %v", err)
		}
		var enc2 bytes.Buffer
		if err := Encode(&enc2, tb2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc1.Bytes(), enc2.Bytes()) {
			t.Fatalf("re-encoding is not stable")
		}
		if strict && !o.NoOpaqueCheck && isSaveOutput(f) && !bytes.Equal(enc1.Bytes(), data) {
			t.Fatalf("strict input did not re-encode to the same bytes:\n% x\n% x", data, enc1.Bytes())
		}
	}
}

// checkFile opens data as a File (NewReader), which must fail where Decode
// failed, at the same cell and offset, and otherwise give Decode's values:
// cell by cell (Read), through ScanTable, and written back through the
// registry (EncodeSource) as Encode writes them.
func checkFile(t *testing.T, o *Options, data []byte, tb *Table, derr error) {
	m, err := NewReader(bytes.NewReader(data), int64(len(data)), o)
	if (err == nil) != (derr == nil) {
		t.Fatalf("Decode error %v, File error %v", derr, err)
	}
	if err != nil {
		var de, fe *FormatError
		if errors.As(derr, &de) && errors.As(err, &fe) && (de.Cell != fe.Cell || de.Offset != fe.Offset) {
			t.Fatalf("Decode and File disagree: %v / %v", derr, err)
		}
		return
	}
	defer m.Close()
	if m.Len() != int64(tb.Len) {
		t.Fatalf("Decode %d cells, File %d", tb.Len, m.Len())
	}
	row := make(Row, len(tb.Cols))
	for i := 0; i < tb.Len; i++ {
		if err := m.Read(int64(i), row); err != nil {
			t.Fatal(err)
		}
		for a := range row {
			if got, want := row[a].Text(tb.Cols[a].Column), tb.Value(i, a).Text(tb.Cols[a].Column); got != want {
				t.Fatalf("cell %d attribute %d: File %q, Decode %q", i, a, got, want)
			}
		}
	}
	var enc, via bytes.Buffer
	if Encode(&enc, tb) != nil {
		return
	}
	if err := EncodeSource(&via, m, nil); err != nil {
		t.Fatalf("EncodeSource: %v", err)
	}
	if !bytes.Equal(enc.Bytes(), via.Bytes()) {
		t.Fatalf("EncodeSource and Encode differ")
	}
}

// isSaveOutput reports whether every strictly valid input of f is exactly
// what save() writes (no free choice in null payloads, (N) padding or skips).
func isSaveOutput(f *Schema) bool {
	for _, c := range f.Columns {
		if c.Type == TypeSkip || c.Width > 0 || (c.Nullable && c.Type.Size() > 0) {
			return false
		}
	}
	return true
}

func TestTruncationEveryByte(t *testing.T) {
	for _, g := range goldens(t) {
		f := mustFormat(t, g.format)
		// Where each cell ends, from the whole file: a cut there is the
		// end of the input, anywhere else it is an error in the cut cell.
		var ends []int
		r := NewDecoder(bytes.NewReader(g.data), &Options{Format: f, Lenient: true})
		row := make(Row, len(f.Attrs))
		for r.Read(row) == nil {
			ends = append(ends, int(r.Offset()))
		}
		require.Equal(t, len(g.data), ends[len(ends)-1], g.name)
		// Where each read of a cell begins: a null prefix, a fixed-size
		// value, a length word, the bytes it announces. A cut is an
		// error at the last of them it does not leave whole.
		var starts []int64
		for pos := 0; pos < len(g.data); {
			for _, c := range f.Columns {
				if c.Nullable {
					starts = append(starts, int64(pos))
					pos++
				}
				starts = append(starts, int64(pos))
				if vs := c.valueSize(); vs > 0 {
					pos += vs
					continue
				}
				l := int(binary.LittleEndian.Uint32(g.data[pos:]))
				starts = append(starts, int64(pos+4))
				pos += 4 + l
			}
		}
		cell := 0
		for n := 0; n <= len(g.data); n++ {
			data := g.data[:n]
			checkInput(t, f, data)
			_, err := Decode(data, &Options{Format: f, Lenient: true})
			if n == 0 || n == ends[cell] {
				require.NoError(t, err, "%s cut at %d, a cell boundary", g.name, n)
				if n > 0 {
					cell++
				}
				continue
			}
			var de *FormatError
			require.ErrorAs(t, err, &de, "%s cut at %d", g.name, n)
			assert.Equal(t, int64(cell), de.Cell, "%s cut at %d", g.name, n)
			require.ErrorIs(t, err, mmapfile.ErrTruncated, "%s cut at %d", g.name, n)
			want := int64(0)
			for _, s := range starts {
				if s <= int64(n) {
					want = s
				}
			}
			require.Equal(t, want, de.Offset, "%s cut at %d: %v", g.name, n, err)
		}
	}
}

func TestBitFlips(t *testing.T) {
	for _, g := range goldens(t) {
		f := mustFormat(t, g.format)
		data := bytes.Clone(g.data)
		for i := range data {
			for bit := 0; bit < 8; bit++ {
				data[i] ^= 1 << bit
				checkInput(t, f, data)
				data[i] ^= 1 << bit
			}
		}
	}
}

func TestMappedTruncation(t *testing.T) {
	f := mustFormat(t, fixedFormat)
	for n := 0; n <= len(fixedCells); n += 7 {
		p := writeTemp(t, fixedCells[:n])
		m, err := Open(p, &Options{Format: f, Lenient: true})
		if n%33 != 0 {
			var de *FormatError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, int64(n/33), de.Cell)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, int64(n/33), m.Len())
		require.NoError(t, m.Close())
	}
}

// allocs returns the bytes fn allocates.
func allocs(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

func TestHostileInputAllocation(t *testing.T) {
	f := mustFormat(t, "(string null)")
	hostile := hx("00 ffffff7f")
	n := allocs(func() {
		_, err := Decode(hostile, &Options{Format: f, Lenient: true})
		assert.ErrorIs(t, err, ErrLength)
	})
	assert.Less(t, n, uint64(1<<20))

	// A stream that promises 4 GiB but holds 100 KiB.
	stream := append(hx("ff fffffffe"), make([]byte, 100<<10)...)
	n = allocs(func() {
		_, err := readAll(stream, &Options{Format: f, Lenient: true})
		var de *FormatError
		require.ErrorAs(t, err, &de)
		assert.ErrorIs(t, err, ErrLength)
		assert.Equal(t, int64(5), de.Offset)
	})
	assert.Less(t, n, uint64(1<<20))

	// Many tiny cells of a huge skip(N) format cannot make Decode allocate
	// more than its cells need.
	f = mustFormat(t, "(skip(2147483647), int8)")
	n = allocs(func() {
		_, err := Decode(make([]byte, 1000), &Options{Format: f, Lenient: true})
		assert.ErrorIs(t, err, mmapfile.ErrTruncated)
	})
	assert.Less(t, n, uint64(1<<20))
}

func TestReaderErrorsAreSticky(t *testing.T) {
	f := mustFormat(t, "(int32)")
	r := NewDecoder(bytes.NewReader(hx("01000000 0200")), &Options{Format: f, Lenient: true})
	row := make(Row, 1)
	require.NoError(t, r.Read(row))
	assert.Equal(t, int32(1), row[0].Int32())
	err := r.Read(row)
	assert.ErrorIs(t, err, mmapfile.ErrTruncated)
	assert.Equal(t, err, r.Read(row))
	assert.Error(t, NewDecoder(bytes.NewReader(nil), &Options{Format: f, Lenient: true}).Read(make(Row, 2)))
	assert.Equal(t, io.EOF, NewDecoder(bytes.NewReader(nil), &Options{Format: f, Lenient: true}).Read(row))

	// Read from a file, errors name it.
	p := writeTemp(t, hx("01000000 0200"))
	file, err := os.Open(p)
	require.NoError(t, err)
	defer file.Close()
	r = NewDecoder(file, &Options{Format: f, Lenient: true})
	require.NoError(t, r.Read(row))
	var de *FormatError
	require.ErrorAs(t, r.Read(row), &de)
	assert.Equal(t, p, de.File)
	assert.Equal(t, int64(4), de.Offset)
	assert.Contains(t, de.Error(), p)
}

func FuzzDecode(f *testing.F) {
	formats := []string{flatFormat, "(int8, skip(2) null, skip null, string)", fixedFormat, allTypesFormat,
		"(int64 null)", "(string(4) null, bool)", "(binary, skip(3), datetimetz)", "(int64, double, int32 null)"}
	for i, g := range goldens(f) {
		for j, fs := range formats {
			if fs == g.format {
				f.Add(g.data, uint8(j))
			}
		}
		f.Add(g.data, uint8(i+4))
	}
	if b, err := os.ReadFile(opaquePath); err == nil {
		f.Add(b, uint8(4))
	}
	parsed := make([]*Schema, len(formats))
	for i, s := range formats {
		parsed[i] = mustFormat(f, s)
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		checkInput(t, parsed[int(which)%len(parsed)], data)
	})
}

func TestReaderSmallReadsAndLargeValues(t *testing.T) {
	f := mustFormat(t, "(binary, string null, int16)")
	big := bytes.Repeat([]byte("0123456789abcdef"), 300000) // 4.8 MB, several growth steps
	var buf bytes.Buffer
	w := NewEncoder(&buf, f)
	require.NoError(t, w.Write(Row{BinaryValue(big), StringValue("s"), Int16Value(-2)}))
	require.NoError(t, w.Write(Row{BinaryValue(nil), NullValue(9), Int16Value(3)}))
	require.NoError(t, w.Flush())
	for _, src := range []io.Reader{bytes.NewReader(buf.Bytes()), iotest.OneByteReader(bytes.NewReader(buf.Bytes())),
		iotest.HalfReader(bytes.NewReader(buf.Bytes()))} {
		r := NewDecoder(src, &Options{Format: f})
		row := make(Row, 3)
		require.NoError(t, r.Read(row))
		assert.Equal(t, big, row[0].Bytes())
		assert.Equal(t, "s", row[1].String())
		assert.Equal(t, int16(-2), row[2].Int16())
		require.NoError(t, r.Read(row))
		assert.Equal(t, []byte{}, row[0].Bytes())
		assert.Equal(t, int8(9), row[1].Reason)
		assert.Equal(t, int16(3), row[2].Int16())
		assert.Equal(t, io.EOF, r.Read(row))
		assert.Equal(t, int64(buf.Len()), r.Offset())
	}
	r := NewDecoder(iotest.ErrReader(io.ErrClosedPipe), &Options{Format: f, Lenient: true})
	assert.ErrorIs(t, r.Read(make(Row, 3)), io.ErrClosedPipe)
}
