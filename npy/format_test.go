package npy

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func TestSniffAndRegistry(t *testing.T) {
	for name, want := range map[string]bool{"f8-c.npy": true, "savez.npz": true, "savez-compressed.npz": true} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		assert.Equal(t, want, sniff(b[:min(len(b), format.SniffLen)]), name)
	}
	assert.False(t, sniff([]byte("PK\x03\x04")), "a ZIP cut before its first name")
	assert.False(t, sniff([]byte("\x93NUMP")))
	// A file named otherwise is detected from its bytes.
	dir := t.TempDir()
	b, _ := os.ReadFile("testdata/savez.npz")
	p := filepath.Join(dir, "data.bin")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	f, err := format.Open(p, nil)
	require.NoError(t, err)
	assert.Equal(t, "npy", f.Format())
	require.NoError(t, f.Close())
	fm, ok := format.ForName("x.NPZ")
	require.True(t, ok)
	assert.Equal(t, "npy", fm.Name)
}

func TestRecords(t *testing.T) {
	f, err := format.Open("testdata/savez.npz", nil)
	require.NoError(t, err)
	defer f.Close()
	recs := f.Records()
	byName := map[string]format.Record{}
	for _, r := range recs {
		byName[r.Name] = r
	}
	x := byName["x"]
	assert.Equal(t, int64(183), x.Offset)
	assert.Equal(t, format.KindArray, x.Kind)
	assert.Equal(t, "1.0", x.Extra["version"])
	assert.Equal(t, "", f.Version())
	assert.True(t, byName["y"].BigEndian)
	a := byName["s/a"]
	assert.Equal(t, int64(-1), a.Offset, "a field is strided")
	assert.Equal(t, format.KindArray, a.Kind, "no tables in an archive")
	assert.Equal(t, format.KindOpaque, byName["s/c"].Kind)
	assert.Equal(t, "bytes3", byName["s/c"].TypeName)
	assert.Equal(t, "datetime64[D]", byName["s/t"].TypeName)
	assert.Equal(t, layout.I64, byName["s/t"].Type)

	s, err := format.Open("testdata/struct.npy", nil)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, "1.0", s.Version())
	_, isTable := s.(format.TableScanner)
	assert.True(t, isTable)
	var kinds []string
	for _, r := range s.Records() {
		kinds = append(kinds, r.Name+":"+r.Kind.String()+":"+r.TypeString())
	}
	assert.Equal(t, []string{"a:column:i32", "b:array:f64", "c:column:bytes3", "d:column:str2", "e:column:bool", "t:column:datetime64[D]"}, kinds)

	m, err := format.Open("testdata/struct-mask.npy", nil)
	require.NoError(t, err)
	defer m.Close()
	cols := format.TableColumns(m)
	require.Len(t, cols, 2, "v.mask folds into v")
	assert.True(t, cols[0].Nullable)
	var got []float64
	var reasons []int8
	require.NoError(t, format.ScanTable(m, 2, func(first int64, c []format.Column) error {
		got = append(got, c[0].Values.([]float64)...)
		reasons = append(reasons, c[0].Reason...)
		return nil
	}))
	assert.Equal(t, []float64{1.5, 0, 3}, got)
	assert.Equal(t, []int8{-1, 0, -1}, reasons)
}

// TestReadArrayOrders: arrays and fields read in either order.
func TestReadArrayOrders(t *testing.T) {
	for _, c := range []struct {
		file, name string
		order      layout.Order
		want       []int16
	}{
		{"struct-2d-f.npy", "a", layout.RowMajor, []int16{1, 2, 3, 4}},
		{"struct-2d-f.npy", "a", layout.ColMajor, []int16{1, 3, 2, 4}},
	} {
		f, err := format.Open(filepath.Join("testdata", c.file), nil)
		require.NoError(t, err)
		i, err := format.Find(f, c.name)
		require.NoError(t, err)
		b, err := format.ReadAll(f, i, c.order, binary.LittleEndian)
		require.NoError(t, err)
		assert.Equal(t, c.want, unsafeslice.Cast[int16](b), "%s %s %s", c.file, c.name, c.order)
		require.NoError(t, f.Close())
	}
	// A Fortran-order array, whole and in pieces, both orders; a deflated
	// one too (a transposing read inflates it once).
	for _, file := range []string{"f8-3d-f.npy", "arr-names.npz", "savez-compressed.npz"} {
		f, err := format.Open(filepath.Join("testdata", file), nil)
		require.NoError(t, err)
		for i, r := range f.Records() {
			if !r.Type.Valid() || r.Type != layout.F64 || len(r.Shape) < 2 {
				continue
			}
			n, _ := layout.Count(r.Shape)
			row, err := format.ReadAll(f, i, layout.RowMajor, binary.LittleEndian)
			require.NoError(t, err)
			col, err := format.ReadAll(f, i, layout.ColMajor, binary.LittleEndian)
			require.NoError(t, err)
			back := make([]byte, len(row))
			require.NoError(t, layout.ReorderBytes(back, col, 8, r.Shape, layout.ColMajor))
			assert.Equal(t, row, back)
			for k := int64(0); k < n; k++ {
				one := make([]byte, 8)
				require.NoError(t, f.ReadArray(i, one, k, layout.RowMajor, binary.LittleEndian))
				assert.Equal(t, row[8*k:8*k+8], one)
			}
		}
		require.NoError(t, f.Close())
	}
}

func TestSetText(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		file, name string
		idx        []int64
		value      string
		check      func(f *File) any
		want       any
	}{
		{"le-f2.npy", "0", []int64{0}, "2.5", func(f *File) any { v, _ := Read[layout.Float16](f, "0"); return v[0].Float32() }, float32(2.5)},
		{"be-c16.npy", "0", []int64{1}, "(1.5-2j)", func(f *File) any { v, _ := Read[complex128](f, "0"); return v[1] }, complex(1.5, -2)},
		{"b1.npy", "0", []int64{1}, "true", func(f *File) any { v, _ := Read[bool](f, "0"); return v }, []bool{true, true, true}},
		{"M8s.npy", "0", []int64{2}, "86400", func(f *File) any { v, _ := Read[int64](f, "0"); return v[2] }, int64(86400)},
		{"le-u8.npy", "0", []int64{3}, "0xff", func(f *File) any { v, _ := Read[uint64](f, "0"); return v[3] }, uint64(255)},
		{"S5.npy", "0", []int64{0}, "new", func(f *File) any { v, _ := f.ReadStrings("0"); return v[0] }, "new"},
		{"U3.npy", "0", []int64{3}, "ñü", func(f *File) any { v, _ := f.ReadStrings("0"); return v[3] }, "ñü"},
		{"V4.npy", "0", []int64{0}, "0x0a0b0c0d", func(f *File) any { v, _ := f.ReadStrings("0"); return v[0] }, "\x0a\x0b\x0c\x0d"},
		{"struct.npy", "d", []int64{2}, "zz", func(f *File) any { v, _ := f.ReadStrings("d"); return v[2] }, "zz"},
		{"struct-mask.npy", "v", []int64{1}, "7", func(f *File) any { v, _ := Read[bool](f, "v.mask"); return v }, []bool{false, false, false}},
		{"struct-mask.npy", "v", []int64{2}, "null", func(f *File) any { v, _ := Read[bool](f, "v.mask"); return v }, []bool{false, true, true}},
	} {
		p := copyGolden(t, dir, c.file)
		f, err := format.OpenFile(p, mmapfile.ReadWrite, nil)
		require.NoError(t, err)
		i, err := format.Find(f, c.name)
		require.NoError(t, err)
		require.NoError(t, f.(format.Setter).SetText(i, c.idx, c.value), "%s %s", c.file, c.value)
		require.NoError(t, f.Close())
		g, err := Open(p, nil)
		require.NoError(t, err)
		assert.Equal(t, c.want, c.check(g), "%s %s", c.file, c.value)
		require.NoError(t, g.Close())
	}
	p := copyGolden(t, dir, "S5.npy")
	f, err := format.OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	defer f.Close()
	assert.Error(t, f.(format.Setter).SetText(0, []int64{0}, "toolong"))
	assert.ErrorIs(t, f.(format.Setter).SetText(0, []int64{9}, "a"), mmapfile.ErrOutOfRange)
}

// memSource is a table of in-memory records (format.Memory's), with
// nulls and text.
type memSource struct {
	recs  []format.Record
	data  [][]byte // layout-typed records, stored as the record says
	text  map[int][]string
	nulls map[int][]int8
}

func (m *memSource) Records() []format.Record { return m.recs }
func (m *memSource) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	return format.Memory(m.recs[i:i+1], m.data[i:i+1]).ReadArray(0, dst, first, order, bo)
}

type memTable struct{ *memSource }

func (m memTable) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	cols := make([]format.Column, len(m.recs))
	for i, r := range m.recs {
		if t, ok := m.text[i]; ok {
			cols[i].Values = t
		} else {
			b, err := format.ReadAll(m, i, layout.RowMajor, layout.HostOrder())
			if err != nil {
				return err
			}
			cols[i].Values = layout.SliceOf(r.Type, b)
		}
		cols[i].Reason = m.nulls[i]
	}
	return fn(0, cols)
}

// TestWriteTable: a table of any format (nullable and text columns
// included) becomes a structured .npy, and reads back as the same table.
func TestWriteTable(t *testing.T) {
	le := func(vals any) []byte { _, b, _ := layout.BytesOf(vals); return append([]byte{}, b...) }
	col := func(name string, typ layout.Type, typeName string, nullable bool) format.Record {
		return format.Record{Array: layout.Array{Name: name, Type: typ, Shape: []int64{3}, Offset: -1}, Kind: format.KindColumn, TypeName: typeName, Nullable: nullable}
	}
	src := memTable{&memSource{
		recs:  []format.Record{col("id", layout.I64, "", false), col("score", layout.F64, "", true), col("name", layout.Invalid, "string", false)},
		data:  [][]byte{le([]int64{1, 2, 3}), le([]float64{0.5, 0, 2.5}), nil},
		text:  map[int][]string{2: {"ab", "", "ñandú"}},
		nulls: map[int][]int8{1: {-1, 3, -1}},
	}}
	p := filepath.Join(t.TempDir(), "t.npy")
	require.NoError(t, format.Write(p, src, nil))
	f, err := Open(p, nil)
	require.NoError(t, err)
	a, _ := f.Lookup("0")
	assert.Equal(t, "[('id', '<i8'), ('score', '<f8'), ('score.mask', '|b1'), ('name', '<U5')]", a.DType.String())
	require.NoError(t, f.Close())
	g, err := format.Open(p, nil)
	require.NoError(t, err)
	defer g.Close()
	var ids []int64
	var names []string
	var reasons []int8
	require.NoError(t, format.ScanTable(g, 0, func(_ int64, c []format.Column) error {
		ids = append(ids, c[0].Values.([]int64)...)
		reasons = append(reasons, c[1].Reason...)
		names = append(names, c[2].Values.([]string)...)
		return nil
	}))
	assert.Equal(t, []int64{1, 2, 3}, ids)
	assert.Equal(t, []int8{-1, 0, -1}, reasons)
	assert.Equal(t, []string{"ab", "", "ñandú"}, names)
	if py := oracle.Find("numpy"); py != "" {
		out, err := oracle.Output(py, `
import sys, numpy as np
a = np.load(sys.argv[1]); print(a["id"].tolist(), a["score.mask"].tolist(), a["name"].tolist())`, p)
		require.NoError(t, err)
		assert.Equal(t, "[1, 2, 3] [False, True, False] ['ab', '', 'ñandú']\n", out)
	}
	// And as an archive: one member per column, the nulls beside.
	q := filepath.Join(t.TempDir(), "t.npz")
	require.NoError(t, format.Write(q, src, nil))
	z, err := Open(q, nil)
	require.NoError(t, err)
	defer z.Close()
	var keys []string
	for _, a := range z.Arrays() {
		keys = append(keys, a.Name+" "+a.DType.String())
	}
	assert.Equal(t, []string{"id <i8", "score <f8", "score.mask |b1", "name <U5"}, keys)
}

// TestWriteFromOtherFormats: arrays of other formats are written
// little-endian in their storage order (a column-major array as
// fortran_order True, no transpose); a .npy holds one array.
func TestWriteFromOtherFormats(t *testing.T) {
	be := []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6}
	recs := []format.Record{{Array: layout.Array{Name: "m", Type: layout.I32, Shape: []int64{2, 3}, Order: layout.ColMajor, BigEndian: true, Offset: -1}}}
	src := format.Memory(recs, [][]byte{be})
	p := filepath.Join(t.TempDir(), "m.npy")
	require.NoError(t, format.Write(p, src, nil))
	f, err := Open(p, nil)
	require.NoError(t, err)
	a, _ := f.Lookup("0")
	assert.Equal(t, "<i4", a.DType.String())
	assert.True(t, a.FortranOrder)
	v, err := View[int32](f, "0")
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 3, 4, 5, 6}, v, "the storage order kept")
	require.NoError(t, f.Close())

	two := format.Memory(append(recs, format.Record{Array: layout.Array{Name: "n", Type: layout.I32, Shape: []int64{1}, Offset: -1}}), [][]byte{be, be[:4]})
	err = format.Write(filepath.Join(t.TempDir(), "two.npy"), two, nil)
	require.ErrorIs(t, err, format.ErrNotRepresentable)
	wide := format.Memory([]format.Record{{Array: layout.Array{Name: "w", Type: layout.I128, Shape: []int64{1}, Offset: -1}}}, [][]byte{make([]byte, 16)})
	err = format.Write(filepath.Join(t.TempDir(), "w.npy"), wide, nil)
	require.ErrorIs(t, err, format.ErrNotRepresentable)
	require.True(t, errors.Is(err, format.ErrNotRepresentable))
}

// TestOddArrays: a 1-D text array is a one-column table; a nested
// structured field is listed but refused clearly; a 0-d structured array
// has 0-d fields.
func TestOddArrays(t *testing.T) {
	s, err := format.Open("testdata/S5.npy", nil)
	require.NoError(t, err)
	defer s.Close()
	r := s.Records()[0]
	assert.Equal(t, format.KindColumn, r.Kind)
	assert.Equal(t, "bytes5", r.TypeName)
	assert.Equal(t, int64(128), r.Offset)
	var vals []string
	require.NoError(t, format.ScanTable(s, 0, func(_ int64, c []format.Column) error {
		vals = append(vals, c[0].Values.([]string)...)
		return nil
	}))
	assert.Equal(t, []string{"ab", "hello", "", "a\x00b"}, vals)
	require.ErrorIs(t, s.ReadArray(0, make([]byte, 5), 0, layout.RowMajor, binary.LittleEndian), errors.ErrUnsupported)
	for _, name := range []string{"S5.npy", "U3-be.npy", "V4.npy", "struct-mask.npy"} {
		// Through a wrapper (the general path): the same bytes again.
		src, err := format.Open(filepath.Join("testdata", name), nil)
		require.NoError(t, err)
		var names []string
		for _, r := range src.Records() {
			names = append(names, r.Name)
		}
		sel, err := format.Select(src, names...)
		require.NoError(t, err)
		out := filepath.Join(t.TempDir(), name)
		require.NoError(t, format.Write(out, sel, nil), name)
		want, _ := os.ReadFile(filepath.Join("testdata", name))
		got, _ := os.ReadFile(out)
		assert.Equal(t, want, got, name)
		require.NoError(t, src.Close())
	}

	dir := t.TempDir()
	nested := npyBytes(1, header("[('p', [('x', '<i4'), ('y', '<i2')]), ('q', '<f8')]", "(2,)"),
		[]byte{1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0x40})
	p := filepath.Join(dir, "nested.npy")
	require.NoError(t, os.WriteFile(p, nested, 0o644))
	n, err := format.Open(p, nil)
	require.NoError(t, err)
	defer n.Close()
	assert.Equal(t, format.KindOpaque, n.Records()[0].Kind)
	assert.Equal(t, "struct", n.Records()[0].TypeName)
	b, err := format.ReadAll(n, 1, layout.RowMajor, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2}, unsafeslice.Cast[float64](b))
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	_, err = Read[int32](f, "p")
	require.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	assert.Contains(t, err.Error(), "structured")

	zero := npyBytes(1, header("[('a', '<i2'), ('b', '<f4')]", "()"), []byte{7, 0, 0, 0, 0x20, 0x41})
	q := filepath.Join(dir, "zero.npy")
	require.NoError(t, os.WriteFile(q, zero, 0o644))
	z, err := format.Open(q, nil)
	require.NoError(t, err)
	defer z.Close()
	assert.Equal(t, []int64{}, z.Records()[1].Shape)
	b, err = format.ReadAll(z, 1, layout.RowMajor, binary.LittleEndian)
	require.NoError(t, err)
	assert.Equal(t, []float32{10}, unsafeslice.Cast[float32](b))
}

// The NumPy type a reader hands a writer is the record's typed
// Facts.NativeType: a big-endian descr is kept, and a listing's "descr" in
// Extra, which writers never read, is not taken for it.
func TestWriteKeepsNativeType(t *testing.T) {
	dir := t.TempDir()
	data := []byte{1, 0, 0, 0, 2, 0, 0, 0}
	rec := format.Record{Array: layout.Array{Name: "0", Type: layout.I32, Shape: []int64{2}, Offset: -1, Size: 8}}
	for _, c := range []struct {
		facts *format.Facts
		extra map[string]any
		want  string
	}{
		{&format.Facts{NativeType: ">i4"}, nil, ">i4"},
		{nil, map[string]any{"descr": ">i4"}, "<i4"},
	} {
		r := rec
		r.Facts, r.Extra = c.facts, c.extra
		p := filepath.Join(dir, "x.npy")
		require.NoError(t, format.Write(p, format.Memory([]format.Record{r}, [][]byte{data}), nil))
		f, err := format.Open(p, nil)
		require.NoError(t, err)
		got := f.Records()[0]
		b, err := format.ReadAll(f, 0, layout.RowMajor, binary.LittleEndian)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NotNil(t, got.Facts)
		assert.Equal(t, c.want, got.Facts.NativeType)
		assert.Equal(t, c.want, got.Extra["descr"], "the listing says the same")
		assert.Equal(t, c.want == ">i4", got.BigEndian)
		assert.Equal(t, data, b, "the values")
	}
}

// An error of a read through the registry names the file, the record and
// the offset once each, in the one rendering of every format, and shows
// its cause.
func TestReadErrorNamesRecordOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.npy")
	rec := format.Record{Array: layout.Array{Name: "0", Type: layout.F64, Shape: []int64{2, 3}, Offset: -1, Size: 48}}
	require.NoError(t, format.Write(p, format.Memory([]format.Record{rec}, [][]byte{make([]byte, 48)}), nil))
	f, err := format.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	err = f.ReadArray(0, make([]byte, 16), 5, layout.RowMajor, binary.LittleEndian)
	require.ErrorIs(t, err, mmapfile.ErrOutOfRange)
	assert.EqualError(t, err, "npy: "+p+`: record "0": offset 128: elements [5, 5+2) outside [0, 6): range outside the mapping or file`)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "0", fe.Record)
	assert.Equal(t, int64(128), fe.Offset)
}
