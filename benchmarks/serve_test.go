package benchmarks

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The server figures run nginx and mmapkit's server on the same file and
// take mmapkit's rates against nginx's measured beside them; nothing of
// either is left running or on disk.
func TestServeFigures(t *testing.T) {
	if _, err := exec.LookPath("nginx"); err != nil {
		if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (Debian: apt-get install nginx-light)")
		}
	}
	o := tinyOptions(t)
	o.Size = 4 << 20
	o.Only = []string{"serve_", "nginx_"}
	res, err := Measure(context.Background(), o)
	require.NoError(t, err)
	for _, name := range []string{"serve_raw_range", "serve_zarr_chunk", "nginx_raw_range"} {
		f := res.figure(name)
		require.NotNil(t, f.Value, "%s: %s", name, f.Note)
		assert.Greater(t, *f.Value, 0.0, name)
		require.NotNil(t, f.Ratio, "%s: a ratio against the other server beside it", name)
		require.NotNil(t, f.CeilingValue, name)
		assert.Equal(t, int64(4<<20), f.Bytes, "%s: four rows of 1 MiB", name)
	}
	raw := res.figure("serve_raw_range")
	assert.InDelta(t, *raw.Value / *raw.CeilingValue, *raw.Ratio, 1e-9)
	entries, err := os.ReadDir(o.Dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "the run's files are gone")
}

// The dask figures come from one run of a 2-worker cluster reading the
// .npy through its reference set and the store converted from it: both
// sums checked, the conversion's time said beside.
func TestDaskFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dask cluster")
	}
	o := tinyOptions(t)
	o.Only = []string{"dask_"}
	res, err := Measure(context.Background(), o)
	require.NoError(t, err)
	refs, store := res.figure("dask_refs_sum"), res.figure("dask_zarr_sum")
	if refs.Value == nil && (strings.Contains(refs.Note, "does not import") || strings.Contains(refs.Note, "no python3")) {
		t.Skip(refs.Note)
	}
	require.NotNil(t, refs.Value, refs.Note)
	require.NotNil(t, store.Value, store.Note)
	assert.Equal(t, int64(1<<20), refs.Bytes)
	assert.Regexp(t, `^the reference set took [0-9.]+ ms to make \(metadata only\), the store [0-9.]+ s to convert$`, refs.Note)
	require.NotNil(t, refs.Ratio)
	assert.InDelta(t, *refs.Value / *store.Value, *refs.Ratio, 1e-9)
}
