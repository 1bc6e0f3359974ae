package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "y")
	f, err := Create(p, 0)
	require.NoError(t, err)
	assert.Equal(t, p, f.Target())
	_, err = f.WriteString("data")
	require.NoError(t, err)
	_, err = os.Stat(p)
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing at the target before Commit")
	require.NoError(t, f.Commit())
	f.Abort() // no effect after Commit
	require.Error(t, f.Commit(), "a second Commit is an error")
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "data", string(got))

	g, err := Create(p, 0)
	require.NoError(t, err)
	_, err = g.WriteString("other")
	require.NoError(t, err)
	g.Abort()
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "data", string(got))
	assert.Equal(t, []string{"y"}, entries(t, dir))

	_, err = Create(filepath.Join(dir, "missing", "z"), 0)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// After AbortAll no temporary file or directory is made, so that a
// signal handler's clean-up cannot be outrun by a writer that starts
// meanwhile; replacements already started are aborted.
func TestAbortAllStopsNewTemporaries(t *testing.T) {
	t.Cleanup(func() {
		live.Lock()
		live.stopped = false
		live.Unlock()
	})
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "x"), 0)
	require.NoError(t, err)
	AbortAll()
	_, err = Create(filepath.Join(dir, "y"), 0)
	require.ErrorIs(t, err, errStopped)
	_, err = CreateDir(filepath.Join(dir, "d"), nil)
	require.ErrorIs(t, err, errStopped)
	require.Error(t, f.Commit(), "an aborted file cannot be committed")
	l, err := Leftovers(dir)
	require.NoError(t, err)
	assert.Empty(t, l)
	assert.NoFileExists(t, filepath.Join(dir, "x"))
}

// Every way of replacing files syncs each new file before it is renamed
// into place and the directory that holds it afterwards, so that a
// replacement that returned survives a crash.
func TestReplacementsAreSynced(t *testing.T) {
	var synced []string
	fsync = func(f *os.File) error {
		synced = append(synced, f.Name())
		return f.Sync()
	}
	t.Cleanup(func() { fsync = (*os.File).Sync })
	dir := t.TempDir()
	isTemp := func(p string) bool { return IsTemp(filepath.Base(p)) }

	synced = nil
	require.NoError(t, WriteFile(filepath.Join(dir, "a"), nil, func(f *os.File) error {
		_, err := f.WriteString("a")
		return err
	}))
	require.Len(t, synced, 2, "%q", synced)
	assert.True(t, isTemp(synced[0]), "the new file, before its rename: %q", synced)
	assert.Equal(t, dir, synced[1], "then its directory")

	synced = nil
	g := NewGroup(nil)
	for _, name := range []string{"d", "d.meta"} {
		create := g.Create
		if name == "d.meta" {
			create = g.CreateLast
		}
		f, err := create(filepath.Join(dir, name))
		require.NoError(t, err)
		_, err = f.WriteString(name)
		require.NoError(t, err)
	}
	require.NoError(t, g.Commit())
	require.Len(t, synced, 3, "%q", synced)
	assert.True(t, isTemp(synced[0]) && isTemp(synced[1]), "%q", synced)
	assert.Equal(t, dir, synced[2])

	synced = nil
	d, err := CreateDir(filepath.Join(dir, "s.zarr"), nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "zarr.json"), []byte("{}"), 0o644))
	require.NoError(t, d.Commit())
	assert.Contains(t, synced, filepath.Join(d.Path(), "zarr.json"))
	assert.Contains(t, synced, d.Path())
	assert.Equal(t, dir, synced[len(synced)-1], "the parent last: %q", synced)

	// CommitSynced: the writer synced the files; only directories are.
	synced = nil
	d, err = CreateDir(filepath.Join(dir, "t.zarr"), nil)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(d.Path(), "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "x", "0.0"), []byte("c"), 0o644))
	require.NoError(t, d.CommitSynced())
	assert.Equal(t, []string{d.Path(), filepath.Join(d.Path(), "x"), dir}, synced)
}

// TestMapAndFinish fills a replacement through a mapping of its temporary
// file, then lets the last error decide: nil puts the new contents in
// place, an error leaves the old file and no temporary behind.
func TestMapAndFinish(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"committed", nil, "new!"},
		{"aborted", errors.New("writer failed"), "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "x")
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
			f, err := Create(p, 0)
			require.NoError(t, err)
			// The options of an open of another file must not leak in:
			// Truncate and File are for the target, not the temporary.
			other, err := os.Open(p)
			require.NoError(t, err)
			defer other.Close()
			mf, err := f.Map(&mmapfile.Options{Create: true, Truncate: true, File: other, Lock: mmapfile.LockNone})
			require.NoError(t, err)
			assert.Equal(t, f.Name(), mf.Name())
			require.NoError(t, mf.Grow(4))
			r, err := mf.MapAll()
			require.NoError(t, err)
			copy(r.Bytes(), "new!")
			require.NoError(t, mf.Close())

			err = f.Finish(tc.err)
			assert.Equal(t, tc.err, err)
			got, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			assert.Equal(t, []string{"x"}, entries(t, dir), "no temporary left")
			require.Error(t, f.Commit(), "Finish ended the replacement")
		})
	}
}
