package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Dir is a temporary directory that replaces a directory tree (a Zarr
// store) on Commit: write the new tree into Path, then Commit. See the
// package documentation for how the old tree is replaced.
type Dir struct {
	target   string // as given
	resolved string // symbolic links followed
	tmp      string

	mu   sync.Mutex
	done bool
}

// CreateDir makes a temporary directory beside path that will replace the
// directory at path (or create it). A replaced directory's permission bits
// are kept; a new one gets o.Perm (DefaultDirPerm if zero) less the umask.
// A path that names something other than a directory is an error.
func CreateDir(path string, o *Options) (*Dir, error) {
	perm := DefaultDirPerm
	if o != nil && o.Perm != 0 {
		perm = o.Perm
	}
	resolved, fi, err := resolve(path)
	if err != nil {
		return nil, err
	}
	if fi != nil && !fi.IsDir() {
		return nil, &fs.PathError{Op: "atomicfile", Path: path, Err: syscall.ENOTDIR}
	}
	return track(func() (*Dir, error) {
		for try := 0; ; try++ {
			tmp := tempName(resolved, "tmp")
			err := os.Mkdir(tmp, perm)
			if errors.Is(err, fs.ErrExist) && try < 100 {
				continue
			}
			if err != nil {
				return nil, targetErr(path, err)
			}
			if fi != nil {
				if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil {
					os.Remove(tmp)
					return nil, targetErr(path, err)
				}
			}
			return &Dir{target: path, resolved: resolved, tmp: tmp}, nil
		}
	})
}

// Path is the temporary directory to write the new tree into.
func (d *Dir) Path() string { return d.tmp }

// Target returns the path that Commit replaces, as given to CreateDir.
func (d *Dir) Target() string { return d.target }

// Commit syncs every file and directory of the new tree and puts it in the
// target's place; the old tree is removed. On error the temporary tree is
// removed and the target is as it was.
func (d *Dir) Commit() error { return d.commit(true) }

// CommitSynced is Commit for a writer that has synced every file of the
// tree itself (as a Zarr store's writer does, a file at a time while
// others are still being written): only the directories are synced
// before the tree takes the target's place.
func (d *Dir) CommitSynced() error { return d.commit(false) }

// CommitDurable is Commit for a writer that has made the whole tree
// durable itself, files and directories (with one syncfs of its file
// system, say, for a tree of thousands of small files): nothing is synced
// before the tree takes the target's place.
func (d *Dir) CommitDurable() error { return d.commitTree(func() error { return nil }) }

func (d *Dir) commit(files bool) error {
	return d.commitTree(func() error { return syncTree(d.tmp, files) })
}

// commitTree makes the tree durable with sync and puts it in place.
func (d *Dir) commitTree(sync func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return errors.New("atomicfile: " + d.target + ": already committed or aborted")
	}
	d.done = true
	// Registered until in place: an AbortAll meanwhile waits for d.mu.
	defer unregister(d)
	err := sync()
	if err == nil {
		err = d.replace()
	}
	if err != nil {
		os.RemoveAll(d.tmp)
		return fmt.Errorf("atomicfile: %s: %w", d.target, err)
	}
	return nil
}

// exchangeCall is exchange; a variable so that tests can take the
// two-rename path.
var exchangeCall = exchange

// replace puts the synced tree d.tmp at d.resolved.
func (d *Dir) replace() error {
	parent := filepath.Dir(d.resolved)
	if _, err := os.Lstat(d.resolved); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(d.tmp, d.resolved); err != nil {
			return err
		}
		syncDir(parent)
		return nil
	}
	// Exchange the two in one step where the OS can: d.tmp then names the
	// old tree.
	if err := exchangeCall(d.tmp, d.resolved); err == nil {
		syncDir(parent)
		return os.RemoveAll(d.tmp)
	}
	old := tempName(d.resolved, "old")
	if err := os.Rename(d.resolved, old); err != nil {
		return err
	}
	if err := os.Rename(d.tmp, d.resolved); err != nil {
		if rerr := os.Rename(old, d.resolved); rerr != nil {
			return errors.Join(err, fmt.Errorf("the old tree is at %s: %w", old, rerr))
		}
		return err
	}
	syncDir(parent)
	return os.RemoveAll(old)
}

// syncTree fsyncs every directory under root, and every regular file if
// files is set.
func syncTree(root string, files bool) error {
	return filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !de.IsDir() && (!files || !de.Type().IsRegular()) {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = fsync(f)
		if de.IsDir() && err != nil {
			err = nil // directories cannot be synced everywhere
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// Abort removes the temporary tree, leaving the target alone. After Commit
// it does nothing.
func (d *Dir) Abort() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	d.done = true
	unregister(d)
	// A writer may still be adding files (Abort is called from a signal
	// handler while it runs): the removal is tried again if one of them
	// made a directory not empty while it was being removed.
	for try := 0; os.RemoveAll(d.tmp) != nil && try < 10; try++ {
	}
}
