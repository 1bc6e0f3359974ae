package mmapfile

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOnlyRegularFilesOpen(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	reg, want := writeFile(t, 100)
	linkReg := filepath.Join(dir, "link-to-file")
	require.NoError(t, os.Symlink(reg, linkReg))
	linkDir := filepath.Join(dir, "link-to-dir")
	require.NoError(t, os.Symlink(dir, linkDir))

	cases := []struct {
		name, path string
		mode       Mode
		what       string // "" if the open succeeds
	}{
		{"directory", dir, ReadOnly, "a directory"},
		{"directory read-write", dir, ReadWrite, "a directory"},
		{"FIFO (an open would block)", fifo, ReadOnly, "a FIFO"},
		{"FIFO read-write", fifo, ReadWrite, "a FIFO"},
		{"character device", "/dev/null", ReadOnly, "a character device"},
		{"character device read-write", "/dev/full", ReadWrite, "a character device"},
		{"socket", sock, ReadOnly, "a socket"},
		{"proc file (size 0, contents not)", "/proc/self/status", ReadOnly, "a file of proc"},
		{"sysfs file", "/sys/kernel/mm/transparent_hugepage/enabled", ReadOnly, "a file of sysfs"},
		{"symlink to a directory", linkDir, ReadOnly, "a directory"},
		{"symlink to a file is followed", linkReg, ReadOnly, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(c.path); err != nil {
				t.Skipf("%s: %v", c.path, err)
			}
			done := make(chan struct{})
			var f *File
			var err error
			go func() {
				defer close(done)
				f, err = OpenFile(c.path, c.mode, nil)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the open blocked")
			}
			if c.what == "" {
				require.NoError(t, err)
				r, err := f.MapAll()
				require.NoError(t, err)
				assert.Equal(t, want, r.Bytes())
				require.NoError(t, f.Close())
				return
			}
			require.ErrorIs(t, err, ErrNotRegular)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, c.path, e.File)
			assert.Equal(t, int64(-1), e.Offset)
			assert.Equal(t, "mmapfile: "+c.path+": open: "+c.what+": not a regular file", err.Error())

			// The same descriptor handed over is refused too, and stays
			// open for its owner. (A FIFO's open would block; a socket
			// cannot be opened.)
			if c.what == "a FIFO" || c.what == "a socket" {
				return
			}
			osf, oerr := os.Open(c.path)
			require.NoError(t, oerr)
			defer osf.Close()
			_, err = NewFile(osf, ReadOnly, nil)
			require.ErrorIs(t, err, ErrNotRegular)
			_, serr := osf.Stat()
			assert.NoError(t, serr, "the caller's descriptor is not closed")
		})
	}
}

// A caller that opened a path and examined it maps that same file even if
// the path is replaced (mv) before the mapping: never a mix of versions.
func TestNewFileMapsTheOpenedFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.bin")
	v1 := []byte("version one, 32 bytes long......")
	v2 := []byte("VERSION TWO, 32 BYTES LONG, NEWER")
	require.NoError(t, os.WriteFile(p, v1, 0o644))

	for _, via := range []string{"NewFile", "Options.File"} {
		t.Run(via, func(t *testing.T) {
			require.NoError(t, os.WriteFile(p, v1, 0o644))
			osf, err := os.OpenFile(p, os.O_RDWR, 0)
			require.NoError(t, err)
			head := make([]byte, 7)
			_, err = osf.ReadAt(head, 0) // sniff
			require.NoError(t, err)
			fi, err := osf.Stat()
			require.NoError(t, err)

			// Another program replaces the file.
			tmp := filepath.Join(dir, "new")
			require.NoError(t, os.WriteFile(tmp, v2, 0o644))
			require.NoError(t, os.Rename(tmp, p))

			var f *File
			if via == "NewFile" {
				f, err = NewFile(osf, ReadWrite, nil)
			} else {
				f, err = OpenFile(p, ReadWrite, &Options{File: osf})
			}
			require.NoError(t, err)
			assert.Equal(t, p, f.Name())
			size, err := f.Size()
			require.NoError(t, err)
			assert.Equal(t, fi.Size(), size)
			r, err := f.MapAll()
			require.NoError(t, err)
			assert.Equal(t, v1, r.Bytes(), "the file that was examined is mapped")
			assert.Equal(t, "version", string(head))
			// It is locked for writing like any read-write open.
			osf2, err := os.Open(p)
			require.NoError(t, err)
			_, err = NewFile(osf2, ReadOnly, &Options{Lock: LockShared})
			assert.NoError(t, err, "the new file at the path is not locked")
			osf2.Close()
			require.NoError(t, f.Close())
			_, err = osf.Stat()
			assert.ErrorIs(t, err, os.ErrClosed, "Close closes the adopted descriptor")
		})
	}
}

func TestNewFileChecksTheDescriptorsMode(t *testing.T) {
	p, _ := writeFile(t, 64)
	osf, err := os.Open(p)
	require.NoError(t, err)
	defer osf.Close()
	_, err = NewFile(osf, ReadWrite, nil)
	require.ErrorIs(t, err, ErrNotWritable)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, p, e.File)
	_, err = NewFile(osf, ReadOnly, &Options{Truncate: true})
	assert.ErrorContains(t, err, "Truncate needs ReadWrite")

	// A descriptor whose lock is held elsewhere: ErrLocked, and the
	// descriptor stays usable.
	w, err := OpenFile(p, ReadWrite, nil)
	require.NoError(t, err)
	rw, err := os.OpenFile(p, os.O_RDWR, 0)
	require.NoError(t, err)
	defer rw.Close()
	_, err = NewFile(rw, ReadWrite, nil)
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, w.Close())
	f, err := NewFile(rw, ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// A writer waiting for the lock of a path that is replaced meanwhile (a
// whole-file writer renames a new version over it) ends up with the new
// file, not the old one that no path names any more: its edits are not
// lost.
func TestWaitingWriterOpensTheReplacedPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.bin")
	require.NoError(t, os.WriteFile(p, []byte("old!"), 0o644))
	holder, err := OpenFile(p, ReadWrite, nil)
	require.NoError(t, err)

	type result struct {
		f   *File
		err error
	}
	got := make(chan result)
	go func() {
		f, err := OpenFile(p, ReadWrite, &Options{Wait: true})
		got <- result{f, err}
	}()
	time.Sleep(100 * time.Millisecond) // let it open the old file and wait
	tmp := filepath.Join(dir, "tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("new!"), 0o644))
	require.NoError(t, os.Rename(tmp, p))
	require.NoError(t, holder.Close())

	res := <-got
	require.NoError(t, res.err)
	defer res.f.Close()
	_, err = res.f.WriteAt([]byte("NEW"), 0)
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "NEW!", string(b), "the edit reached the file the path names")
}
