package daphne

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/stretchr/testify/require"
)

func fuzzSeeds(f *testing.F) map[string][]byte {
	seeds := map[string][]byte{
		"dense": unhex(f, hexDense2x3), "csr": unhex(f, hexCSR3x3), "frame": unhex(f, hexFrame),
		"csr01": unhex(f, hexCSR01), "csrdoc": unhex(f, hexCSRDoc), "coo": cooFile(f, 2), "coo1": cooFile(f, 1),
		"empty": emptyBlockFile(f), "multi": multiBlockFile(1), "multicsr": multiBlockFile(2),
	}
	if paths, err := filepath.Glob(filepath.Join(testdataDir, "*.dbdf")); err == nil {
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				seeds[filepath.Base(p)] = b
			}
		}
	}
	return seeds
}

// FuzzOpen parses arbitrary .dbdf bytes (and a .meta) in both modes and
// both layouts (DAPHNE's code's, its format document's). It
// must never panic; whatever parses is written back: a strict single-block
// dense or current-layout CSR file to identical bytes, anything else to a
// file that reads back to identical values.
func FuzzOpen(f *testing.F) {
	// Files in the format document's layout: blocks of their own types,
	// 16-bit values, a frame of blocks.
	for _, b := range [][]byte{
		docHeader(1, 3, 2).u8(10).block(0, 0, 1, 2, 1, 1).u8(7, 200).block(1, 0, 2, 2, 1, 6).u16(1).u16(2).u16(3).u16(4).b,
		docHeader(2, 3, 3).u8(9).block(0, 0, 3, 3, 2, 9).u64(2).u32(1, 1).f32(1).u32(0).u32(1, 2).f32(2).b,
		docHeader(3, 2, 2).u8(8, 10).u16(1).u8('a').u16(2).u8('b', 'c').block(0, 0, 2, 1, 1, 8).u64(7, 9).block(0, 1, 2, 1, 1, 9).f32(0.5, 1).b,
	} {
		f.Add(b, []byte(nil), false)
	}
	for name, b := range fuzzSeeds(f) {
		f.Add(b, []byte(nil), false)
		f.Add(b, []byte(nil), true)
		if m, err := os.ReadFile(filepath.Join(testdataDir, name+".meta")); err == nil {
			f.Add(b, m, false)
		}
	}
	f.Fuzz(func(t *testing.T, data, meta []byte, lenient bool) {
		if len(meta) == 0 {
			meta = nil
		}
		// In DAPHNE's code's layout and in its format document's.
		for _, doc := range []bool{false, true} {
			o := &Options{Lenient: lenient, MaxAlloc: 1 << 20, MaxBlocks: 64, Meta: meta, DocumentLayout: doc}
			file, err := NewReader(bytes.NewReader(data), int64(len(data)), o)
			if err != nil {
				var fe *FormatError
				require.ErrorAs(t, err, &fe)
				continue
			}
			_ = file.arrays()
			fuzzFormat(t, file)
			switch file.Kind() {
			case KindFrame:
				fuzzFrame(t, file)
			case KindDense:
				dispatch(file.Header().ValueType, fuzzDenseT{t, file, data})
			case KindCSR:
				dispatch(file.Header().ValueType, fuzzCSRT{t, file, data})
			}
		}
	})
}

// fuzzFormat reads every record through the registry's interface and, when
// that works, writes the file with Write and reads it back: the same
// values, whatever layout the input had.
func fuzzFormat(t *testing.T, f *File) {
	recs := f.Records()
	for _, r := range recs {
		if n, err := layout.ByteSize(r.Type, r.Shape); err != nil || n > 1<<20 || r.Shape[0] > 1<<17 {
			return // a CSR matrix of many rows writes 8 bytes a row
		}
	}
	var whole [][]byte
	for i := range recs {
		b, err := format.ReadAll(f, i, layout.RowMajor, binary.LittleEndian)
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			return
		}
		whole = append(whole, b)
	}
	p := filepath.Join(t.TempDir(), "w.dbdf")
	if err := Write(p, f, nil); err != nil {
		return // labels DAPHNE cannot read back, for one
	}
	g, err := Open(p, nil)
	require.NoError(t, err)
	defer g.Close()
	require.Len(t, g.Records(), len(recs))
	for i := range recs {
		b, err := format.ReadAll(g, i, layout.RowMajor, binary.LittleEndian)
		require.NoError(t, err)
		require.Equal(t, whole[i], b)
	}
}

// dispatch calls the generic body for the Go type of vt.
func dispatch(vt ValueType, x interface {
	i8()
	i32()
	i64()
	u8()
	u32()
	u64()
	f32()
	f64()
}) {
	switch vt {
	case SI8:
		x.i8()
	case SI32:
		x.i32()
	case SI64:
		x.i64()
	case UI8:
		x.u8()
	case UI32:
		x.u32()
	case UI64:
		x.u64()
	case F32:
		x.f32()
	case F64:
		x.f64()
	}
}

type fuzzDenseT struct {
	t    *testing.T
	f    *File
	data []byte
}

func (x fuzzDenseT) i8()  { fuzzDense[int8](x.t, x.f, x.data) }
func (x fuzzDenseT) i32() { fuzzDense[int32](x.t, x.f, x.data) }
func (x fuzzDenseT) i64() { fuzzDense[int64](x.t, x.f, x.data) }
func (x fuzzDenseT) u8()  { fuzzDense[uint8](x.t, x.f, x.data) }
func (x fuzzDenseT) u32() { fuzzDense[uint32](x.t, x.f, x.data) }
func (x fuzzDenseT) u64() { fuzzDense[uint64](x.t, x.f, x.data) }
func (x fuzzDenseT) f32() { fuzzDense[float32](x.t, x.f, x.data) }
func (x fuzzDenseT) f64() { fuzzDense[float64](x.t, x.f, x.data) }

type fuzzCSRT fuzzDenseT

func (x fuzzCSRT) i8()  { fuzzCSR[int8](x.t, x.f, x.data) }
func (x fuzzCSRT) i32() { fuzzCSR[int32](x.t, x.f, x.data) }
func (x fuzzCSRT) i64() { fuzzCSR[int64](x.t, x.f, x.data) }
func (x fuzzCSRT) u8()  { fuzzCSR[uint8](x.t, x.f, x.data) }
func (x fuzzCSRT) u32() { fuzzCSR[uint32](x.t, x.f, x.data) }
func (x fuzzCSRT) u64() { fuzzCSR[uint64](x.t, x.f, x.data) }
func (x fuzzCSRT) f32() { fuzzCSR[float32](x.t, x.f, x.data) }
func (x fuzzCSRT) f64() { fuzzCSR[float64](x.t, x.f, x.data) }

func fuzzDense[T numeric](t *testing.T, f *File, data []byte) {
	v, err := Read[T](f, "matrix")
	if err != nil {
		return
	}
	h := f.Header()
	var buf bytes.Buffer
	if !f.opts.Lenient && f.contiguous() {
		// In its own layout: a file of the format document's layout is
		// re-encoded in that layout.
		require.NoError(t, encodeDense(&buf, h.Rows, h.Cols, h.Cols, v, f.doc))
		require.Equal(t, data, buf.Bytes(), "a strict single-block file re-encodes to its own bytes")
		return
	}
	require.NoError(t, encodeDense(&buf, h.Rows, h.Cols, h.Cols, v, false))
	g, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	require.NoError(t, err)
	w, err := Read[T](g, "matrix")
	require.NoError(t, err)
	require.Equal(t, unsafeslice.Bytes(v), unsafeslice.Bytes(w), "bit-identical values (NaN ≠ NaN)")
}

func fuzzCSR[T numeric](t *testing.T, f *File, data []byte) {
	m, err := ReadCSR[T](f)
	if err != nil {
		return
	}
	_, _ = m.ToDense(1 << 16)
	if m.Rows > 0 && m.Cols > 0 {
		_, _ = m.At(m.Rows-1, 0)
	}
	if err := m.Validate(); err != nil {
		require.True(t, f.opts.Lenient, "strict reads validate: %v", err)
		return
	}
	var buf bytes.Buffer
	require.NoError(t, encodeCSR(&buf, m))
	b := f.Header().Blocks
	if !f.opts.Lenient && len(b) == 1 && b[0].Type == BodySparse && b[0].Layout == LayoutCurrent {
		require.Equal(t, data, buf.Bytes(), "a strict current-layout file re-encodes to its own bytes")
		return
	}
	g, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	require.NoError(t, err)
	n, err := ReadCSR[T](g)
	require.NoError(t, err)
	for i, r := range m.RowOffsets {
		require.Equal(t, r-m.RowOffsets[0], n.RowOffsets[i], "row offsets normalised to start at 0")
	}
	require.Equal(t, m.ColIdxs[m.RowOffsets[0]:m.RowOffsets[m.Rows]], n.ColIdxs)
	require.Equal(t, unsafeslice.Bytes(m.Values[m.RowOffsets[0]:m.RowOffsets[m.Rows]]), unsafeslice.Bytes(n.Values))
}

func fuzzFrame(t *testing.T, f *File) {
	fr, err := ReadFrame(f)
	if err != nil {
		return
	}
	labels, types, cols, err := checkFrame("", fr, &WriteOptions{AllowLongLabels: true})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, encodeFrame(&buf, fr.Rows, labels, types, cols))
	g, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	require.NoError(t, err)
	back, err := ReadFrame(g)
	require.NoError(t, err)
	require.Equal(t, fr.Types, back.Types)
	for i := range fr.Columns {
		_, _, want, _ := columnBytes(fr.Columns[i])
		_, _, got, _ := columnBytes(back.Columns[i])
		require.Equal(t, want, got, "column %d bit-identical", i)
	}
}

// FuzzMeta parses arbitrary .meta text; what parses must write and parse
// back to the same Meta and the same bytes.
func FuzzMeta(f *testing.F) {
	if paths, err := filepath.Glob(filepath.Join(testdataDir, "*.meta")); err == nil {
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"numRows":1,"numCols":2,"hdfs":{"isHDFS":false,"HDFSFilename":"/a\u0001"},"schema":[{"label":"\"x\"","valueType":""}],"numNonZeros":5}`))
	f.Add([]byte(`2,3,1,f64`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMeta(data)
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			return
		}
		b, err := m.Bytes()
		require.NoError(t, err)
		m2, err := ParseMeta(b)
		require.NoError(t, err, "%s", b)
		require.Equal(t, m, m2)
		b2, err := m2.Bytes()
		require.NoError(t, err)
		require.Equal(t, b, b2)
	})
}
