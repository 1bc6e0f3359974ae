package benchmarks

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// residentPages maps the file at path read-only and asks mincore how
// many of its pages are in the page cache.
func residentPages(path string) (resident, pages int64, err error) {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		return 0, 0, err
	}
	f, reg, err := mmapfile.OpenMapped(path, mmapfile.ReadOnly, nil)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	page := int64(os.Getpagesize())
	vec := make([]byte, (int64(reg.Len())+page-1)/page)
	// x/sys has no mincore for Linux: the raw call, on the mapping and a
	// heap vector that both outlive it.
	m := reg.Bytes()
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, unsafeslice.Addr(m), uintptr(len(m)), unsafeslice.Addr(vec))
	runtime.KeepAlive(vec)
	if errno != 0 {
		return 0, 0, errno
	}
	for _, v := range vec {
		if v&1 != 0 {
			resident++
		}
	}
	return resident, int64(len(vec)), nil
}
