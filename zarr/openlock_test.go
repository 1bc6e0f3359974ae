package zarr

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// A store replaced at its path (a conversion written over it) between
// OpenFile's load and its lock: the lock is on the root metadata document
// of the store loaded, not on the one now at the path, so that writers of
// the new store are not shut out and a writer of the old one is.
func TestOpenFileLocksTheStoreLoaded(t *testing.T) {
	for _, c := range []struct {
		version int
		key     string
	}{{2, ".zarray"}, {3, "zarr.json"}} {
		dir := t.TempDir()
		p, next, old := filepath.Join(dir, "x.zarr"), filepath.Join(dir, "next.zarr"), filepath.Join(dir, "old.zarr")
		for i, path := range []string{p, next} {
			src := (&memSource{}).add("/", layout.F64, []int64{4}, layout.RowMajor, false, ramp(layout.F64, 4, float64(10*i)))
			require.NoError(t, Write(path, src, &Options{Version: c.version}))
		}
		beforeLock = func(string) {
			require.NoError(t, os.Rename(p, old))
			require.NoError(t, os.Rename(next, p))
		}
		s, err := OpenFile(p, mmapfile.ReadWrite, nil)
		beforeLock = func(string) {}
		require.NoError(t, err)
		locked, err := s.lock.OSFile().Stat()
		require.NoError(t, err)
		loaded, err := os.Stat(filepath.Join(old, c.key))
		require.NoError(t, err)
		require.True(t, os.SameFile(locked, loaded), "v%d: the lock is not on the loaded store's %s", c.version, c.key)

		n, err := OpenFile(p, mmapfile.ReadWrite, nil)
		require.NoError(t, err, "v%d: the store now at the path", c.version)
		require.NoError(t, n.Close())
		_, err = OpenFile(old, mmapfile.ReadWrite, nil)
		require.ErrorIs(t, err, mmapfile.ErrLocked, "v%d: the store loaded", c.version)
		require.NoError(t, s.Close())
	}
}
