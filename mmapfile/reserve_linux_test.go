package mmapfile

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
)

// mapping describes the line of /proc/self/maps that starts at addr: its
// permissions and the file it maps ("" for anonymous memory), or ok false.
func mapping(t *testing.T, addr uintptr) (perms, file string, ok bool) {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		var lo, hi uintptr
		if _, err := fmt.Sscanf(fields[0], "%x-%x", &lo, &hi); err != nil {
			continue
		}
		if addr >= lo && addr < hi {
			if len(fields) > 5 {
				file = fields[5]
			}
			return fields[1], file, true
		}
	}
	return "", "", false
}

// setReservationLimits lowers the bounds for one test.
func setReservationLimits(t *testing.T, n int, bytes int64) {
	rs := &reservations
	rs.Lock()
	oldN, oldB := rs.maxN, rs.maxBytes
	rs.maxN, rs.maxBytes = n, bytes
	rs.Unlock()
	t.Cleanup(func() {
		rs.Lock()
		rs.maxN, rs.maxBytes = oldN, oldB
		rs.Unlock()
	})
}

func TestClosedMappingBecomesAReservation(t *testing.T) {
	ps := os.Getpagesize()
	p, _ := writeFile(t, 4*ps)
	for _, how := range []string{"close", "unmap"} {
		t.Run(how, func(t *testing.T) {
			f, err := OpenFile(p, ReadWrite, nil)
			require.NoError(t, err)
			r, err := f.MapAll()
			require.NoError(t, err)
			addr := unsafeslice.Addr(r.Bytes())
			perms, file, ok := mapping(t, addr)
			require.True(t, ok)
			assert.Equal(t, "rw-s", perms)
			assert.Equal(t, p, file)

			if how == "close" {
				require.NoError(t, f.Close())
			} else {
				require.NoError(t, r.Unmap())
				defer f.Close()
			}
			perms, file, ok = mapping(t, addr)
			require.True(t, ok, "the range stays taken")
			assert.Equal(t, "---p", perms, "no access")
			assert.Equal(t, "", file, "anonymous: the file is no longer mapped")
		})
	}
}

func TestReservationsAreBoundedOldestFirst(t *testing.T) {
	ps := os.Getpagesize()
	p, _ := writeFile(t, 8*ps)
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	// Count and byte bounds, each tried with the other out of the way.
	for _, c := range []struct {
		name     string
		n        int
		bytes    int64
		sizes    []int // pages per region, mapped and unmapped in order
		released []int // which of them are released at the end
	}{
		{"count", 2, 1 << 40, []int{1, 1, 1, 1}, []int{0, 1}},
		{"bytes", 100, int64(5 * ps), []int{2, 2, 2, 1}, []int{0}},
		{"larger than the bound alone", 100, int64(3 * ps), []int{1, 4}, []int{0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			setReservationLimits(t, c.n, c.bytes)
			var addrs []uintptr
			for _, pages := range c.sizes {
				r, err := f.Map(0, int64(pages*ps))
				require.NoError(t, err)
				addrs = append(addrs, unsafeslice.Addr(r.Bytes()))
				require.NoError(t, r.Unmap())
			}
			reservations.Lock()
			var queued []uintptr
			for _, m := range reservations.q {
				queued = append(queued, unsafeslice.Addr(m))
			}
			n, bytes := len(reservations.q), reservations.bytes
			reservations.Unlock()
			assert.LessOrEqual(t, n, c.n)
			assert.LessOrEqual(t, bytes, c.bytes)
			var kept []uintptr
			for i, a := range addrs {
				if !slices.Contains(c.released, i) {
					kept = append(kept, a)
					perms, _, ok := mapping(t, a)
					assert.True(t, ok && perms == "---p", "region %d is still reserved", i)
				}
			}
			// The queue ends with the kept regions, oldest first (earlier
			// tests' reservations may precede them when the bound allows).
			require.GreaterOrEqual(t, len(queued), len(kept))
			assert.Equal(t, kept, queued[len(queued)-len(kept):])
			for i, a := range addrs {
				// (A later region may have been mapped where a released
				// one was.)
				if slices.Contains(c.released, i) && !slices.Contains(kept, a) {
					assert.NotContains(t, queued, a, "region %d is released", i)
				}
			}
		})
	}
}

// A stale view faults at its reserved address; Guard of another, live
// region does not claim that fault but re-raises it.
func TestGuardRepanicsFaultsInReservations(t *testing.T) {
	p, _ := writeFile(t, 4096)
	f, err := Open(p)
	require.NoError(t, err)
	defer f.Close()
	old, err := f.MapAll()
	require.NoError(t, err)
	stale := old.Bytes()
	require.NoError(t, old.Unmap())
	live, err := f.MapAll()
	require.NoError(t, err)
	var sink byte
	assert.Panics(t, func() { _ = live.Guard(func() { sink = stale[10] }) })
	_ = sink
	assert.NoError(t, live.Guard(func() { sink = live.Bytes()[10] }))
	assert.ErrorIs(t, old.Guard(func() {}), ErrClosed)
}
