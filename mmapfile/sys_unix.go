//go:build unix

package mmapfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
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
