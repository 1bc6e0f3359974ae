package daphne

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unhex decodes a hex dump written as in the spec (spaces and newlines
// ignored).
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	require.NoError(t, err)
	return b
}

// spec §12(a), 93 bytes.
const hexDense2x3 = `
01 01 02 00 00 00 00 00 00 00 03 00 00 00 00 00
00 00 07 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 02 00 00 00 03 00 00 00 01 07 00 00 00
00 00 00 f0 3f 00 00 00 00 00 00 00 40 00 00 00
00 00 00 08 40 00 00 00 00 00 00 10 40 00 00 00
00 00 00 14 40 00 00 00 00 00 00 18 40`

// spec §12(b), 117 bytes.
const hexCSR3x3 = `
01 02 03 00 00 00 00 00 00 00 03 00 00 00 00 00
00 00 07 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 03 00 00 00 03 00 00 00 02 07 02 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00
00 00 00 00 00 01 00 00 00 00 00 00 00 02 00 00
00 00 00 00 00 01 00 00 00 00 00 00 00 02 00 00
00 00 00 00 00 00 00 00 00 00 00 f0 3f 00 00 00
00 00 00 00 40`

// spec §12(b), the same matrix in the release-0.1 layout, 109 bytes.
const hexCSR01 = `
01 02 03 00 00 00 00 00 00 00 03 00 00 00 00 00
00 00 07 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 03 00 00 00 03 00 00 00 02 07 02 00 00
00 00 00 00 00 01 00 00 00 00 00 00 00 01 00 00
00 00 00 00 00 00 00 00 00 00 00 f0 3f 00 00 00
00 00 00 00 00 01 00 00 00 00 00 00 00 02 00 00
00 00 00 00 00 00 00 00 00 00 00 00 40`

// spec §12(b), the doc layout, 89 bytes.
const hexCSRDoc = `
01 02 03 00 00 00 00 00 00 00 03 00 00 00 00 00
00 00 07 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 03 00 00 00 03 00 00 00 02 07 02 00 00
00 00 00 00 00 01 00 00 00 01 00 00 00 00 00 00
00 00 00 f0 3f 00 00 00 00 01 00 00 00 02 00 00
00 00 00 00 00 00 00 00 40`

// spec §12(c), 75 bytes (pointer bytes 68, 88 8f as DAPHNE wrote them).
const hexFrame = `
01 03 02 00 00 00 00 00 00 00 02 00 00 00 00 00
00 00 02 07 01 00 68 02 00 88 8f 00 00 00 00 00
00 00 00 00 00 00 00 00 00 00 00 07 00 00 00 00
00 00 00 00 00 00 00 00 00 e0 3f ff ff ff ff ff
ff ff ff 00 00 00 00 00 00 f0 3f`

// cooFile builds §12(b)'s matrix as one COO block (81 bytes): bt 3 at 0x2B,
// nnz u32 at 0x2D, (row, col, value) entries from 0x31.
func cooFile(t testing.TB, dt byte) []byte {
	b := unhex(t, hexCSR3x3)[:45]
	b[1] = dt
	b[0x2B] = 3
	b = binary.LittleEndian.AppendUint32(b, 2)
	for _, e := range []struct {
		r, c uint32
		v    float64
	}{{0, 1, 1}, {2, 2, 2}} {
		b = binary.LittleEndian.AppendUint32(b, e.r)
		b = binary.LittleEndian.AppendUint32(b, e.c)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.v))
	}
	return b
}

// emptyBlockFile is a 3×3 dense file of one empty block (44 bytes).
func emptyBlockFile(t testing.TB) []byte {
	b := unhex(t, hexDense2x3)[:44]
	binary.LittleEndian.PutUint64(b[2:], 3)
	binary.LittleEndian.PutUint64(b[10:], 3)
	binary.LittleEndian.PutUint32(b[35:], 3)
	binary.LittleEndian.PutUint32(b[39:], 3)
	b[43] = 0
	return b
}

func open(t testing.TB, b []byte, o *Options) (*File, error) {
	t.Helper()
	return NewReader(bytes.NewReader(b), int64(len(b)), o)
}

func TestSpecHexDumpsMatchGoldenFiles(t *testing.T) {
	assert.Equal(t, goldenBytes(t, "dense_2x3_f64.dbdf"), unhex(t, hexDense2x3))
	assert.Equal(t, goldenBytes(t, "csr_3x3_f64_nnz2.dbdf"), unhex(t, hexCSR3x3))
	assert.Equal(t, goldenBytes(t, "frame_2x2_si64_f64.dbdf"), unhex(t, hexFrame))
}

// TestCSRLayouts reads §12(b)'s matrix in all four encodings, as CSR and
// (COO, dt=1) dense.
func TestCSRLayouts(t *testing.T) {
	want := []float64{0, 1, 0, 0, 0, 0, 0, 0, 2}
	for _, tc := range []struct {
		name   string
		data   []byte
		layout Layout
		body   BodyType
	}{
		{"current", unhex(t, hexCSR3x3), LayoutCurrent, BodySparse},
		{"release-0.1", unhex(t, hexCSR01), LayoutRelease01, BodySparse},
		{"doc", unhex(t, hexCSRDoc), LayoutDoc, BodySparse},
		{"coo", cooFile(t, 2), LayoutDetect, BodyCOO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, lenient := range []bool{false, true} {
				f, err := open(t, tc.data, &Options{Lenient: lenient})
				require.NoError(t, err)
				h := f.Header()
				assert.Equal(t, tc.layout, h.Layout)
				require.Len(t, h.Blocks, 1)
				assert.Equal(t, tc.body, h.Blocks[0].Type)
				assert.Equal(t, uint64(2), h.Blocks[0].NNZ)
				m, err := ReadCSR[float64](f)
				require.NoError(t, err)
				assert.Equal(t, []uint64{0, 1, 1, 2}, m.RowOffsets)
				assert.Equal(t, []uint64{1, 2}, m.ColIdxs)
				assert.Equal(t, []float64{1, 2}, m.Values)
				d, err := m.ToDense(0)
				require.NoError(t, err)
				assert.Equal(t, want, d)
			}
		})
	}
	assert.Len(t, unhex(t, hexCSR01), 109)
	assert.Len(t, unhex(t, hexCSRDoc), 89)
	assert.Len(t, cooFile(t, 2), 81)

	// A COO block under a dense data type gives a dense matrix.
	f, err := open(t, cooFile(t, 1), nil)
	require.NoError(t, err)
	d, err := Read[float64](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, want, d)
	_, err = View[float64](f, "matrix")
	assert.ErrorIs(t, err, ErrNotMapped)

	// COO entries may come in any order; a cell stored twice is an error
	// in strict mode.
	rev := cooFile(t, 2)
	first := append([]byte(nil), rev[0x31:0x41]...)
	copy(rev[0x31:], rev[0x41:0x51])
	copy(rev[0x41:], first)
	f, err = open(t, rev, nil)
	require.NoError(t, err)
	m, err := ReadCSR[float64](f)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 1, 1, 2}, m.RowOffsets)
	assert.Equal(t, []uint64{1, 2}, m.ColIdxs)
	assert.Equal(t, []float64{1, 2}, m.Values)
	twice := cooFile(t, 2)
	copy(twice[0x41:], twice[0x31:0x39]) // second entry at (0, 1) too
	f, err = open(t, twice, nil)
	require.NoError(t, err)
	_, err = ReadCSR[float64](f)
	assert.Error(t, err)
	f, err = open(t, twice, &Options{Lenient: true})
	require.NoError(t, err)
	m, err = ReadCSR[float64](f)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 2, 2, 2}, m.RowOffsets)

	// The 109-byte prefix of the current file is a valid 0.1 file (§5.4).
	cur := unhex(t, hexCSR3x3)
	f, err = open(t, cur[:109], nil)
	require.NoError(t, err)
	assert.Equal(t, LayoutRelease01, f.Header().Layout)

	// CSRLayout forces a layout: the current file read as 0.1 is 8 bytes
	// too long.
	_, err = open(t, cur, &Options{CSRLayout: LayoutRelease01})
	require.Error(t, err)
	f, err = open(t, cur, &Options{CSRLayout: LayoutRelease01, Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, LayoutRelease01, f.Header().Layout)
	assert.NotEmpty(t, f.Header().Relaxed)

	// Lenient, with trailing bytes no size matches: the current layout.
	f, err = open(t, append(append([]byte(nil), cur...), 0, 0, 0), &Options{Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, LayoutCurrent, f.Header().Layout)
	m, err = ReadCSR[float64](f)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2}, m.Values)
}

func TestEmptyBlock(t *testing.T) {
	b := emptyBlockFile(t)
	require.Len(t, b, 44)
	for _, lenient := range []bool{false, true} {
		f, err := open(t, b, &Options{Lenient: lenient})
		require.NoError(t, err)
		assert.Equal(t, BodyEmpty, f.Header().Blocks[0].Type)
		v, err := Read[float64](f, "matrix")
		require.NoError(t, err)
		assert.Equal(t, make([]float64, 9), v)
		assert.Equal(t, int64(-1), f.arrays()[0].Offset)
	}
	// Cells not stored in the file are bounded by MaxAlloc.
	f, err := open(t, b, &Options{MaxAlloc: 64})
	require.NoError(t, err)
	_, err = Read[float64](f, "matrix")
	assert.ErrorIs(t, err, mmapfile.ErrTooLarge)
	// Empty block under CSR: an all-zero sparse matrix.
	b[1] = 2
	f, err = open(t, b, nil)
	require.NoError(t, err)
	m, err := ReadCSR[float64](f)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 0, 0, 0}, m.RowOffsets)
	assert.Empty(t, m.Values)
}

// multiBlockFile: the 3×3 matrix [[1,2,3],[4,5,6],[0,0,9]] as a dense 2×3
// block at (0,0), a doc-layout sparse 1×2 block at (2,0) holding nothing
// and a COO 1×1 block at (2,2) holding 9.
func multiBlockFile(dt byte) []byte {
	b := []byte{1, dt}
	b = binary.LittleEndian.AppendUint64(b, 3)
	b = binary.LittleEndian.AppendUint64(b, 3)
	b = append(b, byte(F64))
	block := func(rx, cx uint64, r, c uint32, bt BodyType) {
		b = binary.LittleEndian.AppendUint64(b, rx)
		b = binary.LittleEndian.AppendUint64(b, cx)
		b = binary.LittleEndian.AppendUint32(b, r)
		b = binary.LittleEndian.AppendUint32(b, c)
		b = append(b, byte(bt), byte(F64))
	}
	block(0, 0, 2, 3, BodyDense)
	for _, v := range []float64{1, 2, 3, 4, 5, 6} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	block(2, 0, 1, 2, BodySparse)
	b = binary.LittleEndian.AppendUint64(b, 0) // nnz
	b = binary.LittleEndian.AppendUint32(b, 0) // row 0: no entries
	block(2, 2, 1, 1, BodyCOO)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, 0) // row (one column: no col)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(9))
	return b
}

func TestMultiBlock(t *testing.T) {
	want := []float64{1, 2, 3, 4, 5, 6, 0, 0, 9}
	f, err := open(t, multiBlockFile(1), nil)
	require.NoError(t, err)
	h := f.Header()
	require.Len(t, h.Blocks, 3)
	assert.Equal(t, []BodyType{BodyDense, BodySparse, BodyCOO}, []BodyType{h.Blocks[0].Type, h.Blocks[1].Type, h.Blocks[2].Type})
	assert.Equal(t, LayoutDoc, h.Blocks[1].Layout)
	v, err := Read[float64](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, want, v)
	r, err := ReadDenseRange[float64](f, 1, 3, 1, 3)
	require.NoError(t, err)
	assert.Equal(t, []float64{5, 6, 0, 9}, r)
	buf := []float64{-1, -1, -1, -1}
	require.NoError(t, CopyDenseRange(f, buf, 1, 3, 1, 3))
	assert.Equal(t, []float64{5, 6, 0, 9}, buf, "a reused buffer's stale cells are cleared")
	assert.Error(t, CopyDenseRange(f, buf[:3], 1, 3, 1, 3))

	f, err = open(t, multiBlockFile(2), nil)
	require.NoError(t, err)
	m, err := ReadCSR[float64](f)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 3, 6, 7}, m.RowOffsets)
	assert.Equal(t, []uint64{0, 1, 2, 0, 1, 2, 2}, m.ColIdxs)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6, 9}, m.Values)

	// Lenient reads only the first block, at its own dims.
	f, err = open(t, multiBlockFile(1), &Options{Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, uint64(2), f.Header().Rows)
	v, err = Read[float64](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, want[:6], v)

	// MaxBlocks.
	_, err = open(t, multiBlockFile(1), &Options{MaxBlocks: 2})
	assert.ErrorIs(t, err, mmapfile.ErrTooLarge)

	// Overlapping blocks and blocks that do not cover the matrix.
	b := multiBlockFile(1)
	binary.LittleEndian.PutUint64(b[19+26+48:], 1) // second block's rx = 1
	_, err = open(t, b, nil)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(19+26+48), fe.Offset)
}

// TestStrictLenient is the table of §13.2: each mutation of §12(a) with
// the offset of its strict error and whether lenient mode reads it (and
// then gives DAPHNE's values).
func TestStrictLenient(t *testing.T) {
	base := unhex(t, hexDense2x3)
	set := func(off int, v ...byte) []byte {
		b := append([]byte(nil), base...)
		copy(b[off:], v)
		return b
	}
	u64 := func(off int, v uint64) []byte {
		b := append([]byte(nil), base...)
		binary.LittleEndian.PutUint64(b[off:], v)
		return b
	}
	tests := []struct {
		name      string
		data      []byte
		off       int64
		sentinel  error
		lenientOK bool
	}{
		{"version 9", set(0, 9), 0, nil, true},
		{"dims 99x99", func() []byte { b := u64(2, 99); binary.LittleEndian.PutUint64(b[10:], 99); return b }(), 35, nil, true},
		{"cols 4", u64(10, 4), 39, nil, true},
		{"rows 2^64-1", u64(2, 1<<64-1), 35, nil, true},
		{"rx 5", u64(19, 5), 19, nil, true},
		{"cx 6", u64(27, 6), 27, nil, true},
		{"block vt 3", set(44, 3), 44, nil, true},
		{"trailing byte", append(append([]byte(nil), base...), 0), 93, mmapfile.ErrTruncated, true},
		{"dt 0", set(1, 0), 1, nil, false},
		{"dt 4 scalar", set(1, 4), 1, errors.ErrUnsupported, false},
		{"dt 5", set(1, 5), 1, nil, false},
		{"vt str", set(18, 8), 18, ErrStringType, false},
		{"vt fixedstr16", set(18, 9), 18, errors.ErrUnsupported, false},
		{"vt invalid", set(18, 10), 18, nil, false},
		{"vt 200", set(18, 200), 18, nil, false},
		{"bt 4", set(43, 4), 43, nil, false},
		{"block vt str", set(44, 8), 44, ErrStringType, true},
		{"block vt 99", set(44, 99), 44, nil, true},
		{"short by one", base[:92], 45, mmapfile.ErrTruncated, false},
		{"block rows 3", set(35, 3), 45, mmapfile.ErrTruncated, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := open(t, tc.data, nil)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			if tc.name != "trailing byte" {
				assert.Equal(t, tc.off, fe.Offset, "%v", err)
			}
			if tc.sentinel != nil {
				assert.ErrorIs(t, err, tc.sentinel)
			}
			assert.Contains(t, err.Error(), "daphne: <input>: offset ")
			f, err := open(t, tc.data, &Options{Lenient: true})
			if !tc.lenientOK {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.NotEmpty(t, f.Header().Relaxed)
			v, err := Read[float64](f, "matrix")
			require.NoError(t, err)
			assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, v)
		})
	}
}

func TestKindAndTypeMismatch(t *testing.T) {
	f, err := open(t, unhex(t, hexDense2x3), nil)
	require.NoError(t, err)
	_, err = Read[float32](f, "matrix")
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	_, err = ReadCSR[float64](f)
	assert.ErrorIs(t, err, ErrKind)
	_, err = ReadFrame(f)
	assert.ErrorIs(t, err, ErrKind)
	g, err := open(t, unhex(t, hexCSR3x3), nil)
	require.NoError(t, err)
	_, err = ReadDenseRange[float64](g, 0, 1, 0, 1)
	assert.ErrorIs(t, err, ErrKind)
	// Read and ReadAt give a CSR matrix's dense values; View has none to
	// alias.
	d, err := Read[float64](g, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, 0, 0, 0, 0, 0, 0, 2}, d, "(0, 1) is 1, (2, 2) is 2")
	row := make([]float64, 3)
	require.NoError(t, ReadAt(g, "matrix", 6, row))
	assert.Equal(t, []float64{0, 0, 2}, row)
	_, err = View[float64](g, "matrix")
	assert.ErrorIs(t, err, ErrNotMapped)
	assert.ErrorContains(t, err, "copy with Read")
	h, err := open(t, unhex(t, hexCSR3x3), &Options{MaxAlloc: 64})
	require.NoError(t, err)
	_, err = Read[float64](h, "matrix")
	assert.ErrorIs(t, err, mmapfile.ErrTooLarge, "72 dense bytes, MaxAlloc 64")
}

// recordingReader notes every byte range read.
type recordingReader struct {
	mu  sync.Mutex
	r   *bytes.Reader
	got [][2]int64
}

func (r *recordingReader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.got = append(r.got, [2]int64{off, off + int64(len(p))})
	r.mu.Unlock()
	return r.r.ReadAt(p, off)
}

func TestReadDenseRangeTouchesOnlyItsBytes(t *testing.T) {
	const rows, cols = 50, 40
	v := make([]int32, rows*cols)
	for i := range v {
		v[i] = int32(i)
	}
	var buf bytes.Buffer
	require.NoError(t, encodeDense(&buf, rows, cols, cols, v, false))
	rec := &recordingReader{r: bytes.NewReader(buf.Bytes())}
	f, err := NewReader(rec, int64(buf.Len()), nil)
	require.NoError(t, err)
	for _, w := range [][4]uint64{{3, 9, 0, cols}, {3, 9, 5, 17}, {0, rows, 39, 40}, {7, 7, 0, cols}, {2, 3, 4, 4}} {
		rec.got = nil
		got, err := ReadDenseRange[int32](f, w[0], w[1], w[2], w[3])
		require.NoError(t, err)
		var want []int32
		for i := w[0]; i < w[1]; i++ {
			want = append(want, v[i*cols+w[2]:i*cols+w[3]]...)
		}
		assert.Equal(t, len(want), len(got))
		if len(want) > 0 {
			assert.Equal(t, want, got)
		}
		if len(want) == 0 {
			assert.Empty(t, rec.got, "empty range: no I/O")
			continue
		}
		lo := int64(45 + (w[0]*cols+w[2])*4)
		hi := int64(45 + ((w[1]-1)*cols+w[3])*4)
		for _, g := range rec.got {
			assert.True(t, g[0] >= lo && g[1] <= hi, "read [%d,%d) outside [%d,%d)", g[0], g[1], lo, hi)
		}
	}
	_, err = ReadDenseRange[int32](f, 0, rows+1, 0, 1)
	assert.Error(t, err)
	_, err = ReadDenseRange[int32](f, 5, 4, 0, 1)
	assert.Error(t, err)
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestSparseBlockUnderDense: a current-layout sparse block in a dense file
// (dt=1) reads densely, entry by entry, with the same checks.
func TestSparseBlockUnderDense(t *testing.T) {
	b := unhex(t, hexCSR3x3)
	b[1] = 1
	f, err := open(t, b, nil)
	require.NoError(t, err)
	v, err := Read[float64](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, 0, 0, 0, 0, 0, 0, 2}, v)
	assert.Equal(t, int64(45), f.arrays()[0].Offset)

	for _, tc := range []struct {
		name    string
		off     int
		val     uint64
		errOff  int64
		lenient bool
	}{
		{"rowOffsets[0] = 1", 53, 1, 53, true},
		{"rowOffsets decreasing", 69, 0, 69, false},
		{"rowOffsets[3] = 1", 77, 1, 77, true},
		{"column index = cols", 85, 3, 85, false},
		{"columns not increasing", 93, 0, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := append([]byte(nil), b...)
			binary.LittleEndian.PutUint64(c[tc.off:], tc.val)
			f, err := open(t, c, nil)
			require.NoError(t, err)
			_, err = Read[float64](f, "matrix")
			var fe *FormatError
			if tc.errOff >= 0 {
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tc.errOff, fe.Offset, "%v", err)
			} else {
				require.NoError(t, err, "rows 1 and 2 hold one entry each: no order to break")
			}
			f, err = open(t, c, &Options{Lenient: true})
			require.NoError(t, err)
			_, err = Read[float64](f, "matrix")
			if tc.lenient {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func TestTypeNames(t *testing.T) {
	for vt := SI8; vt <= F64; vt++ {
		back, ok := ParseValueType(vt.String())
		require.True(t, ok)
		assert.Equal(t, vt, back)
		lt, ok := ValueTypeFor(vt.Layout())
		require.True(t, ok)
		assert.Equal(t, vt, lt)
		assert.Equal(t, vt.Layout().Size(), vt.Size())
	}
	_, ok := ValueTypeFor(layout.I16)
	assert.False(t, ok)
	back, ok := ParseValueType("str")
	assert.True(t, ok)
	assert.Equal(t, STR, back)
	_, ok = ParseValueType("bool")
	assert.False(t, ok)
	assert.Equal(t, []string{"si8", "si32", "si64", "ui8", "ui32", "ui64", "f32", "f64", "str", "fixedstr16", "invalid", "ValueType(11)"},
		func() (s []string) {
			for v := ValueType(0); v <= 11; v++ {
				s = append(s, v.String())
			}
			return
		}())
	assert.Equal(t, "dense csr frame Kind(4)", KindDense.String()+" "+KindCSR.String()+" "+KindFrame.String()+" "+Kind(4).String())
	assert.Equal(t, "empty dense sparse coo BodyType(4)", BodyEmpty.String()+" "+BodyDense.String()+" "+BodySparse.String()+" "+BodyCOO.String()+" "+BodyType(4).String())
	assert.Equal(t, "detect current release-0.1 doc Layout(4)", LayoutDetect.String()+" "+LayoutCurrent.String()+" "+LayoutRelease01.String()+" "+LayoutDoc.String()+" "+Layout(4).String())
}
