//go:build linux

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// catPeakRSS runs cat on a file, discarding the output, and returns the
// child's peak resident set in bytes (mapped pages included).
func catPeakRSS(t *testing.T, args ...string) int64 {
	t.Helper()
	cmd := exec.Command(mkBin, append([]string{"cat"}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	n, err := io.Copy(io.Discard, out)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	require.Positive(t, n)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(t, ok)
	return ru.Maxrss * 1024
}

// cat streams: a file of 128 MiB prints with a resident set far below its
// size, mapped pages included, for a column-major ABF matrix (strided
// reads) and a Futhark binary value (sequential reads through futhark's
// encoder).
func TestCatStreamsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 128 MiB files")
	}
	const limit = 64 << 20
	dir := t.TempDir()

	// Futhark: one [2048][8192]u64 binary value, a sparse file of 128 MiB.
	// The files are made without allocating their size in this process:
	// a child's peak RSS (ru_maxrss) starts from the parent's at fork.
	futPath := filepath.Join(dir, "big.in")
	f, err := os.Create(futPath)
	require.NoError(t, err)
	hdr := []byte{'b', 2, 2, ' ', 'u', '6', '4', 0, 8, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0}
	_, err = f.Write(hdr)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(int64(len(hdr))+128<<20))
	require.NoError(t, f.Close())
	// ABF: the same as Julia's Array{UInt64,2}, column-major.
	abfPath := filepath.Join(dir, "big.abf")
	mustMk(t, "convert", futPath, abfPath)
	debug.FreeOSMemory()

	rss := catPeakRSS(t, abfPath)
	t.Logf("cat of a 128 MiB column-major ABF matrix: peak RSS %.1f MiB", float64(rss)/(1<<20))
	assert.Less(t, rss, int64(limit))
	rss = catPeakRSS(t, futPath)
	t.Logf("cat of a 128 MiB Futhark binary value: peak RSS %.1f MiB", float64(rss)/(1<<20))
	assert.Less(t, rss, int64(limit))
}
