//go:build linux

package reliability

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// longRun reports whether the long variants were asked for (MMAPKIT_LONG=1).
func longRun() bool { return os.Getenv("MMAPKIT_LONG") == "1" }

// crashRounds is the number of kill rounds per format: 100 with
// MMAPKIT_LONG=1, else a few so that CI stays fast.
func crashRounds() int {
	if longRun() {
		return 100
	}
	return 5
}

// newRand returns a generator seeded from MMAPKIT_CRASH_SEED or the clock;
// the seed is logged so that a failing run can be repeated.
func newRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MMAPKIT_CRASH_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "MMAPKIT_CRASH_SEED")
	}
	t.Logf("MMAPKIT_CRASH_SEED=%d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// syncs reports whether the writers of a crash round sync after every
// record: in even rounds. A SIGKILL does not lose what reached the page
// cache, so odd rounds skip the fsync, which makes the writes themselves
// most of the child's time and lets more kills land inside a record.
func syncs(round int) bool { return round%2 == 0 }

// liveChild is a child process whose stdout lines arrive on lines, which is
// closed at EOF.
type liveChild struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr bytes.Buffer
}

func startChild(t *testing.T, role, path string, arg int64) *liveChild {
	t.Helper()
	c := &liveChild{cmd: childCommand(role, path, arg), lines: make(chan string, 1<<16)}
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start())
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	return c
}

// killAfter waits until the child has reported n completed steps, waits d
// more, kills it with SIGKILL and returns every line it printed, including
// those printed between the n-th and the kill. A child that exits by itself
// fails the test.
func (c *liveChild) killAfter(t *testing.T, n int, d time.Duration) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		line, ok := <-c.lines
		if !ok {
			err := c.cmd.Wait()
			t.Fatalf("child exited before it was killed (%v): %s", err, c.stderr.String())
		}
		got = append(got, line)
	}
	time.Sleep(d)
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	for line := range c.lines {
		got = append(got, line)
	}
	err := c.cmd.Wait()
	var ws syscall.WaitStatus
	if c.cmd.ProcessState != nil {
		ws, _ = c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	}
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL (%v): %s", err, c.stderr.String())
	}
	return got
}

// killPlan picks how many completed steps to wait for and how long to wait
// after them: often none, so that kills also land during the child's start
// and its first open.
func killPlan(rng *rand.Rand) (int, time.Duration) {
	n := rng.IntN(5)
	if n == 0 {
		return 0, time.Duration(rng.IntN(60_000)) * time.Microsecond
	}
	return n, time.Duration(rng.IntN(3_000)) * time.Microsecond
}
