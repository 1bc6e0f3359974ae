package daphne

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

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
		"wrong Go type": func() error { _, err := ReadDense[float32](f); return err }(),
		"unstorable":    func() error { _, err := ReadDense[int16](f); return err }(),
		"wrong kind":    func() error { _, err := ReadCSR[float64](f); return err }(),
		"set":           Set(f, 0, 0, int64(1)),
	} {
		assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch, name)
		assert.ErrorContains(t, err, p, name)
		var fe *FormatError
		assert.ErrorAs(t, err, &fe, name)
	}
	assert.ErrorIs(t, Set(f, 0, 0, 1.0), mmapfile.ErrNotWritable)
	require.NoError(t, f.Close())
	err = f.Close()
	assert.ErrorIs(t, err, mmapfile.ErrClosed)
	assert.ErrorContains(t, err, p)
	_, err = ReadDense[float64](f)
	assert.ErrorIs(t, err, mmapfile.ErrClosed, "read after Close")
	_, err = ViewDense[float64](f)
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
