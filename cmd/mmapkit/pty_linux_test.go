package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
)

// openPTY opens a pseudo-terminal: the controlling side, whose reads
// give what is written to the terminal, and the terminal itself.
func openPTY(t *testing.T) (ctl, tty *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ctl = os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { ctl.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	return ctl, tty
}

// onTerminal runs mmapkit with its standard output on a terminal and
// returns what reached the terminal, its standard error and exit status.
func onTerminal(t *testing.T, args ...string) (screen, stderr string, code int) {
	t.Helper()
	ctl, tty := openPTY(t)
	var screenBuf bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&screenBuf, ctl); close(done) }()
	cmd := exec.Command(mkBin, args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = tty, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	tty.Close()
	<-done // the controlling side reads EIO once the terminal is closed
	return screenBuf.String(), errb.String(), code
}

// Binary output is not written to a terminal unless forced; text is, and
// binary goes to a pipe as before.
func TestBinaryNotToTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, npy.Save(path, []int64{3}, layout.RowMajor, []float64{1, 2, 3}))

	screen, stderr, code := onTerminal(t, "convert", "--to", "futhark", path, "-")
	assert.Equal(t, 1, code)
	assert.Empty(t, screen, "nothing reached the terminal")
	assert.Contains(t, stderr, "refusing to write binary futhark data to a terminal; redirect it to a file or a pipe, or write text with --text (--force writes it anyway)")

	screen, stderr, code = onTerminal(t, "convert", "--to", "futhark", "--text", path, "-")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, screen, "[1.0f64, 2.0f64, 3.0f64]")

	screen, stderr, code = onTerminal(t, "convert", "--to", "csv", path, "-")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, screen, "0\r\n1\r\n2\r\n3\r\n", "CSV is text")

	screen, stderr, code = onTerminal(t, "convert", "--force", "--to", "futhark", path, "-")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, screen, " f64", "--force writes the binary header")

	r := mk(t, "convert", "--to", "futhark", path, "-")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, byte('b'), r.stdout[0], "a pipe gets binary")
}

// A conversion shows its progress on a terminal — bytes written of the
// records' bytes, rate and time left — and removes it when done; on a
// pipe it shows nothing. MMAPKIT_PROGRESS_AFTER=0 shows it from the
// start, so that the test need not run a conversion of a second.
func TestConvertProgressOnTerminalOnly(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "big.npy")
	vals := make([]float64, 32<<20) // 256 MiB
	require.NoError(t, npy.Save(in, []int64{int64(len(vals))}, layout.RowMajor, vals))

	ctl, tty := openPTY(t)
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&screen, ctl); close(done) }()
	cmd := exec.Command(mkBin, "convert", in, filepath.Join(dir, "big.zarr"))
	cmd.Env = append(os.Environ(), "MMAPKIT_PROGRESS_AFTER=0")
	cmd.Stderr = tty
	require.NoError(t, cmd.Run())
	tty.Close()
	<-done
	assert.Regexp(t, `convert \S+big\.zarr +\d+% \[=* *\] [0-9.]+ [KMG]?i?B / 256 MiB, [0-9.]+ [KMG]?i?B/s`, screen.String())
	assert.NotContains(t, screen.String(), "TiB/s", "no rate from nothing")

	c := exec.Command(mkBin, "convert", in, filepath.Join(dir, "again.zarr"))
	c.Env = append(os.Environ(), "MMAPKIT_PROGRESS_AFTER=0")
	out, err := c.CombinedOutput()
	require.NoError(t, err)
	assert.Empty(t, string(out), "nothing on a pipe")
}

// onTerminalStderr runs mmapkit with its standard error on a terminal and
// its standard output in a file, progress lines due at once; it returns
// what reached the terminal and what reached the file.
func onTerminalStderr(t *testing.T, args ...string) (screen, stdout string) {
	t.Helper()
	ctl, tty := openPTY(t)
	var screenBuf bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&screenBuf, ctl); close(done) }()
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	require.NoError(t, err)
	defer out.Close()
	cmd := exec.Command(mkBin, args...)
	cmd.Env = append(os.Environ(), "MMAPKIT_PROGRESS_AFTER=0")
	cmd.Stdout, cmd.Stderr = out, tty
	require.NoError(t, cmd.Run())
	tty.Close()
	<-done
	b, err := os.ReadFile(out.Name())
	require.NoError(t, err)
	return screenBuf.String(), string(b)
}

// ls of many files counts the files done, and dataset the bytes it has
// written, on a terminal; their output is what it is without the line,
// and on a pipe there is no line.
func TestLsAndDatasetProgressOnTerminalOnly(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("f%d.npy", i))
		require.NoError(t, npy.Save(p, []int64{2}, layout.RowMajor, []float64{1, 2}))
		files = append(files, p)
	}
	for _, c := range []struct {
		args []string
		line string
	}{
		{append([]string{"ls"}, files...), `ls +\d+% \[=* *\] \d files / 3 files, \d+ files/s, \d+s elapsed`},
		{[]string{"dataset", "-b", "-s", "3", "-g", "[100000]f32"}, `dataset [0-9.]+ [KM]?i?B, [0-9.]+ [KMG]?i?B/s, \d+s elapsed`},
	} {
		screen, out := onTerminalStderr(t, c.args...)
		assert.Regexp(t, c.line, screen, c.args[0])
		r := mk(t, c.args...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, r.stdout, out, "%s: the output is the same with the line", c.args[0])
		assert.Empty(t, r.stderr, "%s: nothing on a pipe", c.args[0])
	}
}
