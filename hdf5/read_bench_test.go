package hdf5

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/cputime"
)

// BenchmarkReadChunkedGzip reads a 32 MiB f64 array (the values of bench's files) that
// Write stored in chunks of 1 MiB, shuffled and deflated as h5py's
// compression="gzip", shuffle=True does (bench's hdf5_chunked_gzip_read):
// open, ReadAt of the whole dataset, close; on one core and on every
// core. cpu-ns/op is the process's CPU time per read, what the machine's
// load cannot inflate as it does the wall-clock time.
func BenchmarkReadChunkedGzip(b *testing.B) {
	src, data := benchSource()
	path := filepath.Join(b.TempDir(), "gz.h5")
	if err := Write(path, src, &format.Options{Params: map[string]string{"compress": "gzip"}}); err != nil {
		b.Fatal(err)
	}
	dst := make([]float64, len(data)/8)
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			b.SetBytes(int64(len(data)))
			cpu := cputime.Process()
			for b.Loop() {
				f, err := Open(path, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := ReadAt(f, "/x", 0, dst); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
