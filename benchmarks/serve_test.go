package benchmarks

import (
	"context"
	"os"
	"os/exec"
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
