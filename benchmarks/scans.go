package benchmarks

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/edsrzf/mmap-go"
	exmmap "golang.org/x/exp/mmap"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Each scan below opens the file, gets its float64 values to the sum loop
// the way its figure says, sums them, and releases everything, returning
// the sum and the number of elements.

// scanRawMapping maps the file with mmap-go directly (no mmapkit) and sums
// it: the mmap_scan ceiling.
func scanRawMapping(path string) (float64, int, error) {
	return rawMapping(path, func(m []byte) (float64, int) {
		xs := unsafeslice.Cast[float64](m[:len(m)/8*8])
		return sumF64(xs), len(xs)
	})
}

// scanRawMappingParallel is scanRawMapping with the sum split over
// workers goroutines: the mmap_scan_parallel ceiling.
func scanRawMappingParallel(path string, workers int) (float64, int, error) {
	return rawMapping(path, func(m []byte) (float64, int) {
		xs := unsafeslice.Cast[float64](m[:len(m)/8*8])
		return sumParallel(xs, workers), len(xs)
	})
}

// scanRawMappingF32 is scanRawMapping for float32 data.
func scanRawMappingF32(path string) (float64, int, error) {
	return rawMapping(path, func(m []byte) (float64, int) {
		xs := unsafeslice.Cast[float32](m[:len(m)/4*4])
		return sumF32(xs), len(xs)
	})
}

// rawMapping maps path read-only with mmap-go, calls sum with the
// mapping, and unmaps it.
func rawMapping(path string, sum func(m []byte) (float64, int)) (float64, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	m, err := mmap.Map(f, mmap.RDONLY, 0)
	if err != nil {
		return 0, 0, err
	}
	s, n := sum(m)
	return s, n, m.Unmap()
}

// viewF64 opens path with mmapfile and returns a float64 view of the
// whole file.
func viewF64(path string, opt *mmapfile.Options) (*mmapfile.File, []float64, error) {
	return openViewF64(path, mmapfile.ReadOnly, opt)
}

// openViewF64 is viewF64 in any mode.
func openViewF64(path string, mode mmapfile.Mode, opt *mmapfile.Options) (*mmapfile.File, []float64, error) {
	f, r, err := mmapfile.OpenMapped(path, mode, opt)
	if err != nil {
		return nil, nil, err
	}
	xs, err := mmapfile.View[float64](r, 0, r.Len()/8, binary.LittleEndian)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, xs, nil
}

// scanView scans through an mmapfile view: the view_scan_f64 figure.
func scanView(path string, opt *mmapfile.Options) (float64, int, error) {
	f, xs, err := viewF64(path, opt)
	if err != nil {
		return 0, 0, err
	}
	s := sumF64(xs)
	return s, len(xs), f.Close()
}

// scanViewParallel scans through one mmapfile view with workers
// goroutines, each summing one contiguous part.
func scanViewParallel(path string, workers int) (float64, int, error) {
	f, xs, err := viewF64(path, nil)
	if err != nil {
		return 0, 0, err
	}
	s := sumParallel(xs, workers)
	return s, len(xs), f.Close()
}

// sumParallel sums xs with workers goroutines, each summing one
// contiguous part (whole pages, so that no two fault the same one).
func sumParallel(xs []float64, workers int) float64 {
	return typedSumParallel(layout.F64, asBytes(xs), workers)
}

// scanReadFile is os.ReadFile, then a portable decode into []float64,
// then the sum.
func scanReadFile(path string) (float64, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	xs := make([]float64, len(b)/8)
	decodeF64(xs, b)
	return sumF64(xs), len(xs), nil
}

// scanReadTyped reads the file with read(2) straight into the memory of
// a []float64 (no decode: the host is little-endian), then sums.
func scanReadTyped(path string) (float64, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	xs := make([]float64, fi.Size()/8)
	if _, err := io.ReadFull(f, asBytes(xs)); err != nil {
		return 0, 0, err
	}
	return sumF64(xs), len(xs), nil
}

// scanBinaryRead decodes the file with encoding/binary.Read into a
// []float64, then sums.
func scanBinaryRead(path string) (float64, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	xs := make([]float64, fi.Size()/8)
	if err := binary.Read(f, binary.LittleEndian, xs); err != nil {
		return 0, 0, err
	}
	return sumF64(xs), len(xs), nil
}

// scanXExpMmap copies the file out of golang.org/x/exp/mmap's ReaderAt
// into a []float64, then sums.
func scanXExpMmap(path string) (float64, int, error) {
	r, err := exmmap.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	xs := make([]float64, r.Len()/8)
	if _, err := r.ReadAt(asBytes(xs), 0); err != nil {
		return 0, 0, err
	}
	return sumF64(xs), len(xs), nil
}

// readFileChunks is the read(2) ceiling: the whole file through one
// reused buffer.
func readFileChunks(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return readChunks(f)
}

// dropCache evicts path's pages from the page cache.
func dropCache(path string) error {
	f, err := mmapfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.DropCache()
}

// settle puts a file just written (or every file of a directory) into
// one state in the page cache: the one that large aligned writes leave.
// The page cache keeps a file in folios as large as the writes (or the
// reads) that brought it in, and a fresh mapping of a file cached in
// small folios faults more and scans slower: 256 MiB written in 4 KiB
// writes scanned at 6 GB/s here, in 8 MiB writes at 19 GB/s; 8 MiB files
// read back from disk (readahead starts small) at 8 GB/s, as written at
// 16–19. Without settling, a figure would compare how its file was
// written, not how it is read. Each 8 MiB of the file is read, dropped
// from the cache and written back unchanged, then the file is synced.
// Where pages cannot be dropped, the file is left as it is.
func settle(path string) error {
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		buf := make([]byte, settleChunk)
		for off := int64(0); ; off += settleChunk {
			n, err := f.ReadAt(buf, off)
			if n > 0 {
				if dropRange(f, off, int64(n)) != nil {
					return f.Sync() // cannot drop pages here: leave it
				}
				if _, err := f.WriteAt(buf[:n], off); err != nil {
					return err
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
		}
		return f.Sync()
	})
}

// warm reads every file under path (or path itself) into the page cache,
// for a figure taken warm after others may have pushed its files out: an
// edit of a page the cache does not hold reads it from disk first, which
// the pwrite it is paired with, on the suite's always-warm file, does not.
func warm(path string) error {
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		_, err = readFileChunks(p)
		return err
	})
}

// settleChunk is settle's unit, aligned for the largest folios.
const settleChunk = 8 << 20

// randomIndexes returns n indexes below limit from a fixed seed.
func randomIndexes(n, limit int) []int {
	idx := make([]int, n)
	// A small xorshift generator: fixed, fast, and the same everywhere.
	x := uint64(0x9E3779B97F4A7C15)
	for i := range idx {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		idx[i] = int(x % uint64(limit))
	}
	return idx
}

// sumAt sums xs at the given indexes.
func sumAt(xs []float64, idx []int) float64 {
	s := 0.0
	for _, i := range idx {
		s += xs[i]
	}
	return s
}

// preadAt sums the elements at the given indexes, one pread(2) each.
func preadAt(f *os.File, idx []int) (float64, error) {
	var b [8]byte
	s := 0.0
	for _, i := range idx {
		if _, err := f.ReadAt(b[:], int64(i)*8); err != nil {
			return 0, fmt.Errorf("pread element %d: %w", i, err)
		}
		s += math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
	}
	return s, nil
}
