//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rssProbeEnv, when set, makes the test binary run the command in its
// arguments and write the command's peak resident set (KiB) to the file
// the variable names. The extra process is what makes the figure the
// command's own: Go starts children with vfork, so a child's ru_maxrss
// starts from the peak of the process that started it — for a test
// process under -race, tens of MiB that the command never used. The probe
// is a fresh process, small at the moment it starts the command.
const rssProbeEnv = "MMAPKIT_TEST_RSS_PROBE"

func init() {
	if out := os.Getenv(rssProbeEnv); out != "" {
		os.Exit(rssProbe(out, os.Args[1:]))
	}
}

// rssProbe is the test binary's whole work when started as a probe.
func rssProbe(out string, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "rss probe: no command")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "rss probe:", err)
		return 2
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 2
	}
	if err := os.WriteFile(out, []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "rss probe:", err)
		return 2
	}
	return cmd.ProcessState.ExitCode()
}

// peakRSS returns a finished process's peak resident set in KiB (which,
// for a child that Go started, begins at its parent's peak: see
// rssProbeEnv).
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}

// peakRSSOf runs mmapkit with args, discarding its output (which must not
// be empty, but for convert's), and returns the command's peak resident set in bytes (mapped
// pages included), measured by a probe process so that the test process's
// own size does not count.
func peakRSSOf(t *testing.T, args ...string) int64 {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	report := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(exe, append([]string{mkBin}, args...)...)
	cmd.Env = append(os.Environ(), rssProbeEnv+"="+report)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	n, err := io.Copy(io.Discard, out)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "mmapkit %v: %s", args, stderr.String())
	if args[0] != "convert" { // which prints nothing
		require.Positive(t, n)
	}
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	kib, err := strconv.ParseInt(string(b), 10, 64)
	require.NoError(t, err)
	return kib * 1024
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

	rss := peakRSSOf(t, "cat", abfPath)
	t.Logf("cat of a 128 MiB column-major ABF matrix: peak RSS %.1f MiB", float64(rss)/(1<<20))
	assert.Less(t, rss, int64(limit))
	rss = peakRSSOf(t, "cat", futPath)
	t.Logf("cat of a 128 MiB Futhark binary value: peak RSS %.1f MiB", float64(rss)/(1<<20))
	assert.Less(t, rss, int64(limit))
}

// ls streams: a Futhark file of a million scalars (8 MB) lists, as a table
// and as JSON, in a resident set under 100 MiB, mapped pages included
// (the file's index is 32 MB; the list of records ls once built, and the
// table it buffered, took over 600 MiB). cat prints it in as little, and
// in about a second (it allocated a 64 KiB buffer and asked stderr whether
// it was a terminal for each record: 16 s).
func TestManyRecordsInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("lists a million records")
	}
	const n, limit = 1_000_000, 100 << 20
	p := filepath.Join(t.TempDir(), "m.in")
	f, err := os.Create(p)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	for range n {
		w.WriteString("b\x02\x00  i8\x01")
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	for _, args := range [][]string{{"ls", p}, {"ls", "--json", p}, {"cat", p}} {
		rss := peakRSSOf(t, args...)
		t.Logf("mmapkit %s of %d scalars: peak RSS %.1f MiB", strings.Join(args[:len(args)-1], " "), n, float64(rss)/(1<<20))
		assert.Less(t, rss, int64(limit), "mmapkit %v", args[:len(args)-1])
	}
	// convert holds the index of the file it reads and that of the file
	// it writes, and takes the records one at a time (Futhark to ABF and
	// back: 312 and 319 MiB, when the records were listed).
	abfPath := filepath.Join(t.TempDir(), "m.abf")
	back := filepath.Join(t.TempDir(), "m.in")
	for _, args := range [][]string{{"convert", p, abfPath}, {"convert", abfPath, back}} {
		rss := peakRSSOf(t, args...)
		t.Logf("mmapkit convert %s to %s of %d scalars: peak RSS %.1f MiB", filepath.Ext(args[1]), filepath.Ext(args[2]), n, float64(rss)/(1<<20))
		assert.Less(t, rss, int64(2*limit), "mmapkit %v", args)
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err)
	got, err := os.ReadFile(back)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "the scalars came back changed")
	out := mustMk(t, "ls", p)
	assert.True(t, strings.HasPrefix(out, p+": futhark, version 2, 1000000 record(s)\nNAME    TYPE  SHAPE   ORDER  OFFSET   BYTES\n0       i8    scalar  row    7        1\n"), out[:200])
	assert.True(t, strings.HasSuffix(out, "\n999999  i8    scalar  row    7999999  1\n"))
}

// A table of very many columns prints one batch of rows at a time without
// a list of its columns: cat of a DAPHNE frame of 250,000 columns (1 MB of
// values, a 9 MB .meta) stays under 100 MiB resident (157 MiB before, when
// cat selected the columns by name and the CSV encoder listed them; a frame
// of a million columns took 75 s and 580 MiB, mapping its rows once for
// each column).
func TestWideTableInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("prints a table of 250,000 columns")
	}
	const n, limit = 250_000, 100 << 20
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "wide.csv")
	var b strings.Builder
	for r := -1; r < 3; r++ {
		for c := range n {
			if c > 0 {
				b.WriteByte(',')
			}
			if r < 0 {
				fmt.Fprintf(&b, "c%d", c)
			} else {
				b.WriteString(strconv.Itoa((c + r) % 100))
			}
		}
		b.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(csvPath, []byte(b.String()), 0o644))
	frame := filepath.Join(dir, "wide.dbdf")
	mustMk(t, "convert", csvPath, frame)

	rss := peakRSSOf(t, "cat", frame)
	t.Logf("cat of a frame of %d columns: peak RSS %.1f MiB", n, float64(rss)/(1<<20))
	assert.Less(t, rss, int64(limit))
	assert.Equal(t, b.String(), mustMk(t, "cat", frame))
}

// A wide CSV converts to one .npz member per column in time and memory
// linear in its cells: each column (numbers, their nulls and text) is
// read on its own from its rows' marks. 4,000 columns took 100 MiB and
// minutes when each column was found by scanning the whole table.
func TestWideCSVToNPZ(t *testing.T) {
	const n, rows, limit = 4000, 3, 48 << 20
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "wide.csv")
	var b strings.Builder
	for r := -1; r < rows; r++ {
		for c := range n {
			if c > 0 {
				b.WriteByte(',')
			}
			switch {
			case r < 0:
				fmt.Fprintf(&b, "c%d", c)
			case c%2 == 0 && r == 1 && c%4 == 0:
				// null: the column gets a mask member
			case c%2 == 0:
				fmt.Fprintf(&b, "%d", c*rows+r)
			default:
				fmt.Fprintf(&b, "\"t,%d\"", c*rows+r)
			}
		}
		b.WriteByte('\n')
	}
	require.NoError(t, os.WriteFile(csvPath, []byte(b.String()), 0o644))
	npz := filepath.Join(dir, "wide.npz")
	rss := peakRSSOf(t, "convert", csvPath, npz)
	t.Logf("convert of a CSV of %d columns to npz: peak RSS %.1f MiB", n, float64(rss)/(1<<20))
	assert.Less(t, rss, int64(limit))
	for _, c := range []int{0, 1, 64, 129, n - 2, n - 1} {
		var want []string
		for r := range rows {
			if c%2 == 0 && r == 1 && c%4 == 0 {
				want = append(want, "0i64")
			} else if c%2 == 0 {
				want = append(want, strconv.Itoa(c*rows+r)+"i64")
			} else {
				want = append(want, fmt.Sprintf("%q", fmt.Sprintf("t,%d", c*rows+r)))
			}
		}
		got := mustMk(t, "cat", "--name", fmt.Sprintf("c%d", c), npz)
		assert.Contains(t, got, strings.Join(want, ", "), "column %d", c)
		if c%4 == 0 {
			assert.Equal(t, "[false, true, false]\n", mustMk(t, "cat", "--name", fmt.Sprintf("c%d.mask", c), npz), "column %d", c)
		}
	}
}
