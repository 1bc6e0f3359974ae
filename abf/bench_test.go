package abf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/memsource"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// benchSize is the payload size of the large benchmarks: 1 GiB, or
// MMAPKIT_BENCH_SIZE bytes.
func benchSize(b *testing.B) int64 {
	if s := os.Getenv("MMAPKIT_BENCH_SIZE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 8 {
			b.Fatalf("bad MMAPKIT_BENCH_SIZE %q", s)
		}
		return n / 8 * 8
	}
	return 1 << 30
}

// bigFile writes one Float64 array of size bytes, "x", to a new file.
func bigFile(b *testing.B, size int64) string {
	p := filepath.Join(b.TempDir(), "big.abf")
	f, err := openMode(p, "w", nil)
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float64, size/8)
	for i := range x {
		x[i] = float64(i & 1023)
	}
	if err := Write(f, "x", []int64{int64(len(x))}, x); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkOpen10000 opens a file of 10,000 small arrays; µs/record is
// the cost of parsing one header.
func BenchmarkOpen10000(b *testing.B) {
	const n = 10000
	p := filepath.Join(b.TempDir(), "many.abf")
	f, err := openMode(p, "w", nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := Write(f, fmt.Sprintf("array%05d", i), []int64{2, 2}, []float64{1, 2, 3, 4}); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		g, err := Open(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(g.Entries()) != n {
			b.Fatal("wrong record count")
		}
		g.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n/1e3, "µs/record")
}

// BenchmarkView takes a view of a small and of a large array: the cost
// does not depend on the array's size.
func BenchmarkView(b *testing.B) {
	p := bigFile(b, benchSize(b))
	w, err := openMode(p, "a", nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := Write(w, "small", []int64{8}, make([]float64, 8)); err != nil {
		b.Fatal(err)
	}
	w.Close()
	f, err := Open(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for _, key := range []string{"small", "x"} {
		b.Run(key, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := View[float64](f, key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// BenchmarkScan sums a Float64 array through View and, as the baseline,
// through the raw mapping of the same file.
func BenchmarkScan(b *testing.B) {
	size := benchSize(b)
	p := bigFile(b, size)
	f, err := Open(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rec, _ := f.Lookup("x")
	mf, err := mmapfile.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer mf.Close()
	region, err := mf.MapAll()
	if err != nil {
		b.Fatal(err)
	}
	raw := unsafeslice.Cast[float64](region.Bytes()[rec.Offset : rec.Offset+rec.Size])
	want := sum(raw) // also faults the pages in
	b.Run("view", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			x, err := View[float64](f, "x")
			if err != nil {
				b.Fatal(err)
			}
			if sum(x) != want {
				b.Fatal("wrong sum")
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if sum(raw) != want {
				b.Fatal("wrong sum")
			}
		}
	})
	// paired alternates view and raw scans and reports the view's speed
	// relative to the raw mapping's.
	b.Run("paired", func(b *testing.B) {
		b.SetBytes(2 * size)
		var tview, traw time.Duration
		for b.Loop() {
			t0 := time.Now()
			x, err := View[float64](f, "x")
			if err != nil || sum(x) != want {
				b.Fatal("view scan failed", err)
			}
			t1 := time.Now()
			if sum(raw) != want {
				b.Fatal("wrong sum")
			}
			tview, traw = tview+t1.Sub(t0), traw+time.Since(t1)
		}
		b.ReportMetric(traw.Seconds()/tview.Seconds(), "view/raw-speed")
	})
}

// BenchmarkAppend appends large Float64 arrays to one open file with
// Write and, as the baseline, appends the same bytes to a file with
// os.File.Write. Neither syncs inside the timed loop.
func BenchmarkAppend(b *testing.B) {
	size := benchSize(b)
	x := make([]float64, size/8)
	for i := range x {
		x[i] = float64(i)
	}
	dir := b.TempDir()
	b.Run("abf.Write", func(b *testing.B) {
		f, err := openMode(filepath.Join(dir, "append.abf"), "w", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer os.Remove(filepath.Join(dir, "append.abf"))
		defer f.Close()
		b.SetBytes(size)
		i := 0
		for b.Loop() {
			if err := Write(f, strconv.Itoa(i), []int64{int64(len(x))}, x); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("os.File.Write", func(b *testing.B) {
		f, err := os.Create(filepath.Join(dir, "append.raw"))
		if err != nil {
			b.Fatal(err)
		}
		defer os.Remove(filepath.Join(dir, "append.raw"))
		defer f.Close()
		b.SetBytes(size)
		raw := unsafeslice.Bytes(x)
		for b.Loop() {
			if _, err := f.Write(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	// paired alternates the two in each iteration, so that a noisy,
	// shared machine hits both alike, and reports abf's speed relative to
	// os.File.Write.
	b.Run("paired", func(b *testing.B) {
		f, err := openMode(filepath.Join(dir, "paired.abf"), "w", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer os.Remove(filepath.Join(dir, "paired.abf"))
		defer f.Close()
		g, err := os.Create(filepath.Join(dir, "paired.raw"))
		if err != nil {
			b.Fatal(err)
		}
		defer os.Remove(filepath.Join(dir, "paired.raw"))
		defer g.Close()
		raw := unsafeslice.Bytes(x)
		b.SetBytes(2 * size)
		var tabf, tos time.Duration
		i := 0
		for b.Loop() {
			t0 := time.Now()
			if err := Write(f, strconv.Itoa(i), []int64{int64(len(x))}, x); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := g.Write(raw); err != nil {
				b.Fatal(err)
			}
			tabf, tos = tabf+t1.Sub(t0), tos+time.Since(t1)
			i++
		}
		b.ReportMetric(tos.Seconds()/tabf.Seconds(), "abf/os-speed")
	})
}

// writeSource is a Source of one f64 vector of size bytes held in memory,
// as a file being converted would be mapped.
func writeSource(size int64) (*memsource.Source, []byte) {
	x := make([]float64, size/8)
	for i := range x {
		x[i] = float64(i & 1023)
	}
	raw := unsafeslice.Bytes(x)
	src := &memsource.Source{}
	src.Add(memArray("x", []int64{int64(len(x))}, layout.RowMajor, x))
	return src, raw
}

// writeRaw replaces path with a new file that it writes with write(2), in
// chunks of format.StreamBytes, and fsyncs: the floor for a durable writer
// of the same bytes. (Like the writer's rename, it frees the old file's
// blocks.)
func writeRaw(path string, data []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for len(data) > 0 {
		n := min(len(data), format.StreamBytes)
		if _, err := f.Write(data[:n]); err != nil {
			f.Close()
			return err
		}
		data = data[n:]
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// BenchmarkWriteStream writes an f64 vector (1 GiB, or MMAPKIT_BENCH_SIZE
// bytes) as an ABF file through the registered writer: pulled from the
// source a chunk at a time, written with large sequential writes to a
// temporary file, fsynced and renamed into place.
func BenchmarkWriteStream(b *testing.B) {
	size := benchSize(b)
	src, _ := writeSource(size)
	p := filepath.Join(b.TempDir(), "stream.abf")
	b.SetBytes(size)
	for b.Loop() {
		if err := format.Write(p, src, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteRaw writes the same bytes with write(2) and fsyncs them.
func BenchmarkWriteRaw(b *testing.B) {
	size := benchSize(b)
	_, raw := writeSource(size)
	p := filepath.Join(b.TempDir(), "raw.bin")
	b.SetBytes(size)
	for b.Loop() {
		if err := writeRaw(p, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWritePaired runs the two in each iteration, taking turns at
// going first, so that a noisy, shared machine hits both alike, and
// reports the writer's speed as a fraction of write(2)'s: the median over
// the iterations of each pair's ratio (abf/raw-speed; 1 is as fast).
func BenchmarkWritePaired(b *testing.B) {
	size := benchSize(b)
	src, raw := writeSource(size)
	dir := b.TempDir()
	b.SetBytes(2 * size)
	timed := func(fn func() error) time.Duration {
		t0 := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	writeABF := func() error { return format.Write(filepath.Join(dir, "stream.abf"), src, nil) }
	writeBin := func() error { return writeRaw(filepath.Join(dir, "raw.bin"), raw) }
	var ratios []float64
	for i := 0; b.Loop(); i++ {
		var tabf, traw time.Duration
		if i%2 == 0 {
			tabf = timed(writeABF)
			traw = timed(writeBin)
		} else {
			traw = timed(writeBin)
			tabf = timed(writeABF)
		}
		ratios = append(ratios, traw.Seconds()/tabf.Seconds())
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "abf/raw-speed")
}

// BenchmarkWriteMany writes 70,000 scalar records through the registered
// writer: the cost of a record's header, payload and bookkeeping, not of
// bytes (ns/record).
func BenchmarkWriteMany(b *testing.B) {
	const n = 70000
	src := &memsource.Source{}
	for i := range n {
		src.Add(memArray(strconv.Itoa(i), []int64{}, layout.RowMajor, []int32{int32(i)}))
	}
	p := filepath.Join(b.TempDir(), "many.abf")
	b.ReportAllocs()
	for b.Loop() {
		if err := format.Write(p, src, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
}
