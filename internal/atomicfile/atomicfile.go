// Package atomicfile creates or replaces a file so that readers see the old
// contents or the new, never a mix: the new contents go to a temporary file
// beside the target, which is synced and then renamed over it.
//
// What it cannot promise: the rename is atomic for one file only, so a
// writer that replaces two files (DAPHNE's data file and its .meta) can be
// interrupted between the two renames; and on a crash right after Commit the
// directory entry may still name the old file on file systems that do not
// order renames after data (Commit syncs the directory to narrow that).
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
)

// DefaultPerm is the permission of a new file when the caller gives none,
// before the process's umask, as os.WriteFile would use.
const DefaultPerm fs.FileMode = 0o644

// File is the temporary file that replaces its target on Commit. Write to
// it like any *os.File; call Commit to put it in place or Abort to drop it.
// After Commit or Abort, Abort does nothing, so `defer f.Abort()` is safe.
type File struct {
	*os.File
	target string
	done   bool
}

var counter atomic.Uint64

// Create opens a temporary file in path's directory that will replace path.
// A file that already exists at path keeps its permission bits; a new one
// gets perm (DefaultPerm if zero) less the umask.
func Create(path string, perm fs.FileMode) (*File, error) {
	if perm == 0 {
		perm = DefaultPerm
	}
	keep := fs.FileMode(0)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		keep = fi.Mode().Perm()
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	seed := uint64(time.Now().UnixNano()) ^ uint64(os.Getpid())<<32
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(seed+counter.Add(1), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, err
		}
		if keep != 0 {
			if err := f.Chmod(keep); err != nil {
				f.Close()
				os.Remove(name)
				return nil, err
			}
		}
		return &File{File: f, target: path}, nil
	}
}

// Target returns the path that Commit replaces.
func (f *File) Target() string { return f.target }

// Commit syncs the temporary file, closes it and renames it over the
// target, then syncs the directory. On error the temporary file is removed
// and the target is as it was.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: " + f.target + ": already committed or aborted")
	}
	f.done = true
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.File.Name(), f.target)
	}
	if err != nil {
		os.Remove(f.File.Name())
		return err
	}
	syncDir(filepath.Dir(f.target))
	return nil
}

// Abort closes and removes the temporary file, leaving the target alone.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}

// Write creates or replaces path with what fn writes, atomically (see
// Create for the permission bits). If fn fails, path is unchanged.
func Write(path string, perm fs.FileMode, fn func(*os.File) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := fn(f.File); err != nil {
		return err
	}
	return f.Commit()
}

// syncDir makes a rename in dir durable where the OS allows it; it is best
// effort (Windows cannot open a directory for syncing).
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
