package benchmarks

import (
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/daphne"
)

// benchDaphneDense writes a dense f64 matrix (values at byte 45, so copied)
// and opens it.
func benchDaphneDense(b *testing.B) (*daphne.File, uint64, uint64) {
	size := benchSize(b)
	xs := make([]float64, size/8)
	fillF64(xs, 0)
	path := filepath.Join(b.TempDir(), "dense.dbdf")
	rows, cols := uint64(len(xs))/8, uint64(8)
	if err := daphne.WriteDense(path, rows, cols, xs, nil); err != nil {
		b.Fatal(err)
	}
	if err := settle(path); err != nil {
		b.Fatal(err)
	}
	f, err := daphne.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	b.SetBytes(size)
	return f, rows, cols
}

// BenchmarkDaphneDenseDecode copies the matrix into a reused slice with
// daphne.CopyDenseRange; compare BenchmarkCeilingMemmove.
func BenchmarkDaphneDenseDecode(b *testing.B) {
	f, rows, cols := benchDaphneDense(b)
	dst := make([]float64, rows*cols)
	if err := daphne.CopyDenseRange(f, dst, 0, rows, 0, cols); err != nil { // fault dst in, untimed
		b.Fatal(err)
	}
	for b.Loop() {
		if err := daphne.CopyDenseRange(f, dst, 0, rows, 0, cols); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDaphneReadDense reads the matrix with daphne.Read, which
// also allocates its result.
func BenchmarkDaphneReadDense(b *testing.B) {
	f, rows, cols := benchDaphneDense(b)
	for b.Loop() {
		got, err := daphne.Read[float64](f, "matrix")
		if err != nil {
			b.Fatal(err)
		}
		if uint64(len(got)) != rows*cols {
			b.Fatalf("%d values, want %d", len(got), rows*cols)
		}
	}
}
