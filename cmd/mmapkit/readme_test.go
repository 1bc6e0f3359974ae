package main

import (
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/npy"
)

// readmeSection returns the README's section that starts with heading, up
// to the next heading of the same or a higher level outside a fenced block.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	level := strings.Index(heading, " ")
	var out []string
	in, fenced := false, false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			if line == heading {
				in = true
				continue
			}
			if l := strings.Index(line, " "); in && l > 0 && l <= level && strings.Trim(line[:l], "#") == "" {
				break
			}
		}
		if in {
			out = append(out, line)
		}
	}
	require.NotEmpty(t, out, "README has no section %q", heading)
	return strings.Join(out, "\n")
}

// fencedBlocks returns the bodies of the section's fenced blocks of lang,
// in order.
func fencedBlocks(section, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestReadmeGoPrograms builds every Go program of the README's "A short
// example" in a module of its own, made by the README's recipe for using
// mmapkit from another module (go mod init, go mod edit -require
// -replace, go mod tidy), and runs each, in order, beside the files the
// README says they read: data.abf (x, a 1000×1000 column-major f64
// matrix), x.npy and data.bin.
func TestReadmeGoPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	programs := fencedBlocks(readmeSection(t, "## A short example"), "go")
	require.Len(t, programs, 3, "the README's Go programs")
	recipe := fencedBlocks(readmeSection(t, "### Using mmapkit from another module"), "sh")
	require.Len(t, recipe, 2, "the README's install blocks: the command, then the library")

	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	work := t.TempDir()
	// The recipe names the clone ../mmapkit, beside the module it makes.
	require.NoError(t, os.Symlink(repo, filepath.Join(work, "mmapkit")))

	// The files the programs read.
	const n = 1000
	x := make([]float64, n*n)
	for i := range x {
		x[i] = float64(i % 997)
	}
	prog := filepath.Join(work, "myprog")
	require.NoError(t, os.MkdirAll(prog, 0o755))
	f, err := abf.OpenFile(filepath.Join(prog, "data.abf"), mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	require.NoError(t, err)
	require.NoError(t, abf.Write(f, "x", []int64{n, n}, x))
	require.NoError(t, f.Close())
	require.NoError(t, npy.Save(filepath.Join(prog, "x.npy"), []int64{4}, layout.RowMajor, []float64{1, 2, 3, 4.5}))
	bin := make([]byte, 4096+8<<20)
	binary.LittleEndian.PutUint64(bin[4096:], math.Float64bits(2.5))
	require.NoError(t, os.WriteFile(filepath.Join(prog, "data.bin"), bin, 0o644))

	// The library recipe, line by line in one shell, with each program as
	// main.go where the recipe says to write it.
	var script []string
	for _, line := range strings.Split(recipe[1], "\n") {
		switch {
		case strings.HasPrefix(line, "mkdir myprog"):
			line = strings.Replace(line, "mkdir myprog", "mkdir -p myprog", 1) // made above, with its files
		case strings.HasPrefix(line, "# write main.go"):
			line = `cp "$MAIN" main.go`
		case strings.HasPrefix(line, "go run ."):
			continue // each program runs below
		}
		script = append(script, line)
	}
	main0 := filepath.Join(work, "main0.go")
	require.NoError(t, os.WriteFile(main0, []byte(programs[0]), 0o644))
	sh := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
	sh.Dir = work
	sh.Env = append(os.Environ(), "MAIN="+main0, "GOWORK=off")
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "the README's recipe:\n%s\n%s", strings.Join(script, "\n"), out)

	want := []string{
		"x f64 [1000 1000] col\n1000000 values viewed in place\nwrote data.npy, data.zarr and small.zarr\n",
		"sum of x.npy: 10.5\n/x of data.h5 holds 1000000 values\nchunk (0, 0) of data.zarr holds 1000000 values\n",
		"1048576 values, the first 2.5\n",
	}
	for i, p := range programs {
		require.NoError(t, os.WriteFile(filepath.Join(prog, "main.go"), []byte(p), 0o644))
		tidy := exec.Command("go", "mod", "tidy")
		tidy.Dir, tidy.Env = prog, append(os.Environ(), "GOWORK=off")
		out, err := tidy.CombinedOutput()
		require.NoError(t, err, "program %d: go mod tidy: %s", i+1, out)
		run := exec.Command("go", "run", ".")
		run.Dir, run.Env = prog, append(os.Environ(), "GOWORK=off")
		out, err = run.CombinedOutput()
		require.NoError(t, err, "program %d of the README:\n%s\n%s", i+1, p, out)
		assert.Equal(t, want[i], string(out), "program %d", i+1)
	}
	// The second program changed data.abf in place: Julia's x[2,3].
	g, err := abf.Open(filepath.Join(prog, "data.abf"), nil)
	require.NoError(t, err)
	defer g.Close()
	got, err := abf.Read[float64](g, "x")
	require.NoError(t, err)
	assert.Equal(t, 42.0, got[2*n+1])

	// The command: go install from the clone, then --version.
	gobin := t.TempDir()
	for _, line := range strings.Split(recipe[0], "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "git clone") {
			continue
		}
		args := strings.Fields(line)
		cmd := exec.Command(args[0], args[1:]...)
		if args[0] == "mmapkit" {
			cmd = exec.Command(filepath.Join(gobin, "mmapkit"), args[1:]...)
		}
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOWORK=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", line, out)
		if args[0] == "mmapkit" {
			assert.Regexp(t, `^mmapkit \S.*, go1\.\d+`, string(out))
		}
	}
}

func TestVersion(t *testing.T) {
	r := mk(t, "--version")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^mmapkit (v\S+|devel( [0-9a-f]{12}( of \S+)?(, modified)?)?), go1\.\d+`, r.stdout)

	for _, c := range []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3, go1.26.8"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "devel, go1.26.8"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-27T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}, "devel 0123456789ab of 2026-11-27T10:00:00Z, modified, go1.26.8"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261127100000-0123456789ab+dirty"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"},
		}}, "devel 0123456789ab, modified, go1.26.8"},
	} {
		assert.Equal(t, c.want, versionOf(&c.info))
	}
}
