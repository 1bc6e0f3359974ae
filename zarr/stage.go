package zarr

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// stage is a store being written: an atomicfile.Dir, a temporary
// directory beside its target that replaces the target only once it is
// complete (a replaced store keeps its permission bits; a symbolic link to
// a store is followed; an interrupted process removes it with
// atomicfile.AbortAll). Its files are not synced one by one: each file's
// writeback starts as soon as it is written, and commit syncs them all,
// then the whole tree, before the stage takes the target's place.
type stage struct {
	target string // the store's path
	dir    string // the temporary directory
	tmp    *atomicfile.Dir
	lock   *mmapfile.File // a shared lock on the store replaced, held until commit
	perm   fs.FileMode
	mu     sync.Mutex
	made   map[string]bool // directories created, by key ("." the stage)
	// pending are the files written and not yet synced, oldest first.
	pending []*os.File
	// unsynced: files were closed without their sync, for syncFiles to
	// sync the whole file system at once (syncFS), from then on.
	unsynced bool
	// durable: the last syncFiles synced the file system, directories
	// included.
	durable bool
}

// maxPending bounds the files a stage keeps open for their sync: past it
// the oldest is synced (its writeback long under way) and closed.
const maxPending = 64

// newStage starts a store at path. An existing path is replaced only if it
// is a Zarr store or an empty directory.
func newStage(path string, perm fs.FileMode) (*stage, error) {
	if err := replaceable(path); err != nil {
		return nil, err
	}
	// A store open read-write elsewhere holds an exclusive lock on its
	// root metadata: it is not replaced under its writer.
	var lock *mmapfile.File
	for _, name := range []string{"zarr.json", ".zgroup", ".zarray"} {
		l, err := mmapfile.OpenFile(filepath.Join(path, name), mmapfile.ReadOnly, &mmapfile.Options{Lock: mmapfile.LockShared})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, storeErr(path, err, "cannot be replaced")
		}
		lock = l
		break
	}
	tmp, err := atomicfile.CreateDir(path, nil)
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, err
	}
	if perm == 0 {
		perm = atomicfile.DefaultPerm
	}
	return &stage{target: path, dir: tmp.Path(), tmp: tmp, lock: lock, perm: perm, made: map[string]bool{".": true}}, nil
}

// replaceable refuses to replace anything but a Zarr store or an empty
// directory, so that a mistyped output name cannot delete other data.
func replaceable(path string) error {
	fi, err := os.Stat(path) // through a symbolic link, as the stage replaces what it points to
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return storeErr(path, fs.ErrExist, "exists and is not a directory: not replaced by a Zarr store")
	}
	if isStore(path) {
		return nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return storeErr(path, fs.ErrExist, "is a directory that is not a Zarr store: not replaced")
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

// write puts data at key in the stage and starts its writeback; commit
// syncs it. No file of the stage is seen by readers before commit, so it
// is written in place, not to a temporary name.
func (st *stage) write(key string, data []byte) error {
	f, err := st.create(key)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return st.written(f, int64(len(data)))
}

// writeFrom puts at key what fill writes to it through a buffer, as write
// puts data: a document too large to be held whole.
func (st *stage) writeFrom(key string, fill func(*bufio.Writer) error) error {
	f, err := st.create(key)
	if err != nil {
		return err
	}
	b := bufio.NewWriterSize(f, 64<<10)
	err = fill(b)
	if err == nil {
		err = b.Flush()
	}
	var size int64
	if err == nil {
		size, err = f.Seek(0, io.SeekCurrent)
	}
	if err != nil {
		f.Close()
		return err
	}
	return st.written(f, size)
}

// create makes the file key in the stage, and its directories.
func (st *stage) create(key string) (*os.File, error) {
	name := filepath.Join(st.dir, filepath.FromSlash(key))
	if err := st.mkdirs(path.Dir(key)); err != nil {
		return nil, err
	}
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.perm)
}

// mkdirs makes the directory d of the stage (a key) and its parents,
// noting each for commit to sync.
func (st *stage) mkdirs(d string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.made[d] {
		return nil
	}
	// Each missing directory below the stage, parents first; never the
	// stage itself, so that a writer still running after an abort (a
	// signal) cannot make it again.
	var missing []string
	for ; !st.made[d]; d = path.Dir(d) {
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(filepath.Join(st.dir, filepath.FromSlash(missing[i])), 0o755)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		st.made[missing[i]] = true
	}
	return nil
}

// written takes f, whose contents (size bytes) are complete: its writeback starts now,
// and commit syncs and closes it (or, with many pending, a later call).
func (st *stage) written(f *os.File, size int64) error {
	if size >= 1<<20 {
		// Small files are left to the sync: a call each would cost more
		// than writing them back.
		atomicfile.StartWriteback(f, 0, 0)
	}
	st.mu.Lock()
	st.pending = append(st.pending, f)
	var old *os.File
	if len(st.pending) > maxPending {
		old = st.pending[0]
		st.pending = st.pending[1:]
	}
	st.mu.Unlock()
	if old == nil {
		return nil
	}
	if canSyncFS {
		// Its writeback long under way, it is synced with all the others
		// by commit, at once.
		st.mu.Lock()
		st.unsynced = true
		st.mu.Unlock()
		return old.Close()
	}
	err := old.Sync()
	if cerr := old.Close(); err == nil {
		err = cerr
	}
	return err
}

// canSyncFS says whether syncFS syncs a file system here.
var canSyncFS = runtime.GOOS == "linux"

// syncFiles syncs and closes every file written and not yet synced: one
// by one, or, when some were closed without their sync, all at once with
// the file system.
func (st *stage) syncFiles() error {
	st.mu.Lock()
	files := st.pending
	st.pending = nil
	// Once one file went unsynced, every later call syncs the file
	// system: commit then need not sync the tree's directories one by one.
	whole := st.unsynced
	st.durable = false
	st.mu.Unlock()
	var first error
	if whole {
		for _, f := range files {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
		if _, err := syncFS(st.dir); err != nil && first == nil {
			first = err
		}
		st.mu.Lock()
		st.durable = first == nil
		st.mu.Unlock()
		return first
	}
	for _, f := range files {
		if err := f.Sync(); err != nil && first == nil {
			first = err
		}
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// commit makes the stage durable — its files, each synced by syncFiles as
// its writeback ends, then the stage's directories — and puts it in place
// of the target (in one atomic exchange where the OS has one). Every file
// of a stage is made through create, so syncFiles syncs them all.
func (st *stage) commit() error {
	if err := st.syncFiles(); err != nil {
		return err
	}
	if err := replaceable(st.target); err != nil {
		return err
	}
	var err error
	if st.durable {
		err = st.tmp.CommitDurable() // syncFiles synced the file system
	} else {
		err = st.tmp.CommitSynced() // syncFiles synced every file
	}
	st.unlock()
	return err
}

func (st *stage) unlock() {
	if st.lock != nil {
		st.lock.Close()
		st.lock = nil
	}
}

// abort removes the stage (after a commit, it does nothing).
func (st *stage) abort() {
	st.mu.Lock()
	for _, f := range st.pending {
		f.Close()
	}
	st.pending = nil
	st.mu.Unlock()
	st.tmp.Abort()
	st.unlock()
}
