package benchmarks

import (
	"fmt"
	"path/filepath"
	"testing"
)

func BenchmarkABFViewScan(b *testing.B) {
	size := benchSize(b)
	xs := make([]float64, size/8)
	fillF64(xs, 0)
	path := filepath.Join(b.TempDir(), "data.abf")
	if err := writeABF(path, xs); err != nil {
		b.Fatal(err)
	}
	if err := settle(path); err != nil {
		b.Fatal(err)
	}
	xs = nil
	b.SetBytes(size)
	for b.Loop() {
		sum, n, err := scanABF(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := checkSum("abf", sum, n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkABFWrite creates an ABF file of one f64 array with abf.Write
// and closes it (fsync); compare BenchmarkFileWrite.
func BenchmarkABFWrite(b *testing.B) {
	benchWrite(b, writeABF)
}

// BenchmarkABFOpen opens and lists ABF files of 1, 1000 and 100000
// records; ns/op should grow linearly with the record count.
func BenchmarkABFOpen(b *testing.B) {
	for _, n := range []int{1, 1000, 100000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "records.abf")
			if err := writeABFRecords(path, n); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := openABF(path, n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n)/1e3, "µs/record")
		})
	}
}
