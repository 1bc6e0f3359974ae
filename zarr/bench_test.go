package zarr

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// benchRows × benchCols f64: 128 MiB, in 16 chunks of 8 MiB.
const benchRows, benchCols = 4096, 4096

// benchStore writes the benchmark array to a v2 store (zarr-python reads
// v2 here) and a plain file of the same bytes.
func benchStore(b *testing.B, compress string) (store, plain string) {
	b.Helper()
	dir := b.TempDir()
	data := ramp(layout.F64, benchRows*benchCols, 0)
	store = filepath.Join(dir, "bench.zarr")
	src := (&memSource{}).add("x", layout.F64, []int64{benchRows, benchCols}, layout.RowMajor, false, data)
	if err := Write(store, src, &Options{Version: 2, Chunks: []int64{256, benchCols}, Compress: compress}); err != nil {
		b.Fatal(err)
	}
	plain = filepath.Join(dir, "plain.f64")
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return store, plain
}

// pyTimeRead times zarr-python's z[:] on the store (best of five, after
// a warm-up), in seconds.
const pyTimeRead = `
import sys, time, zarr
z = zarr.open(sys.argv[1], mode='r')['x']
z[:]
best = min((lambda t: (z[:], time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(5))
print(best)
`

// reportPython adds zarr-python's z[:] throughput on the same store, and
// this benchmark's speed relative to it.
func reportPython(b *testing.B, store string, bytes int64) {
	b.Helper()
	if oracle.Find("zarr") == "" {
		b.Log("no zarr-python here: the zarr-python figures are left out")
		return
	}
	b.StopTimer()
	secs, err := strconv.ParseFloat(strings.TrimSpace(oracle.Run(b, []string{"zarr"}, pyTimeRead, store)), 64)
	b.StartTimer()
	if err != nil || secs <= 0 {
		b.Fatalf("zarr-python timing: %v", err)
	}
	py := float64(bytes) / secs / 1e6
	b.ReportMetric(py, "zarr-python-MB/s")
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(float64(bytes)/ns*1e3/py, "x-zarr-python")
}

func sumF64(v []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s0 += v[i]
		s1 += v[i+1]
		s2 += v[i+2]
		s3 += v[i+3]
	}
	for ; i < len(v); i++ {
		s0 += v[i]
	}
	return s0 + s1 + s2 + s3
}

var benchSink float64

// BenchmarkViewScan sums an uncompressed store through its chunk views
// (zero copy), against zarr-python's z[:] of the same store.
func BenchmarkViewScan(b *testing.B) {
	store, plain := benchStore(b, "")
	s, err := Open(store, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a, _ := s.Array("x")
	g := a.Grid()
	b.SetBytes(benchRows * benchCols * 8)
	b.ResetTimer()
	for b.Loop() {
		var sum float64
		for i := int64(0); i < g[0]; i++ {
			for j := int64(0); j < g[1]; j++ {
				v, err := ViewChunk[float64](a, i, j)
				if err != nil {
					b.Fatal(err)
				}
				sum += sumF64(v)
			}
		}
		benchSink = sum
	}
	reportPython(b, store, benchRows*benchCols*8)
	reportMapped(b, plain)
}

// reportMapped times, right after the benchmark's loop and as many
// times, a sum of the same bytes in one plain mapped file, and reports
// the benchmark's speed relative to it: on a busy machine the ratio of two
// figures taken together says more than either.
func reportMapped(b *testing.B, plain string) {
	b.StopTimer()
	defer b.StartTimer()
	f, err := mmapfile.Open(plain)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r, err := f.MapAll()
	if err != nil {
		b.Fatal(err)
	}
	v, err := mmapfile.View[float64](r, 0, benchRows*benchCols, binary.LittleEndian)
	if err != nil {
		b.Fatal(err)
	}
	benchSink = sumF64(v) // fault the pages in
	start := time.Now()
	for range b.N {
		benchSink = sumF64(v)
	}
	mapped := float64(time.Since(start).Nanoseconds()) / float64(b.N)
	b.ReportMetric(mapped/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "x-mapped-scan")
}

// BenchmarkMappedScan sums the same bytes as one plain mapped file: the
// ceiling of BenchmarkViewScan.
func BenchmarkMappedScan(b *testing.B) {
	_, plain := benchStore(b, "")
	f, err := mmapfile.Open(plain)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r, err := f.MapAll()
	if err != nil {
		b.Fatal(err)
	}
	v, err := mmapfile.View[float64](r, 0, benchRows*benchCols, binary.LittleEndian)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchRows * benchCols * 8)
	b.ResetTimer()
	for b.Loop() {
		benchSink = sumF64(v)
	}
}

// BenchmarkReadRaw copies the whole uncompressed array into one buffer, as
// z[:] does.
func BenchmarkReadRaw(b *testing.B) { benchRead(b, "") }

// BenchmarkReadZstd decompresses the whole zstd-compressed array into one
// buffer, chunks in parallel on every core.
func BenchmarkReadZstd(b *testing.B) { benchRead(b, "zstd") }

func benchRead(b *testing.B, compress string) {
	store, _ := benchStore(b, compress)
	s, err := Open(store, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a, _ := s.Array("x")
	dst := make([]byte, benchRows*benchCols*8)
	start, count := []int64{0, 0}, []int64{benchRows, benchCols}
	b.SetBytes(int64(len(dst)))
	b.ResetTimer()
	for b.Loop() {
		if err := a.ReadRegion(dst, start, count, layout.RowMajor, binary.LittleEndian); err != nil {
			b.Fatal(err)
		}
	}
	reportPython(b, store, int64(len(dst)))
}

// BenchmarkWriteManyArrays writes a store of 1,000 arrays of 5 f32 (a
// table of 1,000 columns): the cost of each array — its directories,
// chunk file and metadata — per array.
func BenchmarkWriteManyArrays(b *testing.B) {
	const arrays = 1000
	src := &memSource{}
	for i := range arrays {
		src.add("f"+strconv.Itoa(i), layout.F32, []int64{5}, layout.RowMajor, false, ramp(layout.F32, 5, float64(i)))
	}
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Write(filepath.Join(dir, "m"+strconv.Itoa(i)+".zarr"), src, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*arrays), "ns/array")
}

// BenchmarkLocate10k describes a version 2 array of 10,000 chunk files
// (format.Locator): the cost of finding each chunk and its size.
func BenchmarkLocate10k(b *testing.B) {
	const rows = 10000
	src := (&memSource{}).add("x", layout.F64, []int64{rows, 16}, layout.RowMajor, false, ramp(layout.F64, rows*16, 0))
	p := filepath.Join(b.TempDir(), "many.zarr")
	if err := Write(p, src, &Options{Version: 2, Chunks: []int64{1, 16}}); err != nil {
		b.Fatal(err)
	}
	s, err := Open(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		loc, err := s.Locate(0)
		if err != nil {
			b.Fatal(err)
		}
		if len(loc.Grid.Stored) != rows {
			b.Fatalf("%d chunks stored, want %d", len(loc.Grid.Stored), rows)
		}
	}
}
