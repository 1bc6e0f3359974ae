package main

import (
	"encoding/json"
	"testing"

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
