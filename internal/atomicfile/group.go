package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Group replaces several files together: see the package documentation
// for the order of the renames and what a failure or a crash leaves.
//
//	g := atomicfile.NewGroup(nil)
//	defer g.Abort()
//	data, err := g.Create("m.dbdf")   // renamed first
//	meta, err := g.CreateLast("m.dbdf.meta") // renamed after every data file
//	// … write data and meta …
//	err = g.Commit()
type Group struct {
	opt   Options
	mu    sync.Mutex
	data  []*File
	last  []*File
	ended bool
}

// NewGroup starts an empty group; o applies to each of its files.
func NewGroup(o *Options) *Group {
	g := &Group{}
	if o != nil {
		g.opt = *o
	}
	return g
}

// Create adds a data file that will replace path, renamed in the order of
// the Create calls, before every CreateLast file.
func (g *Group) Create(path string) (*File, error) { return g.add(path, false) }

// CreateLast adds a file renamed after every data file — the metadata that
// describes them — in the order of the CreateLast calls.
func (g *Group) CreateLast(path string) (*File, error) { return g.add(path, true) }

func (g *Group) add(path string, last bool) (*File, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return nil, errors.New("atomicfile: " + path + ": the group was already committed or aborted")
	}
	for _, f := range g.files() {
		if f.target == path {
			return nil, errors.New("atomicfile: " + path + ": already in the group")
		}
	}
	f, err := create(path, &g.opt, true)
	if err != nil {
		return nil, err
	}
	if last {
		g.last = append(g.last, f)
	} else {
		g.data = append(g.data, f)
	}
	return f, nil
}

// files returns the members in commit order.
func (g *Group) files() []*File {
	return append(append([]*File(nil), g.data...), g.last...)
}

// renamed is one member put in place, with what undoes it.
type renamed struct {
	f      *File
	backup string // a hard link to the replaced target; "" if none
	had    bool   // a target existed
}

// Commit syncs and closes every file, renames them over their targets in
// order and syncs each directory involved once. If anything fails, no
// target is left changed where that can be undone: the temporary files are
// removed and targets already replaced are restored from their backups.
func (g *Group) Commit() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return errors.New("atomicfile: the group was already committed or aborted")
	}
	g.ended = true
	files := g.files()
	for _, f := range files {
		f.mu.Lock()
		defer f.mu.Unlock()
		// Registered until renamed: an AbortAll meanwhile waits for f.mu.
		defer unregister(f)
	}
	defer func() {
		for _, f := range files {
			f.unlockTarget()
		}
	}()
	var first error
	for _, f := range files {
		if err := f.finishLocked(); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		removeTemps(files)
		return first
	}
	// The renames of two groups over the same targets must not
	// interleave, or the targets would end up holding one group's data
	// and the other's metadata: each directory involved is locked, in
	// one order, from the first rename to the last directory sync.
	unlock, err := lockDirs(files)
	if err != nil {
		removeTemps(files)
		return err
	}
	defer unlock()
	var done []renamed
	for i, f := range files {
		r, err := put(f)
		if err != nil {
			removeTemps(files[i:])
			return errors.Join(err, rollback(done))
		}
		done = append(done, r)
	}
	dirs := map[string]bool{}
	for _, f := range files {
		if d := filepath.Dir(f.resolved); !dirs[d] {
			dirs[d] = true
			syncDir(d)
		}
	}
	for _, r := range done {
		if r.backup != "" {
			os.Remove(r.backup)
		}
	}
	return nil
}

// lockDirs locks the directories of the files' targets (lockDir), in
// sorted order so that two groups cannot each hold one the other waits
// for, and returns what releases them.
func lockDirs(files []*File) (func(), error) {
	var dirs []string
	for _, f := range files {
		dirs = append(dirs, filepath.Dir(f.resolved))
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	var unlocks []func()
	release := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, d := range dirs {
		u, err := lockDir(d)
		if err != nil {
			release()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return release, nil
}

// renameMember is os.Rename; a variable so that tests can see the order.
var renameMember = os.Rename

// put renames f's temporary file over its target, keeping a hard link to
// the target it replaces.
func put(f *File) (renamed, error) {
	r := renamed{f: f}
	if _, err := os.Lstat(f.resolved); err == nil {
		r.had = true
		b := tempName(f.resolved, "old")
		if os.Link(f.resolved, b) == nil {
			r.backup = b
		}
	}
	if err := renameMember(f.File.Name(), f.resolved); err != nil {
		if r.backup != "" {
			os.Remove(r.backup)
		}
		return r, err
	}
	return r, nil
}

// rollback undoes the renames done, last first, and reports what it could
// not undo.
func rollback(done []renamed) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		r := done[i]
		var err error
		switch {
		case r.backup != "":
			err = os.Rename(r.backup, r.f.resolved)
		case !r.had:
			err = os.Remove(r.f.resolved)
		default:
			err = errors.New("no hard link was possible to keep the old file")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("atomicfile: %s: already replaced and not restored: %w", r.f.target, err))
		}
	}
	dirs := map[string]bool{}
	for _, r := range done {
		if d := filepath.Dir(r.f.resolved); !dirs[d] {
			dirs[d] = true
			syncDir(d)
		}
	}
	return errors.Join(errs...)
}

// removeTemps removes the members' temporary files (closed by
// finishLocked; some may be gone already).
func removeTemps(files []*File) {
	for _, f := range files {
		os.Remove(f.File.Name())
	}
}

// Abort removes every temporary file of the group, leaving the targets as
// they were. After Commit it does nothing, so `defer g.Abort()` is safe.
func (g *Group) Abort() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended {
		return
	}
	g.ended = true
	for _, f := range g.files() {
		f.Abort()
	}
}
