//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// withUmask runs the test under umask 022.
func withUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
}

func writeOld(t *testing.T, p, data string, perm fs.FileMode) {
	t.Helper()
	require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
	require.NoError(t, os.Chmod(p, perm))
}

func requireFile(t *testing.T, p, data string, perm fs.FileMode) {
	t.Helper()
	got, err := os.ReadFile(p)
	require.NoError(t, err, p)
	assert.Equal(t, data, string(got), p)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, perm, fi.Mode().Perm(), p)
}

func noLeftovers(t *testing.T, dir string) {
	t.Helper()
	left, err := Leftovers(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "temporary files left in %s", dir)
}

func writeMember(t *testing.T, f *File, data string) {
	t.Helper()
	_, err := f.WriteString(data)
	require.NoError(t, err)
}

// A group renames data files in creation order, then the CreateLast files,
// keeps each replaced file's permission bits and leaves no temporary file.
func TestGroupCommitOrderAndPermissions(t *testing.T) {
	withUmask(t)
	dir := t.TempDir()
	meta, a, b := filepath.Join(dir, "m.meta"), filepath.Join(dir, "a.bin"), filepath.Join(dir, "b.bin")
	writeOld(t, a, "old a", 0o600)
	writeOld(t, meta, "old meta", 0o640)

	var order []string
	renameMember = func(from, to string) error {
		order = append(order, filepath.Base(to))
		return os.Rename(from, to)
	}
	defer func() { renameMember = os.Rename }()

	g := NewGroup(&Options{Perm: 0o666})
	defer g.Abort()
	fm, err := g.CreateLast(meta) // created first, renamed last
	require.NoError(t, err)
	fa, err := g.Create(a)
	require.NoError(t, err)
	fb, err := g.Create(b)
	require.NoError(t, err)
	_, err = g.Create(a)
	require.ErrorContains(t, err, "already in the group")
	assert.ErrorContains(t, fa.Commit(), "committed by the Group")
	writeMember(t, fm, "new meta")
	writeMember(t, fa, "new a")
	writeMember(t, fb, "new b")
	requireFile(t, a, "old a", 0o600) // nothing changes before Commit
	require.NoError(t, g.Commit())

	assert.Equal(t, []string{"a.bin", "b.bin", "m.meta"}, order)
	requireFile(t, a, "new a", 0o600)
	requireFile(t, b, "new b", 0o644)
	requireFile(t, meta, "new meta", 0o640)
	noLeftovers(t, dir)
	assert.Error(t, g.Commit(), "a second Commit is an error")
	_, err = g.Create(filepath.Join(dir, "late"))
	assert.Error(t, err)
}

// A rename that fails after others succeeded: the targets already replaced
// are restored (or removed if they were new), the rest never changed.
func TestGroupRollsBackWhenARenameFails(t *testing.T) {
	dir := t.TempDir()
	a, n, b, m := filepath.Join(dir, "a"), filepath.Join(dir, "new"), filepath.Join(dir, "b"), filepath.Join(dir, "meta")
	writeOld(t, a, "old a", 0o640)
	writeOld(t, b, "old b", 0o644)
	writeOld(t, m, "old meta", 0o644)
	g := NewGroup(nil)
	for _, c := range []struct{ path, data string }{{a, "new a"}, {n, "new n"}, {b, "new b"}} {
		f, err := g.Create(c.path)
		require.NoError(t, err)
		writeMember(t, f, c.data)
	}
	fm, err := g.CreateLast(m)
	require.NoError(t, err)
	writeMember(t, fm, "new meta")
	// b becomes a non-empty directory: a file cannot be renamed over it.
	require.NoError(t, os.Remove(b))
	require.NoError(t, os.MkdirAll(filepath.Join(b, "x"), 0o755))

	err = g.Commit()
	require.Error(t, err)
	assert.Contains(t, err.Error(), b)
	requireFile(t, a, "old a", 0o640)
	_, err = os.Stat(n)
	assert.ErrorIs(t, err, fs.ErrNotExist, "a new file is removed again")
	requireFile(t, m, "old meta", 0o644)
	fi, err := os.Stat(b)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	noLeftovers(t, dir)
}

func TestGroupAbort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x")
	writeOld(t, p, "old", 0o644)
	g := NewGroup(nil)
	f, err := g.Create(p)
	require.NoError(t, err)
	writeMember(t, f, "new")
	_, err = g.CreateLast(filepath.Join(dir, "y"))
	require.NoError(t, err)
	g.Abort()
	g.Abort()
	requireFile(t, p, "old", 0o644)
	assert.Equal(t, []string{"x"}, entries(t, dir))
	assert.Error(t, g.Commit())

	// A member aborted on its own fails the group's Commit, which then
	// leaves nothing behind.
	g = NewGroup(nil)
	f, err = g.Create(p)
	require.NoError(t, err)
	_, err = g.Create(filepath.Join(dir, "z"))
	require.NoError(t, err)
	f.Abort()
	assert.ErrorContains(t, g.Commit(), "aborted")
	requireFile(t, p, "old", 0o644)
	assert.Equal(t, []string{"x"}, entries(t, dir))
}

func TestDirReplace(t *testing.T) {
	withUmask(t)
	for _, twoRenames := range []bool{false, true} {
		name := map[bool]string{false: "exchange", true: "two renames"}[twoRenames]
		t.Run(name, func(t *testing.T) {
			if twoRenames {
				exchangeCall = func(a, b string) error { return errors.ErrUnsupported }
				defer func() { exchangeCall = exchange }()
			}
			parent := t.TempDir()
			store := filepath.Join(parent, "s.zarr")
			require.NoError(t, os.MkdirAll(filepath.Join(store, "old", "deep"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(store, "zarr.json"), []byte("old"), 0o644))
			require.NoError(t, os.Chmod(store, 0o750))

			d, err := CreateDir(store, nil)
			require.NoError(t, err)
			assert.Equal(t, store, d.Target())
			assert.True(t, IsTemp(filepath.Base(d.Path())))
			require.NoError(t, os.MkdirAll(filepath.Join(d.Path(), "c", "0"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "c", "0", "0"), []byte("chunk"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "zarr.json"), []byte("new"), 0o644))
			requireFile(t, filepath.Join(store, "zarr.json"), "old", 0o644)
			require.NoError(t, d.Commit())

			requireFile(t, filepath.Join(store, "zarr.json"), "new", 0o644)
			requireFile(t, filepath.Join(store, "c", "0", "0"), "chunk", 0o644)
			_, err = os.Stat(filepath.Join(store, "old"))
			assert.ErrorIs(t, err, fs.ErrNotExist, "nothing of the old tree is left")
			fi, err := os.Stat(store)
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o750), fi.Mode().Perm(), "the old directory's permission bits")
			assert.Equal(t, []string{"s.zarr"}, entries(t, parent))
			assert.Error(t, d.Commit())

			// A new store gets the permission asked for, less the umask.
			fresh := filepath.Join(parent, "t.zarr")
			d, err = CreateDir(fresh, &Options{Perm: 0o777})
			require.NoError(t, err)
			require.NoError(t, d.Commit())
			fi, err = os.Stat(fresh)
			require.NoError(t, err)
			assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm())

			// Abort leaves the old tree.
			d, err = CreateDir(store, nil)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "zarr.json"), []byte("newer"), 0o644))
			d.Abort()
			d.Abort()
			requireFile(t, filepath.Join(store, "zarr.json"), "new", 0o644)
			assert.Equal(t, []string{"s.zarr", "t.zarr"}, entries(t, parent))
		})
	}
}

func TestDirTargets(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "f")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	_, err := CreateDir(file, nil)
	require.ErrorIs(t, err, syscall.ENOTDIR)
	assert.Equal(t, []string{"f"}, entries(t, parent))

	// A link to a store: the store is replaced, the link stays a link.
	real := filepath.Join(parent, "real.zarr")
	require.NoError(t, os.Mkdir(real, 0o700))
	link := filepath.Join(parent, "link.zarr")
	require.NoError(t, os.Symlink("real.zarr", link))
	d, err := CreateDir(link, nil)
	require.NoError(t, err)
	assert.Equal(t, parent, filepath.Dir(d.Path()))
	require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "zarr.json"), []byte("v"), 0o644))
	require.NoError(t, d.Commit())
	dest, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, "real.zarr", dest)
	requireFile(t, filepath.Join(link, "zarr.json"), "v", 0o644)
	fi, err := os.Stat(real)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm())
	noLeftovers(t, parent)
}

// Writing through a symbolic link replaces the file it points to (through
// chains and relative links); the link keeps working.
func TestSymlinkTargetsAreFollowed(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	real := filepath.Join(sub, "real.bin")
	writeOld(t, real, "old", 0o600)
	l1 := filepath.Join(dir, "l1")
	require.NoError(t, os.Symlink("sub/real.bin", l1)) // relative
	l2 := filepath.Join(dir, "l2")
	require.NoError(t, os.Symlink(l1, l2)) // absolute, to a link

	for i, link := range []string{l1, l2} {
		data := []string{"via l1", "via l2"}[i]
		require.NoError(t, Write(link, 0, func(f *os.File) error { _, err := f.WriteString(data); return err }))
		fi, err := os.Lstat(link)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&fs.ModeSymlink, "%s is still a link", link)
		requireFile(t, real, data, 0o600)
	}
	noLeftovers(t, dir)
	noLeftovers(t, sub)

	// A dangling link creates the file it names.
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink("sub/made.bin", dangling))
	require.NoError(t, Write(dangling, 0o600, func(f *os.File) error { _, err := f.WriteString("made"); return err }))
	requireFile(t, filepath.Join(sub, "made.bin"), "made", 0o600)

	// A loop is an error.
	loop := filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink("loop", loop))
	_, err := Create(loop, 0)
	assert.ErrorContains(t, err, "too many levels of symbolic links")
}

func TestNonRegularTargetsAreRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	linkToDir := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("sub", linkToDir))
	for _, c := range []struct{ path, real, what string }{
		{sub, sub, "a directory"},
		{linkToDir, sub, "a directory"},
		{fifo, fifo, "a FIFO"},
		{sock, sock, "a socket"},
		{"/dev/null", "/dev/null", "a character device"},
		{"/proc/self/status", "/proc/self/status", "a file of proc"},
	} {
		if _, err := os.Stat(c.path); err != nil {
			continue // no /proc here
		}
		called := false
		err := Write(c.path, 0, func(*os.File) error { called = true; return nil })
		require.ErrorIs(t, err, mmapfile.ErrNotRegular, c.path)
		assert.Equal(t, "mmapfile: "+c.real+": open: "+c.what+": not a regular file", err.Error())
		assert.False(t, called, "nothing is written")
		g := NewGroup(nil)
		_, err = g.Create(c.path)
		assert.ErrorIs(t, err, mmapfile.ErrNotRegular, c.path)
		g.Abort()
	}
	assert.ElementsMatch(t, []string{"fifo", "sock", "sub", "link"}, entries(t, dir), "no temporary file was made")
	st, err := os.Stat("/dev/null")
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&fs.ModeDevice, "/dev/null is still the device")
}

// The target's lock: a writer holding the file read-write (mmapfile's
// exclusive flock) makes Create fail with ErrLocked, or wait; while a
// replacement is being written, read-write opens of the target fail.
func TestLockedTargetIsNotReplaced(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.abf")
	writeOld(t, p, "old", 0o644)
	holder, err := mmapfile.OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)

	err = Write(p, 0, func(f *os.File) error { _, err := f.WriteString("new"); return err })
	require.ErrorIs(t, err, mmapfile.ErrLocked)
	assert.Contains(t, err.Error(), p)
	requireFile(t, p, "old", 0o644)
	noLeftovers(t, dir)
	g := NewGroup(nil)
	_, err = g.Create(p)
	assert.ErrorIs(t, err, mmapfile.ErrLocked)
	g.Abort()

	// Waiting: the replacement happens once the holder closes.
	done := make(chan error)
	go func() {
		done <- WriteFile(p, &Options{Wait: true}, func(f *os.File) error { _, err := f.WriteString("new"); return err })
	}()
	select {
	case err := <-done:
		t.Fatalf("the waiting write did not wait: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	_, err = holder.WriteAt([]byte("OLD"), 0) // the holder's edit, before it lets go
	require.NoError(t, err)
	require.NoError(t, holder.Close())
	require.NoError(t, <-done)
	requireFile(t, p, "new", 0o644)

	// While a replacement is in progress, the target cannot be opened for
	// writing (its edits would be lost at Commit).
	f, err := Create(p, 0)
	require.NoError(t, err)
	_, err = mmapfile.OpenFile(p, mmapfile.ReadWrite, nil)
	assert.ErrorIs(t, err, mmapfile.ErrLocked)
	ro, err := mmapfile.Open(p)
	require.NoError(t, err, "readers are not blocked")
	require.NoError(t, ro.Close())
	require.NoError(t, f.Commit())
	w, err := mmapfile.OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err, "the lock goes with Commit")
	require.NoError(t, w.Close())
}

func TestIsTemp(t *testing.T) {
	for name, want := range map[string]bool{
		".x.abf.tmp1k2j3h": true,
		".x.abf.old1k2j3h": true,
		".s.zarr.tmpz":     true,
		".x.tmp":           false, // no suffix
		"x.abf.tmp1k2":     false, // not hidden
		".x.abf.tmp1K2":    false, // upper case
		".x.abf.bak1k2":    false,
		".tmp1k2":          false, // no target name
		".x.abf":           false,
	} {
		assert.Equal(t, want, IsTemp(name), name)
	}
}

// AbortAll removes every temporary file and directory in progress; their
// later commits fail and the targets stay as they were.
func TestAbortAll(t *testing.T) {
	t.Cleanup(func() {
		live.Lock()
		live.stopped = false
		live.Unlock()
	})
	dir := t.TempDir()
	p := filepath.Join(dir, "x")
	writeOld(t, p, "old", 0o644)
	f, err := Create(p, 0)
	require.NoError(t, err)
	writeMember(t, f, "new")
	g := NewGroup(nil)
	ga, err := g.Create(filepath.Join(dir, "a"))
	require.NoError(t, err)
	d, err := CreateDir(filepath.Join(dir, "s.zarr"), nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "zarr.json"), []byte("{}"), 0o644))
	left, err := Leftovers(dir)
	require.NoError(t, err)
	assert.Len(t, left, 3)

	AbortAll()
	noLeftovers(t, dir)
	_, err = f.WriteString("more")
	assert.Error(t, err, "writes after AbortAll fail")
	_, err = ga.WriteString("more")
	assert.Error(t, err)
	assert.ErrorContains(t, f.Commit(), "aborted")
	assert.Error(t, g.Commit())
	assert.Error(t, d.Commit())
	requireFile(t, p, "old", 0o644)
	assert.Equal(t, []string{"x"}, entries(t, dir))
	// The target's lock went with the abort.
	w, err := mmapfile.OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	AbortAll() // nothing left to abort
	assert.False(t, strings.Contains(strings.Join(entries(t, dir), ""), ".tmp"))
}
