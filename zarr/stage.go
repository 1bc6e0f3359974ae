package zarr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
)

// stage is a store being written: a temporary directory beside its target
// that replaces the target only once it is complete.
type stage struct {
	target string // the store's path
	dir    string // the temporary directory
	perm   fs.FileMode
	mu     sync.Mutex
	made   map[string]bool // directories created
}

// newStage starts a store at path. An existing path is replaced only if it
// is a Zarr store or an empty directory.
func newStage(path string, perm fs.FileMode) (*stage, error) {
	if err := replaceable(path); err != nil {
		return nil, err
	}
	parent, base := filepath.Split(filepath.Clean(path))
	if parent == "" {
		parent = "."
	}
	dir, err := os.MkdirTemp(parent, "."+base+".tmp")
	if err != nil {
		return nil, err
	}
	return &stage{target: path, dir: dir, perm: perm, made: map[string]bool{".": true}}, nil
}

// replaceable refuses to replace anything but a Zarr store or an empty
// directory, so that a mistyped output name cannot delete other data.
func replaceable(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &FormatError{File: path, Offset: -1, Msg: "exists and is not a directory: not replaced by a Zarr store", Err: fs.ErrExist}
	}
	if isStore(path) {
		return nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return &FormatError{File: path, Offset: -1, Msg: "is a directory that is not a Zarr store: not replaced", Err: fs.ErrExist}
	}
	return nil
}

// isStore reports whether the directory at path holds Zarr metadata at its
// root.
func isStore(path string) bool {
	for _, name := range []string{".zarray", ".zgroup", "zarr.json"} {
		if fi, err := os.Stat(filepath.Join(path, name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// write puts data at key in the stage: a temporary name, synced and
// renamed.
func (st *stage) write(key string, data []byte) error {
	name := filepath.Join(st.dir, filepath.FromSlash(key))
	d := filepath.Dir(key)
	st.mu.Lock()
	if !st.made[d] {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			st.mu.Unlock()
			return err
		}
		st.made[d] = true
	}
	st.mu.Unlock()
	return atomicfile.Write(name, st.perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// commit puts the stage in place of the target: in one atomic exchange
// where the OS has one, else by two renames.
func (st *stage) commit() error {
	if err := replaceable(st.target); err != nil {
		return err
	}
	if _, err := os.Lstat(st.target); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(st.dir, st.target); err != nil {
			return err
		}
		syncDir(filepath.Dir(st.target))
		return nil
	}
	if err := exchange(st.dir, st.target); err == nil {
		syncDir(filepath.Dir(st.target))
		return os.RemoveAll(st.dir) // now the old store
	}
	old := st.dir + ".old"
	if err := os.Rename(st.target, old); err != nil {
		return err
	}
	if err := os.Rename(st.dir, st.target); err != nil {
		if rerr := os.Rename(old, st.target); rerr != nil {
			return fmt.Errorf("%v; the old store is at %s: %v", err, old, rerr)
		}
		return err
	}
	syncDir(filepath.Dir(st.target))
	return os.RemoveAll(old)
}

// abort removes the stage.
func (st *stage) abort() { os.RemoveAll(st.dir) }

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
