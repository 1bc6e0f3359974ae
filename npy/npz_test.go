package npy

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// zipCheck reads every member of the archive with archive/zip, which
// checks sizes and CRC-32s, and returns the first error.
func zipCheck(path string) error {
	r, err := zip.OpenReader(path)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return nil
}

// pythonZipCheck runs Python's zipfile CRC check and np.load on the
// archive, where NumPy is here.
func pythonZipCheck(t *testing.T, path string) string {
	t.Helper()
	py := oracle.Find("numpy")
	if py == "" {
		return "skipped"
	}
	out, err := oracle.Output(py, `
import sys, zipfile, numpy as np
z = zipfile.ZipFile(sys.argv[1]); bad = z.testzip()
d = np.load(sys.argv[1])
print(bad, {k: d[k].tolist() for k in sorted(d.keys()) if d[k].dtype.names is None})`, path)
	require.NoError(t, err)
	return out
}

func writeTestNPZ(t *testing.T, path string) {
	t.Helper()
	z, err := CreateZip(path, nil)
	require.NoError(t, err)
	require.NoError(t, AddArray(z, "x", []int64{4}, layout.RowMajor, []float64{1, 2, 3, 4}))
	require.NoError(t, AddArray(z, "y", []int64{2, 2}, layout.ColMajor, []int32{1, 2, 3, 4}))
	require.NoError(t, z.Close())
}

// TestNPZEditsRewriteCRCs: edits of stored members (by Set and through
// writable views) change the data in place; their CRC-32s are stale until
// Sync or Close rewrites them, and a read-only open in between says so.
func TestNPZEditsRewriteCRCs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "e.npz")
	writeTestNPZ(t, p)
	require.NoError(t, zipCheck(p))
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, Set(f, "x", []int64{1}, -2.5))
	// In between: the central directory's CRC is stale.
	require.Error(t, zipCheck(p))
	_, err = Open(p, nil)
	require.ErrorIs(t, err, ErrCRC)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	s, err := Open(p, &Options{Salvage: true})
	require.NoError(t, err)
	require.ErrorIs(t, s.Damage(), ErrCRC)
	require.NoError(t, s.Close())
	require.NoError(t, f.Sync())
	require.NoError(t, zipCheck(p), "Sync rewrote the CRC")
	r, err := Open(p, nil)
	require.NoError(t, err, "a marker left with the right CRC is no error")
	require.NoError(t, r.Close())
	// A writable view: the member stays marked until Close.
	v, err := View[int32](f, "y")
	require.NoError(t, err)
	v[3] = 40
	require.NoError(t, f.Sync())
	require.NoError(t, zipCheck(p))
	v[0] = 10 // after Sync: recorded by the next Sync, and at Close
	require.NoError(t, f.Sync())
	require.NoError(t, zipCheck(p))
	v[1] = 20
	v[1] = 2
	require.NoError(t, f.Close())
	require.NoError(t, zipCheck(p))
	assert.Equal(t, "None {'x': [1.0, -2.5, 3.0, 4.0], 'y': [[10, 3], [2, 40]]}\n", pythonZipCheck(t, p))
	// After Close no marker is left: the local headers agree.
	g, err := Open(p, nil)
	require.NoError(t, err)
	defer g.Close()
	require.NoError(t, g.Verify())
	for _, a := range g.arrays {
		assert.False(t, a.m.marked(), a.key)
	}
}

// TestNPZStaleCRCRepair: what a writer killed between an edit and its
// CRC update leaves is reported by read-only opens, refused by read-write
// opens (the file unchanged), and repaired by one with Options.Repair,
// which says so in Damage.
func TestNPZStaleCRCRepair(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"ours.npz", "savez.npz"} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if name == "ours.npz" {
				writeTestNPZ(t, p)
			} else {
				copyGolden(t, dir, name)
			}
			f, err := OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			require.NoError(t, Set(f, "x", []int64{0}, 99.0)) // the copy path for savez's misaligned member
			crashed, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			require.NoError(t, os.WriteFile(p, crashed, 0o644))
			m := centralOf(t, p, "x.npy")

			_, err = Open(p, nil)
			require.ErrorIs(t, err, ErrCRC)
			s, err := Open(p, &Options{Salvage: true})
			require.NoError(t, err)
			require.ErrorIs(t, s.Verify(), ErrCRC)
			require.NoError(t, s.Close())
			_, err = Open(p, nil)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, m+16, fe.Offset, "the central directory's CRC")
			_, err = OpenFile(p, mmapfile.ReadWrite, nil)
			require.ErrorIs(t, err, mmapfile.ErrNeedsRepair)
			require.ErrorIs(t, err, ErrCRC)
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, m+16, fe.Offset, "the central directory's CRC")
			got, _ := os.ReadFile(p)
			require.Equal(t, crashed, got, "a refused open changes nothing")
			w, err := OpenFile(p, mmapfile.ReadWrite, &Options{Repair: true})
			require.NoError(t, err)
			require.ErrorIs(t, w.Damage(), ErrCRC)
			require.NoError(t, w.Close())
			require.NoError(t, zipCheck(p))
			r, err := Open(p, nil)
			require.NoError(t, err)
			x, err := Read[float64](r, "x")
			require.NoError(t, err)
			assert.Equal(t, 99.0, x[0])
			require.NoError(t, r.Close())
		})
	}
}

// centralOf is the offset of a member's central directory header.
func centralOf(t *testing.T, path, name string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	d, err := readZip(path, bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	for _, m := range d.members {
		if m.name == name {
			return m.central
		}
	}
	t.Fatalf("no member %s", name)
	return 0
}

// TestNPZDeflatedEditsRefused: a deflated member cannot be edited in
// place; the error wraps errors.ErrUnsupported and no byte changes.
func TestNPZDeflatedEditsRefused(t *testing.T) {
	dir := t.TempDir()
	p := copyGolden(t, dir, "savez-compressed.npz")
	orig, _ := os.ReadFile(p)
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	err = Set(f, "x", []int64{0}, 1.0)
	require.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = View[float64](f, "x")
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.ErrorIs(t, Append(f, []float64{1}), errors.ErrUnsupported)
	require.NoError(t, f.Close())
	got, _ := os.ReadFile(p)
	assert.Equal(t, orig, got)
}

// TestNPZLayout: what ls reports for archives NumPy wrote: member data
// offsets (183 for the first member of a small np.savez), -1 for
// deflated members, and each member's version.
func TestNPZLayout(t *testing.T) {
	f, err := Open("testdata/savez.npz", nil)
	require.NoError(t, err)
	defer f.Close()
	a := f.Arrays()
	require.Equal(t, "x", a[0].Name)
	assert.Equal(t, int64(183), a[0].Offset)
	assert.Equal(t, "x.npy", a[0].Member)
	assert.Equal(t, "1.0", a[0].Version)
	assert.Equal(t, "", f.Version())
	c, err := Open("testdata/savez-compressed.npz", nil)
	require.NoError(t, err)
	defer c.Close()
	for _, a := range c.Arrays() {
		assert.Equal(t, int64(-1), a.Offset, a.Name)
		assert.True(t, a.Compressed)
	}
	big, err := Read[int64](c, "big")
	require.NoError(t, err)
	assert.Len(t, big, 1000)
	assert.Equal(t, int64(999%7), big[999])
	// The inflate limit is the caller's to raise.
	small, err := Open("testdata/savez-compressed.npz", &Options{MaxInflate: 100})
	require.NoError(t, err)
	defer small.Close()
	_, err = Read[int64](small, "big")
	require.ErrorIs(t, err, ErrInflateLimit)
	part := make([]int64, 10)
	require.NoError(t, ReadAt(small, "big", 990, part), "ReadAt streams, within the caller's buffer")
	assert.Equal(t, big[990:], part)
}

// TestZip64: archives with zip64 records (forced here; needed past 4 GiB
// or 65535 members) read back here, in archive/zip and in NumPy.
func TestZip64(t *testing.T) {
	forceZip64 = true
	defer func() { forceZip64 = false }()
	p := filepath.Join(t.TempDir(), "z64.npz")
	writeTestNPZ(t, p)
	forceZip64 = false
	require.NoError(t, zipCheck(p))
	f, err := Open(p, nil)
	require.NoError(t, err)
	x, err := View[float64](f, "x")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4}, x)
	require.NoError(t, f.Close())
	if out := pythonZipCheck(t, p); out != "skipped" {
		assert.Equal(t, "None {'x': [1.0, 2.0, 3.0, 4.0], 'y': [[1, 3], [2, 4]]}\n", out)
	}
	// An edit of a zip64 member gets its CRC rewritten too.
	w, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, Set(w, "y", []int64{0, 0}, int32(-1)))
	require.NoError(t, w.Close())
	require.NoError(t, zipCheck(p))
}

// TestManyMembers: more than 65535 members need the zip64 end records.
func TestManyMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 70,000 members")
	}
	p := filepath.Join(t.TempDir(), "many.npz")
	z, err := CreateZip(p, nil)
	require.NoError(t, err)
	const n = 70000
	for i := 0; i < n; i++ {
		require.NoError(t, AddArray(z, fmt.Sprintf("a%d", i), []int64{}, layout.RowMajor, []uint16{uint16(i)}))
	}
	require.NoError(t, z.Close())
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	require.Len(t, f.Arrays(), n)
	v, err := View[uint16](f, "a69999")
	require.NoError(t, err)
	assert.Equal(t, []uint16{69999 % 65536}, v)
	if py := oracle.Find("numpy"); py != "" {
		out, err := oracle.Output(py, `
import sys, numpy as np
d = np.load(sys.argv[1]); print(len(d.files), int(d["a69999"]))`, p)
		require.NoError(t, err)
		assert.Equal(t, "70000 4463\n", out)
	}
}

// TestZipWriterRefusals: a writer failure leaves the target as it was.
func TestZipWriterRefusals(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "w.npz")
	require.NoError(t, os.WriteFile(p, []byte("before"), 0o644))
	z, err := CreateZip(p, nil)
	require.NoError(t, err)
	require.NoError(t, AddArray(z, "a", []int64{1}, layout.RowMajor, []int8{1}))
	require.Error(t, AddArray(z, "a", []int64{1}, layout.RowMajor, []int8{1}), "a name twice")
	require.Error(t, AddArray(z, "b", []int64{2}, layout.RowMajor, []int8{1}), "too few values")
	require.Error(t, z.Add("c", Header{DType: DType{Kind: 'f', ItemSize: 8}, Shape: []int64{2}}, bytes.NewReader(make([]byte, 8))), "short data")
	require.Error(t, z.Close())
	got, _ := os.ReadFile(p)
	assert.Equal(t, "before", string(got))
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file left")
}
