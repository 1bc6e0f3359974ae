package futhark

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/memsource"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memSource is a format.Source held in memory: each record's bytes in its
// storage order and byte order.
type memSource struct{ memsource.Source }

var errSource = errors.New("source failed")

// add appends a record of type t and shape holding elems (host order,
// row-major), stored in order and byte order bo.
func (s *memSource) add(t *testing.T, name string, typ layout.Type, shape []int64, elems any, order layout.Order, bo binary.ByteOrder) {
	_, b, ok := layout.BytesOf(elems)
	require.True(t, ok)
	stored := make([]byte, len(b))
	require.NoError(t, layout.ReorderBytes(stored, b, typ.Size(), shape, layout.RowMajor))
	if order == layout.RowMajor {
		copy(stored, b)
	}
	layout.SwapOrder(stored, typ, layout.HostOrder(), bo)
	a := layout.Array{Name: name, Type: typ, Shape: shape, Order: order, BigEndian: bo == binary.BigEndian, Offset: -1, Size: int64(len(b))}
	s.Add(format.Record{Array: a, Kind: format.KindArray}, stored)
}

func TestFormatRegistered(t *testing.T) {
	f, ok := format.Lookup("futhark")
	require.True(t, ok)
	assert.Equal(t, []string{".fut", ".in", ".out", ".data"}, f.Extensions)
	for _, name := range []string{"x.fut", "x.IN", "dir/x.out", "x.data"} {
		g, ok := format.ForName(name)
		assert.True(t, ok && g.Name == "futhark", name)
	}
	var params []string
	for _, p := range f.Params {
		params = append(params, p.Name)
	}
	assert.Equal(t, []string{"text", "aligned"}, params)
	// Detected from the bytes when the name says nothing.
	dir := t.TempDir()
	for name, body := range map[string]string{"bin": "  \n-- c\nb\x02\x00 i32\x01\x00\x00\x00", "txt": "[1, 2]", "comment": "-- no values"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		g, err := format.Detect(p, nil)
		require.NoError(t, err, name)
		assert.Equal(t, "futhark", g.Name, name)
	}
}

// Every value of the real and generated files reads through the format
// interface as it reads through Value, in both orders and byte orders.
func TestFormatReadArray(t *testing.T) {
	dir := testdata(t)
	paths := []string{filepath.Join(dir, "generated", "all-types.bin"), filepath.Join(dir, "generated", "all-types.txt"),
		filepath.Join(dir, "real/futhark/tests/ad/reducebyindexminmax7.in")}
	for _, p := range paths {
		ff, err := format.Open(p, nil)
		require.NoError(t, err, p)
		f := ff.(*File)
		assert.Equal(t, "futhark", ff.Format())
		assert.Equal(t, "2", ff.Version())
		recs := ff.Records()
		require.Equal(t, f.NumRecords(), len(recs))
		for i, r := range recs {
			v, err := f.Value(i)
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprint(i), r.Name)
			assert.Equal(t, v.Type, r.Type)
			assert.Equal(t, v.Shape, r.Shape)
			assert.Equal(t, layout.RowMajor, r.Order)
			assert.False(t, r.BigEndian)
			e := f.Entries()[i]
			assert.Equal(t, e.Data, r.Offset)
			if e.Binary {
				assert.Equal(t, "binary", r.Extra["encoding"])
				assert.Equal(t, int64(len(v.Data)), r.Size)
			} else {
				assert.Equal(t, "text", r.Extra["encoding"])
				assert.Equal(t, e.End-e.Start, r.Size)
			}
			le, err := format.ReadAll(ff, i, layout.RowMajor, binary.LittleEndian)
			require.NoError(t, err)
			assert.Equal(t, v.Data, le, "%s value %d", p, i)
			size := v.Type.Size()
			be, err := format.ReadAll(ff, i, layout.ColMajor, binary.BigEndian)
			require.NoError(t, err)
			want := make([]byte, len(v.Data))
			require.NoError(t, layout.ReorderBytes(want, v.Data, size, v.Shape, layout.RowMajor))
			layout.SwapOrder(want, v.Type, binary.LittleEndian, binary.BigEndian)
			assert.Equal(t, want, be, "%s value %d, column-major big-endian", p, i)
			if n := len(v.Data) / size; n > 2 {
				part := make([]byte, size)
				require.NoError(t, ff.ReadArray(i, part, int64(n-1), layout.RowMajor, binary.LittleEndian))
				assert.Equal(t, v.Data[len(v.Data)-size:], part)
				assert.ErrorIs(t, ff.ReadArray(i, part, int64(n), layout.RowMajor, binary.LittleEndian), mmapfile.ErrOutOfRange)
			}
		}
		require.NoError(t, ff.Close())
		assert.ErrorIs(t, ff.Close(), mmapfile.ErrClosed)
		assert.ErrorIs(t, ff.ReadArray(0, nil, 0, layout.RowMajor, binary.LittleEndian), mmapfile.ErrClosed)
	}
}

func TestFormatSetText(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.in")
	require.NoError(t, os.WriteFile(p, []byte("[1, 2] b\x02\x02 i32\x02\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00"+
		strings.Repeat("\x00", 16)+"b\x02\x01 f16\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), 0o644))
	ro, err := format.Open(p, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, ro.(format.Setter).SetText(1, []int64{0, 0}, "1"), mmapfile.ErrNotWritable)
	require.NoError(t, ro.Close())

	ff, err := format.OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	s := ff.(format.Setter)
	require.NoError(t, s.SetText(1, []int64{1, 0}, "010"), "Futhark's 010 is ten")
	require.NoError(t, s.SetText(1, []int64{0, 1}, "-0x10i32"))
	require.NoError(t, s.SetText(2, []int64{0}, "-inf"))
	for _, c := range []struct {
		i     int
		idx   []int64
		value string
		err   error
	}{
		{1, []int64{0, 0}, "2147483648", layout.ErrRange},
		{1, []int64{0, 0}, "1.5", layout.ErrSyntax},
		{1, []int64{0, 0}, "1i64", layout.ErrSyntax},
		{2, []int64{0}, "1e9", layout.ErrRange},
		{1, []int64{2, 0}, "1", mmapfile.ErrOutOfRange},
		{1, []int64{0}, "1", mmapfile.ErrOutOfRange},
		{0, []int64{0}, "1", mmapfile.ErrNotWritable},
		{3, nil, "1", mmapfile.ErrOutOfRange},
	} {
		err := s.SetText(c.i, c.idx, c.value)
		assert.ErrorIs(t, err, c.err, "%d %v %q", c.i, c.idx, c.value)
		var fe *FormatError
		if assert.ErrorAs(t, err, &fe) {
			assert.Equal(t, p, fe.File)
		}
	}
	// A bad literal is about the record, named as Records names it, not
	// about the offset of its header.
	assert.EqualError(t, s.SetText(1, []int64{0, 0}, "abc"),
		"futhark: "+p+`: record "1": layout: "abc" is not a i32 literal: unexpected 'a' at byte 0, expected digits: syntax error`)
	// So is an index outside its shape.
	assert.EqualError(t, s.SetText(1, []int64{2, 0}, "1"),
		"futhark: "+p+`: record "1": index [2,0]: 2 is past the end of dimension 0 of shape [2][2] (0 to 1)`)
	require.NoError(t, s.Sync())
	require.NoError(t, ff.Close())
	var out bytes.Buffer
	require.NoError(t, futFormat(t).Encode(&out, mustOpen(t, p), &format.Options{Params: map[string]string{"text": "true"}}))
	assert.Equal(t, "[1i32, 2i32]\n[[0i32, -16i32],\n[10i32, 0i32]]\n[-f16.inf]\n", out.String())
}

func futFormat(t *testing.T) format.Format {
	f, ok := format.Lookup("futhark")
	require.True(t, ok)
	return f
}

func mustOpen(t *testing.T, p string) format.File {
	f, err := format.Open(p, nil)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// testSource holds records in every Futhark type, stored row- and
// column-major, little- and big-endian.
func testSource(t *testing.T) *memSource {
	s := &memSource{}
	s.add(t, "m", layout.F64, []int64{2, 3}, []float64{1, 2, 3, 4, 5, 6}, layout.ColMajor, binary.BigEndian)
	s.add(t, "i", layout.I16, []int64{3}, []int16{-1, 2, -300}, layout.RowMajor, binary.BigEndian)
	s.add(t, "b", layout.Bool, []int64{2, 2}, []bool{true, false, false, true}, layout.ColMajor, binary.LittleEndian)
	s.add(t, "h", layout.F16, []int64{2}, []layout.Float16{0x3c00, 0x7c01}, layout.RowMajor, binary.LittleEndian)
	s.add(t, "s", layout.U64, nil, []uint64{math.MaxUint64}, layout.RowMajor, binary.LittleEndian)
	s.add(t, "e", layout.I8, []int64{0, 4}, []int8{}, layout.RowMajor, binary.LittleEndian)
	s.add(t, "t", layout.I32, []int64{2, 2, 2}, []int32{1, 2, 3, 4, 5, 6, 7, 8}, layout.ColMajor, binary.BigEndian)
	return s
}

// canonical is what testSource reads as, written by the Encoder.
func canonical(t *testing.T, text bool, align int) []byte {
	var buf bytes.Buffer
	e := NewWriter(&buf, 0, &Options{Align: align})
	for _, v := range []Value{
		mustValue(t, []int64{2, 3}, []float64{1, 2, 3, 4, 5, 6}),
		mustValue(t, []int64{3}, []int16{-1, 2, -300}),
		mustValue(t, []int64{2, 2}, []bool{true, false, false, true}),
		mustValue(t, []int64{2}, []layout.Float16{0x3c00, 0x7c01}),
		mustValue(t, nil, []uint64{math.MaxUint64}),
		mustValue(t, []int64{0, 4}, []int8{}),
		mustValue(t, []int64{2, 2, 2}, []int32{1, 2, 3, 4, 5, 6, 7, 8}),
	} {
		if text {
			require.NoError(t, e.EncodeText(v))
		} else {
			require.NoError(t, e.EncodeBinary(v))
		}
	}
	return buf.Bytes()
}

func TestFormatWrite(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		params map[string]string
		text   bool
		align  int
	}{
		{nil, false, AlignNone},
		{map[string]string{"text": "true"}, true, AlignNone},
		{map[string]string{"aligned": "elem"}, false, AlignElement},
		{map[string]string{"aligned": "64"}, false, Align64},
		{map[string]string{"aligned": "4096"}, false, 4096},
	} {
		p := filepath.Join(dir, "w.fut")
		require.NoError(t, format.Write(p, testSource(t), &format.Options{Params: c.params}), "%v", c.params)
		got := readFile(t, p)
		assert.Equal(t, canonical(t, c.text, c.align), got, "%v", c.params)
		var enc bytes.Buffer
		require.NoError(t, futFormat(t).Encode(&enc, testSource(t), &format.Options{Params: c.params}))
		assert.Equal(t, got, enc.Bytes(), "Encode writes what Write writes")
		if c.align != AlignNone {
			f, err := Open(p, nil)
			require.NoError(t, err)
			for i, e := range f.Entries() {
				a := int64(c.align)
				if c.align == AlignElement {
					a = int64(e.Type.Size())
				}
				assert.Zero(t, e.Data%a, "value %d", i)
			}
			x, err := View[float64](f, 0)
			require.NoError(t, err)
			assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, x)
			require.NoError(t, f.Close())
		}
	}
	for _, bad := range []string{"3", "0", "8192", "x", "-4"} {
		err := format.Write(filepath.Join(dir, "bad.fut"), testSource(t), &format.Options{Params: map[string]string{"aligned": bad}})
		assert.ErrorContains(t, err, "power of two", bad)
	}
	assert.NoFileExists(t, filepath.Join(dir, "bad.fut"))
}

// A Futhark file converts to itself byte for byte, binary and text, and a
// converted file keeps every value.
func TestFormatConvertRoundTrip(t *testing.T) {
	dir := testdata(t)
	out := filepath.Join(t.TempDir(), "x.in")
	for _, name := range []string{"all-types.bin", "futhark/tests/scatter/data/tiny.out.bin"} {
		in := filepath.Join(dir, "generated", name)
		require.NoError(t, format.Convert(in, out, nil, &format.Options{Format: "futhark"}))
		assert.Equal(t, readFile(t, in), readFile(t, out), name)
	}
	require.NoError(t, format.Convert(filepath.Join(dir, "generated", "all-types.input.txt"), out, nil,
		&format.Options{Format: "futhark", Params: map[string]string{"text": "true"}}))
	assert.Equal(t, string(readFile(t, filepath.Join(dir, "generated", "all-types.txt"))), string(readFile(t, out)))
}

func TestFormatWriteRefusesWhatFutharkCannotHold(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "keep.fut")
	require.NoError(t, os.WriteFile(p, []byte("1i32\n"), 0o600))
	for _, c := range []struct {
		rec  format.Record
		want string
	}{
		{format.Record{Array: layout.Array{Name: "big", Type: layout.I128, Shape: []int64{2}}}, `record "big" (i128[2])`},
		{format.Record{Array: layout.Array{Name: "u", Type: layout.U128, Shape: []int64{1}}}, `record "u"`},
		{format.Record{Array: layout.Array{Name: "c", Type: layout.JuliaChar, Shape: []int64{1}}}, `record "c"`},
		{format.Record{Array: layout.Array{Name: "z", Type: layout.C64, Shape: []int64{1}}}, `record "z"`},
		{format.Record{Array: layout.Array{Name: "str", Type: layout.U8, Shape: []int64{3}}, Kind: format.KindString}, `record "str"`},
		{format.Record{Array: layout.Array{Name: "o", Type: layout.U8, Shape: []int64{3}}, Kind: format.KindOpaque, TypeName: "serialized"}, `record "o"`},
		{format.Record{Array: layout.Array{Name: "deep", Type: layout.I8, Shape: make([]int64, 128)}}, `record "deep"`},
	} {
		s := testSource(t)
		s.Add(c.rec, nil)
		err := format.Write(p, s, nil)
		require.ErrorIs(t, err, format.ErrNotRepresentable, c.want)
		assert.Contains(t, err.Error(), c.want)
		var enc bytes.Buffer
		assert.ErrorIs(t, futFormat(t).Encode(&enc, s, nil), format.ErrNotRepresentable)
		assert.Zero(t, enc.Len(), "nothing is encoded before the check")
	}
	assert.Equal(t, "1i32\n", string(readFile(t, p)))
}

// Write goes through a temporary file: a failure leaves the target as it
// was, and a replaced target keeps its permission bits.
func TestFormatWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.fut")
	require.NoError(t, os.WriteFile(p, []byte("1i32\n"), 0o600))
	s := testSource(t)
	s.Fail(3, errSource)
	err := format.Write(p, s, nil)
	require.ErrorIs(t, err, errSource)
	assert.Contains(t, err.Error(), `record "h"`)
	assert.Equal(t, "1i32\n", string(readFile(t, p)))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 1, "no temporary file left")

	require.NoError(t, format.Write(p, testSource(t), nil))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a 0600 target stays 0600")
	assert.Equal(t, canonical(t, false, 0), readFile(t, p))
	q := filepath.Join(dir, "new.fut")
	require.NoError(t, format.Write(q, testSource(t), &format.Options{Options: mmapfile.Options{Perm: 0o640}}))
	fi, err = os.Stat(q)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640)&^umask(), fi.Mode().Perm())
}

// umask returns the process's umask.
func umask() os.FileMode {
	p := filepath.Join(os.TempDir(), fmt.Sprintf("umask-%d", os.Getpid()))
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o777)
	if err != nil {
		return 0o022
	}
	fi, _ := f.Stat()
	f.Close()
	os.Remove(p)
	return 0o777 &^ fi.Mode().Perm()
}
