package abf

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTV15Truncation(t *testing.T) {
	full := unhex(tv1Hex)
	for size, want := range map[int]int64{0: -1, 64: -1, 112: -1, 1: 1, 9: 9, 20: 18, 40: 34, 45: 48, 63: 48, 65: 65, 100: 93, 111: 104} {
		p := tempFile(t, full[:size])
		f, err := Open(p, nil)
		if want < 0 {
			require.NoError(t, err, "size %d", size)
			assert.Len(t, f.Entries(), map[int]int{0: 0, 64: 1, 112: 2}[size])
			f.Close()
			continue
		}
		requireFormatErr(t, err, want, nil)
	}
	for size := 0; size < len(full); size++ {
		_, err := NewReader(bytesReader(full[:size]), int64(size), nil)
		if err != nil {
			var fe *FormatError
			require.True(t, errors.As(err, &fe), "size %d: %v", size, err)
		}
	}
	_, err := NewReader(bytesReader(full[:100]), 100, nil)
	assert.EqualError(t, err, `abf: offset 93: record "b": dimension 1 truncated (8 bytes needed, 7 left): file is truncated: unexpected EOF`)
	assert.ErrorIs(t, err, mmapfile.ErrTruncated)

	// A string whose last character is cut by the end of the file is a
	// torn record; Lenient reads it as Julia does, one character short.
	keys := goldenFiles(t)["keys-c.abf"]
	for _, tc := range []struct {
		size    int
		strict  int64
		lenient int64 // -1: opens
	}{{84, 79, -1}, {56, 49, 56}} {
		for _, lenient := range []bool{false, true} {
			f, err := NewReader(bytesReader(keys[:tc.size]), int64(tc.size), &Options{Lenient: lenient})
			want := map[bool]int64{false: tc.strict, true: tc.lenient}[lenient]
			if want < 0 {
				require.NoError(t, err)
				s, err := f.ReadString("blahαש")
				require.NoError(t, err)
				assert.Equal(t, "a∘\xce", s)
				continue
			}
			requireFormatErr(t, err, want, mmapfile.ErrTruncated)
		}
	}

	bad := append([]byte{}, full...)
	bad[65] = 5
	_, err = NewReader(bytesReader(bad), int64(len(bad)), nil)
	requireFormatErr(t, err, 65, nil)
}

func TestSalvage(t *testing.T) {
	full := unhex(tv1Hex)
	p := tempFile(t, full[:100])
	f, err := openMode(p, "r", &Options{Salvage: true})
	require.NoError(t, err)
	assert.Len(t, f.Entries(), 1)
	requireFormatErr(t, f.Damage(), 93, mmapfile.ErrTruncated)
	assert.Equal(t, int64(36), f.TrailingBytes())
	require.NoError(t, f.Close())

	// A writer asked to repair cuts the damaged tail and appends after the
	// last good record.
	g, err := openMode(p, "r+", &Options{Repair: true})
	require.NoError(t, err)
	b, _ := PackBits([]int64{3}, []bool{true, false, true})
	require.NoError(t, g.WriteBits("b", b))
	require.NoError(t, g.Close())
	got, _ := os.ReadFile(p)
	assert.Equal(t, full, got)

	// Without Repair a writer refuses a torn tail, says what a repair
	// would cut, and leaves the file as it was.
	p = tempFile(t, full[:100])
	_, err = openMode(p, "a", nil)
	fe := requireFormatErr(t, err, 93, mmapfile.ErrNeedsRepair)
	assert.ErrorIs(t, err, mmapfile.ErrTruncated)
	assert.Equal(t, `record "b": dimension 1 truncated (8 bytes needed, 7 left); a writing open refuses the damaged file: a repair (Options.Repair) would cut its last 36 bytes, from offset 64 (the record there and everything after it), and keep the 1 record before them`, fe.Msg)
	got, _ = os.ReadFile(p)
	assert.Equal(t, full[:100], got)
	// With Salvage but not Repair it opens, cuts nothing, edits the
	// records before the damage in place and refuses appends.
	g, err = openMode(p, "r+", &Options{Salvage: true})
	require.NoError(t, err)
	requireFormatErr(t, g.Damage(), 93, mmapfile.ErrTruncated)
	require.NoError(t, Set(g, "x", []int64{0}, 3.0))
	requireFormatErr(t, g.WriteBits("b", b), 64, mmapfile.ErrNotWritable)
	require.NoError(t, g.Close())
	got, _ = os.ReadFile(p)
	want := append([]byte{}, full[:100]...)
	binary.LittleEndian.PutUint64(want[48:], math.Float64bits(3))
	assert.Equal(t, want, got)
	// With Repair it cuts, and says so.
	g, err = openMode(p, "a", &Options{Repair: true})
	require.NoError(t, err)
	fe = requireFormatErr(t, g.Damage(), 64, mmapfile.ErrTruncated)
	assert.Equal(t, "cut 36 bytes after the last complete record (offset 93: record \"b\": dimension 1 truncated (8 bytes needed, 7 left))", fe.Msg)
	require.NoError(t, g.Close())
	got, _ = os.ReadFile(p)
	assert.Equal(t, want[:64], got)

	// Damage that is not a torn tail fails a writer in the same way, and
	// the file stays as it was.
	bad := append([]byte{}, full...)
	bad[65] = 5
	p = tempFile(t, bad)
	_, err = openMode(p, "r+", nil)
	requireFormatErr(t, err, 65, mmapfile.ErrNeedsRepair)
	got, _ = os.ReadFile(p)
	assert.Equal(t, bad, got)
}

func TestTV16Duplicates(t *testing.T) {
	bad := unhex(tv1Hex)
	bad[73] = 'x'
	_, err := NewReader(bytesReader(bad), int64(len(bad)), nil)
	fe := requireFormatErr(t, err, 64, ErrDuplicateKey)
	assert.Contains(t, fe.Msg, `"x"`)
	assert.Contains(t, fe.Msg, "offset 0")

	for _, mode := range []string{"r+", "a"} {
		f, p := openBytes(t, unhex(tv1Hex), mode)
		err := Write(f, "x", []int64{1}, []float64{3})
		requireFormatErr(t, err, 0, ErrKeyExists)
		require.NoError(t, f.Close())
		after, _ := os.ReadFile(p)
		assert.Equal(t, sha(unhex(tv1Hex)), sha(after))
	}
}

// faultyWriter fails the call number failAt (0-based).
type faultyWriter struct {
	w      writerAt
	calls  int
	failAt int
}

var errInjected = errors.New("injected fault")

func (w *faultyWriter) WriteAt(p []byte, off int64) (int, error) {
	defer func() { w.calls++ }()
	if w.calls == w.failAt {
		n := len(p) / 2 // a torn write
		w.w.WriteAt(p[:n], off)
		return n, errInjected
	}
	return w.w.WriteAt(p, off)
}

func TestTV17Rollback(t *testing.T) {
	// Calls per append: 0 header+padding, 1 payload, 2 Format A count.
	for _, failAt := range []int{0, 1, 2} {
		for _, format := range []Format{FormatA, FormatC} {
			if format == FormatC && failAt == 2 {
				continue
			}
			p := tempFile(t, nil)
			f, err := openMode(p, "w+", &Options{Format: format})
			require.NoError(t, err)
			require.NoError(t, Write(f, "x", []int64{2}, []float64{1, 2}))
			before, _ := os.ReadFile(p)
			f.wr = &faultyWriter{w: f.mf, failAt: failAt}
			err = Write(f, "y", []int64{100}, make([]float64, 100))
			require.ErrorIs(t, err, errInjected)
			after, _ := os.ReadFile(p)
			require.Equal(t, before, after, "format %v, fault %d", format, failAt)
			assert.Len(t, f.Entries(), 1)
			_, ok := f.Lookup("y")
			assert.False(t, ok)
			// The file stays usable.
			f.wr = f.mf
			require.NoError(t, Write(f, "y", []int64{1}, []float64{3}))
			require.NoError(t, f.Close())
			g, err := Open(p, nil)
			require.NoError(t, err)
			assert.Len(t, g.Entries(), 2)
			g.Close()
		}
	}
}

// TV-17 asks for ENOSPC from writing to /dev/full. mmapkit maps the files
// it writes, and a device is not a file that can be mapped or replaced, so
// opening /dev/full is refused up front (mmapfile.ErrNotRegular) and
// nothing is written. The rollback on a full disk that TV-17 is about is
// tested on a real full file system (internal/reliability's
// TestDiskFullABF) and with the fault-injecting writer (TestTV17Rollback).
func TestTV17DevFull(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/dev/full is Linux's")
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	for _, mode := range []string{"w", "w+", "a", "r+"} {
		_, err := openMode("/dev/full", mode, nil)
		assert.ErrorIs(t, err, mmapfile.ErrNotRegular, mode)
		assert.Contains(t, err.Error(), "/dev/full", mode)
	}
}

func TestTV18BigEndian(t *testing.T) {
	be := &builder{order: binary.BigEndian, mult: 4}
	be.u8(0xFF).str("x").str("Array{Float64,1}").i64(2).padTo(8).f64s(1, 2)
	require.Len(t, be.b, 64)
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 4}, be.b[1:9])
	assert.Equal(t, []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0}, be.b[48:])
	f, p := openBytes(t, be.b, "r")
	_, err := View[float64](f, "x")
	requireFormatErr(t, err, 0, mmapfile.ErrByteOrder)
	assert.Contains(t, err.Error(), `record "x" at offset 0 is big-endian; use abf.Read or abf.ReadAt`)
	_, err = View[uint8](f, "x")
	assert.ErrorIs(t, err, mmapfile.ErrByteOrder)
	x, err := Read[float64](f, "x")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2}, x)
	_, err = openMode(p, "r+", nil)
	assert.ErrorIs(t, err, mmapfile.ErrNotWritable)

	a := &builder{order: binary.BigEndian, mult: 1}
	a.headerA(1).str("x").str("Array").str("Float64").i64(1).i64(2).padTo(8).f64s(1, 2)
	require.Len(t, a.b, 96)
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 6, 'B', 'I', 'G', ' ', ' ', ' ', 0, 0, 0, 0, 0, 0, 0, 1}, a.b[:22])
	g, p := openBytes(t, a.b, "r")
	assert.Equal(t, FormatA, g.version())
	rec, _ := g.Lookup("x")
	assert.Equal(t, int64(80), rec.Offset)
	assert.True(t, rec.BigEndian)
	x, err = Read[float64](g, "x")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2}, x)
	_, err = openMode(p, "a", nil)
	assert.ErrorIs(t, err, mmapfile.ErrNotWritable)

	// Char, Int128 and BitArray, big-endian.
	m := &builder{order: binary.BigEndian, mult: 4}
	m.u8(0xFF).str("c").str("Array{Char,1}").i64(1).padTo(4).raw([]byte{0xce, 0xb6, 0, 0})
	m.u8(0xFF).str("i").str("Array{Int128,1}").i64(1).padTo(16).raw(append(repeat(0xff, 15), 0xfe))
	m.u8(0xFF).str("b").str("BitArray{1}").i64(3).padTo(8).i64(5)
	h, _ := openBytes(t, m.b, "r")
	c, err := Read[layout.Char](h, "c")
	require.NoError(t, err)
	r, err := c[0].Rune()
	require.NoError(t, err)
	assert.Equal(t, 'ζ', r)
	i, err := Read[layout.Int128](h, "i")
	require.NoError(t, err)
	assert.Equal(t, []layout.Int128{{Lo: 0xFFFFFFFFFFFFFFFE, Hi: -1}}, i)
	bits, err := h.ReadBits("b")
	require.NoError(t, err)
	assert.Equal(t, []uint64{5}, bits.Chunks)
	bools, err := Read[bool](h, "b")
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, bools)
	_, err = h.ViewBits("b")
	assert.ErrorIs(t, err, mmapfile.ErrByteOrder)
}

// tv19 holds DataType and AbfSerializer records (synthetic payloads).
func tv19() []byte {
	w := newC()
	w.u8(0).str("T").str("DataType").i64(12).raw([]byte{0x37, 0x4a, 0x4c, 0x0c, 0x04, 0, 0, 0, 1, 2, 3, 4})
	w.u8(0).str("foo").str("AbfSerializer{Foo}").i64(4).raw([]byte{0xde, 0xad, 0xbe, 0xef})
	w.u8(0).str("x").str("Array{Float64,1}").i64(1).padTo(8).f64s(1)
	return w.b
}

func TestTV19Serialized(t *testing.T) {
	data := tv19()
	require.Len(t, data, 152)
	f, p := openBytes(t, data, "r")
	recs := f.Entries()
	require.Len(t, recs, 3)
	assert.Equal(t, KindDataType, recs[0].Kind)
	assert.Equal(t, []int64{0, 34, 12, 46}, []int64{recs[0].Start, recs[0].Offset, recs[0].Size, recs[0].End})
	assert.Nil(t, recs[0].Shape)
	assert.Equal(t, KindSerialized, recs[1].Kind)
	assert.Equal(t, "AbfSerializer{Foo}", recs[1].TypeString)
	assert.Equal(t, []int64{46, 92, 4}, []int64{recs[1].Start, recs[1].Offset, recs[1].Size})
	assert.Equal(t, int64(144), recs[2].Offset)
	b, err := f.ReadBytes("foo")
	require.NoError(t, err)
	assert.Equal(t, []byte{0xde, 0xad, 0xbe, 0xef}, b)
	b, err = f.ReadBytes("T")
	require.NoError(t, err)
	assert.Equal(t, data[34:46], b)
	require.NoError(t, f.Close())

	g, err := openMode(p, "a", nil)
	require.NoError(t, err)
	require.NoError(t, Write(g, "y", []int64{1}, []int32{7}))
	require.NoError(t, g.Close())
	after, _ := os.ReadFile(p)
	assert.Equal(t, data, after[:152])
	h, err := Open(p, nil)
	require.NoError(t, err)
	assert.Len(t, h.Entries(), 4)
	h.Close()

	old := newC().u8(0).str("s").str("Serialized{Foo}").i64(1).raw([]byte{9}).b
	k, _ := openBytes(t, old, "r")
	assert.Equal(t, KindSerialized, k.Entries()[0].Kind)
	assert.Equal(t, "serialized", k.Entries()[0].TypeName())
}

func TestTV20DetectionAndModes(t *testing.T) {
	e, _ := openBytes(t, nil, "r")
	assert.Equal(t, FormatC, e.version())
	assert.Empty(t, e.Entries())

	assert.Empty(t, build(t, FormatC, func(*File) {}))
	assert.Equal(t, []byte{6, 0, 0, 0, 0, 0, 0, 0, 'L', 'I', 'T', 'T', 'L', 'E', 0, 0, 0, 0, 0, 0, 0, 0},
		build(t, FormatA, func(*File) {}))

	for data, want := range map[string]Format{string(unhex(tv1Hex)): FormatC, string(unhex(tv2Hex)): FormatA, string(tv3()): FormatB} {
		f, err := NewReader(bytesReader([]byte(data)), int64(len(data)), nil)
		require.NoError(t, err)
		assert.Equal(t, want, f.version())
	}
	_, err := NewReader(bytesReader([]byte{1, 2, 3}), 3, nil)
	fe := requireFormatErr(t, err, 0, nil)
	assert.Equal(t, "not an ABF file", fe.Msg)

	for _, mode := range []string{"w", "a"} {
		f, _ := openBytes(t, unhex(tv1Hex), mode)
		_, err := View[float64](f, "x")
		assert.ErrorIs(t, err, ErrNotReadable, mode)
		_, err = Read[float64](f, "x")
		assert.ErrorIs(t, err, ErrNotReadable, mode)
	}
	f, _ := openBytes(t, unhex(tv1Hex), "r")
	assert.ErrorIs(t, Write(f, "z", []int64{1}, []float64{1}), mmapfile.ErrNotWritable)
	assert.ErrorIs(t, f.SetElement("x", 0, make([]byte, 8)), mmapfile.ErrNotWritable)
	_, err = View[float64](f, "nope")
	assert.ErrorIs(t, err, format.ErrNoRecord)

	_, err = openMode(filepath.Join(t.TempDir(), "x.abf"), "a+", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "r, r+, w, w+, a")
	_, err = openMode(filepath.Join(t.TempDir(), "missing.abf"), "r+", nil)
	assert.ErrorIs(t, err, os.ErrNotExist)

	// Format A with trailing bytes: edits allowed, appends refused.
	a := newAB().headerA(1).str("x").str("Array").str("Float64").i64(1).i64(1).padTo(8).f64s(1).raw([]byte{1, 2, 3, 4, 5})
	g, p := openBytes(t, a.b, "r+")
	assert.Equal(t, int64(5), g.TrailingBytes())
	require.NoError(t, g.SetElement("x", 0, []byte{0, 0, 0, 0, 0, 0, 0, 0x40}))
	err = Write(g, "y", []int64{1}, []float64{1})
	requireFormatErr(t, err, 88, mmapfile.ErrNotWritable)
	require.NoError(t, g.Close())
	after, _ := os.ReadFile(p)
	assert.Equal(t, []byte{1, 2, 3, 4, 5}, after[len(after)-5:])
	assert.Equal(t, math.Float64bits(2), binary.LittleEndian.Uint64(after[80:]))
	// Mode "a" keeps them too: unknown bytes are never overwritten.
	h, err := openMode(p, "a", nil)
	require.NoError(t, err)
	assert.Equal(t, int64(5), h.TrailingBytes())
	requireFormatErr(t, Write(h, "y", []int64{1}, []float64{1}), 88, mmapfile.ErrNotWritable)
	require.NoError(t, h.Close())
	after2, _ := os.ReadFile(p)
	assert.Equal(t, after, after2)
	// A writing open with Repair cuts them (what a crash between a record
	// and its count leaves), says so, and appends after the counted records.
	h, err = openMode(p, "a", &Options{Repair: true})
	require.NoError(t, err)
	fe = requireFormatErr(t, h.Damage(), 88, nil)
	assert.Contains(t, fe.Msg, "cut 5 bytes")
	require.NoError(t, Write(h, "y", []int64{1}, []float64{1}))
	require.NoError(t, h.Close())
	r, err := Open(p, nil)
	require.NoError(t, err)
	require.Len(t, r.Entries(), 2)
	assert.Equal(t, int64(88), r.Entries()[1].Start)
	assert.Zero(t, r.TrailingBytes())
	require.NoError(t, r.Close())

	// Options.Format must agree with the file.
	_, err = openMode(tempFile(t, unhex(tv1Hex)), "a", &Options{Format: FormatA})
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = openMode(filepath.Join(t.TempDir(), "b.abf"), "w", &Options{Format: FormatB})
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	// An empty existing file opened for appending with Format A gets the header.
	p = tempFile(t, nil)
	h, err = openMode(p, "a", &Options{Format: FormatA})
	require.NoError(t, err)
	require.NoError(t, h.Close())
	after, _ = os.ReadFile(p)
	assert.Len(t, after, 22)
}

func TestTV21Float16(t *testing.T) {
	for bits, want := range map[layout.Float16]float32{0x3C00: 1, 0xC000: -2, 0x7BFF: 65504, 0x0400: 1.0 / 16384,
		0x0001: float32(math.Ldexp(1, -24)), 0x03FF: 6.097555e-5, 0x3555: 0.33325195} {
		assert.InEpsilon(t, want, bits.Float32(), 1e-6, "%04X", uint16(bits))
	}
	assert.True(t, math.Signbit(float64(layout.Float16(0x8000).Float32())))
	assert.True(t, math.IsInf(float64(layout.Float16(0x7C00).Float32()), 1))
	assert.True(t, math.IsInf(float64(layout.Float16(0xFC00).Float32()), -1))
	assert.True(t, math.IsNaN(float64(layout.Float16(0x7E00).Float32())))
	for f, want := range map[float32]layout.Float16{1 + 1.0/1024: 0x3C01, 1 + 1.0/2048: 0x3C00, 1 + 3.0/2048: 0x3C02,
		65519.99: 0x7BFF, 65520: 0x7C00, float32(math.Ldexp(1, -25)): 0, float32(3 * math.Ldexp(1, -26)): 1, 0.1: 0x2E66,
		float32(math.NaN()): 0x7E00, 0.8955: 0x3B2A, 0.01855: 0x24C0, 0.293: 0x34B0, 0.4912: 0x37DC} {
		assert.Equal(t, want, layout.Float16From(f), "%v", f)
	}
}

func TestTV22ColumnMajor(t *testing.T) {
	f, _ := openBytes(t, build(t, FormatC, readmeFile1), "r")
	rec, _ := f.Lookup("ζ!/b")
	i, err := rec.Index(1, 2)
	require.NoError(t, err)
	assert.Equal(t, int64(7), i)
	z, err := View[float64](f, "ζ!/b")
	require.NoError(t, err)
	assert.Equal(t, 8.0, z[i]) // Julia z[2,3]
	_, err = rec.Index(3, 0)
	assert.Error(t, err)
	assert.Equal(t, layout.ColMajor, rec.Order)
	row, err := ReadRowMajor[float64](f, "ζ!/b")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 4, 7, 10, 13, 2, 5, 8, 11, 14, 3, 6, 9, 12, 15}, row)
	// Julia's x[i,j] is row[(i-1)*5+(j-1)].
	assert.Equal(t, z[i], row[1*5+2])
}
