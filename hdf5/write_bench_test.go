package hdf5

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// benchSource is a 32 MiB f64 array of 4096 × 1024 named x, holding the
// values of bench's files (i%1000 · 0.25), and its bytes.
func benchSource() (*memSource, []byte) {
	const rows, cols = 4096, 1024
	data := make([]byte, rows*cols*8)
	for i := range rows * cols {
		binary.LittleEndian.PutUint64(data[8*i:], math.Float64bits(float64(i%1000)*0.25))
	}
	src := &memSource{}
	src.add("x", layout.F64, []int64{rows, cols}, false, data)
	return src, data
}

// BenchmarkWrite writes a 32 MiB f64 array contiguous, and chunked with
// shuffle + deflate on every core and on one (the parallel compression's
// speed-up is the ratio of the two).
func BenchmarkWrite(b *testing.B) {
	src, data := benchSource()
	for _, c := range []struct {
		name   string
		params map[string]string
		procs  int
	}{
		{"contiguous", nil, 0},
		{"gzip", map[string]string{"compress": "gzip"}, 0},
		{"gzip_one_core", map[string]string{"compress": "gzip"}, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.procs > 0 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.procs))
			}
			path := filepath.Join(b.TempDir(), "w.h5")
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := Write(path, src, &format.Options{Params: c.params}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
