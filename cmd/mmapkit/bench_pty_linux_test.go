package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
)

// bench FILE shows its progress on a terminal as one line, redrawn in
// place — the record, the step, and the time spent of --time — and
// removes it before the table; on a pipe it writes a line per step.
func TestBenchFilesProgressOnTerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, npy.Save(path, []int64{4096}, layout.RowMajor, make([]float64, 4096)))

	ctl, tty := openPTY(t)
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&screen, ctl); close(done) }()
	cmd := exec.Command(mkBin, "bench", "--time", "2s", path)
	cmd.Env = append(os.Environ(), "MMAPKIT_PROGRESS_AFTER=0")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	require.NoError(t, cmd.Run())
	tty.Close()
	<-done
	s := screen.String()
	assert.Regexp(t, `\rbench 1/1 x\.npy: 0: view scan, warm +\d+% \[=* *\] \ds of 2s`, s)
	assert.NotContains(t, s, "\n", "one line, redrawn in place")
	assert.True(t, strings.HasSuffix(s, "\r"), "the line is blanked at the end: %q", s[max(len(s)-40, 0):])
	assert.Contains(t, stdout.String(), "x.npy: 0 (f64[4096], 32 KiB): ")

	c := exec.Command(mkBin, "bench", "--time", "2s", path)
	c.Env = append(os.Environ(), "MMAPKIT_PROGRESS_AFTER=0")
	var stderr bytes.Buffer
	c.Stdout, c.Stderr = io.Discard, &stderr
	require.NoError(t, c.Run())
	assert.Contains(t, stderr.String(), "bench: x.npy: 0: view scan, warm\nbench: x.npy: 0: view scan, cold\n", "a line per step on a pipe")
	assert.NotContains(t, stderr.String(), "\r")
}
