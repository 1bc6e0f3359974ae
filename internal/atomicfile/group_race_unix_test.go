//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two groups replacing the same data file and metadata commit one after
// the other: the second, started while the first is between its two
// renames, waits, so the targets end up both from one group. Unlocked,
// the second group's renames ran in that gap, and the first group's
// metadata then landed beside the second group's data.
func TestGroupsOverOneTargetDoNotInterleave(t *testing.T) {
	for _, c := range []struct {
		name    string
		metaDir bool // the metadata in another directory (through a symbolic link)
	}{
		{"one directory", false},
		{"two directories", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			data, meta := filepath.Join(dir, "m.dbdf"), filepath.Join(dir, "m.dbdf.meta")
			writeOld(t, data, "old data", 0o644)
			if c.metaDir {
				other := t.TempDir()
				writeOld(t, filepath.Join(other, "meta"), "old meta", 0o644)
				require.NoError(t, os.Symlink(filepath.Join(other, "meta"), meta))
			} else {
				writeOld(t, meta, "old meta", 0o644)
			}
			group := func(tag string) *Group {
				g := NewGroup(nil)
				fd, err := g.Create(data)
				require.NoError(t, err)
				fm, err := g.CreateLast(meta)
				require.NoError(t, err)
				writeMember(t, fd, tag+" data")
				writeMember(t, fm, tag+" meta")
				return g
			}
			a, b := group("a"), group("b")
			bDone := make(chan error, 1)
			var first atomic.Bool
			renameMember = func(from, to string) error {
				if err := os.Rename(from, to); err != nil {
					return err
				}
				if !first.Swap(true) {
					// a is between its renames: b commits now, and a
					// goes on when b is done or has had time to be.
					go func() { bDone <- b.Commit() }()
					select {
					case err := <-bDone:
						bDone <- err
					case <-time.After(300 * time.Millisecond):
					}
				}
				return nil
			}
			defer func() { renameMember = os.Rename }()
			require.NoError(t, a.Commit())
			require.NoError(t, <-bDone)
			gotData, err := os.ReadFile(data)
			require.NoError(t, err)
			gotMeta, err := os.ReadFile(meta)
			require.NoError(t, err)
			assert.Equal(t, string(gotData[:1]), string(gotMeta[:1]), "data %q beside meta %q", gotData, gotMeta)
			assert.Equal(t, "b data", string(gotData), "the group that committed last")
		})
	}
}
