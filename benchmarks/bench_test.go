package benchmarks

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// benchSize is the benchmarks' file size: MMAPKIT_BENCH_SIZE bytes, or
// 1 GiB.
func benchSize(b *testing.B) int64 {
	if s := os.Getenv("MMAPKIT_BENCH_SIZE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 64 {
			b.Fatalf("MMAPKIT_BENCH_SIZE=%q: want a byte count of at least 64", s)
		}
		return n / 64 * 64
	}
	return DefaultSize
}

// benchFile writes a float64 file of benchSize bytes into b.TempDir()
// (once per benchmark: b.TempDir is per benchmark) and returns its path
// and size.
func benchFile(b *testing.B) (string, int64) {
	b.Helper()
	size := benchSize(b)
	path := filepath.Join(b.TempDir(), "data.f64")
	if err := writeF64File(path, size); err != nil {
		b.Fatal(err)
	}
	return path, size
}

// benchScan runs scan over a fresh float64 file, checking every sum.
func benchScan(b *testing.B, scan func(string) (float64, int, error)) {
	path, size := benchFile(b)
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		sum, n, err := scan(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := checkSum(b.Name(), sum, n); err != nil {
			b.Fatal(err)
		}
	}
}

// Ceilings.

func BenchmarkCeilingRAMScan(b *testing.B) {
	size := benchSize(b)
	xs := make([]float64, size/8)
	fillF64(xs, 0)
	b.SetBytes(size)
	for b.Loop() {
		if err := checkSum("ram", sumF64(xs), len(xs)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCeilingMemmove(b *testing.B) {
	size := benchSize(b)
	src, dst := make([]byte, size), make([]byte, size)
	copy(dst, src)
	b.SetBytes(size)
	for b.Loop() {
		copy(dst, src)
	}
}

func BenchmarkCeilingMmapScan(b *testing.B) { benchScan(b, scanRawMapping) }

func BenchmarkCeilingMmapScanParallel(b *testing.B) {
	w := runtime.GOMAXPROCS(0)
	benchScan(b, func(p string) (float64, int, error) { return scanRawMappingParallel(p, w) })
}

// BenchmarkGather compares the loops that split interleaved 16-byte
// records into two columns, in memory: the gather ceiling's kernel
// (blocked) and the one-pass loop.
func BenchmarkGather(b *testing.B) {
	for _, k := range []struct {
		name  string
		split func([]int64, []float64, []uint64)
	}{{"blocked", splitCells}, {"one-pass", splitCellsOnePass}} {
		b.Run(k.name, func(b *testing.B) {
			size := benchSize(b)
			cells := make([]uint64, size/16*2)
			for i := range cells {
				cells[i] = uint64(i)
			}
			ints, floats := make([]int64, len(cells)/2), make([]float64, len(cells)/2)
			k.split(ints, floats, cells) // fault the columns in
			b.SetBytes(int64(len(cells)) * 8)
			for b.Loop() {
				k.split(ints, floats, cells)
			}
		})
	}
}

func BenchmarkCeilingRead(b *testing.B) {
	path, size := benchFile(b)
	b.SetBytes(size)
	for b.Loop() {
		if _, err := readFileChunks(path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCeilingColdRead(b *testing.B) {
	path, size := benchFile(b)
	if err := dropCache(path); err != nil {
		b.Skipf("cannot drop the page cache here: %v", err)
	}
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		if err := dropCache(path); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := readFileChunks(path); err != nil {
			b.Fatal(err)
		}
	}
}

// Scans of a warm file (issue 2, item 7, and issue 8).

func BenchmarkViewScan(b *testing.B) {
	benchScan(b, func(p string) (float64, int, error) { return scanView(p, nil) })
}

func BenchmarkReadFileDecodeScan(b *testing.B) { benchScan(b, scanReadFile) }

func BenchmarkReadTypedScan(b *testing.B) { benchScan(b, scanReadTyped) }

func BenchmarkBinaryReadScan(b *testing.B) { benchScan(b, scanBinaryRead) }

func BenchmarkXExpMmapScan(b *testing.B) { benchScan(b, scanXExpMmap) }

func BenchmarkParallelScan(b *testing.B) {
	w := runtime.GOMAXPROCS(0)
	benchScan(b, func(p string) (float64, int, error) { return scanViewParallel(p, w) })
}

func BenchmarkColdViewScan(b *testing.B) {
	path, size := benchFile(b)
	if err := dropCache(path); err != nil {
		b.Skipf("cannot drop the page cache here: %v", err)
	}
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		if err := dropCache(path); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		sum, n, err := scanView(path, &mmapfile.Options{Advice: mmapfile.AdviceSequential})
		if err != nil {
			b.Fatal(err)
		}
		if err := checkSum("cold view", sum, n); err != nil {
			b.Fatal(err)
		}
	}
}

// Random access: one op fetches RandomCount elements at random indexes of
// a warm, open file; ns/elem is the per-element latency.

func BenchmarkRandomView(b *testing.B) {
	path, size := benchFile(b)
	f, xs, err := viewF64(path, &mmapfile.Options{Advice: mmapfile.AdviceRandom})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	idx := randomIndexes(RandomCount, int(size/8))
	sumAt(xs, idx) // fault the pages in, as the suite's warm-up pass does
	b.ResetTimer()
	for b.Loop() {
		sink = sumAt(xs, idx)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/RandomCount, "ns/elem")
}

func BenchmarkRandomPread(b *testing.B) {
	path, size := benchFile(b)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	idx := randomIndexes(RandomCount, int(size/8))
	b.ResetTimer()
	for b.Loop() {
		s, err := preadAt(f, idx)
		if err != nil {
			b.Fatal(err)
		}
		sink = s
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/RandomCount, "ns/elem")
}

var sink float64

// Copying decode.

func BenchmarkMmapfileCopyUnaligned(b *testing.B) {
	path, _ := benchFile(b)
	f, err := mmapfile.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r, err := f.MapAll()
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float64, r.Len()/8-1)
	b.SetBytes(int64(len(dst)) * 8)
	for b.Loop() {
		if err := mmapfile.Copy(dst, r, 4, layout.HostOrder()); err != nil {
			b.Fatal(err)
		}
	}
}

// Writes: each op writes a whole new file of benchSize bytes and syncs it.

func benchWrite(b *testing.B, write func(path string, src []float64) error) {
	size := benchSize(b)
	src := make([]float64, size/8)
	fillF64(src, 0)
	path := filepath.Join(b.TempDir(), "out")
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		_ = os.Remove(path)
		b.StartTimer()
		if err := write(path, src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteSync is the write_sync ceiling: one write(2) of the bytes
// to a new file + fsync.
func BenchmarkWriteSync(b *testing.B) {
	benchWrite(b, func(path string, src []float64) error { return writeSync(path, asBytes(src)) })
}

// BenchmarkCpSync is the cp_sync ceiling: a file of benchSize bytes
// copied to a new one (copy_file_range) + fsync.
func BenchmarkCpSync(b *testing.B) {
	src, _ := benchFile(b)
	benchWrite(b, func(path string, _ []float64) error { return CopySync(src, path) })
}

// BenchmarkCreateFillView creates a file, grows, maps, PopulateWrite,
// fills a view and closes (which syncs).
func BenchmarkCreateFillView(b *testing.B) {
	benchWrite(b, func(path string, src []float64) error {
		f, err := mmapfile.Create(path)
		if err != nil {
			return err
		}
		if err := fillView(f, src); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// The edit benchmarks change one float64 of a benchSize file, at 1024
// random elements in turn, and make it durable; ns/op is the latency.

// benchEdit runs edit at 1024 random elements of a benchSize file in
// turn.
func benchEdit(b *testing.B, edit func(path string, size int64) (func(i, k int) error, func() error)) {
	path, size := benchFile(b)
	fn, done := edit(path, size)
	defer done()
	idx := randomIndexes(1024, int(size/8))
	for i := 0; b.Loop(); i++ {
		if err := fn(i, idx[i%len(idx)]); err != nil {
			b.Fatal(err)
		}
	}
}

// writeAndSync returns an edit that writes element k (8 bytes, the first
// one i) with w and calls sync.
func writeAndSync(w io.WriterAt, sync func() error) func(i, k int) error {
	var buf [8]byte
	return func(i, k int) error {
		buf[0] = byte(i)
		if _, err := w.WriteAt(buf[:], int64(k)*8); err != nil {
			return err
		}
		return sync()
	}
}

// BenchmarkEditSync is File.WriteAt + File.SyncData (the edit_sync
// figure).
func BenchmarkEditSync(b *testing.B) {
	benchEdit(b, func(path string, _ int64) (func(i, k int) error, func() error) {
		f, err := mmapfile.OpenFile(path, mmapfile.ReadWrite, nil)
		if err != nil {
			b.Fatal(err)
		}
		return writeAndSync(f, f.SyncData), f.Close
	})
}

// BenchmarkEditViewSync is a store through a read-write view + File.Sync.
func BenchmarkEditViewSync(b *testing.B) {
	benchEdit(b, func(path string, _ int64) (func(i, k int) error, func() error) {
		f, xs, err := openViewF64(path, mmapfile.ReadWrite, nil)
		if err != nil {
			b.Fatal(err)
		}
		return func(_, k int) error {
			xs[k] += 1
			return f.Sync()
		}, f.Close
	})
}

// BenchmarkPwriteFdatasync is the edits' reference: one 8-byte pwrite(2)
// plus fdatasync on a plain descriptor.
func BenchmarkPwriteFdatasync(b *testing.B) {
	benchEdit(b, func(path string, _ int64) (func(i, k int) error, func() error) {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			b.Fatal(err)
		}
		return writeAndSync(f, func() error { return fdatasync(f) }), f.Close
	})
}

// Text baselines of the Futhark text figures.

func BenchmarkStrconvParse(b *testing.B) {
	xs := make([]float64, min(benchSize(b)/8, 4<<20))
	fillF64(xs, 0)
	text := appendFutharkText(nil, xs)
	dst := make([]float64, 0, len(xs))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := parseFutharkText(text, dst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStrconvFormat(b *testing.B) {
	xs := make([]float64, min(benchSize(b)/8, 4<<20))
	fillF64(xs, 0)
	buf := appendFutharkText(nil, xs)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf = appendFutharkText(buf[:0], xs)
	}
}
