package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// readmeBlock returns the body of the nth (from 0) fenced block of the
// given language in the README's section that starts with heading.
func readmeBlock(t *testing.T, heading, lang string, nth int) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "README has no section %q", heading)
	s = s[i+1:]
	if j := strings.Index(s[len(heading):], "\n## "); j >= 0 {
		s = s[:len(heading)+j]
	}
	m := regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(s, -1)
	require.Greater(t, len(m), nth, "README section %q has no %s block %d", heading, lang, nth)
	return m[nth][1]
}

// TestBeyondOneMachine does what the README's "Beyond one machine" says,
// with its own commands and script: an ABF file of 32 MiB (Julia's
// column-major Float64 matrix) converted to a version 2 store, processed
// by a dask.distributed LocalCluster of two worker processes (sum, max,
// column sums) and opened by xarray by dimension name. Every result
// equals the source's.
func TestBeyondOneMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dask cluster")
	}
	modules := []string{"numpy", "zarr", "dask", "distributed", "xarray"}
	py := oracle.Python(t, modules...)
	const heading = "## Beyond one machine: Zarr, dask and xarray"
	// The conversion's blocks follow the reference set's.
	script := readmeBlock(t, heading, "python", 1)
	commands := readmeBlock(t, heading, "sh", 2)

	dir := t.TempDir()
	sum, top, colsum := writeClusterABF(t, dir)

	// The README's commands: a version 2 store (what the Python here
	// reads), then its listing.
	ran := 0
	for _, args := range readmeCommands(commands) {
		cmd := exec.Command(mkBin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "mmapkit %s: %s", strings.Join(args, " "), out)
		if args[0] == "ls" {
			assert.Regexp(t, `(?m)^/x\s+f64\s+\[2048\]\[2048\]\s+col\s+-\s+33554432\s+chunks \[2048\]\[512\], raw$`, string(out))
		}
		ran++
	}
	require.Equal(t, 2, ran, "the README's commands: %s", commands)
	ls := mustMk(t, "ls", "--json", filepath.Join(dir, "data.zarr"))
	assert.Contains(t, ls, `"version":"2"`)
	assert.Contains(t, ls, `"order":"col"`, "the file's storage order is kept")

	var got struct {
		Workers      int       `json:"workers"`
		Chunks       int       `json:"chunks"`
		Sum          float64   `json:"sum"`
		Max          float64   `json:"max"`
		Colsum       []float64 `json:"colsum"`
		Dims         []string  `json:"dims"`
		XarrayColsum []float64 `json:"xarray_colsum"`
	}
	runScript(t, py, dir, "cluster.py", script, []string{"data.zarr"}, &got)
	t.Logf("dask LocalCluster: %d worker processes, %d chunks: sum %v (source %v), max %v (source %v); xarray dims %v",
		got.Workers, got.Chunks, got.Sum, sum, got.Max, top, got.Dims)
	assert.Equal(t, 2, got.Workers)
	assert.Equal(t, 4, got.Chunks, "one dask chunk per Zarr chunk")
	assert.Equal(t, sum, got.Sum)
	assert.Equal(t, top, got.Max)
	assert.Equal(t, colsum, got.Colsum)
	assert.Equal(t, []string{"dim_0", "dim_1"}, got.Dims)
	assert.Equal(t, colsum, got.XarrayColsum)
}

// writeClusterABF writes dir/data.abf, the README's example: x, a Julia
// Float64 matrix of 2048×2048 (32 MiB, column-major) holding
// (i·7 + j·13) mod 1000, integers, so that every sum is exact in any
// order. It returns the sum, the max and the column sums.
func writeClusterABF(t *testing.T, dir string) (sum, top float64, colsum []float64) {
	const rows, cols = 2048, 2048
	x := make([]float64, rows*cols) // column-major, as Julia stores it
	colsum = make([]float64, cols)
	for j := range cols {
		for i := range rows {
			v := float64((i*7 + j*13) % 1000)
			x[j*rows+i] = v
			sum += v
			top = math.Max(top, v)
			colsum[j] += v
		}
	}
	f, err := abf.OpenFile(filepath.Join(dir, "data.abf"), mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	require.NoError(t, err)
	require.NoError(t, abf.Write(f, "x", []int64{rows, cols}, x))
	require.NoError(t, f.Close())
	return sum, top, colsum
}

// runScript writes script to dir/name, runs it there with args and
// decodes the last line of its output, JSON, into v.
func runScript(t *testing.T, py, dir, name, script string, args []string, v any) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(script), 0o644))
	cmd := exec.Command(py, append([]string{name}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "python3 %s %s: %s", name, strings.Join(args, " "), stderr)
	last := strings.TrimSpace(string(out))
	last = last[strings.LastIndex(last, "\n")+1:]
	require.NoError(t, json.Unmarshal([]byte(last), v), "%s", out)
}

// readmeCommands returns the arguments of each mmapkit command of a
// README block, comments removed.
func readmeCommands(block string) [][]string {
	var cmds [][]string
	for _, line := range strings.Split(block, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if args := strings.Fields(line); len(args) >= 2 && args[0] == "mmapkit" {
			cmds = append(cmds, args[1:])
		}
	}
	return cmds
}
