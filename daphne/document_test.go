package daphne

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docFile builds files byte by byte from the tables of DAPHNE's format
// document (doc/BinaryFormat.md): header (version u8, dt u8, #r u64, #c
// u64, vt u8 for matrices), then (rx u64, cx u64, block) to the end; a
// block is #r u32, #c u32, bt u8 and for non-empty blocks vt u8 then its
// data. Value type codes: 1 u8, 2 u16, 3 u32, 4 u64, 5 i8, 6 i16, 7 i32,
// 8 i64, 9 f32, 10 f64.
type docFile struct{ b []byte }

func (d *docFile) u8(v ...byte) *docFile { d.b = append(d.b, v...); return d }
func (d *docFile) u16(v uint16) *docFile {
	d.b = binary.LittleEndian.AppendUint16(d.b, v)
	return d
}
func (d *docFile) u32(v ...uint32) *docFile {
	for _, x := range v {
		d.b = binary.LittleEndian.AppendUint32(d.b, x)
	}
	return d
}
func (d *docFile) u64(v ...uint64) *docFile {
	for _, x := range v {
		d.b = binary.LittleEndian.AppendUint64(d.b, x)
	}
	return d
}
func (d *docFile) f32(v ...float32) *docFile {
	for _, x := range v {
		d.u32(math.Float32bits(x))
	}
	return d
}
func (d *docFile) f64(v ...float64) *docFile {
	for _, x := range v {
		d.u64(math.Float64bits(x))
	}
	return d
}

// header: version 1, dt, #r, #c.
func docHeader(dt byte, rows, cols uint64) *docFile {
	return (&docFile{}).u8(1, dt).u64(rows, cols)
}

// block: (rx, cx), #r, #c, bt, vt.
func (d *docFile) block(rx, cx uint64, rows, cols uint32, bt, vt byte) *docFile {
	d.u64(rx, cx).u32(rows, cols).u8(bt)
	if bt != 0 {
		d.u8(vt)
	}
	return d
}

func TestDocumentLayout(t *testing.T) {
	doc := &Options{DocumentLayout: true}
	// A dense 2×3 f64 matrix: code 10, one block.
	dense := docHeader(1, 2, 3).u8(10).block(0, 0, 2, 3, 1, 10).f64(1, 2, 3, 4, 5, 6).b
	f, err := open(t, dense, doc)
	require.NoError(t, err)
	v, err := Read[float64](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, v)
	assert.Equal(t, F64, f.Header().ValueType)

	// 16-bit values, which DAPHNE's code lacks: u16 is code 2.
	u16 := docHeader(1, 2, 2).u8(2).block(0, 0, 2, 2, 1, 2).u8(1, 0, 2, 0, 3, 0, 0xff, 0xff).b
	f, err = open(t, u16, doc)
	require.NoError(t, err)
	w, err := Read[uint16](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []uint16{1, 2, 3, 65535}, w)
	assert.Equal(t, []format.Record{{Array: layout.Array{Name: "matrix", Type: layout.U16, Shape: []int64{2, 2}, Offset: 45, Size: 8},
		Kind: format.KindArray, Extra: map[string]any{"layout": "dense"}}}, f.Records())

	// Blocks with their own value types: an f64 matrix of a u8 block, an
	// i32 block and an empty one.
	mixed := docHeader(1, 3, 2).u8(10).
		block(0, 0, 1, 2, 1, 1).u8(7, 200).
		block(1, 0, 1, 2, 1, 7).u32(uint32(0xfffffffe), 5).
		block(2, 0, 1, 2, 0, 0).b
	f, err = open(t, mixed, doc)
	require.NoError(t, err)
	v, err = Read[float64](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []float64{7, 200, -2, 5, 0, 0}, v)
	assert.Equal(t, f64le(7, -2, 0, 200, 5, 0), readAllOf(t, f, 0, layout.ColMajor, binary.LittleEndian))

	// A CSR f32 matrix as the document's sparse block: nnz u64, per row a
	// count u32 and (column u32, value) pairs.
	csr := docHeader(2, 3, 3).u8(9).block(0, 0, 3, 3, 2, 9).u64(2).
		u32(1, 1).f32(1).u32(0).u32(1, 2).f32(2).b
	f, err = open(t, csr, doc)
	require.NoError(t, err)
	m, err := ReadCSR[float32](f)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 1, 1, 2}, m.RowOffsets)
	assert.Equal(t, []uint64{1, 2}, m.ColIdxs)
	assert.Equal(t, []float32{1, 2}, m.Values)

	// A frame: vt per column (i64, f64), labels, then blocks with their own
	// headers — here the f64 column stored as f32.
	frame := docHeader(3, 2, 2).u8(8, 10).u16(1).u8('a').u16(2).u8('b', 'c').
		block(0, 0, 2, 1, 1, 8).u64(7, uint64(math.MaxUint64)).
		block(0, 1, 2, 1, 1, 9).f32(0.5, 1).b
	f, err = open(t, frame, doc)
	require.NoError(t, err)
	fr, err := ReadFrame(f)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "bc"}, fr.Labels)
	assert.Equal(t, []any{[]int64{7, -1}, []float64{0.5, 1}}, fr.Columns)
	assert.Equal(t, f64le(0.5, 1), readAllOf(t, f, 1, layout.RowMajor, binary.LittleEndian))
	assert.Equal(t, f64le(1), func() []byte {
		b := make([]byte, 8)
		require.NoError(t, f.ReadArray(1, b, 1, layout.RowMajor, binary.LittleEndian))
		return b
	}())

	// Written back in the document's layout: the same bytes (frames: one
	// block per column, each of the column's own type).
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		write func(p string) error
		want  []byte
	}{
		{"dense", func(p string) error {
			return WriteDense(p, 2, 3, []float64{1, 2, 3, 4, 5, 6}, &WriteOptions{DocumentLayout: true})
		}, dense},
		{"u16", func(p string) error {
			return WriteDense(p, 2, 2, []uint16{1, 2, 3, 65535}, &WriteOptions{DocumentLayout: true})
		}, u16},
		{"csr", func(p string) error { return WriteCSR(p, m, &WriteOptions{DocumentLayout: true}) }, csr},
		{"frame", func(p string) error {
			return WriteFrame(p, &Frame{Rows: 2, Labels: []string{"a", "bc"}, Columns: []any{[]int64{7, -1}, []float32{0.5, 1}}}, &WriteOptions{DocumentLayout: true})
		}, docHeader(3, 2, 2).u8(8, 9).u16(1).u8('a').u16(2).u8('b', 'c').
			block(0, 0, 2, 1, 1, 8).u64(7, uint64(math.MaxUint64)).
			block(0, 1, 2, 1, 1, 9).f32(0.5, 1).b},
	} {
		p := filepath.Join(dir, tc.name+".dbdf")
		require.NoError(t, tc.write(p), tc.name)
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, tc.name)
	}
	// DAPHNE's own layout has no 16-bit types.
	err = WriteDense(filepath.Join(dir, "x.dbdf"), 1, 1, []int16{1}, nil)
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	assert.ErrorContains(t, err, "16-bit")
}

// TestDocumentLayoutRegistry: the parameters daphne-layout=document and
// out-daphne-layout=document read and write the document's layout through
// the registry, each on its own side of a conversion.
func TestDocumentLayoutRegistry(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "u.dbdf")
	require.NoError(t, os.WriteFile(p, docHeader(1, 2, 2).u8(6).block(0, 0, 2, 2, 1, 6).u8(1, 0, 2, 0, 3, 0, 0xff, 0xff).b, 0o644))
	docParams := &format.Options{Params: map[string]string{"daphne-layout": "document"}}
	docWrite := &format.Options{Params: map[string]string{"out-daphne-layout": "document"}}
	f, err := format.Open(p, docParams)
	require.NoError(t, err)
	assert.Equal(t, layout.I16, f.Records()[0].Type)
	q := filepath.Join(dir, "v.dbdf")
	require.NoError(t, format.Write(q, f, docWrite))
	require.NoError(t, f.Close())
	assert.Equal(t, mustRead(t, p), mustRead(t, q))
	assert.Equal(t, `{"numCols":2,"numRows":2,"valueType":"si16"}`, string(mustRead(t, q+".meta")))

	// Without it, the i16 matrix cannot be written in DAPHNE's layout.
	g, err := format.Open(q, docParams)
	require.NoError(t, err)
	defer g.Close()
	err = format.Write(filepath.Join(dir, "w.dbdf"), g, nil)
	assert.ErrorIs(t, err, format.ErrNotRepresentable)
	assert.ErrorContains(t, err, "16-bit")

	// A frame through ScanTable, streamed as blocks of rows per column.
	a, ab := arrayOf("a", []int16{1, -2, 3}, 3)
	b, bb := arrayOf("b", []float32{0.5, 1, 2}, 3)
	r := filepath.Join(dir, "fr.dbdf")
	require.NoError(t, format.Write(r, source(a, ab, b, bb), docWrite))

	// From one layout to the other in one conversion: a matrix of a type
	// both layouts have.
	c := filepath.Join(dir, "c.dbdf")
	require.NoError(t, WriteDense(c, 2, 1, []float64{1.5, -2}, nil))
	d := filepath.Join(dir, "d.dbdf")
	require.NoError(t, format.Convert(c, d, nil, docWrite))
	dd, err := Open(d, &Options{DocumentLayout: true})
	require.NoError(t, err)
	got64, err := Read[float64](dd, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5, -2}, got64)
	require.NoError(t, dd.Close())
	e := filepath.Join(dir, "e.dbdf")
	require.NoError(t, format.Convert(d, e, docParams, nil))
	assert.Equal(t, mustRead(t, c), mustRead(t, e), "back in DAPHNE's layout, byte for byte")
	fr, err := Open(r, &Options{DocumentLayout: true})
	require.NoError(t, err)
	got, err := ReadFrame(fr)
	require.NoError(t, err)
	assert.Equal(t, []any{[]int16{1, -2, 3}, []float32{0.5, 1, 2}}, got.Columns)
	require.NoError(t, fr.Close())

	_, err = format.Open(p, &format.Options{Params: map[string]string{"daphne-layout": "draft"}})
	assert.ErrorContains(t, err, "daphne-layout")
	err = format.Write(filepath.Join(dir, "x.dbdf"), source(a, ab), &format.Options{Params: map[string]string{"out-daphne-layout": "draft"}})
	assert.ErrorContains(t, err, "out-daphne-layout")
}

// TestDocumentLayoutNeverSilent: read with DAPHNE's code's numbering, a
// file of the document's is an error naming both readings of its code —
// strictly and leniently — where the code's reading would fail on sizes
// or, leniently, ignore bytes; never a silent misread.
func TestDocumentLayoutNeverSilent(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		meta string
		off  int64
		msg  string
	}{
		// Code 4 is ui32 in the code, u64 in the document: the code's
		// reading leaves 16 bytes over (lenient mode ignored them).
		{"u64 read as ui32", docHeader(1, 2, 2).u8(4).block(0, 0, 2, 2, 1, 4).u64(1, 2, 3, 4).b, "", 18, "value type code 4 is ui32 in DAPHNE's code but ui64 in its format document"},
		// Code 2 is si64 in the code, u16 in the document: too short.
		{"u16 read as si64", docHeader(1, 2, 2).u8(2).block(0, 0, 2, 2, 1, 2).u8(1, 0, 2, 0, 3, 0, 4, 0).b, "", 18, "value type code 2 is si64 in DAPHNE's code but ui16"},
		// A CSR matrix: the document's sparse block, code 3 (ui8 / u32).
		{"csr", docHeader(2, 3, 3).u8(3).block(0, 0, 3, 3, 2, 3).u64(2).u32(1, 1, 7).u32(0).u32(1, 2, 8).b, "", 18, "value type code 3 is ui8 in DAPHNE's code but ui32"},
		// A frame's column codes 1 (si32 / u8) and 3 (ui8 / u32).
		{"frame", docHeader(3, 2, 2).u8(1, 3).u16(1).u8('a').u16(1).u8('b').
			block(0, 0, 2, 1, 1, 1).u8(1, 2).block(0, 1, 2, 1, 1, 3).u32(3, 4).b, "", 18, "value type code 1 is si32 in DAPHNE's code but ui8"},
		// The sizes fit the code's reading (si32), but the .meta names
		// the document's (u8 for code 1).
		{"meta", docHeader(1, 1, 1).u8(1).block(0, 0, 1, 1, 1, 1).u8(1, 2, 3, 4).b, `{"numCols":1,"numRows":1,"valueType":"ui8"}`, 18, "the .meta says ui8"},
	} {
		for _, lenient := range []bool{false, true} {
			o := &Options{Lenient: lenient}
			if tc.meta != "" {
				o.Meta = []byte(tc.meta)
			}
			_, err := NewReader(bytes.NewReader(tc.data), int64(len(tc.data)), o)
			require.Error(t, err, "%s lenient=%v", tc.name, lenient)
			assert.ErrorIs(t, err, ErrDocumentLayout, "%s lenient=%v", tc.name, lenient)
			assert.ErrorContains(t, err, tc.msg, tc.name)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.off, fe.Offset, tc.name)
			// And with the option, the document's reading.
			d := &Options{DocumentLayout: true, Meta: o.Meta}
			if tc.name == "meta" {
				continue // four bytes of a 1×1 u8 matrix: three too many
			}
			_, err = NewReader(bytes.NewReader(tc.data), int64(len(tc.data)), d)
			assert.NoError(t, err, tc.name)
		}
	}
	// Codes that name no type in one numbering: both readings named.
	for code, msg := range map[byte]string{10: "unknown value type code 10 (the format document reads it as f64)",
		8: "value type str (the format document reads code 8 as si64)"} {
		b := docHeader(1, 1, 1).u8(code).block(0, 0, 1, 1, 1, code).u64(1).b
		_, err := open(t, b, nil)
		assert.ErrorContains(t, err, msg)
	}
	_, err := open(t, docHeader(1, 1, 1).u8(0).block(0, 0, 1, 1, 1, 0).u8(1).b, &Options{DocumentLayout: true})
	assert.ErrorContains(t, err, "value type code 0 is none of the format document's 1–10 (DAPHNE's code reads it as si8)")

	// DAPHNE's own files are read as before.
	f, err := open(t, unhex(t, hexDense2x3), &Options{Lenient: true})
	require.NoError(t, err)
	v, err := Read[float64](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, v)
}
