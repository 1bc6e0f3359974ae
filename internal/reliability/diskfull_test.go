//go:build linux

package reliability

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/scidb"
)

// tmpfsSize is the size of the file system the full-disk tests fill.
const tmpfsSize = 1 << 20

// floats returns n float64s that depend on seed.
func floats(n int, seed float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = seed*1e6 + float64(i) + 0.5
	}
	return v
}

func TestDiskFullMmapfile(t *testing.T) {
	dir := mountTmpfs(t, tmpfsSize)
	p := filepath.Join(dir, "data.bin")
	require.NoError(t, os.WriteFile(p, patterned(3*pageSize), 0o644))
	fillDisk(t, dir, 0)
	before := snap(t, p)

	f, err := mmapfile.OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	defer f.Close()

	// Grow reserves blocks (fallocate): a full disk is an error now, not a
	// SIGBUS when the new pages are first touched, and the size is kept.
	err = f.Grow(int64(tmpfsSize))
	require.ErrorIs(t, err, syscall.ENOSPC)
	size, err := f.Size()
	require.NoError(t, err)
	assert.Equal(t, int64(3*pageSize), size)
	requireUnchanged(t, p, before)

	// Overwriting allocated pages through a mapping needs no new space.
	r, err := f.MapAll()
	require.NoError(t, err)
	_, err = r.WriteAt([]byte("in place"), 100)
	require.NoError(t, err)
	require.NoError(t, f.Sync())

	// A page that was never allocated (a hole another program left by
	// extending the file with ftruncate) cannot be written on a full disk:
	// the guarded write reports the fault instead of dying of SIGBUS.
	require.NoError(t, r.Unmap())
	require.NoError(t, os.Truncate(p, int64(6*pageSize)))
	r, err = f.MapAll()
	require.NoError(t, err)
	_, err = r.WriteAt([]byte{1, 2, 3, 4}, int64(5*pageSize))
	require.ErrorIs(t, err, mmapfile.ErrFault)
	var e *mmapfile.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, int64(5*pageSize), e.Offset)
	require.NoError(t, r.Unmap())

	// pwrite past the end fails with ENOSPC.
	_, err = f.WriteAt(make([]byte, 2*pageSize), int64(6*pageSize))
	require.ErrorIs(t, err, syscall.ENOSPC)
}

func TestDiskFullABF(t *testing.T) {
	for _, format := range []abf.Format{abf.FormatC, abf.FormatA} {
		t.Run("format "+format.String(), func(t *testing.T) {
			dir := mountTmpfs(t, tmpfsSize)
			p := filepath.Join(dir, "x.abf")
			w, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w", Format: format})
			require.NoError(t, err)
			require.NoError(t, abf.Write(w, "a", []int64{2, 3}, floats(6, 1)))
			require.NoError(t, abf.Write(w, "b", []int64{5}, []int16{1, -2, 3, -4, 5}))
			require.NoError(t, w.Close())
			fillDisk(t, dir, 16<<10)
			before := snap(t, p)

			f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "a"})
			require.NoError(t, err)
			// A record larger than the space left: the header lands, the
			// payload does not.
			err = abf.Write(f, "big", []int64{64 << 10}, floats(64<<10, 2))
			require.ErrorIs(t, err, syscall.ENOSPC)
			var fe *abf.FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, p, fe.File)
			assert.Equal(t, int64(len(before.data)), fe.Offset, "the error is at the record's start")
			assert.Contains(t, fe.Msg, fmt.Sprintf(`record "big" not written; the file is back to the %d bytes it had before`, len(before.data)))
			requireUnchanged(t, p, before)
			// The file is still appendable after the failure.
			require.NoError(t, abf.Write(f, "c", []int64{2}, []uint8{7, 9}))
			require.NoError(t, f.Close())

			r, err := abf.Open(p, nil)
			require.NoError(t, err)
			defer r.Close()
			keys := []string{}
			for _, rec := range r.Entries() {
				keys = append(keys, rec.Name)
			}
			assert.Equal(t, []string{"a", "b", "c"}, keys)
			a, err := abf.Read[float64](r, "a")
			require.NoError(t, err)
			assert.Equal(t, floats(6, 1), a)
			c, err := abf.Read[uint8](r, "c")
			require.NoError(t, err)
			assert.Equal(t, []uint8{7, 9}, c)
			assert.Zero(t, r.TrailingBytes())
		})
	}

	t.Run("new file", func(t *testing.T) {
		dir := mountTmpfs(t, tmpfsSize)
		fillDisk(t, dir, 8<<10)
		p := filepath.Join(dir, "new.abf")
		f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
		require.NoError(t, err)
		err = abf.Write(f, "big", []int64{64 << 10}, floats(64<<10, 3))
		require.ErrorIs(t, err, syscall.ENOSPC)
		assert.Contains(t, err.Error(), `offset 0: record "big" not written; the file is back to the 0 bytes it had before`)
		require.NoError(t, f.Close())
		// The open created the file; the failed write left it empty.
		requireUnchanged(t, p, snapshot{exists: true, data: []byte{}})
	})

	// The registered writer writes a temporary file and renames it into
	// place: on a full disk the target is not created, or left as it was,
	// and the error says which.
	t.Run("registered writer", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "src.abf")
		w, err := abf.OpenFile(src, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
		require.NoError(t, err)
		require.NoError(t, abf.Write(w, "big", []int64{64 << 10}, floats(64<<10, 4)))
		require.NoError(t, w.Close())
		dir := mountTmpfs(t, tmpfsSize)
		old := filepath.Join(dir, "old.abf")
		require.NoError(t, os.WriteFile(old, []byte("old contents"), 0o644))
		fillDisk(t, dir, 16<<10)
		names := dirNames(t, dir)
		for _, tc := range []struct{ target, left string }{
			{filepath.Join(dir, "new.abf"), "the file was not created"},
			{old, "the file was left as it was"},
		} {
			before := snap(t, tc.target)
			err := format.Convert(src, tc.target, nil, nil)
			require.ErrorIs(t, err, syscall.ENOSPC)
			var fe *abf.FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.target, fe.File)
			assert.Contains(t, fe.Msg, tc.left)
			assert.NotContains(t, fe.Msg, "restored")
			requireUnchanged(t, tc.target, before)
			assert.Equal(t, names, dirNames(t, dir), "no temporary file is left behind")
		}
	})
}

func TestDiskFullDAPHNE(t *testing.T) {
	dir := mountTmpfs(t, tmpfsSize)
	p := filepath.Join(dir, "X.dbdf")
	require.NoError(t, daphne.WriteDense(p, 3, 2, floats(6, 1), nil))
	fillDisk(t, dir, 16<<10)
	names := dirNames(t, dir)
	before, beforeMeta := snap(t, p), snap(t, p+".meta")

	err := daphne.WriteDense(p, 256, 256, floats(256*256, 2), nil)
	require.ErrorIs(t, err, syscall.ENOSPC)
	requireUnchanged(t, p, before)
	requireUnchanged(t, p+".meta", beforeMeta)
	assert.Equal(t, names, dirNames(t, dir), "no temporary file is left behind")

	// A new target stays absent.
	q := filepath.Join(dir, "Y.dbdf")
	require.ErrorIs(t, daphne.WriteDense(q, 256, 256, floats(256*256, 3), nil), syscall.ENOSPC)
	requireUnchanged(t, q, snapshot{})
	requireUnchanged(t, q+".meta", snapshot{})
	assert.Equal(t, names, dirNames(t, dir), "no temporary file is left behind")

	f, err := daphne.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	got, err := daphne.Read[float64](f, "matrix")
	require.NoError(t, err)
	assert.Equal(t, floats(6, 1), got)
}

func TestDiskFullFutharkWriteFile(t *testing.T) {
	dir := mountTmpfs(t, tmpfsSize)
	p := filepath.Join(dir, "x.fut")
	values := func(vs ...futhark.Value) func(*futhark.Encoder) error {
		return func(e *futhark.Encoder) error {
			for _, v := range vs {
				if err := e.EncodeBinary(v); err != nil {
					return err
				}
			}
			return nil
		}
	}
	small, err := futhark.NewValue([]int64{2}, []int32{1, 2})
	require.NoError(t, err)
	require.NoError(t, futhark.WriteFile(p, nil, values(small)))
	fillDisk(t, dir, 16<<10)
	names := dirNames(t, dir)
	before := snap(t, p)

	big, err := futhark.NewValue([]int64{64 << 10}, floats(64<<10, 1))
	require.NoError(t, err)
	require.ErrorIs(t, futhark.WriteFile(p, &futhark.Options{Align: futhark.Align64}, values(small, big)), syscall.ENOSPC)
	requireUnchanged(t, p, before)
	q := filepath.Join(dir, "new.fut")
	require.ErrorIs(t, futhark.WriteFile(q, nil, values(big)), syscall.ENOSPC)
	requireUnchanged(t, q, snapshot{})
	assert.Equal(t, names, dirNames(t, dir), "no temporary file is left behind")

	f, err := futhark.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	got, err := futhark.Read[int32](f, 0)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2}, got)
}

// A streaming Encoder has no file to restore: it reports the error, and the
// error sticks.
func TestDiskFullFutharkEncoder(t *testing.T) {
	dir := mountTmpfs(t, tmpfsSize)
	fillDisk(t, dir, 16<<10)
	p := filepath.Join(dir, "x.fut")
	out, err := os.Create(p)
	require.NoError(t, err)
	defer out.Close()
	enc := futhark.NewEncoder(out)
	small, err := futhark.NewValue([]int64{2}, []int32{1, 2})
	require.NoError(t, err)
	require.NoError(t, enc.EncodeBinary(small))
	big, err := futhark.NewValue([]int64{64 << 10}, floats(64<<10, 1))
	require.NoError(t, err)
	require.ErrorIs(t, enc.EncodeBinary(big), syscall.ENOSPC)
	// The first error sticks.
	assert.ErrorIs(t, enc.EncodeBinary(small), syscall.ENOSPC)
}

// /dev/full fails every write with ENOSPC: the writers that accept an
// io.Writer report it. Writers that take a path map it or replace it, and
// a device can be neither: mmapfile (and so abf) refuses it with
// ErrNotRegular before writing anything. (DAPHNE's writers write a
// temporary file beside the target and rename it; atomicfile refuses a
// device target the same way.)
func TestDiskFullDevFull(t *testing.T) {
	const dev = "/dev/full"
	if fi, err := os.Stat(dev); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Skipf("%s is not available", dev)
	}

	t.Run("mmapfile", func(t *testing.T) {
		_, err := mmapfile.OpenFile(dev, mmapfile.ReadWrite, nil)
		require.ErrorIs(t, err, mmapfile.ErrNotRegular)
		assert.Contains(t, err.Error(), dev)
	})

	t.Run("abf", func(t *testing.T) {
		_, err := abf.OpenFile(dev, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
		require.ErrorIs(t, err, mmapfile.ErrNotRegular)
		assert.Contains(t, err.Error(), dev)
	})

	t.Run("futhark", func(t *testing.T) {
		out, err := os.OpenFile(dev, os.O_WRONLY, 0)
		require.NoError(t, err)
		defer out.Close()
		v, err := futhark.NewValue([]int64{3}, []float64{1, 2, 3})
		require.NoError(t, err)
		require.ErrorIs(t, futhark.NewEncoder(out).EncodeBinary(v), syscall.ENOSPC)
		require.ErrorIs(t, futhark.NewEncoder(out).EncodeText(v), syscall.ENOSPC)
	})
}

// scidbTable returns a table of n cells of "(int64, double)" and its bytes.
func scidbTable(t *testing.T, n int) (*scidb.Table, []byte) {
	t.Helper()
	f, err := scidb.ParseFormat("(int64, double)")
	require.NoError(t, err)
	b := make([]byte, 0, 16*n)
	for i := range n {
		b = binary.LittleEndian.AppendUint64(b, uint64(i*3))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(i)+0.5))
	}
	tb, err := scidb.Decode(b, &scidb.Options{Format: f, Lenient: true})
	require.NoError(t, err)
	return tb, b
}

func TestDiskFullSciDB(t *testing.T) {
	dir := mountTmpfs(t, tmpfsSize)
	p := filepath.Join(dir, "x.scidb")
	small, smallBytes := scidbTable(t, 10)
	require.NoError(t, scidb.EncodeFile(p, small))
	requireUnchanged(t, p, snapshot{exists: true, data: smallBytes})
	fillDisk(t, dir, 16<<10)
	names := dirNames(t, dir)

	big, _ := scidbTable(t, 1<<16)
	require.ErrorIs(t, scidb.EncodeFile(p, big), syscall.ENOSPC)
	requireUnchanged(t, p, snapshot{exists: true, data: smallBytes})
	q := filepath.Join(dir, "new.scidb")
	require.ErrorIs(t, scidb.EncodeFile(q, big), syscall.ENOSPC)
	requireUnchanged(t, q, snapshot{})
	assert.Equal(t, names, dirNames(t, dir), "no temporary file is left behind")
}
