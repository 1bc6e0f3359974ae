//go:build linux

package reliability

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
)

// TestDiskFullNPY: a conversion to .npy or .npz that runs out of space
// fails naming the file it was writing, and saying so, not its source
// (which was read without error); no temporary file is left.
func TestDiskFullNPY(t *testing.T) {
	src := t.TempDir()
	values := floats(64<<10, 1)
	sources := map[string]func(string) error{
		"x.npy": func(p string) error { return npy.Save(p, []int64{int64(len(values))}, layout.RowMajor, values) },
		"x.npz": func(p string) error {
			z, err := npy.CreateZip(p, nil)
			if err != nil {
				return err
			}
			if err := npy.AddArray(z, "a", []int64{int64(len(values))}, layout.RowMajor, values); err != nil {
				z.Abort()
				return err
			}
			return z.Close()
		},
		"x.abf": func(p string) error { return format.Convert(filepath.Join(src, "x.npy"), p, nil, nil) },
	}
	for _, name := range []string{"x.npy", "x.npz", "x.abf"} {
		require.NoError(t, sources[name](filepath.Join(src, name)), name)
	}
	for _, c := range []struct{ from, to string }{
		{"x.npy", "o.npy"}, {"x.npy", "o.npz"}, {"x.npz", "o.npy"}, {"x.npz", "o.npz"}, {"x.abf", "o.npy"}, {"x.abf", "o.npz"},
	} {
		t.Run(c.from+" to "+c.to, func(t *testing.T) {
			dir := mountTmpfs(t, tmpfsSize)
			fillDisk(t, dir, 16<<10)
			names := dirNames(t, dir)
			from, to := filepath.Join(src, c.from), filepath.Join(dir, c.to)
			err := format.Convert(from, to, nil, nil)
			require.ErrorIs(t, err, syscall.ENOSPC)
			assert.Contains(t, err.Error(), to+": ")
			assert.Contains(t, err.Error(), "writing")
			assert.NotContains(t, err.Error(), from)
			assert.NotContains(t, err.Error(), "reading")
			requireUnchanged(t, to, snapshot{})
			assert.Equal(t, names, dirNames(t, dir), "no temporary file is left behind")
		})
	}
}
