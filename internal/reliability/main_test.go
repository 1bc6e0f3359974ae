//go:build linux

package reliability

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Child processes are this test binary, re-executed with these variables.
const (
	childRoleEnv = "MMAPKIT_RELIABILITY_CHILD" // what the child does
	childPathEnv = "MMAPKIT_RELIABILITY_PATH"  // the file it works on
	childArgEnv  = "MMAPKIT_RELIABILITY_ARG"   // one integer argument
)

// exitLocked is the status of a child that found the file locked.
const exitLocked = 3

// children maps a role to what a child process does with the file at path.
// Each role prints progress to stdout, one line per completed step.
var children = map[string]func(path string, arg int64) error{}

func TestMain(m *testing.M) {
	if role := os.Getenv(childRoleEnv); role != "" {
		os.Exit(childMain(role))
	}
	os.Exit(m.Run())
}

func childMain(role string) int {
	fn, ok := children[role]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown child role %q\n", role)
		return 2
	}
	arg, _ := strconv.ParseInt(os.Getenv(childArgEnv), 10, 64)
	if err := fn(os.Getenv(childPathEnv), arg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, mmapfile.ErrLocked) {
			fmt.Println("locked")
			return exitLocked
		}
		return 1
	}
	return 0
}

// childCommand returns the command that runs role on path in a new process.
func childCommand(role, path string, arg int64) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childRoleEnv+"="+role, childPathEnv+"="+path,
		childArgEnv+"="+strconv.FormatInt(arg, 10))
	return cmd
}

// runChild runs role to completion and returns its stdout and exit status.
func runChild(t *testing.T, role, path string, arg int64) (string, int) {
	t.Helper()
	cmd := childCommand(role, path, arg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out) + stderr.String(), ee.ExitCode()
	}
	require.NoError(t, err, "running child %s", role)
	return string(out), 0
}

func init() {
	// "truncate" cuts the file to arg bytes, as an unrelated program would:
	// no lock, no mapping, just ftruncate.
	children["truncate"] = func(path string, size int64) error {
		return os.Truncate(path, size)
	}
}

// mountTmpfs mounts a tmpfs of size bytes on a new directory and returns the
// directory; it skips the test when mounting is not permitted (not root, or
// no CAP_SYS_ADMIN in a container). The mount is removed at cleanup.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "full")
	require.NoError(t, os.Mkdir(dir, 0o755))
	err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+strconv.FormatInt(size, 10))
	if err != nil {
		t.Skipf("full-disk variant skipped: cannot mount a size-limited tmpfs (%v); run as root to test it", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk fills the file system of dir with a ballast file until at most
// leave bytes are free, so that the next large write runs out of space.
func fillDisk(t *testing.T, dir string, leave int64) {
	t.Helper()
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &st))
	free := int64(st.Bavail) * st.Bsize
	if free <= leave {
		return
	}
	f, err := os.Create(filepath.Join(dir, "ballast"))
	require.NoError(t, err)
	defer f.Close()
	_, err = io.CopyN(f, zeroReader{}, free-leave)
	require.NoError(t, err)
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// snapshot is a file's bytes, or absent.
type snapshot struct {
	exists bool
	data   []byte
}

func snap(t *testing.T, path string) snapshot {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return snapshot{}
	}
	require.NoError(t, err)
	return snapshot{exists: true, data: b}
}

// requireUnchanged checks that path is byte-identical to before (or still
// absent).
func requireUnchanged(t *testing.T, path string, before snapshot) {
	t.Helper()
	after := snap(t, path)
	require.Equal(t, before.exists, after.exists, "%s: existence changed", path)
	require.True(t, bytes.Equal(before.data, after.data), "%s: %d bytes before, %d after, contents differ", path, len(before.data), len(after.data))
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}
