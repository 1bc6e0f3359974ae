package benchmarks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
			if err := CopySync(src, out); err != nil {
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

// BenchmarkConvertPaired runs, in every iteration, cp_sync and then the
// conversion to each of MMAPKIT_BENCH_TARGETS (comma-separated; default
// futhark,daphne) back to back, so that each conversion and its ceiling
// see the same moments of a busy machine. It reports, per target, the
// median over the iterations of cp_sync's time over the conversion's
// ("<target>-ratio", the figure's ratio) and the best GB/s.
func BenchmarkConvertPaired(b *testing.B) {
	if _, ok := format.Lookup("abf"); !ok {
		b.Skip("format abf is not registered in this build")
	}
	targets := []string{"futhark", "daphne"}
	if s := os.Getenv("MMAPKIT_BENCH_TARGETS"); s != "" {
		targets = strings.Split(s, ",")
	}
	n := benchSize(b) / 2 / 64 * 64
	xs := make([]float64, n/8)
	fillF64(xs, 0)
	dir := b.TempDir()
	src := filepath.Join(dir, "src.abf")
	mem := newMemSource("x", asBytes(xs), matrixShape(n/8), layout.ColMajor)
	if err := format.Write(src, mem, &format.Options{Format: "abf"}); err != nil {
		b.Fatal(err)
	}
	if err := settle(src); err != nil {
		b.Fatal(err)
	}
	timed := func(f func() error, out string) time.Duration {
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		b.StopTimer()
		if err := os.RemoveAll(out); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		return d
	}
	ratios := make([][]float64, len(targets))
	best := make([]time.Duration, len(targets))
	for b.Loop() {
		cp := filepath.Join(dir, "copy")
		dcp := timed(func() error { return CopySync(src, cp) }, cp)
		for k, to := range targets {
			tf, ok := format.Lookup(to)
			if !ok {
				b.Skipf("format %s is not registered in this build", to)
			}
			out := filepath.Join(dir, "out"+extension(tf))
			d := timed(func() error { return format.Convert(src, out, nil, &format.Options{Format: to}) }, out)
			ratios[k] = append(ratios[k], dcp.Seconds()/d.Seconds())
			if best[k] == 0 || d < best[k] {
				best[k] = d
			}
		}
	}
	for k, to := range targets {
		slices.Sort(ratios[k])
		b.ReportMetric(ratios[k][len(ratios[k])/2], to+"-ratio")
		b.ReportMetric(float64(n)/best[k].Seconds()/1e9, to+"-GB/s")
	}
}
