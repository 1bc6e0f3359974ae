// Package atomicfile creates or replaces files, groups of files and
// directory trees so that readers see the old contents or the new, never a
// mix: the new contents go to a temporary file (or directory) beside the
// target, which is synced and then renamed over it. It is the one writer of
// whole files in mmapkit, for every format and the command-line tool.
//
// # Targets
//
//   - The replaced file keeps its permission bits; a new one gets the
//     permission asked for (DefaultPerm if none) less the umask. The same
//     holds for every file of a Group and for a replaced directory.
//   - A symbolic link is followed, through any number of links: the file
//     it points to is replaced and the link keeps working (rename would
//     otherwise replace the link itself with a plain file). A dangling link
//     creates the file it points to.
//   - Only regular files are replaced by a file (and only directories by a
//     directory): a device, FIFO, socket or directory as the target of a
//     file write is an error wrapping mmapfile.ErrNotRegular, before
//     anything is written.
//   - The target's lock is taken first. A process that has the target open
//     read-write through mmapfile holds its exclusive advisory lock (flock);
//     renaming a new file over it would make that process's later edits go
//     to a file no path names any more, silently lost. So Create takes a
//     shared lock on the existing target and holds it until Commit or
//     Abort: while another process holds the file for writing, Create fails
//     with an error wrapping mmapfile.ErrLocked, or waits for it if
//     Options.Wait says so; and while the replacement is being written,
//     read-write opens of the target fail or wait in turn. (A target that
//     cannot be opened for reading is replaced without a lock.)
//
// # Groups and directories
//
// A [Group] replaces several files at once (DAPHNE's data file and its
// .meta, a Zarr array's chunks and its metadata): every file is written and
// synced first, then the renames happen in one documented order — data
// files in the order they were created, then the files created with
// CreateLast (the metadata that describes the data) — and each directory
// involved is synced once at the end. If a rename fails, the files already
// renamed are put back: each replaced target is kept under a hard link
// until the group is committed, so it can be restored (where the file
// system has no hard links, a replaced file cannot be restored and the
// error says so). A crash between two renames can still leave new data
// files beside old metadata, which is why metadata goes last: a reader
// never sees metadata that names data not yet in place. Two groups that
// replace the same files (two conversions onto one target) commit one
// after the other, never interleaved: each holds an exclusive flock on
// the directories involved from its first rename to its last directory
// sync (not on systems without flock), so the files end up all from one
// group.
//
// [CreateDir] replaces a whole directory tree (a Zarr store): the new tree
// is written into a temporary directory beside it, every file and directory
// in it is synced, and then it takes the old one's place. On Linux the two
// are exchanged in one atomic renameat2(RENAME_EXCHANGE) and the old tree
// is removed afterwards: a reader sees the old store or the new, never
// none. Where the exchange is not available the old tree is first renamed
// away and the new one renamed in: between the two renames (microseconds)
// the path does not exist, and a crash there leaves the old tree at
// ".<name>.old…" and the new at ".<name>.tmp…" (see below), the path
// absent. Readers that opened files of the old tree keep reading them.
//
// # Interruption
//
// On an error every temporary file is removed and the target is as it was.
// A program that is interrupted calls [AbortAll] from its signal handler
// before exiting, which removes the temporary files and directories of
// every replacement still in progress:
//
//	sigs := make(chan os.Signal, 1)
//	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
//	go func() {
//		s := <-sigs
//		atomicfile.AbortAll()
//		os.Exit(128 + int(s.(syscall.Signal)))
//	}()
//
// SIGKILL, a crash or a power loss cannot be handled: they leave the
// temporary files behind (never a damaged target). They are named
// ".<name>.tmp<suffix>" (files and directories being written) and
// ".<name>.old<suffix>" (replaced targets kept for a group's rollback, a
// replaced directory not yet removed), beside the target, where <name> is
// the target's name and <suffix> lowercase letters and digits; [Leftovers]
// lists them in a directory and [IsTemp] tells one by its name.
//
// On a crash right after a commit, file systems that do not order renames
// after data could still show the old entry; Commit syncs the directory to
// narrow that.
package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// DefaultPerm is the permission of a new file when the caller gives none,
// before the process's umask, as os.WriteFile would use.
const DefaultPerm fs.FileMode = 0o644

// DefaultDirPerm is the permission of a new directory when the caller gives
// none, before the umask.
const DefaultDirPerm fs.FileMode = 0o755

// Options configure New, WriteFile, NewGroup and CreateDir. A nil *Options
// means the defaults.
type Options struct {
	// Perm is the permission of a new target (DefaultPerm, or
	// DefaultDirPerm for a directory, if zero), less the umask. A replaced
	// target keeps its own.
	Perm fs.FileMode
	// Wait makes Create wait while another process holds the target for
	// writing, instead of failing with mmapfile.ErrLocked.
	Wait bool
}

// File is the temporary file that replaces its target on Commit. Write to
// it like any *os.File; call Commit to put it in place or Abort to drop it.
// After Commit or Abort, Abort does nothing, so `defer f.Abort()` is safe.
type File struct {
	*os.File
	target   string // as given
	resolved string // the file to replace, symbolic links followed
	lock     *mmapfile.File

	mu      sync.Mutex
	done    bool // committed or aborted
	aborted bool
	grouped bool // its Group commits it
}

var counter atomic.Uint64

// tempName returns a name beside path that no file has yet, of the kind
// "tmp" (being written) or "old" (a replaced target kept for rollback).
func tempName(path, kind string) string {
	dir, base := filepath.Split(path)
	seed := uint64(time.Now().UnixNano()) ^ uint64(os.Getpid())<<32
	return filepath.Join(dir, "."+base+"."+kind+strconv.FormatUint(seed+counter.Add(1), 36))
}

// TempName returns a name beside path, as atomicfile names the temporary
// files it writes (IsTemp recognises it, Leftovers lists it), for a
// writer that makes such a file itself and renames it over path.
func TempName(path string) string { return tempName(path, "tmp") }

// IsTemp reports whether name (a base name) is one atomicfile gives its
// temporary files and directories: ".<name>.tmp<suffix>" or
// ".<name>.old<suffix>", the suffix lowercase letters and digits.
func IsTemp(name string) bool {
	if !strings.HasPrefix(name, ".") {
		return false
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 1 {
		return false
	}
	tail := name[i+1:]
	for _, kind := range []string{"tmp", "old"} {
		if suffix, ok := strings.CutPrefix(tail, kind); ok && suffix != "" {
			return strings.Trim(suffix, "0123456789abcdefghijklmnopqrstuvwxyz") == ""
		}
	}
	return false
}

// Leftovers lists the temporary files and directories in dir that a
// killed or crashed writer left behind (see IsTemp), as paths. Do not
// remove those of writers still running.
func Leftovers(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if IsTemp(de.Name()) {
			out = append(out, filepath.Join(dir, de.Name()))
		}
	}
	return out, nil
}

// Create opens a temporary file in path's directory that will replace path
// (see the package documentation for symbolic links, locks and what may be
// replaced). A file that already exists at path keeps its permission bits;
// a new one gets perm (DefaultPerm if zero) less the umask.
func Create(path string, perm fs.FileMode) (*File, error) {
	return New(path, &Options{Perm: perm})
}

// New is Create with options.
func New(path string, o *Options) (*File, error) {
	return create(path, o, false)
}

func create(path string, o *Options, grouped bool) (*File, error) {
	var opt Options
	if o != nil {
		opt = *o
	}
	perm := opt.Perm
	if perm == 0 {
		perm = DefaultPerm
	}
	resolved, fi, err := resolve(path)
	if err != nil {
		return nil, err
	}
	keep := fs.FileMode(0)
	var lock *mmapfile.File
	if fi != nil {
		// Opening the target to lock it refuses what is not a regular
		// file (mmapfile.ErrNotRegular).
		if lock, err = lockTarget(resolved, opt.Wait); err != nil {
			return nil, err
		}
		keep = fi.Mode().Perm()
	}
	t, err := track(func() (*File, error) {
		f, err := openTemp(resolved, perm, keep)
		if err != nil {
			return nil, targetErr(path, err)
		}
		return &File{File: f, target: path, resolved: resolved, lock: lock, grouped: grouped}, nil
	})
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, err
	}
	return t, nil
}

// resolve follows symbolic links from path to the file they end at, and
// returns it with its FileInfo (nil if nothing is there yet).
func resolve(path string) (string, fs.FileInfo, error) {
	p := path
	for range 40 {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, fi, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", nil, err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return "", nil, &fs.PathError{Op: "atomicfile", Path: path, Err: errors.New("too many levels of symbolic links")}
}

// lockTarget takes a shared lock on the existing target, which fails (or
// waits) while a writer holds it exclusively, and refuses a target that is
// not a regular file. A target that is gone or cannot be read gives no lock
// and no error.
func lockTarget(path string, wait bool) (*mmapfile.File, error) {
	lock, err := mmapfile.OpenFile(path, mmapfile.ReadOnly, &mmapfile.Options{Lock: mmapfile.LockShared, Wait: wait})
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil, nil
	}
	return lock, err
}

// targetErr names path, the target, in err about its temporary: the
// temporary's name is ours, and the reason (a read-only file system, a
// directory that does not exist) is the target's.
func targetErr(path string, err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	why := pe.Err
	if dir := filepath.Dir(path); errors.Is(why, fs.ErrNotExist) {
		why = &noDir{dir: dir, err: why}
	}
	return &fs.PathError{Op: pe.Op, Path: path, Err: why}
}

// noDir is a target's directory that is not there.
type noDir struct {
	dir string
	err error
}

func (e *noDir) Error() string {
	return "the directory " + e.dir + " does not exist (create it first)"
}
func (e *noDir) Unwrap() error { return e.err }

// openTemp creates the temporary file for target: perm less the umask, or
// exactly keep if non-zero.
func openTemp(target string, perm, keep fs.FileMode) (*os.File, error) {
	for try := 0; ; try++ {
		name := tempName(target, "tmp")
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
		return f, nil
	}
}

// Target returns the path that Commit replaces, as given to Create.
func (f *File) Target() string { return f.target }

// Map opens the temporary file read-write through mmapfile, for contents
// filled in place through a mapping before Commit (NumPy's
// open_memmap(mode="w+")). o's mapping options apply; Create, Truncate and
// File do not (the temporary file exists and is opened by its name). Close
// the mmapfile.File before Finish or Commit.
func (f *File) Map(o *mmapfile.Options) (*mmapfile.File, error) {
	var mo mmapfile.Options
	if o != nil {
		mo = *o
	}
	mo.Create, mo.Truncate, mo.File = false, false, nil
	return mmapfile.OpenFile(f.File.Name(), mmapfile.ReadWrite, &mo)
}

// Finish ends the replacement as err says: it commits the temporary file
// when err is nil, and otherwise aborts it and returns err, so that a
// writer's last error decides whether the target is replaced.
func (f *File) Finish(err error) error {
	if err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// Commit syncs the temporary file, closes it and renames it over the
// target, then syncs the directory. On error the temporary file is removed
// and the target is as it was.
func (f *File) Commit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.grouped {
		return errors.New("atomicfile: " + f.target + ": a file of a Group is committed by the Group")
	}
	// Registered until renamed: an AbortAll meanwhile waits for f.mu.
	defer unregister(f)
	if err := f.finishLocked(); err != nil {
		return err
	}
	err := os.Rename(f.File.Name(), f.resolved)
	if err != nil {
		os.Remove(f.File.Name())
	} else {
		syncDir(filepath.Dir(f.resolved))
	}
	f.unlockTarget()
	return err
}

// finishLocked syncs and closes the temporary file, ready to be renamed;
// on error it removes it. f.mu must be held.
func (f *File) finishLocked() error {
	if f.aborted {
		return errors.New("atomicfile: " + f.target + ": aborted")
	}
	if f.done {
		return errors.New("atomicfile: " + f.target + ": already committed or aborted")
	}
	f.done = true
	err := fsync(f.File)
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.File.Name())
		f.unlockTarget()
	}
	return err
}

func (f *File) unlockTarget() {
	if f.lock != nil {
		f.lock.Close()
		f.lock = nil
	}
}

// Abort closes and removes the temporary file, leaving the target alone.
func (f *File) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.abortLocked()
}

func (f *File) abortLocked() {
	if f.done {
		return
	}
	f.done = true
	f.aborted = true
	unregister(f)
	f.File.Close()
	os.Remove(f.File.Name())
	f.unlockTarget()
}

// Write creates or replaces path with what fn writes, atomically (see
// Create for the permission bits). If fn fails, path is unchanged.
func Write(path string, perm fs.FileMode, fn func(*os.File) error) error {
	return WriteFile(path, &Options{Perm: perm}, fn)
}

// WriteFile is Write with options.
func WriteFile(path string, o *Options, fn func(*os.File) error) error {
	f, err := New(path, o)
	if err != nil {
		return err
	}
	defer f.Abort()
	return f.Finish(fn(f.File))
}

// syncDir makes a rename in dir durable where the OS allows it; it is best
// effort (Windows cannot open a directory for syncing).
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	fsync(d)
	d.Close()
}

// fsync is (*os.File).Sync; a variable so that tests can see what is
// synced.
var fsync = (*os.File).Sync

// live holds every temporary file and directory not yet committed or
// aborted, for AbortAll.
var live = struct {
	sync.Mutex
	m       map[aborter]struct{}
	stopped bool // AbortAll was called: no new temporaries
}{m: map[aborter]struct{}{}}

type aborter interface{ Abort() }

// errStopped is what creating a temporary file returns after AbortAll.
var errStopped = errors.New("atomicfile: the process is being interrupted: no new files")

// track runs create, which makes a temporary file or directory, and
// registers what it returns, both under the registry's lock, so that
// AbortAll sees every temporary that exists and none is made after it.
func track[A aborter](create func() (A, error)) (A, error) {
	live.Lock()
	defer live.Unlock()
	if live.stopped {
		var zero A
		return zero, errStopped
	}
	a, err := create()
	if err == nil {
		live.m[a] = struct{}{}
	}
	return a, err
}

func unregister(a aborter) {
	live.Lock()
	delete(live.m, a)
	live.Unlock()
}

// AbortAll aborts every replacement in progress in this process — files,
// groups' files, directories — removing their temporary files and leaving
// every target as it was. Their writers' later writes and commits fail.
// It is meant for a signal handler before the process exits (see the
// package documentation) and is safe to call from any goroutine.
func AbortAll() {
	live.Lock()
	live.stopped = true
	all := make([]aborter, 0, len(live.m))
	for a := range live.m {
		all = append(all, a)
	}
	live.Unlock()
	for _, a := range all {
		a.Abort()
	}
}
