package abf

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBitsInPlaceAndSync(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.abf")
	f, err := openMode(p, "w+", nil)
	require.NoError(t, err)
	assert.Equal(t, p, f.Name())
	b, _ := PackBits([]int64{2, 3}, []bool{true, false, false, false, false, true})
	require.NoError(t, f.WriteBits("b", b))
	require.NoError(t, Write(f, "x", []int64{2}, []float64{1, 2}))
	v, err := f.ViewBits("b")
	require.NoError(t, err)
	assert.True(t, v.At(0))
	assert.True(t, v.At(5))
	v.Set(1, true)
	v.Set(0, false)
	assert.Panics(t, func() { v.At(6) })
	x, err := View[float64](f, "x")
	require.NoError(t, err)
	x[1] = math.Inf(1)
	require.NoError(t, f.Sync())
	// After Sync the bytes are in the file, seen without the mapping.
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	g, err := NewReader(bytesReader(data), int64(len(data)), nil)
	require.NoError(t, err)
	got, err := g.ReadBits("b")
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, false, false, false, true}, got.Bools())
	xs, err := Read[float64](g, "x")
	require.NoError(t, err)
	assert.True(t, math.IsInf(xs[1], 1))
	require.NoError(t, f.Close())
	assert.Error(t, Write(f, "y", []int64{1}, []int8{1}))
}

// failingReader fails every read at or after off.
type failingReader struct {
	data    []byte
	off     int64
	atStart bool // fail reads that start at or after off, not those that reach it
}

var errDisk = errors.New("disk on fire")

func (r failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.off && (!r.atStart || off >= r.off) {
		return 0, errDisk
	}
	return copy(p, r.data[off:]), nil
}

func TestReaderErrors(t *testing.T) {
	data := unhex(tv1Hex)
	for _, at := range []int64{0, 10, 60} {
		_, err := NewReader(failingReader{data: data, off: at}, int64(len(data)), nil)
		assert.ErrorIs(t, err, errDisk, "at %d", at)
	}
	// Headers fit in the first window; payload reads fail later.
	f, err := NewReader(failingReader{data: data, off: 100, atStart: true}, int64(len(data)), nil)
	require.NoError(t, err)
	_, err = f.ReadBits("b")
	assert.ErrorIs(t, err, errDisk)
	_, err = NewReader(failingReader{data: data, off: 1000}, -1, nil)
	assert.Error(t, err)
}

// TestDetectBothWays crafts a file whose first header parses as C and as
// B (the C padding spells B's container); the whole file parses as C.
func TestDetectBothWays(t *testing.T) {
	w := newC().u8(0).str("abcdefgh").str("Array{Float64,1}").i64(5)
	require.Len(t, w.b, 49)
	w.raw([]byte("Array")).padTo(8).f64s(1, 2, 3, 4, 5)
	require.True(t, headerWorks(&input{size: int64(len(w.b)), mem: w.b}, FormatC, false))
	require.True(t, headerWorks(&input{size: int64(len(w.b)), mem: w.b}, FormatB, false))
	f, err := NewReader(bytesReader(w.b), int64(len(w.b)), nil)
	require.NoError(t, err)
	assert.Equal(t, FormatC, f.version())
	x, err := Read[float64](f, "abcdefgh")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4, 5}, x)
}

func TestJuliaNames(t *testing.T) {
	assert.Equal(t, "Float64", JuliaName(layout.F64))
	assert.Equal(t, "", JuliaName(0))
	assert.Equal(t, "Format(7)", Format(7).String())
	assert.Equal(t, "Kind(9)", Kind(9).String())
	assert.Equal(t, "datatype", KindDataType.String())
	assert.Equal(t, int64(2), juliaChars("\xce\xb6\xff"))
}

// TestLongKeysThroughReader decodes strings longer than the reader's
// window, with multi-byte characters across window boundaries.
func TestLongKeysThroughReader(t *testing.T) {
	key := strings.Repeat("ζa€\U00096860", 20000) // 200,000 bytes
	val := strings.Repeat("∘", 30000)
	data := build(t, FormatC, func(f *File) {
		must(f.WriteString(key, val))
		must(Write(f, "x", []int64{1}, []int8{5}))
	})
	f, err := NewReader(bytesReader(data), int64(len(data)), nil)
	require.NoError(t, err)
	recs := f.Entries()
	require.Len(t, recs, 2)
	assert.Equal(t, key, recs[0].Name)
	assert.Equal(t, int64(30000), recs[0].Shape[0])
	s, err := f.ReadString(key)
	require.NoError(t, err)
	assert.Equal(t, val, s)
	g, _ := openBytes(t, data, "r")
	assert.Equal(t, recs, g.Entries())
}

func TestSalvageFormatA(t *testing.T) {
	full := unhex(tv2Hex)
	cut := full[:130] // the second record's dims are cut
	p := tempFile(t, cut)
	_, err := Open(p, nil)
	requireFormatErr(t, err, 129, mmapfile.ErrTruncated)
	f, err := openMode(p, "r+", &Options{Repair: true})
	require.NoError(t, err)
	fe := requireFormatErr(t, f.Damage(), 96, mmapfile.ErrTruncated)
	assert.Contains(t, fe.Msg, "cut 34 bytes after the last complete record (offset 129: ")
	require.Len(t, f.Entries(), 1)
	after, _ := os.ReadFile(p)
	assert.Equal(t, append(append([]byte{}, full[:14]...), append([]byte{1, 0, 0, 0, 0, 0, 0, 0}, full[22:96]...)...), after)
	b, _ := PackBits([]int64{3}, []bool{true, false, true})
	require.NoError(t, f.WriteBits("b", b))
	x, err := Read[float64](f, "x")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2}, x)
	got, err := Read[bool](f, "b") // appended, read by pread
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, got)
	require.NoError(t, f.Close())
	after, _ = os.ReadFile(p)
	assert.Equal(t, full, after)
}
