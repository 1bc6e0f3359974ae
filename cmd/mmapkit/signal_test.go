//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SIGTERM in the middle of a conversion: the process exits 143, the
// target is as it was (here: absent) and no temporary file is left.
func TestInterruptedConvertLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large file")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "big.in")
	b := mustMk(t, "dataset", "-b", "-g", "[8000000]f64")
	require.NoError(t, os.WriteFile(in, []byte(b), 0o644))
	for _, c := range []struct {
		sig  syscall.Signal
		out  string
		args []string
	}{
		{syscall.SIGTERM, "out.fut", []string{"--text"}},
		{syscall.SIGINT, "out.fut", []string{"--text"}},
		// A store is a temporary directory until it is complete.
		{syscall.SIGTERM, "out.zarr", []string{"--compress", "zstd:19"}},
		{syscall.SIGINT, "out.zarr", []string{"--compress", "zstd:19"}},
	} {
		sig := c.sig
		out := filepath.Join(dir, c.out)
		cmd := exec.Command(mkBin, append(append([]string{"--quiet", "convert"}, c.args...), in, out)...)
		require.NoError(t, cmd.Start())
		// Wait until the temporary file exists, then interrupt.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if l, _ := atomicfile.Leftovers(dir); len(l) > 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(sig))
		err := cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "the conversion ended before the signal")
		assert.Equal(t, 128+int(sig), ee.ExitCode())
		l, err := atomicfile.Leftovers(dir)
		require.NoError(t, err)
		assert.Empty(t, l, "%v of a conversion to %s left temporary files", sig, c.out)
		assert.NoFileExists(t, out)
		assert.NoDirExists(t, out)
	}
}
