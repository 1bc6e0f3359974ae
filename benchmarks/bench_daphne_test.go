package benchmarks

import (
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/daphne"
)

// BenchmarkDaphneDenseDecode reads a dense f64 matrix (values at byte 45,
// so copied) with daphne.ReadDense; compare BenchmarkCeilingMemmove.
func BenchmarkDaphneDenseDecode(b *testing.B) {
	size := benchSize(b)
	xs := make([]float64, size/8)
	fillF64(xs, 0)
	path := filepath.Join(b.TempDir(), "dense.dbdf")
	if err := daphne.WriteDense(path, uint64(len(xs))/8, 8, xs, nil); err != nil {
		b.Fatal(err)
	}
	xs = nil
	f, err := daphne.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(size)
	for b.Loop() {
		got, err := daphne.ReadDense[float64](f)
		if err != nil {
			b.Fatal(err)
		}
		if int64(len(got)) != size/8 {
			b.Fatalf("%d values, want %d", len(got), size/8)
		}
	}
}
