package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// numpyLoads loads every member of an .npz with NumPy and prints it, or
// the error NumPy gives; "" where NumPy is absent.
func numpyLoads(t *testing.T, path string) string {
	t.Helper()
	py := oracle.Find("numpy")
	if py == "" {
		return ""
	}
	out, err := oracle.Output(py, `
import sys, numpy as np
d = np.load(sys.argv[1])
for k in sorted(d.keys()):
    try:
        print(k, d[k].tolist() if d[k].dtype.names is None else "structured")
    except Exception as e:
        print(k, type(e).__name__, e)`, path)
	require.NoError(t, err)
	return out
}

// savezMembers: where the members of testdata/savez.npz lie (all stored,
// no data descriptors), as Python's zipfile lists them.
const (
	savezX       = 0   // x.npy's local header; its data ([0. 1. 2.], f8) start at 207-24
	savezY       = 207 // y.npy's local header
	savezXData   = 183 // x's first element
	savezCentral = 948 // x.npy's central directory header
)

// TestForeignCRCMismatchIsNotAMark: only this package's own edit mark (the
// edit stamp in the local header's time and date, beside the complement
// of the central CRC-32) is ever taken for an interrupted edit. A local
// CRC-32 that differs in any other way (one flipped bit, which NumPy does
// not even see) is left alone by a read-write open, by a failed Set and by
// a successful Set of another member: the bytes are exactly as expected.
func TestForeignCRCMismatchIsNotAMark(t *testing.T) {
	dir := t.TempDir()
	orig, err := os.ReadFile(filepath.Join("testdata", "savez.npz"))
	require.NoError(t, err)
	compressed, err := os.ReadFile(filepath.Join("testdata", "savez-compressed.npz"))
	require.NoError(t, err)
	le := binary.LittleEndian
	with := func(b []byte, edit func(b []byte)) []byte {
		c := append([]byte{}, b...)
		edit(c)
		return c
	}
	// x[0] set to 5 in savez.npz: its element and its two CRC-32s.
	setX := func(b []byte) []byte {
		c := append([]byte{}, b...)
		le.PutUint64(c[savezXData:], math.Float64bits(5))
		crc := crc32.ChecksumIEEE(c[savezX+55 : savezX+55+152])
		le.PutUint32(c[savezX+14:], crc)
		le.PutUint32(c[savezCentral+16:], crc)
		return c
	}
	centralY := le.Uint32(orig[savezCentral+51+16:]) // y.npy's central header follows x's (46+5 bytes)
	require.Equal(t, uint32(0x1e48a500), centralY)
	cases := []struct {
		name string
		file []byte
		set  string // the member Set changes (element 0 to 5), "" for none
		ok   bool   // whether Set succeeds
		want func([]byte) []byte
	}{
		{"deflated member's local CRC bit flipped, failed Set", with(compressed, func(b []byte) { b[131+14] ^= 1 }), "x", false, nil},
		{"stored member's local CRC bit flipped, Set of another", with(orig, func(b []byte) { b[savezY+14] ^= 1 }), "x", true, setX},
		{"stored member's local CRC bit flipped, failed Set", with(orig, func(b []byte) { b[savezY+14] ^= 1 }), "nope", false, nil},
		{"complement CRC without the stamp", with(orig, func(b []byte) { le.PutUint32(b[savezY+14:], ^centralY) }), "", false, nil},
		{"stamp without the complement CRC", with(orig, func(b []byte) { le.PutUint32(b[savezY+10:], editStamp) }), "", false, nil},
		{"stamp with a flipped CRC", with(orig, func(b []byte) { le.PutUint32(b[savezY+10:], editStamp); b[savezY+15] ^= 4 }), "x", true, setX},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, "a.npz")
			require.NoError(t, os.WriteFile(p, c.file, 0o644))
			before := numpyLoads(t, p)
			assert.NotContains(t, before, "Error", "NumPy reads the archive")
			r, err := Open(p, nil)
			require.NoError(t, err)
			require.NoError(t, r.Damage())
			require.NoError(t, r.Close())

			f, err := OpenFile(p, mmapfile.ReadWrite, nil)
			require.NoError(t, err)
			require.NoError(t, f.Damage())
			if c.set != "" {
				err := Set(f, c.set, []int64{0}, 5.0)
				assert.Equal(t, c.ok, err == nil, "Set: %v", err)
			}
			require.NoError(t, f.Close())
			got, _ := os.ReadFile(p)
			want := c.file
			if c.want != nil {
				want = c.want(c.file)
			}
			require.Equal(t, want, got)
			if c.want == nil {
				assert.Equal(t, before, numpyLoads(t, p))
			}
		})
	}
}

// TestEditMarkRepair: an archive left with the whole edit mark is
// refused by a read-write open when the CRC-32 is stale, opened unchanged
// when it is right, and restored to the bytes it had before the edit by a
// repair (the mark cleared: time and date from the central directory,
// the local CRC-32 the central one).
func TestEditMarkRepair(t *testing.T) {
	dir := t.TempDir()
	orig, err := os.ReadFile(filepath.Join("testdata", "savez.npz"))
	require.NoError(t, err)
	le := binary.LittleEndian
	marked := append([]byte{}, orig...)
	le.PutUint32(marked[savezX+10:], editStamp)
	le.PutUint32(marked[savezX+14:], ^le.Uint32(orig[savezCentral+16:]))
	p := filepath.Join(dir, "m.npz")
	require.NoError(t, os.WriteFile(p, marked, 0o644))
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err, "a mark with a right CRC-32 is not damage")
	require.NoError(t, f.Damage())
	require.NoError(t, f.Close())
	got, _ := os.ReadFile(p)
	require.Equal(t, marked, got, "and nothing is changed without Repair")

	f, err = OpenFile(p, mmapfile.ReadWrite, &Options{Repair: true})
	require.NoError(t, err)
	var fe *FormatError
	require.ErrorAs(t, f.Damage(), &fe)
	assert.Equal(t, `member "x.npy": cleared the mark of an interrupted edit (its CRC-32 was right)`, fe.Msg)
	require.NoError(t, f.Close())
	got, _ = os.ReadFile(p)
	require.Equal(t, orig, got)

	// The mark and an element changed: stale.
	le.PutUint64(marked[savezXData:], math.Float64bits(7))
	require.NoError(t, os.WriteFile(p, marked, 0o644))
	_, err = OpenFile(p, mmapfile.ReadWrite, nil)
	require.ErrorIs(t, err, mmapfile.ErrNeedsRepair)
	crc := crc32.ChecksumIEEE(marked[55 : 55+152])
	assert.Contains(t, err.Error(), `member "x.npy" was being edited in place when its writer stopped: its data's CRC-32 is `)
	got, _ = os.ReadFile(p)
	require.Equal(t, marked, got)
	f, err = OpenFile(p, mmapfile.ReadWrite, &Options{Repair: true})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	want := append([]byte{}, orig...)
	le.PutUint64(want[savezXData:], math.Float64bits(7))
	le.PutUint32(want[savezX+14:], crc)
	le.PutUint32(want[savezCentral+16:], crc)
	got, _ = os.ReadFile(p)
	require.Equal(t, want, got)
	assert.Contains(t, numpyLoads(t, p), "x [7.0, 1.0, 2.0]")
}

// TestStoredMemberCRCChecked: a bit flipped in a stored member's data is
// an error for every copying read (ErrCRC), as for NumPy, never a wrong
// value; a conversion writes nothing. Views do not check (they read the
// mapping as it is); Verify checks on demand.
func TestStoredMemberCRCChecked(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "savez.npz"))
	require.NoError(t, err)
	b[savezXData+6] ^= 0x04 // x[0]: 0.0 becomes a tiny nonzero float
	p := filepath.Join(dir, "bad.npz")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	if out := numpyLoads(t, p); out != "" {
		assert.Contains(t, out, "x BadZipFile Bad CRC-32 for file 'x.npy'")
	}
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	_, err = Read[float64](f, "x")
	require.ErrorIs(t, err, ErrCRC)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(savezX+55), fe.Offset)
	assert.Equal(t, fmt.Sprintf(`member "x.npy": its data's CRC-32 is %08x, the archive records 2be12124: the data are damaged`, crc32.ChecksumIEEE(b[savezX+55:savezX+55+152])), fe.Msg)
	require.ErrorIs(t, ReadAt(f, "x", 2, make([]float64, 1)), ErrCRC)
	y, err := Read[int32](f, "y")
	require.NoError(t, err, "other members read")
	assert.Equal(t, []int32{1, 2}, y)
	require.ErrorIs(t, f.Verify(), ErrCRC)

	g, err := format.Open(p, nil)
	require.NoError(t, err)
	defer g.Close()
	require.ErrorIs(t, g.ReadArray(0, make([]byte, 24), 0, layout.RowMajor, binary.LittleEndian), ErrCRC)
	out := filepath.Join(dir, "out.npz")
	require.ErrorIs(t, format.Convert(p, out, nil, nil), ErrCRC)
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err), "a failed conversion writes nothing")
}

// TestViewsSkipTheCRCCheck: a view reads the mapping as it is (checking
// would read the whole member, which a view exists to avoid); Read of the
// same member gives ErrCRC, and Verify finds it.
func TestViewsSkipTheCRCCheck(t *testing.T) {
	p := filepath.Join(t.TempDir(), "v.npz")
	writeTestNPZ(t, p)
	f, err := Open(p, nil)
	require.NoError(t, err)
	a, _ := f.Lookup("x")
	require.NoError(t, f.Close())
	b, _ := os.ReadFile(p)
	b[a.Offset+8] ^= 0x80 // x[1]: 2.0 becomes a denormal
	require.NoError(t, os.WriteFile(p, b, 0o644))
	f, err = Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	v, err := View[float64](f, "x")
	require.NoError(t, err)
	assert.Equal(t, math.Float64frombits(binary.LittleEndian.Uint64(b[a.Offset+8:])), v[1])
	_, err = Read[float64](f, "x")
	require.ErrorIs(t, err, ErrCRC)
	require.ErrorIs(t, f.Verify(), ErrCRC)
}

// TestOtherMemberCRCCheckedWhenCopied: an archive's members that are not
// arrays are copied as they are by an .npz to .npz conversion; a stored
// one whose data do not match its CRC-32 fails the conversion (ErrCRC)
// instead of getting a fresh CRC-32 over damaged bytes.
func TestOtherMemberCRCCheckedWhenCopied(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "o.npz")
	npyPath := filepath.Join(dir, "x.npy")
	require.NoError(t, Save(npyPath, []int64{2}, layout.RowMajor, []float64{1, 2}))
	x, err := os.ReadFile(npyPath)
	require.NoError(t, err)
	out, err := os.Create(p)
	require.NoError(t, err)
	zw := zip.NewWriter(out)
	for _, m := range []struct {
		name string
		data []byte
	}{{"x.npy", x}, {"note.txt", []byte("hello, archive")}} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
		require.NoError(t, err)
		_, err = w.Write(m.data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, out.Close())
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	at := bytes.Index(b, []byte("hello"))
	require.Positive(t, at)

	good := filepath.Join(dir, "good.npz")
	require.NoError(t, format.Convert(p, good, nil, nil))
	require.NoError(t, zipCheck(good))

	b[at] ^= 0x20 // "Hello"
	require.NoError(t, os.WriteFile(p, b, 0o644))
	bad := filepath.Join(dir, "bad.npz")
	err = format.Convert(p, bad, nil, nil)
	require.ErrorIs(t, err, ErrCRC)
	assert.Contains(t, err.Error(), `member "note.txt": its data's CRC-32 is`)
	_, err = os.Stat(bad)
	assert.True(t, os.IsNotExist(err))
}

// TestCRCCheckBesideEdits: copying reads of a member that the same File
// edits meanwhile never report its CRC-32 as wrong (the edit explains
// it), and the check races with nothing (go test -race).
func TestCRCCheckBesideEdits(t *testing.T) {
	p := filepath.Join(t.TempDir(), "e.npz")
	writeTestNPZ(t, p)
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	done := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 50; i++ {
				if _, err := Read[float64](f, "x"); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 50; i++ {
		require.NoError(t, Set(f, "x", []int64{int64(i % 4)}, float64(i)))
	}
	for g := 0; g < 4; g++ {
		require.NoError(t, <-done)
	}
	require.NoError(t, f.Close())
	require.NoError(t, zipCheck(p))
}
