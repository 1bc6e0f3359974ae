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
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		out := filepath.Join(dir, "out.fut")
		cmd := exec.Command(mkBin, "--quiet", "convert", "--text", in, out)
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
		assert.Empty(t, l, "%v left temporary files", sig)
		assert.NoFileExists(t, out)
	}
}
