package mmapfile

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
)

func TestPopulateWrite(t *testing.T) {
	ps := os.Getpagesize()
	for _, fallback := range []bool{false, true} {
		name := map[bool]string{false: "MADV_POPULATE_WRITE", true: "touching each page"}[fallback]
		t.Run(name, func(t *testing.T) {
			if fallback {
				old := populateWriteCall
				populateWriteCall = func([]byte) error { return unix.EINVAL }
				defer func() { populateWriteCall = old }()
			}
			// An existing file keeps its bytes; a new one is writable
			// everywhere without a fault.
			p, want := writeFile(t, 64*ps+100)
			f, err := OpenFile(p, ReadWrite, nil)
			require.NoError(t, err)
			defer f.Close()
			r, err := f.Map(int64(ps)+5, int64(63*ps))
			require.NoError(t, err)
			require.NoError(t, r.PopulateWrite())
			assert.Equal(t, want[ps+5:64*ps+5], r.Bytes())
			dirty := dirtyKiB(t, r)
			assert.GreaterOrEqual(t, dirty, int64(63*ps/1024), "every page is present and dirty")

			n, err := Create(filepath.Join(t.TempDir(), "new"))
			require.NoError(t, err)
			defer n.Close()
			require.NoError(t, n.Grow(3<<20))
			nr, err := n.MapAll()
			require.NoError(t, err)
			require.NoError(t, nr.PopulateWrite())
			xs, err := View[uint64](nr, 0, 3<<17, binary.LittleEndian)
			require.NoError(t, err)
			for i := range xs {
				xs[i] = uint64(i)
			}
			require.NoError(t, n.Close())
			got, err := os.ReadFile(filepath.Join(filepath.Dir(n.Name()), "new"))
			require.NoError(t, err)
			assert.Equal(t, uint64(3<<17-1), binary.LittleEndian.Uint64(got[len(got)-8:]))

			// Pages the file no longer has are an error, not a SIGBUS.
			require.NoError(t, os.Truncate(p, int64(ps)))
			err = r.PopulateWrite()
			require.ErrorIs(t, err, ErrFault)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, p, e.File)
		})
	}
	p, _ := writeFile(t, ps)
	ro, err := Open(p)
	require.NoError(t, err)
	r, err := ro.MapAll()
	require.NoError(t, err)
	assert.ErrorIs(t, r.PopulateWrite(), ErrNotWritable)
	require.NoError(t, ro.Close())
	assert.ErrorIs(t, r.PopulateWrite(), ErrClosed)
}

// dirtyKiB sums the dirty kilobytes /proc/self/smaps reports for the
// mapping that holds r.
func dirtyKiB(t *testing.T, r *Region) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	lines := strings.Split(string(b), "\n")
	addr := unsafeslice.Addr(r.raw)
	var dirty int64
	in := false
	for _, l := range lines {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(l, "%x-%x", &lo, &hi); n == 2 {
			in = addr >= lo && addr < hi
			continue
		}
		if !in {
			continue
		}
		var kb int64
		if n, _ := fmt.Sscanf(l, "Shared_Dirty: %d kB", &kb); n == 1 {
			dirty += kb
		}
		if n, _ := fmt.Sscanf(l, "Private_Dirty: %d kB", &kb); n == 1 {
			dirty += kb
		}
	}
	return dirty
}
