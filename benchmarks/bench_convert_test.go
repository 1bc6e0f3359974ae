package benchmarks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// BenchmarkConvert converts a column-major f64 ABF array of half
// benchSize bytes into each registered target with format.Convert, fsync
// included (the convert_abf_* figures), after its ceiling, cp_sync: the
// same source file copied + fsync.
// Profile one with
//
//	MMAPKIT_BENCH_SIZE=1073741824 go test -run '^$' -bench 'Convert/zarr' -benchtime 5x -cpuprofile cpu.out ./benchmarks
func BenchmarkConvert(b *testing.B) {
	if _, ok := format.Lookup("abf"); !ok {
		b.Skip("format abf is not registered in this build")
	}
	n := benchSize(b) / 2 / 64 * 64
	xs := make([]float64, n/8)
	fillF64(xs, 0)
	src := filepath.Join(b.TempDir(), "src.abf")
	mem := newMemSource("x", asBytes(xs), matrixShape(n/8), layout.ColMajor)
	if err := format.Write(src, mem, &format.Options{Format: "abf"}); err != nil {
		b.Fatal(err)
	}
	if err := settle(src); err != nil {
		b.Fatal(err)
	}
	b.Run("cp_sync", func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "copy")
		b.SetBytes(n)
		for b.Loop() {
			if err := cpSync(src, out); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := os.Remove(out); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	for _, to := range convertTargets {
		b.Run(to, func(b *testing.B) {
			tf, ok := format.Lookup(to)
			if !ok {
				b.Skipf("format %s is not registered in this build", to)
			}
			out := filepath.Join(b.TempDir(), "out"+extension(tf))
			o := &format.Options{Format: to}
			b.SetBytes(n)
			for b.Loop() {
				if err := format.Convert(src, out, nil, o); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := os.RemoveAll(out); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
