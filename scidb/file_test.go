package scidb

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/mmapkit/mmapkit/internal/shareddata"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opaquePath is the SciDB-written file; seeds and TestOpaqueFile read it.
const opaquePath = "../../shared/testdata/scidb/intensity_data.opaque"

func writeTemp(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.scidb")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// fixedCells is three cells of "(int8, int16 null, char, bool null, datetimetz null, string(4) null, binary(2), skip(1) null)".
const fixedFormat = "(int8, int16 null, char, bool null, datetimetz null, string(4) null, binary(2), skip(1) null)"

var fixedCells = hx(`
01 ff0201 41 ff01 ff40562b5c00000000201c000000000000 ff61620000 0102 0000
fe 05eeee 42 0700 03ffffffffffffffffffffffffffffffff 7f00000000 0304 cccc
7f 80ffff 43 fe02 80fffa5a5e00000000a8b2ffffffffffff 8061626364 0506 0000`)

func TestMapped(t *testing.T) {
	f := mustFormat(t, fixedFormat)
	stride, ok := f.Stride()
	require.True(t, ok)
	require.Equal(t, 33, stride)
	require.Len(t, fixedCells, 3*33)
	p := writeTemp(t, fixedCells)

	m, err := Open(p, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	defer m.Close()
	assert.Equal(t, int64(3), m.Len())
	assert.Equal(t, fixedCells[33:66], m.Cell(1))

	row := make(Row, 7)
	require.NoError(t, m.Read(1, row))
	assert.Equal(t, int8(-2), row[0].Int8())
	assert.True(t, row[1].Null)
	assert.Equal(t, int8(5), row[1].Reason)
	assert.Equal(t, byte('B'), row[2].Char())
	assert.Equal(t, int8(7), row[3].Reason)
	assert.Equal(t, int8(3), row[4].Reason)
	assert.Equal(t, int8(127), row[5].Reason)
	assert.Equal(t, []byte{3, 4}, row[6].Bytes())
	require.NoError(t, m.Read(2, row))
	assert.Equal(t, int16(-1), row[1].Int16())
	assert.True(t, row[3].Bool())
	assert.Equal(t, DatetimeTZ{1583020799, -19800}, row[4].DatetimeTZ())
	assert.Equal(t, "abcd", row[5].String())
	assert.Error(t, m.Read(3, row))

	// Mapped, Decode and the Reader agree.
	tb, err := DecodeFile(p, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	rows, err := readAll(fixedCells, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	for i := int64(0); i < m.Len(); i++ {
		require.NoError(t, m.Read(i, row))
		for a := range row {
			assert.Equal(t, valueAs(tb.Value(int(i), a), f.Attr(a)), valueAs(row[a], f.Attr(a)), "cell %d attr %d", i, a)
			assert.Equal(t, valueAs(rows[i][a], f.Attr(a)), valueAs(row[a], f.Attr(a)), "cell %d attr %d", i, a)
			assert.Equal(t, rows[i][a].Null, row[a].Null)
			assert.Equal(t, rows[i][a].Reason, row[a].Reason)
		}
	}
	assert.Equal(t, []string{"ab", "", "abcd"}, tb.Cols[5].Data)
	assert.Equal(t, []DatetimeTZ{{1546344000, 7200}, {}, {1583020799, -19800}}, tb.Cols[4].Data)

	c16, err := ColumnOf[int16](m, 1)
	require.NoError(t, err)
	v, null, r := c16.At(0)
	assert.Equal(t, int16(0x0102), v)
	assert.False(t, null)
	assert.Equal(t, int8(-1), r)
	v, null, r = c16.At(1)
	assert.Equal(t, int16(0), v)
	assert.True(t, null)
	assert.Equal(t, int8(5), r)
	dst := make([]int16, 5)
	n, err := c16.Copy(dst)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Equal(t, []int16{0x0102, 0, -1, 0, 0}, dst)
	n, err = c16.CopyFrom(dst[:1], 2)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, int16(-1), dst[0])
	nulls := make([]bool, 3)
	reasons := make([]int8, 3)
	nn, err := c16.Nulls(0, nulls, reasons)
	require.NoError(t, err)
	assert.Equal(t, 3, nn)
	assert.Equal(t, []bool{false, true, false}, nulls)
	assert.Equal(t, []int8{-1, 5, -1}, reasons)
	// From any start cell.
	nn, err = c16.Nulls(1, nulls, reasons)
	require.NoError(t, err)
	assert.Equal(t, 2, nn)
	assert.Equal(t, []bool{true, false}, nulls[:2])
	assert.Equal(t, []int8{5, -1}, reasons[:2])
	nn, err = c16.Nulls(3, nulls, reasons)
	require.NoError(t, err)
	assert.Equal(t, 0, nn)
	_, err = c16.Nulls(4, nulls, reasons)
	assert.ErrorIs(t, err, mmapfile.ErrOutOfRange)

	cb, err := ColumnOf[bool](m, 3)
	require.NoError(t, err)
	bs := make([]bool, 3)
	_, err = cb.Copy(bs)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, bs)
	ctz, err := ColumnOf[DatetimeTZ](m, 4)
	require.NoError(t, err)
	tzs := make([]DatetimeTZ, 3)
	_, err = ctz.Copy(tzs)
	require.NoError(t, err)
	assert.Equal(t, tb.Cols[4].Data, tzs)
	cc, err := ColumnOf[byte](m, 2)
	require.NoError(t, err)
	x, _, _ := cc.At(2)
	assert.Equal(t, byte('C'), x)

	_, err = ColumnOf[int32](m, 1)
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	_, err = ColumnOf[int8](m, 7)
	assert.Error(t, err)
	_, err = View[int8](m, 0)
	assert.ErrorIs(t, err, errors.ErrUnsupported, "attribute 0 is strided through the cells")
	assert.ErrorContains(t, err, "copy with Read")

	assert.ErrorIs(t, m.Validate(), ErrPrefix)
	_, err = Open(p, &Options{Format: f})
	var de *FormatError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, int64(2), de.Cell)
	assert.Equal(t, 1, de.Attr)
	assert.Equal(t, int64(66+1), de.Offset)
	assert.Equal(t, p, de.File)

	arr := m.arrays()
	require.Len(t, arr, 7)
	assert.Equal(t, layout.Array{Name: "a1", Type: layout.I16, Shape: []int64{3}, Order: layout.RowMajor, Offset: -1, Size: 6}, arr[1])
	assert.Equal(t, layout.U8, arr[2].Type)
	assert.Equal(t, layout.Invalid, arr[4].Type)
	assert.Equal(t, int64(48), arr[4].Size)

	assert.Error(t, m.SetValue(0, 0, Int8Value(3)), "read-only mapping")
}

func TestMappedSet(t *testing.T) {
	f := mustFormat(t, "(int64, double null, int32 null)")
	var buf bytes.Buffer
	w := NewEncoder(&buf, f)
	for i := 0; i < 4; i++ {
		require.NoError(t, w.Write(Row{Int64Value(int64(i)), Float64Value(float64(i) / 2), NullValue(int8(i))}))
	}
	require.NoError(t, w.Flush())
	p := writeTemp(t, buf.Bytes())
	m, err := OpenFile(p, mmapfile.ReadWrite, &Options{Format: f})
	require.NoError(t, err)
	require.NoError(t, m.SetValue(2, 2, Int32Value(-7)))
	require.NoError(t, m.SetValue(1, 1, NullValue(9)))
	require.NoError(t, m.SetValue(3, 0, Int64Value(1<<40)))
	assert.ErrorIs(t, m.SetValue(0, 0, NullValue(0)), ErrNull)
	assert.ErrorIs(t, m.SetValue(0, 1, Int32Value(1)), ErrWidth)
	assert.Error(t, m.SetValue(4, 0, Int64Value(0)))
	assert.Error(t, m.SetValue(0, 3, Int64Value(0)))
	require.NoError(t, m.Close())

	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, hx("ff f9ffffff"), data[2*22+17:3*22])
	assert.Equal(t, hx("09 0000000000000000"), data[22+8:22+17])
	tb, err := Decode(data, &Options{Format: f})
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 2, 1 << 40}, tb.Cols[0].Data)
	assert.Equal(t, []float64{0, 0, 1, 1.5}, tb.Cols[1].Data)
	assert.Equal(t, []int8{-1, 9, -1, -1}, tb.Cols[1].Reason)
	assert.Equal(t, []int32{0, 0, -7, 0}, tb.Cols[2].Data)
	assert.Equal(t, []int8{0, 1, -1, 3}, tb.Cols[2].Reason)
}

func TestMappedErrors(t *testing.T) {
	f := mustFormat(t, "(int8, int16 null, char)")
	p := writeTemp(t, hx("01 ff0200 41 02 ff0300 42 03 ff"))
	_, err := Open(p, &Options{Format: f, Lenient: true})
	var de *FormatError
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, mmapfile.ErrTruncated)
	assert.Equal(t, int64(2), de.Cell)
	assert.Equal(t, 1, de.Attr)
	assert.Equal(t, int64(12), de.Offset)
	assert.Contains(t, err.Error(), p)

	// A variable-size format opens (its cells are checked and marked),
	// but has no strided columns.
	v := writeTemp(t, hx("01 02000000 6100 02 01000000 00"))
	m, err := Open(v, &Options{Format: mustFormat(t, "(int8, string)")})
	require.NoError(t, err)
	assert.Equal(t, int64(2), m.Len())
	_, err = ColumnOf[int8](m, 0)
	assert.ErrorIs(t, err, ErrNotFixed)
	assert.ErrorContains(t, err, v)
	require.NoError(t, m.Close())
	_, err = Open(filepath.Join(t.TempDir(), "missing"), &Options{Format: f, Lenient: true})
	assert.Error(t, err)

	empty := writeTemp(t, nil)
	m, err = Open(empty, &Options{Format: f})
	require.NoError(t, err)
	assert.Equal(t, int64(0), m.Len())
	c, err := ColumnOf[int8](m, 0)
	require.NoError(t, err)
	n, err := c.Copy(make([]int8, 4))
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	require.NoError(t, m.Close())
}

func TestView(t *testing.T) {
	if runtime.GOARCH == "s390x" || runtime.GOARCH == "ppc64" || runtime.GOARCH == "mips" {
		t.Skip("big-endian host: View cannot alias little-endian data")
	}
	var buf bytes.Buffer
	f := mustFormat(t, "(double)")
	w := NewEncoder(&buf, f)
	for i := 0; i < 100; i++ {
		require.NoError(t, w.Write(Row{Float64Value(float64(i) * 1.5)}))
	}
	require.NoError(t, w.Flush())
	m, err := Open(writeTemp(t, buf.Bytes()), &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	defer m.Close()
	xs, err := View[float64](m, 0)
	require.NoError(t, err)
	require.Len(t, xs, 100)
	assert.Equal(t, 148.5, xs[99])
	_, err = View[int64](m, 0)
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)

	f = mustFormat(t, "(datetime)")
	m2, err := Open(writeTemp(t, hx("dcfb525c00000000")), &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	defer m2.Close()
	ds, err := View[int64](m2, 0)
	require.NoError(t, err)
	assert.Equal(t, []int64{1548942300}, ds)
}

func TestOpaqueFile(t *testing.T) {
	data, err := os.ReadFile(shareddata.Path(t, "scidb", "intensity_data.opaque"))
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	require.Equal(t, "73665e2c16e51fd0269d87f22cde50991a2d6557befbeec71a95e70ac1e46c61", hex.EncodeToString(sum[:]))

	for _, fs := range []string{"(int64 null)", "(string)", "(int8, int16 null, string null, string)", "(double)", "(skip(1033))"} {
		f := mustFormat(t, fs)
		_, err := Decode(data, &Options{Format: f, Lenient: true})
		assert.ErrorIs(t, err, ErrOpaque, fs)
		assert.EqualError(t, err, "scidb: opaque SciDB file (magic 0x5AC00E, version 1), not a binary template file; re-save with save(A, f, -2, '(…)')")
		_, err = DecodeFile(opaquePath, &Options{Format: f})
		assert.ErrorIs(t, err, ErrOpaque, fs)
		assert.Contains(t, err.Error(), opaquePath)
		_, err = readAll(data, &Options{Format: f, Lenient: true})
		assert.ErrorIs(t, err, ErrOpaque, fs)
		if _, ok := f.Stride(); ok {
			_, err = Open(opaquePath, &Options{Format: f, Lenient: true})
			assert.ErrorIs(t, err, ErrOpaque, fs)
		}
	}
	f := mustFormat(t, "(int64 null)")
	o := &Options{Format: f, Lenient: true, NoOpaqueCheck: true}
	for _, err := range []error{
		func() error { _, err := Decode(data, o); return err }(),
		func() error { _, err := readAll(data, o); return err }(),
		func() error { _, err := Open(opaquePath, o); return err }(),
	} {
		var de *FormatError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, int64(114), de.Cell)
		assert.Equal(t, int64(1027), de.Offset)
	}
	// A prefix of the opaque file shorter than its first record's size is
	// not taken for one, when the size is known.
	_, err = Decode(data[:400], &Options{Format: mustFormat(t, "(skip(400))"), Lenient: true})
	assert.NoError(t, err)
	_, err = Decode(data[:474], &Options{Format: mustFormat(t, "(skip(474))"), Lenient: true})
	assert.ErrorIs(t, err, ErrOpaque)
}

// DecodeInto streams a file through one reused table and gives, chunk by
// chunk, exactly what Decode gives for the whole file: values, null masks,
// reasons and zeroed null slots.
func TestMappedDecodeInto(t *testing.T) {
	f := mustFormat(t, fixedFormat)
	var data []byte
	for i := 0; i < 4; i++ { // 12 cells
		data = append(data, fixedCells...)
	}
	data[33*4+1] = 0x80 // a present value in cell 4 where cell 1 has a null
	p := writeTemp(t, data)
	whole, err := Decode(data, &Options{Format: f, Lenient: true})
	require.NoError(t, err)

	m, err := Open(p, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	defer m.Close()
	for _, chunk := range []int{1, 5, 12, 20} {
		tab, err := NewTable(f, chunk)
		require.NoError(t, err)
		var start int64
		for {
			n, err := m.DecodeInto(tab, start)
			require.NoError(t, err)
			require.Equal(t, n, tab.Len)
			if n == 0 {
				break
			}
			require.LessOrEqual(t, n, chunk)
			for a := range tab.Cols {
				for i := 0; i < n; i++ {
					assert.Equal(t, whole.Value(int(start)+i, a), tab.Value(i, a), "chunk %d, cell %d, attribute %d", chunk, int(start)+i, a)
				}
			}
			start += int64(n)
		}
		assert.Equal(t, m.Len(), start, "chunk %d", chunk)
	}

	// Tables that do not fit are refused.
	other, err := NewTable(mustFormat(t, "(int64)"), 4)
	require.NoError(t, err)
	_, err = m.DecodeInto(other, 0)
	require.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	_, err = m.DecodeInto(&Table{Format: f, Len: 3, Cols: make([]Col, 7)}, 0)
	require.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	_, err = m.DecodeInto(&Table{Cols: make([]Col, 7)}, 0)
	require.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	tab, err := NewTable(f, 2)
	require.NoError(t, err)
	_, err = m.DecodeInto(tab, 13)
	require.Error(t, err)
	_, err = NewTable(f, -1)
	require.Error(t, err)
}
