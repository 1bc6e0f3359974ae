package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bench runs the suite of package benchmarks; --json prints its document.
func TestBenchWiredIn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the throughput suite (about 10 s)")
	}
	r := mk(t, "bench", "--quick", "--size", "1MiB", "--json", "--quiet", "--dir", t.TempDir())
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr, "--quiet silences progress")
	var doc struct {
		Machine  map[string]any   `json:"machine"`
		Ceilings map[string]any   `json:"ceilings"`
		Figures  []map[string]any `json:"figures"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.Equal(t, float64(1<<20), doc.Machine["size_bytes"])
	for _, k := range []string{"ram_scan", "mmap_scan", "read", "cold_read", "memmove"} {
		assert.Contains(t, doc.Ceilings, k)
	}
	require.NotEmpty(t, doc.Figures)
	for _, f := range doc.Figures {
		assert.NotEmpty(t, f["name"])
	}
	r = mk(t, "bench", "--size", "12x")
	assert.Equal(t, 2, r.code)
}

// bench FILE measures the user's file: one record per --name, the
// figures in --json, a report with a chart, and a table ending in advice.
func TestBenchFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npz")
	z, err := npy.CreateZip(path, nil)
	require.NoError(t, err)
	xs := make([]float64, 4096)
	for i := range xs {
		xs[i] = float64(i)
	}
	require.NoError(t, npy.AddArray(z, "big", []int64{64, 64}, layout.RowMajor, xs))
	require.NoError(t, npy.AddArray(z, "small", []int64{16}, layout.RowMajor, xs[:16]))
	require.NoError(t, z.Close())

	r := mk(t, "bench", "--time", "20s", "--name", "small", "--json", "--quiet", path)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stderr, "--quiet silences progress")
	var doc struct {
		Records []struct {
			Name    string           `json:"name"`
			Bytes   int64            `json:"bytes"`
			Figures []map[string]any `json:"figures"`
			Advice  string           `json:"advice"`
		} `json:"records"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.Len(t, doc.Records, 1)
	assert.Equal(t, "small", doc.Records[0].Name)
	assert.Equal(t, int64(128), doc.Records[0].Bytes)
	assert.NotEmpty(t, doc.Records[0].Figures)

	report := filepath.Join(dir, "report")
	r = mk(t, "bench", "--time", "20s", "--report", report, path)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "bench: x.npz: big: view scan, warm")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	assert.Regexp(t, `^x\.npz: big \(f64\[64\]\[64\], 32 KiB\): .* is fastest, `, lines[len(lines)-2])
	assert.Regexp(t, `^x\.npz: small \(f64\[16\], 128 B\): .* is fastest, `, lines[len(lines)-1])
	md, err := os.ReadFile(filepath.Join(report, "files.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "![big](record-1.png)")
	png, err := os.ReadFile(filepath.Join(report, "record-2.png"))
	require.NoError(t, err)
	assert.Equal(t, "\x89PNG", string(png[:4]))

	for _, args := range [][]string{
		{"bench", "--name", "big"},
		{"bench", "--quick", path},
		{"bench", "--name", "nosuch", path},
	} {
		r = mk(t, args...)
		assert.NotEqual(t, 0, r.code, "%q", args)
	}
}
