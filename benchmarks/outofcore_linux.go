package benchmarks

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// scanViewDropping scans a file through one view with sequential advice,
// window bytes at a time, letting go of each window's pages once summed:
// madvise(DONTNEED) unmaps them from the process, and fadvise(DONTNEED)
// drops them from the page cache, so that a scan of a file larger than
// memory keeps its resident memory bounded instead of leaving the kernel
// to find out which pages it may reclaim.
func scanViewDropping(path string, window int) (float64, int, error) {
	f, xs, err := openViewF64(path, mmapfile.ReadOnly, &mmapfile.Options{Advice: mmapfile.AdviceSequential})
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	per := window / 8
	var sum float64
	for lo := 0; lo < len(xs); lo += per {
		w := xs[lo:min(lo+per, len(xs))]
		sum += sumF64(w)
		b := unsafeslice.Bytes(w)
		unix.Madvise(b, unix.MADV_DONTNEED)
		dropRange(f.OSFile(), int64(lo)*8, int64(len(b)))
	}
	return sum, len(xs), nil
}

// scanReadStreaming reads a file front to back with read(2) into one
// 8 MiB buffer, summing it, as a program that does not map would.
func scanReadStreaming(path string) (float64, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL)
	buf := make([]float64, 1<<20)
	b := unsafeslice.Bytes(buf)
	var sum float64
	n := 0
	for {
		k, err := io.ReadFull(f, b)
		sum += sumF64(buf[:k/8])
		n += k / 8
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return sum, n, nil
		}
		if err != nil {
			return 0, 0, err
		}
	}
}

// residentBytes is the process's resident memory, from /proc/self/statm.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// freeBytes is the room left on the file system of dir.
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
