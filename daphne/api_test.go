package daphne

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConventions: the constructors, options, errors and Close behave as
// in every format package: mmapfile's sentinels wrapped, the file named.
func TestConventions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.dbdf")
	require.NoError(t, WriteDense(p, 2, 2, []float64{1, 2, 3, 4}, nil))

	_, err := OpenFile(p, mmapfile.ReadWrite, &Options{Options: mmapfile.Options{Create: true}})
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.ErrorContains(t, err, p)

	w, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	_, err = OpenFile(p, mmapfile.ReadWrite, nil)
	assert.ErrorIs(t, err, mmapfile.ErrLocked, "a second writer")
	require.NoError(t, w.Close())

	f, err := Open(p, &Options{Options: mmapfile.Options{Advice: mmapfile.AdviceSequential, Populate: true}})
	require.NoError(t, err)
	for name, err := range map[string]error{
		"wrong Go type": func() error { _, err := Read[float32](f, "matrix"); return err }(),
		"unstorable":    func() error { _, err := Read[int16](f, "matrix"); return err }(),
		"wrong kind":    func() error { _, err := ReadCSR[float64](f); return err }(),
		"set":           Set(f, "matrix", []int64{0, 0}, int64(1)),
	} {
		assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch, name)
		assert.ErrorContains(t, err, p, name)
		var fe *FormatError
		assert.ErrorAs(t, err, &fe, name)
	}
	assert.ErrorIs(t, Set(f, "matrix", []int64{0, 0}, 1.0), mmapfile.ErrNotWritable)
	require.NoError(t, f.Close())
	err = f.Close()
	assert.ErrorIs(t, err, mmapfile.ErrClosed)
	assert.ErrorContains(t, err, p)
	_, err = Read[float64](f, "matrix")
	assert.ErrorIs(t, err, mmapfile.ErrClosed, "read after Close")
	_, err = View[float64](f, "matrix")
	assert.Error(t, err)

	// A truncated file: mmapfile.ErrTruncated (io.ErrUnexpectedEOF), the
	// file and offset named.
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	q := filepath.Join(dir, "short.dbdf")
	require.NoError(t, os.WriteFile(q, b[:50], 0o644))
	_, err = Open(q, &Options{Lenient: true})
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, q, fe.File)
	assert.Equal(t, int64(45), fe.Offset)
	assert.ErrorIs(t, err, mmapfile.ErrTruncated)
	assert.ErrorContains(t, err, "daphne: "+q+": offset 45: ")
}

func TestNonzerosIterator(t *testing.T) {
	f, err := open(t, unhex(t, hexCSR3x3), nil)
	require.NoError(t, err)
	var got []Nonzero[float64]
	for e, err := range Nonzeros[float64](f) {
		require.NoError(t, err)
		got = append(got, e)
	}
	assert.Equal(t, []Nonzero[float64]{{0, 1, 1}, {2, 2, 2}}, got)
	for range Nonzeros[float64](f) {
		break // stopping early is fine
	}
	for _, err := range Nonzeros[float32](f) {
		assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
	}
	d, err := open(t, unhex(t, hexDense2x3), nil)
	require.NoError(t, err)
	for _, err := range Nonzeros[float64](d) {
		assert.ErrorIs(t, err, ErrKind)
	}

	// A bad column index ends the iteration with an error at its offset,
	// after the entries before it.
	b := unhex(t, hexCSR3x3)
	b[0x5d] = 9 // colIdxs[1] = 9 ≥ 3 cols
	bad, err := open(t, b, &Options{Lenient: true})
	require.NoError(t, err)
	got = got[:0]
	var last error
	for e, err := range Nonzeros[float64](bad) {
		if err != nil {
			last = err
			continue
		}
		got = append(got, e)
	}
	assert.Equal(t, []Nonzero[float64]{{0, 1, 1}}, got)
	var fe *FormatError
	require.ErrorAs(t, last, &fe)
	assert.Equal(t, int64(0x5d), fe.Offset)
}

// TestNonzerosStreams: iterating over a million nonzeros (24 MB of file)
// allocates a few buffers, not the matrix.
func TestNonzerosStreams(t *testing.T) {
	const rows, per = 1 << 16, 16
	m := &CSR[float64]{Rows: rows, Cols: 1 << 20, RowOffsets: make([]uint64, rows+1)}
	for i := range uint64(rows) {
		for k := range uint64(per) {
			m.ColIdxs = append(m.ColIdxs, k*k*7+i%5)
			m.Values = append(m.Values, float64(i*per+k))
		}
		m.RowOffsets[i+1] = (i + 1) * per
	}
	p := filepath.Join(t.TempDir(), "big.dbdf")
	require.NoError(t, WriteCSR(p, m, nil))
	m = nil
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var n int
	sum := 0.0
	for e, err := range Nonzeros[float64](f) {
		require.NoError(t, err)
		sum += e.Value
		n++
	}
	runtime.ReadMemStats(&after)
	assert.Equal(t, rows*per, n)
	total := float64(rows*per) * float64(rows*per-1) / 2
	assert.Equal(t, total, sum)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated")
}

// TestTypedCalls: View, Read, ReadAt and Set name a record as every format
// package does: "matrix", or a frame column by its label.
func TestTypedCalls(t *testing.T) {
	dir := t.TempDir()
	fp := filepath.Join(dir, "f.dbdf")
	require.NoError(t, WriteFrame(fp, &Frame{Rows: 3, Labels: []string{"id", "x"},
		Columns: []any{[]int64{7, 8, 9}, []float64{0.5, 1.5, 2.5}}}, nil))
	fr, err := OpenFile(fp, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	defer fr.Close()
	ids, err := Read[int64](fr, "id")
	require.NoError(t, err)
	assert.Equal(t, []int64{7, 8, 9}, ids)
	xs := make([]float64, 2)
	require.NoError(t, ReadAt(fr, "x", 1, xs))
	assert.Equal(t, []float64{1.5, 2.5}, xs)

	mp := filepath.Join(dir, "m.dbdf")
	require.NoError(t, WriteDense(mp, 2, 3, []uint8{1, 2, 3, 4, 5, 6}, nil))
	m, err := OpenFile(mp, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	defer m.Close()
	require.NoError(t, Set(m, "matrix", []int64{1, 2}, uint8(60)))
	v, err := View[uint8](m, "matrix") // si8 and ui8 values are aligned at byte 45
	require.NoError(t, err)
	assert.Equal(t, []uint8{1, 2, 3, 4, 5, 60}, v)
	v[0] = 10
	require.NoError(t, m.Sync())
	b, err := os.ReadFile(mp)
	require.NoError(t, err)
	assert.Equal(t, []byte{10, 2, 3, 4, 5, 60}, b[DenseDataOffset:], "the file's values, after a Set and a write through the view")
	row := make([]uint8, 3)
	require.NoError(t, ReadAt(m, "matrix", 3, row))
	assert.Equal(t, []uint8{4, 5, 60}, row)

	for _, c := range []struct {
		name string
		err  error
		want error
		off  int64
	}{
		{"View of a frame column", func() error { _, err := View[int64](fr, "id"); return err }(), errors.ErrUnsupported, 43}, // the first value
		{"Set of a frame column", Set(fr, "id", []int64{0}, int64(1)), errors.ErrUnsupported, 1},
		{"Read of the wrong type", func() error { _, err := Read[float64](fr, "id"); return err }(), mmapfile.ErrTypeMismatch, 18},
		{"Read of the second column's wrong type", func() error { _, err := Read[int64](fr, "x"); return err }(), mmapfile.ErrTypeMismatch, 19},
		{"Read of no record", func() error { _, err := Read[int64](fr, "matrix"); return err }(), format.ErrNoRecord, -1},
		{"ReadAt past the end", ReadAt(fr, "x", 2, xs), mmapfile.ErrOutOfRange, -1},
		{"Set outside the matrix", Set(m, "matrix", []int64{2, 0}, uint8(1)), mmapfile.ErrOutOfRange, -1},
		{"Set with a 1-D index", Set(m, "matrix", []int64{0}, uint8(1)), mmapfile.ErrOutOfRange, -1},
		{"Set of the wrong type", Set(m, "matrix", []int64{0, 0}, int8(1)), mmapfile.ErrTypeMismatch, 18},
	} {
		require.ErrorIs(t, c.err, c.want, c.name)
		var fe *FormatError
		require.ErrorAs(t, c.err, &fe, c.name)
		assert.Contains(t, []string{fp, mp}, fe.File, c.name)
		assert.Equal(t, c.off, fe.Offset, c.name)
	}
}
