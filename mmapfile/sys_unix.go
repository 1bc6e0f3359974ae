//go:build unix

package mmapfile

import (
	"errors"
	"os"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
)

func granularity() int { return os.Getpagesize() }

func lockFile(f *os.File, exclusive, wait bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return ErrLocked
		}
		return err
	}
}

func msyncRange(raw []byte, a, b int) error {
	return unix.Msync(raw[a:b], unix.MS_SYNC)
}

func advise(raw []byte, a Advice) error {
	var adv int
	switch a {
	case AdviceNormal:
		adv = unix.MADV_NORMAL
	case AdviceSequential:
		adv = unix.MADV_SEQUENTIAL
	case AdviceRandom:
		adv = unix.MADV_RANDOM
	case AdviceWillNeed:
		adv = unix.MADV_WILLNEED
	case AdviceDontNeed:
		adv = unix.MADV_DONTNEED
	case AdviceHugePage:
		h, ok := hugePageAdvice()
		if !ok {
			return errors.ErrUnsupported
		}
		adv = h
	default:
		return errors.ErrUnsupported
	}
	return unix.Madvise(raw, adv)
}

// reserveOver replaces the mapping m, in one mmap call, by an anonymous
// inaccessible mapping of the same range: no window in which another
// mapping could take the address. If that fails, m is unmapped.
func reserveOver(m mmap.MMap) (bool, error) {
	at := unsafeslice.Pointer(m)
	p, err := unix.MmapPtr(-1, 0, at, uintptr(len(m)), unix.PROT_NONE,
		unix.MAP_FIXED|unix.MAP_PRIVATE|unix.MAP_ANON|mapNoReserve)
	if err != nil || p != at {
		return false, m.Unmap()
	}
	return true, nil
}

// releaseReservation unmaps a reservation made by reserveOver. The runtime
// package's record of m's mapping is still there, so m.Unmap finds it.
func releaseReservation(m mmap.MMap) error { return m.Unmap() }

func unlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// openForWriting reports whether f's descriptor was opened for writing.
func openForWriting(f *os.File) (bool, error) {
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		return false, err
	}
	return fl&unix.O_ACCMODE != unix.O_RDONLY, nil
}

// fileSize is f's current size, from fstat without allocating.
func fileSize(f *os.File) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}
