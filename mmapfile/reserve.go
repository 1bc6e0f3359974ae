package mmapfile

import (
	"strconv"
	"sync"

	"github.com/edsrzf/mmap-go"
)

// Closed mappings are not simply unmapped: their address range is replaced
// by an inaccessible reservation, so that a slice still pointing into it
// faults instead of reading or writing whatever the OS maps there next (a
// later mapping of another file lands at the same address more often than
// not). The reservations cost address space only, no memory; they are
// bounded and released oldest first.
const (
	// MaxReservations is the most closed mappings kept reserved at once.
	MaxReservations = 4096
	// MaxReservedBytes is the most address space they may hold together:
	// 64 GiB in a 64-bit process, 256 MiB in a 32-bit one.
	MaxReservedBytes = int64(1) << (28 + 8*(strconv.IntSize/64))
)

// reservations is the process's list of reserved ranges, oldest first.
var reservations = struct {
	sync.Mutex
	q     []mmap.MMap
	bytes int64
	// limits, variables so that tests can lower them
	maxN     int
	maxBytes int64
}{maxN: MaxReservations, maxBytes: MaxReservedBytes}

// retire ends a mapping: it replaces it by a reservation where the OS
// allows (else unmaps it), then releases the oldest reservations beyond
// the bounds.
func retire(m mmap.MMap) error {
	reserved, err := reserveOver(m)
	if err != nil || !reserved {
		return err
	}
	rs := &reservations
	rs.Lock()
	defer rs.Unlock()
	rs.q = append(rs.q, m)
	rs.bytes += int64(len(m))
	for len(rs.q) > 0 && (len(rs.q) > rs.maxN || rs.bytes > rs.maxBytes) {
		old := rs.q[0]
		rs.q[0] = nil
		rs.q = rs.q[1:]
		rs.bytes -= int64(len(old))
		// A failed release leaks address space only; nothing to report.
		_ = releaseReservation(old)
	}
	return nil
}
