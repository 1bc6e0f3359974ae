package npy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// TestTruncatedAtEveryByte cuts files at every byte: every cut .npy is
// refused with mmapfile.ErrTruncated at exactly the offset where the file
// now ends (a cut ZIP, whose directory is at its end, with ErrZip there);
// with Salvage a .npy cut inside its data opens with the whole rows that
// are left, and Damage says what was lost.
func TestTruncatedAtEveryByte(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"f8-c.npy", "f8-f.npy", "v2.npy", "v3-unicode.npy", "struct.npy", "be-c16.npy", "f8-0d.npy", "py2-long-2d.npy", "savez.npz", "savez-compressed.npz"} {
		whole, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		full, err := NewReader(bytes.NewReader(whole), int64(len(whole)), nil)
		require.NoError(t, err)
		a := full.Arrays()[0]
		for cut := 0; cut < len(whole); cut++ {
			part := whole[:cut]
			path := filepath.Join(dir, "cut-"+name)
			require.NoError(t, os.WriteFile(path, part, 0o644))
			f, err := Open(path, nil)
			require.Error(t, err, "%s cut at %d", name, cut)
			var fe *FormatError
			require.ErrorAs(t, err, &fe, "%s cut at %d", name, cut)
			require.Equal(t, path, fe.File)
			require.Equal(t, int64(cut), fe.Offset, "%s cut at %d: %v", name, cut, err)
			if full.IsZip() {
				if cut > 0 {
					require.ErrorIs(t, err, ErrZip, "%s cut at %d", name, cut)
				}
				continue
			}
			require.ErrorIs(t, err, mmapfile.ErrTruncated, "%s cut at %d", name, cut)
			require.ErrorIs(t, err, errors.Unwrap(mmapfile.ErrTruncated), "io.ErrUnexpectedEOF")
			f, err = Open(path, &Options{Salvage: true})
			if int64(cut) < a.Offset || len(a.Shape) == 0 {
				require.Error(t, err, "%s cut at %d: salvage of a cut header", name, cut)
				continue
			}
			require.NoError(t, err, "%s cut at %d", name, cut)
			require.ErrorIs(t, f.Damage(), mmapfile.ErrTruncated)
			got := f.Arrays()[0]
			axis := 0
			if got.FortranOrder {
				axis = len(got.Shape) - 1
			}
			slice := a.Size / a.Shape[axis]
			require.Equal(t, (int64(cut)-a.Offset)/slice, got.Shape[axis], "%s cut at %d", name, cut)
			raw, err := readAll(f, "0", got)
			require.NoError(t, err)
			want, err := readAll(full, "0", a)
			require.NoError(t, err)
			require.Equal(t, want[:len(raw)], raw, "%s cut at %d: the rows kept", name, cut)
			require.NoError(t, f.Close())
		}
	}
}
