//go:build linux

package reliability

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

var pageSize = os.Getpagesize()

// patterned returns n bytes where byte i is byte(i*13+5).
func patterned(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + 5)
	}
	return b
}

// truncateInChild has another process cut path to size bytes.
func truncateInChild(t *testing.T, path string, size int64) {
	t.Helper()
	out, code := runChild(t, "truncate", path, size)
	require.Equal(t, 0, code, out)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, size, fi.Size())
}

// A file truncated by another process under a live mapping: every copying
// API of mmapfile returns an error wrapping ErrFault that names an offset in
// the lost pages, and the surviving pages still read.
func TestFaultTruncatedByAnotherProcess(t *testing.T) {
	for _, mode := range []mmapfile.Mode{mmapfile.ReadOnly, mmapfile.ReadWrite} {
		name := map[mmapfile.Mode]string{mmapfile.ReadOnly: "read-only", mmapfile.ReadWrite: "read-write"}[mode]
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "data.bin")
			want := patterned(8 * pageSize)
			require.NoError(t, os.WriteFile(p, want, 0o644))
			f, err := mmapfile.OpenFile(p, mode, nil)
			require.NoError(t, err)
			r, err := f.MapAll()
			require.NoError(t, err)

			// The advisory lock of a read-write open does not stop a
			// process that ignores it.
			truncateInChild(t, p, int64(pageSize))

			inLostPages := func(err error) {
				t.Helper()
				require.ErrorIs(t, err, mmapfile.ErrFault)
				var e *mmapfile.Error
				require.ErrorAs(t, err, &e)
				assert.GreaterOrEqual(t, e.Offset, int64(pageSize), "fault offset")
				assert.Less(t, e.Offset, int64(8*pageSize), "fault offset")
			}
			buf := make([]byte, 3*pageSize)
			_, err = r.ReadAt(buf, int64(pageSize)/2)
			inLostPages(err)
			inLostPages(mmapfile.Copy(make([]uint64, 16), r, int64(5*pageSize), binary.LittleEndian))
			inLostPages(mmapfile.Copy(make([]float64, 16), r, int64(5*pageSize)+1, binary.BigEndian))
			inLostPages(mmapfile.Copy(make([]layout.Int128, 4), r, int64(7*pageSize), binary.LittleEndian))
			var sink byte
			inLostPages(r.Guard(func() { sink = r.Bytes()[6*pageSize] }))
			_ = sink
			if mode == mmapfile.ReadWrite {
				_, err = r.WriteAt([]byte{1, 2, 3}, int64(4*pageSize))
				inLostPages(err)
			}

			// The page that survived reads back unchanged.
			_, err = r.ReadAt(buf[:pageSize], 0)
			require.NoError(t, err)
			assert.Equal(t, want[:pageSize], buf[:pageSize])
			xs := make([]uint32, 8)
			require.NoError(t, mmapfile.Copy(xs, r, 16, binary.LittleEndian))
			assert.Equal(t, binary.LittleEndian.Uint32(want[16:]), xs[0])

			// Mapping the lost range again is a bounds error.
			_, err = f.Map(int64(2*pageSize), int64(pageSize))
			assert.ErrorIs(t, err, mmapfile.ErrOutOfRange)
			if err := f.Close(); err != nil {
				t.Logf("close after truncation: %v", err)
			}
		})
	}
}

// The format packages' copying reads of a file truncated by another
// process return errors, not crashes; values before the cut still read.
func TestFaultTruncatedFormatFiles(t *testing.T) {
	big := make([]float64, 8*pageSize/8)
	for i := range big {
		big[i] = float64(i) + 0.25
	}

	t.Run("abf", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x.abf")
		w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
		require.NoError(t, err)
		require.NoError(t, abf.Write(w, "small", []int64{3}, []int32{1, 2, 3}))
		require.NoError(t, abf.Write(w, "big", []int64{int64(len(big))}, big))
		require.NoError(t, w.Close())

		f, err := abf.Open(p, nil)
		require.NoError(t, err)
		defer f.Close()
		rec, ok := f.Lookup("big")
		require.True(t, ok)
		require.Less(t, rec.Offset, int64(pageSize))
		truncateInChild(t, p, int64(pageSize))

		_, err = abf.Read[float64](f, "big")
		assert.ErrorIs(t, err, mmapfile.ErrFault)
		assert.ErrorIs(t, abf.ReadAt(f, "big", int64(len(big)-10), make([]float64, 10)), mmapfile.ErrFault)
		_, err = f.ReadBytes("big")
		assert.ErrorIs(t, err, mmapfile.ErrFault)
		small, err := abf.Read[int32](f, "small")
		require.NoError(t, err)
		assert.Equal(t, []int32{1, 2, 3}, small)
		head := make([]float64, 4)
		require.NoError(t, abf.ReadAt(f, "big", 0, head))
		assert.Equal(t, big[:4], head)

		// Opening the truncated file again reports the torn record.
		_, err = abf.Open(p, nil)
		var fe *abf.FormatError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, rec.Offset, fe.Offset)
	})

	t.Run("futhark", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x.fut")
		out, err := os.Create(p)
		require.NoError(t, err)
		enc := futhark.NewWriter(out, 0, &futhark.Options{Align: futhark.AlignElement})
		v0, err := futhark.NewValue([]int64{3}, []int32{1, 2, 3})
		require.NoError(t, err)
		v1, err := futhark.NewValue([]int64{int64(len(big))}, big)
		require.NoError(t, err)
		require.NoError(t, enc.EncodeBinary(v0))
		require.NoError(t, enc.EncodeBinary(v1))
		require.NoError(t, out.Close())

		f, err := futhark.Open(p, nil)
		require.NoError(t, err)
		defer f.Close()
		truncateInChild(t, p, int64(pageSize))
		_, err = futhark.Read[float64](f, 1)
		assert.ErrorIs(t, err, mmapfile.ErrFault)
		err = futhark.ReadAt(f, 1, int64(len(big)-10), make([]float64, 10))
		assert.ErrorIs(t, err, mmapfile.ErrFault)
		_, err = f.Value(1)
		assert.ErrorIs(t, err, mmapfile.ErrFault)
		small, err := futhark.Read[int32](f, 0)
		require.NoError(t, err)
		assert.Equal(t, []int32{1, 2, 3}, small)
	})

	t.Run("daphne", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x.dbdf")
		const rows, cols = 64, 16
		require.NoError(t, daphne.WriteDense(p, rows, cols, big[:rows*cols], nil))
		f, err := daphne.Open(p, nil)
		require.NoError(t, err)
		defer f.Close()
		got, err := daphne.Read[float64](f, "matrix")
		require.NoError(t, err)
		require.Equal(t, big[:rows*cols], got)
		truncateInChild(t, p, int64(pageSize))

		// daphne maps each read's range afresh: the range is either gone
		// from the file (a bounds error) or faults (ErrFault).
		_, err = daphne.Read[float64](f, "matrix")
		require.Error(t, err)
		assert.True(t, errors.Is(err, mmapfile.ErrFault) || errors.Is(err, mmapfile.ErrOutOfRange), "%v", err)
		_, err = daphne.ReadDenseRange[float64](f, rows-2, rows, 0, cols)
		require.Error(t, err)
		first, err := daphne.ReadDenseRange[float64](f, 0, 2, 0, cols)
		require.NoError(t, err)
		assert.Equal(t, big[:2*cols], first)
	})
}

// Writing through a read-only handle is an error from the API, never a
// SIGSEGV, and the file is unchanged.
func TestFaultWriteToReadOnly(t *testing.T) {
	dir := t.TempDir()
	abfPath := filepath.Join(dir, "x.abf")
	w, err := abf.OpenFile(abfPath, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	require.NoError(t, err)
	require.NoError(t, abf.Write(w, "x", []int64{4}, []float64{1, 2, 3, 4}))
	require.NoError(t, w.Close())

	futPath := filepath.Join(dir, "x.fut")
	out, err := os.Create(futPath)
	require.NoError(t, err)
	v, err := futhark.NewValue([]int64{4}, []float64{1, 2, 3, 4})
	require.NoError(t, err)
	require.NoError(t, futhark.NewWriter(out, 0, &futhark.Options{Align: futhark.AlignElement}).EncodeBinary(v))
	require.NoError(t, out.Close())

	dbPath := filepath.Join(dir, "x.dbdf")
	require.NoError(t, daphne.WriteDense(dbPath, 2, 2, []float64{1, 2, 3, 4}, nil))

	rawPath := filepath.Join(dir, "raw.bin")
	require.NoError(t, os.WriteFile(rawPath, patterned(2*pageSize), 0o644))

	one := binary.LittleEndian.AppendUint64(nil, math.Float64bits(-1))
	cases := []struct {
		name  string
		path  string
		write func(t *testing.T) error
		err   error // nil: any error
	}{
		{"mmapfile Region.WriteAt", rawPath, func(t *testing.T) error {
			f, err := mmapfile.Open(rawPath)
			require.NoError(t, err)
			defer f.Close()
			r, err := f.MapAll()
			require.NoError(t, err)
			_, err = r.WriteAt([]byte{1}, 10)
			return err
		}, mmapfile.ErrNotWritable},
		{"mmapfile File.WriteAt", rawPath, func(t *testing.T) error {
			f, err := mmapfile.Open(rawPath)
			require.NoError(t, err)
			defer f.Close()
			_, err = f.WriteAt([]byte{1}, 10)
			return err
		}, mmapfile.ErrNotWritable},
		{"mmapfile Guard around a direct store", rawPath, func(t *testing.T) error {
			f, err := mmapfile.Open(rawPath)
			require.NoError(t, err)
			defer f.Close()
			r, err := f.MapAll()
			require.NoError(t, err)
			return r.Guard(func() { r.Bytes()[pageSize+1] = 0 })
		}, mmapfile.ErrFault},
		{"abf SetElement", abfPath, func(t *testing.T) error {
			f, err := abf.Open(abfPath, nil)
			require.NoError(t, err)
			defer f.Close()
			return f.SetElement("x", 1, one)
		}, mmapfile.ErrNotWritable},
		{"abf Write", abfPath, func(t *testing.T) error {
			f, err := abf.Open(abfPath, nil)
			require.NoError(t, err)
			defer f.Close()
			return abf.Write(f, "y", []int64{1}, []float64{1})
		}, mmapfile.ErrNotWritable},
		{"abf WriteString", abfPath, func(t *testing.T) error {
			f, err := abf.Open(abfPath, nil)
			require.NoError(t, err)
			defer f.Close()
			return f.WriteString("s", "text")
		}, mmapfile.ErrNotWritable},
		{"futhark SetElement", futPath, func(t *testing.T) error {
			f, err := futhark.Open(futPath, nil)
			require.NoError(t, err)
			defer f.Close()
			return f.SetElement(0, 1, one)
		}, mmapfile.ErrNotWritable},
		{"daphne SetElement", dbPath, func(t *testing.T) error {
			f, err := daphne.Open(dbPath, nil)
			require.NoError(t, err)
			defer f.Close()
			return f.SetElement(1, 1, one)
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snap(t, c.path)
			err := c.write(t)
			require.Error(t, err)
			if c.err != nil {
				assert.ErrorIs(t, err, c.err)
			}
			requireUnchanged(t, c.path, before)
		})
	}
}
