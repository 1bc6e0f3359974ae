package futhark

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustValue[T layout.Elem](t testing.TB, shape []int64, xs []T) Value {
	v, err := NewValue(shape, xs)
	require.NoError(t, err)
	return v
}

// The §6 example: 7i32 then [1.5f64, 2.5f64], element and 64-byte alignment.
func TestAlignedSpecExample(t *testing.T) {
	a := mustValue(t, nil, []int32{7})
	b := mustValue(t, []int64{2}, []float64{1.5, 2.5})
	var buf bytes.Buffer
	e := NewWriter(&buf, 0, &Options{Align: AlignElement})
	require.NoError(t, e.EncodeBinary(a))
	require.NoError(t, e.EncodeBinary(b))
	want := "\x20" + "b\x02\x00 i32" + "\x07\x00\x00\x00" + "     " + "b\x02\x01 f64\x02\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\xf8\x3f\x00\x00\x00\x00\x00\x00\x04\x40"
	require.Equal(t, want, buf.String())
	require.Len(t, buf.Bytes(), 48)
	f, err := newReader(buf.Bytes(), nil)
	require.NoError(t, err)
	assert.Equal(t, int64(8), f.Entries()[0].Data)
	assert.Equal(t, int64(32), f.Entries()[1].Data)
	txt, bin, _, err := convert(t, buf.Bytes(), nil)
	require.NoError(t, err)
	assert.Equal(t, "7i32\n[1.5f64, 2.5f64]\n", string(txt))
	assert.Equal(t, strings.TrimLeft(strings.ReplaceAll(want, "     b", "b"), " "), string(bin), "re-encoding drops the padding")

	buf.Reset()
	e = NewWriter(&buf, 0, &Options{Align: Align64})
	require.NoError(t, e.EncodeBinary(a))
	require.NoError(t, e.EncodeBinary(b))
	require.Len(t, buf.Bytes(), 144)
	assert.Equal(t, strings.Repeat(" ", 57), buf.String()[:57])
	f, err = newReader(buf.Bytes(), nil)
	require.NoError(t, err)
	assert.Equal(t, int64(64), f.Entries()[0].Data)
	assert.Equal(t, int64(128), f.Entries()[1].Data)
	// 45 spaces before the second value (the spec's prose says 44, but its
	// payload offsets 64 and 128 and total of 144 bytes need 45).
	assert.Equal(t, int64(57+11), f.Entries()[1].Start-45)
	assert.Equal(t, strings.Repeat(" ", 45)+"b", buf.String()[68:114])
}

// allTypeValues is one array of every type, plus a scalar and an empty one.
func allTypeValues(t testing.TB) []Value {
	return []Value{
		mustValue(t, []int64{3}, []int8{-1, 2, 3}),
		mustValue(t, []int64{2}, []int16{-300, 300}),
		mustValue(t, []int64{2}, []int32{-7, 1 << 30}),
		mustValue(t, []int64{2}, []int64{-1 << 62, 5}),
		mustValue(t, []int64{1}, []uint8{255}),
		mustValue(t, []int64{1}, []uint16{65535}),
		mustValue(t, []int64{1}, []uint32{1 << 31}),
		mustValue(t, []int64{1}, []uint64{1 << 63}),
		mustValue(t, []int64{3}, []layout.Float16{0x3c00, 0x7e00, 0x8000}),
		mustValue(t, []int64{2, 2}, []float32{1, 2, 3, 4}),
		mustValue(t, []int64{1}, []float64{0.1}),
		mustValue(t, []int64{2}, []bool{true, false}),
		mustValue(t, nil, []int32{42}),
		mustValue(t, []int64{0, 3}, []float32{}),
	}
}

func TestAlignedFilesAllTypes(t *testing.T) {
	for _, align := range []int{AlignElement, Align64, 16} {
		p := filepath.Join(t.TempDir(), "x.data")
		vals := allTypeValues(t)
		require.NoError(t, WriteFile(p, &Options{Align: align}, func(e *Encoder) error {
			require.NoError(t, e.EncodeText(vals[0])) // text first: padding counts it
			for _, v := range vals {
				if err := e.EncodeBinary(v); err != nil {
					return err
				}
			}
			return nil
		}))
		f, err := Open(p, nil)
		require.NoError(t, err)
		for i, e := range f.Entries()[1:] {
			a := int64(align)
			if align == AlignElement {
				a = int64(e.Type.Size())
			}
			assert.Zero(t, e.Data%a, "value %d payload at %d", i, e.Data)
		}
		x8, err := View[int8](f, 1)
		require.NoError(t, err)
		assert.Equal(t, []int8{-1, 2, 3}, x8)
		x16, err := View[layout.Float16](f, 9)
		require.NoError(t, err)
		assert.Equal(t, []layout.Float16{0x3c00, 0x7e00, 0x8000}, x16)
		x32, err := View[float32](f, 10)
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 2, 3, 4}, x32)
		xb, err := View[uint8](f, 12)
		require.NoError(t, err)
		assert.Equal(t, []uint8{1, 0}, xb)
		_, err = View[bool](f, 12)
		assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
		u64, err := View[uint64](f, 8)
		require.NoError(t, err)
		assert.Equal(t, []uint64{1 << 63}, u64)
		empty, err := View[float32](f, 14)
		require.NoError(t, err)
		assert.Empty(t, empty)
		_, err = View[int8](f, 0)
		assert.ErrorIs(t, err, ErrTextValue)
		r, err := Read[int8](f, 0)
		require.NoError(t, err)
		assert.Equal(t, []int8{-1, 2, 3}, r)
		// The plain reader re-encodes to futhark-data's unpadded bytes.
		var want bytes.Buffer
		plain := NewEncoder(&want)
		require.NoError(t, plain.EncodeBinary(vals[0]))
		for _, v := range vals {
			require.NoError(t, plain.EncodeBinary(v))
		}
		_, bin, _, err := convert(t, readFile(t, p), nil)
		require.NoError(t, err)
		assert.Equal(t, want.Bytes(), bin)
		require.NoError(t, f.Close())
	}
}

func TestRealBinaryOffsets(t *testing.T) {
	dir := testdata(t)
	p := filepath.Join(dir, "real/futhark/tests/ad/reducebyindexminmax7.in")
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	var starts, datas []int64
	for _, e := range f.Entries() {
		starts = append(starts, e.Start)
		datas = append(datas, e.Data)
		assert.True(t, e.Binary)
	}
	assert.Equal(t, []int64{0, 4015, 16038}, starts)
	assert.Equal(t, []int64{15, 4038, 16061}, datas)
	_, err = View[int64](f, 0)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, mmapfile.ErrMisaligned)
	assert.Equal(t, int64(15), fe.Offset)
	assert.Contains(t, err.Error(), "reducebyindexminmax7.in: offset 15")
	xs, err := Read[int64](f, 0)
	require.NoError(t, err)
	assert.Len(t, xs, 500)
	ys, err := Read[float32](f, 2)
	require.NoError(t, err)
	part := make([]float32, 40)
	require.NoError(t, ReadAt(f, 2, 14960, part))
	assert.Equal(t, ys[14960:], part)
	err = ReadAt(f, 2, 14961, part)
	assert.ErrorIs(t, err, mmapfile.ErrOutOfRange, "ReadAt fills dst or fails")
	assert.Contains(t, err.Error(), "reducebyindexminmax7.in")
	_, err = Read[float64](f, 2)
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	recs := f.Records()
	require.Len(t, recs, 3)
	assert.Equal(t, layout.Array{Name: "1", Type: layout.F32, Shape: []int64{100, 30}, Order: layout.RowMajor, Offset: 4038, Size: 12000}, recs[1].Array)
	for _, r := range recs {
		require.NoError(t, r.Check(f.Size()))
		assert.Equal(t, "binary", r.Extra["encoding"])
	}
}

func TestTextEntriesAndArrays(t *testing.T) {
	f, err := newReader([]byte("-- head\n  [1, 2]  -- c\n\n 3.5f32"), nil)
	require.NoError(t, err)
	es := f.Entries()
	require.Len(t, es, 2)
	assert.Equal(t, Entry{Type: layout.I32, Shape: []int64{2}, Start: 10, End: 16, Data: 10, Line: 2, Col: 3}, es[0])
	assert.Equal(t, Entry{Type: layout.F32, Shape: []int64{}, Start: 25, End: 31, Data: 25, Line: 4, Col: 2}, es[1])
	recs := f.Records()
	assert.Equal(t, layout.Array{Name: "0", Type: layout.I32, Shape: []int64{2}, Offset: 10, Size: 6}, recs[0].Array)
	assert.Equal(t, "text", recs[0].Extra["encoding"])
	xs, err := Read[int32](f, 0)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2}, xs)
	part := make([]int32, 1)
	require.NoError(t, ReadAt(f, 0, 1, part))
	assert.Equal(t, int32(2), part[0])
	assert.ErrorIs(t, ReadAt(f, 0, 1, make([]int32, 5)), mmapfile.ErrOutOfRange)
	assert.ErrorIs(t, ReadAt(f, 0, 3, part), mmapfile.ErrOutOfRange)
}

func TestSetElement(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.data")
	require.NoError(t, WriteFile(p, nil, func(e *Encoder) error {
		if err := e.EncodeText(mustValue(t, []int64{1}, []int32{1})); err != nil {
			return err
		}
		if err := e.EncodeBinary(mustValue(t, []int64{2, 2}, []float32{1, 2, 3, 4})); err != nil {
			return err
		}
		return e.EncodeBinary(mustValue(t, []int64{2}, []bool{false, false}))
	}))
	ro, err := Open(p, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, ro.SetElement(1, 0, []byte{0, 0, 0, 0}), mmapfile.ErrNotWritable)
	require.NoError(t, ro.Close())

	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, f.SetElement(1, 3, []byte{0, 0, 0x20, 0x41})) // 10.0, unaligned payload
	require.NoError(t, f.SetElement(2, 1, []byte{1}))
	assert.Error(t, f.SetElement(2, 0, []byte{2}))
	assert.Error(t, f.SetElement(1, 4, []byte{0, 0, 0, 0}))
	assert.Error(t, f.SetElement(1, 0, []byte{0, 0}))
	assert.ErrorIs(t, f.SetElement(0, 0, []byte{0, 0, 0, 0}), ErrTextValue)
	require.NoError(t, f.Close())
	_, err = Read[float32](f, 1)
	assert.Error(t, err, "closed")

	txt, _, _, err := convert(t, readFile(t, p), nil)
	require.NoError(t, err)
	assert.Equal(t, "[1i32]\n[[1.0f32, 2.0f32],\n[3.0f32, 10.0f32]]\n[false, true]\n", string(txt))
}

func TestWriteFileFailureLeavesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "keep.data")
	require.NoError(t, os.WriteFile(p, []byte("1i32\n"), 0o644))
	boom := errors.New("boom")
	err := WriteFile(p, nil, func(e *Encoder) error {
		require.NoError(t, e.EncodeText(mustValue(t, nil, []int32{2})))
		return boom
	})
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, "1i32\n", string(readFile(t, p)))
	ents, _ := os.ReadDir(filepath.Dir(p))
	assert.Len(t, ents, 1, "no temporary file left")
}

func TestEncoderStreaming(t *testing.T) {
	// A [3][2][2]i8 value streamed in uneven chunks prints as a whole.
	v := mustValue(t, []int64{3, 2, 2}, []int8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	var whole, parts bytes.Buffer
	require.NoError(t, NewEncoder(&whole).EncodeText(v))
	e := NewEncoder(&parts)
	require.NoError(t, e.BeginText(layout.I8, []int64{3, 2, 2}))
	for _, k := range []int{1, 4, 2, 5} {
		require.NoError(t, e.WriteElems(v.Data[:k]))
		v.Data = v.Data[k:]
	}
	assert.Equal(t, whole.String(), parts.String())
	assert.Equal(t, "[[[1i8, 2i8],\n[3i8, 4i8]],\n[[5i8, 6i8],\n[7i8, 8i8]],\n[[9i8, 10i8],\n[11i8, 12i8]]]\n", whole.String())
	assert.Equal(t, int64(whole.Len()), e.Offset())
	assert.ErrorIs(t, e.WriteElems([]byte{1}), ErrState)
	var bb bytes.Buffer
	e = NewEncoder(&bb)
	require.NoError(t, e.BeginBinary(layout.I16, []int64{2}))
	require.NoError(t, e.WriteElems([]byte{1}), "half an element is kept for the next chunk")
	assert.ErrorIs(t, e.WriteElems([]byte{0, 2, 0, 9}), ErrState, "more than the payload")
	require.NoError(t, e.WriteElems([]byte{0, 2, 0}))
	assert.Equal(t, "b\x02\x01 i16\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x02\x00", bb.String())
	// Text elements split across chunks.
	var tb bytes.Buffer
	e = NewEncoder(&tb)
	require.NoError(t, e.BeginText(layout.F32, []int64{2}))
	n, err := io.Copy(e, iotest.OneByteReader(bytes.NewReader([]byte{0, 0, 0xc0, 0x3f, 0, 0, 0x20, 0xc1})))
	require.NoError(t, err)
	assert.Equal(t, int64(8), n)
	assert.Equal(t, "[1.5f32, -10.0f32]\n", tb.String())
	e = NewEncoder(io.Discard)
	require.NoError(t, e.BeginText(layout.I8, []int64{2}))
	assert.ErrorIs(t, e.BeginText(layout.I8, nil), ErrState, "value in progress")
	_, err = checkShape(layout.I8, make([]int64, 128))
	assert.ErrorIs(t, err, ErrRank)
	_, err = checkShape(layout.I8, []int64{-1})
	assert.ErrorIs(t, err, ErrDims)
	_, err = checkShape(layout.I64, []int64{1 << 61, 8})
	assert.ErrorIs(t, err, ErrDims)
}

func TestPayloadAndEncode(t *testing.T) {
	in := "[1, 2] b\x02\x01bool\x02\x00\x00\x00\x00\x00\x00\x00\x00\x05"
	p := filepath.Join(t.TempDir(), "pe.data")
	require.NoError(t, os.WriteFile(p, []byte(in), 0o644))
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	pay, err := f.PayloadBytes(1)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 5}, pay)
	_, err = f.PayloadBytes(0)
	assert.ErrorIs(t, err, ErrTextValue)
	g, err := newReader([]byte(in), nil)
	require.NoError(t, err)
	_, err = g.PayloadBytes(1)
	assert.ErrorIs(t, err, errors.ErrUnsupported, "NewReader maps nothing")
	_, err = View[uint8](g, 1)
	assert.ErrorIs(t, err, errors.ErrUnsupported, "NewReader maps nothing")
	for _, h := range []*File{f, g} {
		var txt, bin bytes.Buffer
		te, be := NewEncoder(&txt), NewEncoder(&bin)
		for i := range h.Entries() {
			require.NoError(t, h.Encode(te, i, false))
			require.NoError(t, h.Encode(be, i, true))
		}
		assert.Equal(t, "[1i32, 2i32]\n[false, true]\n", txt.String())
		assert.Equal(t, "b\x02\x01 i32\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00b\x02\x01bool\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01", bin.String())
	}
}

func TestLenientSalvage(t *testing.T) {
	in := []byte("[1, 2] b\x02\x00 i32\x07\x00\x00\x00 b\x02\x01 f64\x05\x00\x00\x00\x00\x00\x00\x00\x01\x02")
	_, err := newReader(in, nil)
	require.ErrorIs(t, err, mmapfile.ErrTruncated)
	f, err := newReader(in, &Options{Salvage: true})
	require.NoError(t, err)
	assert.Len(t, f.Entries(), 2)
	assert.ErrorIs(t, f.Damage(), mmapfile.ErrTruncated)
	p := filepath.Join(t.TempDir(), "torn.data")
	require.NoError(t, os.WriteFile(p, in, 0o644))
	g, err := Open(p, &Options{Salvage: true})
	require.NoError(t, err)
	defer g.Close()
	var fe *FormatError
	require.ErrorAs(t, g.Damage(), &fe)
	assert.Equal(t, p, fe.File)
	xs, err := Read[int32](g, 1)
	require.NoError(t, err)
	assert.Equal(t, []int32{7}, xs)
}

// Text values are decoded while indexing and kept up to keepDecoded bytes
// in all; values past the budget are decoded again when read. Either way
// reads give the same values, and what Value returns is the caller's.
func TestTextKeptFromIndex(t *testing.T) {
	old := keepDecoded
	defer func() { keepDecoded = old }()
	keepDecoded = 16
	in := []byte("[1,2,3] [4,5,6,7,8] b\x02\x01 i32\x01\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00 [9i64, 10i64] \"ab\"")
	for name, open := range map[string]func([]byte, *Options) (*File, error){"mapped": memFile, "reader": newReader} {
		f, err := open(in, nil)
		require.NoError(t, err, name)
		require.Equal(t, 5, f.idx.n)
		// What is kept counts with its capacity (append's slack included), so
		// which small values fit depends on append's growth; the bound does not.
		assert.Equal(t, []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}, f.idx.keptOf(f.idx.at(0)), "%s: the first value fits", name)
		assert.Nil(t, f.idx.keptOf(f.idx.at(1)), "%s: 20 bytes never fit in 16", name)
		assert.Nil(t, f.idx.keptOf(f.idx.at(2)), "%s: binary values are never decoded while indexing", name)
		assert.LessOrEqual(t, cap(f.idx.kept), keepDecoded, "%s: kept bytes stay within the budget", name)

		for i, want := range [][]int32{{1, 2, 3}, {4, 5, 6, 7, 8}, {9}} {
			got, err := Read[int32](f, i)
			require.NoError(t, err, "value %d", i)
			assert.Equal(t, want, got, "value %d", i)
		}
		got, err := Read[int64](f, 3)
		require.NoError(t, err)
		assert.Equal(t, []int64{9, 10}, got)
		dst := make([]uint8, 2)
		require.NoError(t, ReadAt(f, 4, 0, dst))
		assert.Equal(t, "ab", string(dst))

		v, err := f.Value(0)
		require.NoError(t, err)
		v.Data[0] = 99
		again, err := Read[int32](f, 0)
		require.NoError(t, err)
		assert.Equal(t, []int32{1, 2, 3}, again, "changing a returned Value changes nothing kept")
		v, err = f.Value(1)
		require.NoError(t, err)
		v.Data[0] = 99
		again, err = Read[int32](f, 1)
		require.NoError(t, err)
		assert.Equal(t, []int32{4, 5, 6, 7, 8}, again, "nor the decoded-text cache")

		// Salvaged indexing keeps entries and kept payloads aligned.
		f, err = open([]byte("[1,2] [3,"), &Options{Salvage: true})
		require.NoError(t, err)
		require.Error(t, f.Damage())
		require.Equal(t, 1, f.NumRecords())
		got32, err := Read[int32](f, 0)
		require.NoError(t, err)
		assert.Equal(t, []int32{1, 2}, got32)
	}
}
