package abf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
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

// readme2 is the v0.1 README's second file: Julia's x = reshape(1.0:50,
// 10, 5) with x[1] = -10.
func readme2Values() []float64 {
	x := make([]float64, 50)
	for i := range x {
		x[i] = float64(i + 1)
	}
	x[0] = -10
	return x
}

// TestCreate fills arrays made by Create through their views: the files
// are byte for byte the golden files that Write makes of the same values,
// in both formats.
func TestCreate(t *testing.T) {
	g := goldenFiles(t)
	for _, tc := range []struct {
		format Format
		golden string
	}{{FormatC, "readme2-c.abf"}, {FormatA, "readme2-a.abf"}} {
		p := filepath.Join(t.TempDir(), "x.abf")
		f, err := openMode(p, "w+", &Options{Format: tc.format})
		require.NoError(t, err)
		x, err := Create[float64](f, "x", []int64{10, 5})
		require.NoError(t, err)
		require.Len(t, x, 50)
		assert.Equal(t, make([]float64, 50), x, "a new array is zeros")
		copy(x, readme2Values())
		require.NoError(t, f.Close())
		got, _ := os.ReadFile(p)
		assert.Equal(t, g[tc.golden], got, tc.golden)
	}

	// The README's first file, every array made by Create, in "r+".
	p := tempFile(t, nil)
	f, err := openMode(p, "r+", nil)
	require.NoError(t, err)
	h, err := Create[layout.Float16](f, "my x array", []int64{5})
	require.NoError(t, err)
	copy(h, readmeX)
	c, err := Create[layout.Char](f, "whY array", []int64{3, 3, 3})
	require.NoError(t, err)
	for i, r := range readmeRunes {
		c[i], _ = layout.CharFrom(r)
	}
	z, err := Create[float64](f, "ζ!/b", []int64{3, 5})
	require.NoError(t, err)
	for i := range z {
		z[i] = float64(i + 1)
	}
	assert.Equal(t, layout.Float16(0x3B2A), h[0], "earlier views stay valid while the file grows")
	want := build(t, FormatC, readmeFile1)
	bits, err := NewReader(bytes.NewReader(want), int64(len(want)), nil)
	require.NoError(t, err)
	b, err := bits.ReadBits("bitmat")
	require.NoError(t, err)
	require.NoError(t, f.WriteBits("bitmat", b))
	require.NoError(t, f.Close())
	got, _ := os.ReadFile(p)
	assert.Equal(t, g["readme1-c.abf"], got)

	// Empty and 0-d arrays.
	e, _ := openBytes(t, nil, "w+")
	v, err := Create[int32](e, "e", []int64{3, 0})
	require.NoError(t, err)
	assert.NotNil(t, v)
	assert.Empty(t, v)
	s, err := Create[float64](e, "s", []int64{})
	require.NoError(t, err)
	s[0] = 1.5
	r, err := Read[float64](e, "s")
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5}, r)
}

// TestCreateRefuses: Create validates before it writes a byte.
func TestCreateRefuses(t *testing.T) {
	tv1 := goldenFiles(t)["tv1-c.abf"]
	for _, tc := range []struct {
		name   string
		mode   string
		create func(f *File) error
		off    int64
		err    error
	}{
		{"mode r", "r", func(f *File) error { _, err := Create[float64](f, "y", []int64{1}); return err }, -1, mmapfile.ErrNotWritable},
		{"mode w cannot view", "w", func(f *File) error { _, err := Create[float64](f, "y", []int64{1}); return err }, -1, ErrNotReadable},
		{"mode a cannot view", "a", func(f *File) error { _, err := Create[float64](f, "y", []int64{1}); return err }, -1, ErrNotReadable},
		{"existing key", "r+", func(f *File) error { _, err := Create[float64](f, "x", []int64{1}); return err }, 0, ErrKeyExists},
		{"complex", "r+", func(f *File) error { _, err := Create[complex64](f, "y", []int64{1}); return err }, -1, errors.ErrUnsupported},
		{"negative dim", "r+", func(f *File) error { _, err := Create[int8](f, "y", []int64{-1}); return err }, -1, layout.ErrNegative},
		{"closed", "r+", func(f *File) error {
			f.Close()
			_, err := Create[int8](f, "y", []int64{1})
			return err
		}, -1, mmapfile.ErrClosed},
	} {
		data := tv1
		if tc.mode == "w" {
			data = nil
		}
		f, p := openBytes(t, data, tc.mode)
		fe := requireFormatErr(t, tc.create(f), tc.off, tc.err)
		assert.Equal(t, p, fe.File, tc.name)
		got, _ := os.ReadFile(p)
		assert.Equal(t, data, bytesOrNil(got), tc.name)
	}
	_, err := Create[float64](must2(NewReader(bytes.NewReader(tv1), int64(len(tv1)), nil)), "y", []int64{1})
	assert.ErrorIs(t, err, mmapfile.ErrNotWritable)
}

func bytesOrNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// TestWriteStream writes arrays and BitArrays a piece at a time, in pieces
// of every size, and compares with Write.
func TestWriteStream(t *testing.T) {
	vals := make([]int16, 300)
	bools := make([]bool, 300)
	for i := range vals {
		vals[i] = int16(i*37 - 5000)
		bools[i] = i%5 == 0 || i%7 == 0
	}
	bits01 := make([]byte, len(bools))
	for i, b := range bools {
		if b {
			bits01[i] = 1
		}
	}
	want := build(t, FormatC, func(f *File) {
		must(Write(f, "v", []int64{20, 15}, vals))
		b, err := PackBits([]int64{300}, bools)
		must(err)
		must(f.WriteBits("b", b))
	})
	raw := make([]byte, 0, 2*len(vals))
	for _, v := range vals {
		raw = binary.LittleEndian.AppendUint16(raw, uint16(v))
	}
	for _, piece := range []int{1, 3, 63, 64, 65, 128, 300, 600} {
		got := build(t, FormatC, func(f *File) {
			must(f.WriteStream("v", layout.I16, []int64{20, 15}, pieces(raw, piece)))
			must(f.WriteBitsStream("b", []int64{300}, pieces(bits01, piece)))
		})
		assert.Equal(t, want, got, "pieces of %d bytes", piece)
	}
}

// pieces writes b in pieces of n bytes.
func pieces(b []byte, n int) func(io.Writer) error {
	return func(w io.Writer) error {
		for len(b) > 0 {
			k := min(n, len(b))
			if _, err := w.Write(b[:k]); err != nil {
				return err
			}
			b = b[k:]
		}
		return nil
	}
}

// TestWriteStreamFailures: a stream that fails, or writes the wrong number
// of bytes, leaves the file byte for byte as it was and the record out of
// the index.
func TestWriteStreamFailures(t *testing.T) {
	boom := errors.New("producer failed")
	for _, tc := range []struct {
		name  string
		write func(f *File) error
		err   error
		msg   string
	}{
		{"producer error", func(f *File) error {
			return f.WriteStream("y", layout.F64, []int64{4}, func(w io.Writer) error {
				w.Write(make([]byte, 8))
				return boom
			})
		}, boom, `record "y" not written; the file is back to the `},
		{"too few bytes", func(f *File) error {
			return f.WriteStream("y", layout.F64, []int64{4}, pieces(make([]byte, 31), 8))
		}, nil, "31 of 32 payload bytes written"},
		{"too many bytes", func(f *File) error {
			return f.WriteStream("y", layout.F64, []int64{4}, pieces(make([]byte, 33), 33))
		}, mmapfile.ErrOutOfRange, "33 bytes written where the payload has 32 left"},
		{"too few bits", func(f *File) error { return f.WriteBitsStream("y", []int64{70}, pieces(make([]byte, 69), 64)) }, nil, "69 of 70 elements"},
		{"too many bits", func(f *File) error { return f.WriteBitsStream("y", []int64{70}, pieces(make([]byte, 71), 71)) }, mmapfile.ErrOutOfRange, "71 elements written"},
		{"a bool that is not 0 or 1", func(f *File) error {
			b := make([]byte, 70)
			b[66] = 2
			return f.WriteBitsStream("y", []int64{70}, pieces(b, 70))
		}, mmapfile.ErrInvalidBool, "element 66: byte 0x02"},
		{"a bool that is not 0 or 1, in a whole word", func(f *File) error {
			b := make([]byte, 70)
			b[5] = 9
			return f.WriteBitsStream("y", []int64{70}, pieces(b, 70))
		}, mmapfile.ErrInvalidBool, "element 5: byte 0x09"},
		{"unknown element type", func(f *File) error {
			return f.WriteStream("y", layout.C64, []int64{1}, pieces(make([]byte, 8), 8))
		}, errors.ErrUnsupported, "no element type c64"},
	} {
		for _, mode := range []string{"a", "r+"} {
			for _, tv := range []string{"tv1-c.abf", "tv2-a.abf"} {
				before := goldenFiles(t)[tv]
				f, p := openBytes(t, before, mode)
				err := tc.write(f)
				fe := requireFormatErr(t, err, wantStart(tc.name, len(before)), tc.err)
				assert.Contains(t, fe.Error(), tc.msg, tc.name)
				assert.Equal(t, p, fe.File)
				assert.Len(t, f.Entries(), 2, tc.name)
				require.NoError(t, f.Close())
				got, _ := os.ReadFile(p)
				assert.Equal(t, before, got, "%s, %s, %s", tc.name, mode, tv)
			}
		}
	}
}

// wantStart is where a failed append's error points: the record it was
// writing, at the end of the file (-1 for what is refused before any
// placement).
func wantStart(name string, size int) int64 {
	if name == "unknown element type" {
		return -1
	}
	return int64(size)
}

func TestSet(t *testing.T) {
	f, p := openBytes(t, build(t, FormatC, readmeFile1), "r+")
	require.NoError(t, Set(f, "ζ!/b", []int64{1, 2}, -8.0)) // Julia's z[2,3]
	require.NoError(t, Set(f, "bitmat", []int64{2, 4}, false))
	require.NoError(t, Set[layout.Float16](f, "my x array", []int64{0}, 0x3C00))
	require.NoError(t, Set(f, "whY array", []int64{0, 1, 2}, layout.Char(0x61000000)))
	// SetElement is the same with a column-major position and raw bytes.
	require.NoError(t, f.SetElement("ζ!/b", 8, binary.LittleEndian.AppendUint64(nil, math.Float64bits(-9))))
	require.NoError(t, f.SetElement("bitmat", 0, []byte{1}))
	require.NoError(t, f.SetElement("bitmat", 1, []byte{0}))
	for _, tc := range []struct {
		name string
		err  error
		set  func() error
	}{
		{"wrong Go type", mmapfile.ErrTypeMismatch, func() error { return Set(f, "ζ!/b", []int64{0, 0}, float32(1)) }},
		{"bool into a float array", mmapfile.ErrTypeMismatch, func() error { return Set(f, "ζ!/b", []int64{0, 0}, true) }},
		{"int into a BitArray", mmapfile.ErrTypeMismatch, func() error { return Set(f, "bitmat", []int64{0, 0}, uint8(1)) }},
		{"index past a dimension", mmapfile.ErrOutOfRange, func() error { return Set(f, "ζ!/b", []int64{3, 0}, 1.0) }},
		{"negative index", mmapfile.ErrOutOfRange, func() error { return Set(f, "ζ!/b", []int64{0, -1}, 1.0) }},
		{"wrong rank", mmapfile.ErrOutOfRange, func() error { return Set(f, "ζ!/b", []int64{7}, 1.0) }},
		{"no such key", format.ErrNoRecord, func() error { return Set(f, "nope", []int64{0}, 1.0) }},
		{"raw: position past the end", mmapfile.ErrOutOfRange, func() error { return f.SetElement("ζ!/b", 15, make([]byte, 8)) }},
		{"raw: negative position", mmapfile.ErrOutOfRange, func() error { return f.SetElement("ζ!/b", -1, make([]byte, 8)) }},
		{"raw: wrong size", mmapfile.ErrTypeMismatch, func() error { return f.SetElement("ζ!/b", 0, make([]byte, 4)) }},
		{"raw: a bit that is not 0 or 1", mmapfile.ErrInvalidBool, func() error { return f.SetElement("bitmat", 0, []byte{2}) }},
	} {
		err := tc.set()
		require.ErrorIs(t, err, tc.err, tc.name)
		var fe *FormatError
		require.ErrorAs(t, err, &fe, tc.name)
		assert.Equal(t, p, fe.File, tc.name)
	}
	require.NoError(t, f.Close())
	g, err := Open(p, nil)
	require.NoError(t, err)
	defer g.Close()
	z, _ := Read[float64](g, "ζ!/b")
	assert.Equal(t, []float64{-8, -9}, z[7:9])
	b, _ := g.ReadBits("bitmat")
	assert.Equal(t, []uint64{0x1355}, b.Chunks)
	h, _ := Read[layout.Float16](g, "my x array")
	assert.Equal(t, layout.Float16(0x3C00), h[0])
	c, _ := Read[layout.Char](g, "whY array")
	assert.Equal(t, layout.Char(0x61000000), c[0+3*1+9*2])
	requireFormatErr(t, Set(g, "ζ!/b", []int64{0, 0}, 1.0), -1, mmapfile.ErrNotWritable)
}
