//go:build unix

package atomicfile

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The signal tests run this test binary again with ATOMICFILE_CHILD set to
// a directory: the child starts replacing files there and waits to be
// signalled.
func TestMain(m *testing.M) {
	if dir := os.Getenv("ATOMICFILE_CHILD"); dir != "" {
		os.Exit(signalChild(dir))
	}
	os.Exit(m.Run())
}

// signalChild starts a file, a group of two and a directory replacement,
// installs the handler the package documentation shows, says "ready" and
// waits.
func signalChild(dir string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		AbortAll()
		os.Exit(128 + int(s.(syscall.Signal)))
	}()

	fail := func(err error) int { fmt.Println(err); return 1 }
	f, err := Create(filepath.Join(dir, "x"), 0)
	if err != nil {
		return fail(err)
	}
	f.WriteString("partial")
	g := NewGroup(nil)
	for _, name := range []string{"a", "b"} {
		m, err := g.Create(filepath.Join(dir, name))
		if err != nil {
			return fail(err)
		}
		m.WriteString("partial")
	}
	d, err := CreateDir(filepath.Join(dir, "s.zarr"), nil)
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(d.Path(), "zarr.json"), []byte("{}"), 0o644); err != nil {
		return fail(err)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	return 2
}

func TestSignalRemovesTemporaryFiles(t *testing.T) {
	for _, c := range []struct {
		sig      syscall.Signal
		code     int
		leftover int
	}{
		{syscall.SIGTERM, 128 + 15, 0},
		{syscall.SIGINT, 128 + 2, 0},
		{syscall.SIGKILL, -1, 4}, // cannot be handled: Leftovers finds them
	} {
		t.Run(c.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			writeOld(t, filepath.Join(dir, "x"), "old", 0o644)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "ATOMICFILE_CHILD="+dir)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(out).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "ready\n", line)
			left, err := Leftovers(dir)
			require.NoError(t, err)
			require.Len(t, left, 4, "x, a, b and s.zarr are being written")

			require.NoError(t, cmd.Process.Signal(c.sig))
			err = cmd.Wait()
			assert.Equal(t, c.code, cmd.ProcessState.ExitCode(), "%v", err)
			left, err = Leftovers(dir)
			require.NoError(t, err)
			assert.Len(t, left, c.leftover)
			for _, p := range left {
				assert.True(t, IsTemp(filepath.Base(p)), p)
			}
			requireFile(t, filepath.Join(dir, "x"), "old", 0o644)
			for _, name := range []string{"a", "b", "s.zarr"} {
				_, err := os.Lstat(filepath.Join(dir, name))
				assert.ErrorIs(t, err, os.ErrNotExist, name)
			}
		})
	}
}
