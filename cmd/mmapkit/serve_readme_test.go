package main

import (
	"bufio"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// TestBeyondOneMachineServe does what the README's "Serving files where
// they lie" shows last: mmapkit serve in the directory of the ABF file of
// 32 MiB (on a free port instead of 8080), and its serve.py, whose two
// dask worker processes sum the array through /zarr/ and whose
// reference file system reads it through /refs/ and /raw/. Every result
// equals the source's.
func TestBeyondOneMachineServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dask cluster")
	}
	modules := []string{"numpy", "fsspec", "aiohttp", "zarr", "dask", "distributed", "xarray"}
	py := oracle.Python(t, modules...)
	const heading = "## Beyond one machine: Zarr, dask and xarray"
	commands := readmeBlock(t, heading, "sh", 5)
	script := readmeBlock(t, heading, "python", 2)

	dir := t.TempDir()
	sum, _, colsum := writeClusterABF(t, dir)
	cmds := readmeCommands(commands)
	require.Len(t, cmds, 1, "the README's commands: %s", commands)
	args := slices.DeleteFunc(cmds[0], func(a string) bool { return a == "&" })
	require.Equal(t, "serve", args[0])
	args = append([]string{"serve", "--addr", "127.0.0.1:0"}, args[1:]...)
	srv := exec.Command(mkBin, args...)
	srv.Dir = dir
	stderr, err := srv.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	lines := bufio.NewScanner(stderr)
	require.True(t, lines.Scan())
	m := regexp.MustCompile(`^mmapkit: serving \. on (http://127\.0\.0\.1:\d+)/ \(read-only; /raw/, /zarr/, /refs/\)$`).FindStringSubmatch(lines.Text())
	require.NotNil(t, m, lines.Text())

	var run []string
	for _, line := range strings.Split(commands, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "python3" {
			run = f
		}
	}
	require.Equal(t, []string{"python3", "serve.py", "http://127.0.0.1:8080"}, run)
	var got struct {
		clusterSums
		RefsSum float64 `json:"refs_sum"`
	}
	runScript(t, py, dir, run[1], script, []string{m[1]}, &got)
	got.check(t, "HTTP", sum, colsum)
	assert.Equal(t, sum, got.RefsSum, "through /refs/ and /raw/")
}
