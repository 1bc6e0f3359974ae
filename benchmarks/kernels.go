package benchmarks

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
)

// The suite's data: element i of every file is (i mod 1000)/4. Every
// partial sum of such values is exact in float64 for files far larger than
// any machine's memory, so every way of scanning a file must produce the
// same sum, whatever order it adds in; the suite checks that it does.
func value(i int) float64 { return float64(i%1000) * 0.25 }

// expectedSum is the sum of value(i) for i < n.
func expectedSum(n int) float64 {
	full := n / 1000
	s := float64(full) * (999 * 1000 / 2) * 0.25
	for i := full * 1000; i < n; i++ {
		s += value(i)
	}
	return s
}

// fillF64 sets xs[i] to value(first+i).
func fillF64(xs []float64, first int) {
	for i := range xs {
		xs[i] = value(first + i)
	}
}

// writeF64File writes a file of size bytes (a multiple of 8) holding
// value(i) as little-endian float64, fsyncs it so that its pages can be
// dropped for cold reads, and settles it in the page cache.
func writeF64File(path string, size int64) error {
	return writeFile(path, size, 8, genF64)
}

func genF64(b []byte, first int) {
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], math.Float64bits(value(first+i/8)))
	}
}

// writeF32File is writeF64File for little-endian float32.
func writeF32File(path string, size int64) error {
	return writeFile(path, size, 4, func(b []byte, first int) {
		for i := 0; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(value(first+i/4))))
		}
	})
}

func writeFile(path string, size int64, elem int, gen func(b []byte, first int)) error {
	if err := writeGenerated(path, size, elem, gen); err != nil {
		return err
	}
	return settle(path)
}

func writeGenerated(path string, size int64, elem int, gen func(b []byte, first int)) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		b := buf[:min(int64(len(buf)), size-off)]
		gen(b, int(off)/elem)
		if _, err := f.Write(b); err != nil {
			return err
		}
	}
	return f.Sync()
}

// The scan every figure runs: sumF64 for float64 elements, sumF32 for
// float32 ones. Both are the same kernel — 128 bytes per iteration into
// eight accumulators, packed adds on amd64 (SSE2, kernels_amd64.s), eight
// scalar chains elsewhere — so that a core adds faster than memory
// delivers and a scan measures how fast the bytes arrive, not the loop:
// float32 is scanned at the same bytes per second as float64. Float32
// elements are added in float32 within blocks of f32Block elements (32
// per accumulator lane, the way NumPy's pairwise float32 sums work), each
// block's sum then in float64; the suite's data are summed exactly either
// way.
const (
	f64Block = 16   // elements per iteration of the float64 kernel
	f32Block = 1024 // elements per float32 block (32 iterations of 32)
)

// sumF64 sums xs with the scan kernel, the last partial iteration with a
// plain loop.
func sumF64(xs []float64) float64 {
	n := len(xs) / f64Block * f64Block
	s := sumF64Blocks(xs[:n])
	for _, x := range xs[n:] {
		s += x
	}
	return s
}

// sumF32 is sumF64 for float32 elements.
func sumF32(xs []float32) float64 {
	n := len(xs) / f32Block * f32Block
	s := sumF32Blocks(xs[:n])
	for _, x := range xs[n:] {
		s += float64(x)
	}
	return s
}

// splitCells is the gather ceiling's kernel: it splits interleaved
// 16-byte records, an 8-byte integer then an 8-byte float, into two
// columns (len(cells) = 2·len(ints) = 2·len(floats)). It is the fastest
// plain Go loop for it found on the development machine: blocks of
// gatherBlock records, each block split one column at a time (two short
// passes, one output stream each), which ran faster than one pass writing
// both columns (BenchmarkGather in this package's tests compares them).
func splitCells(ints []int64, floats []float64, cells []uint64) {
	for len(ints) > 0 {
		k := min(gatherBlock, len(ints))
		c := cells[: 2*k : 2*k]
		a := ints[:k:k]
		for i := range a {
			a[i] = int64(c[2*i])
		}
		f := floats[:k:k]
		for i := range f {
			f[i] = math.Float64frombits(c[2*i+1])
		}
		ints, floats, cells = ints[k:], floats[k:], cells[2*k:]
	}
}

// gatherBlock is splitCells' block: 8 KiB of records, 4 KiB of each
// column, well inside the first-level cache.
const gatherBlock = 512

// splitCellsOnePass is splitCells in one pass writing both columns, the
// plainest form; BenchmarkGather compares the two.
func splitCellsOnePass(ints []int64, floats []float64, cells []uint64) {
	cells = cells[:2*len(ints)]
	floats = floats[:len(ints)]
	for i := range ints {
		ints[i] = int64(cells[2*i])
		floats[i] = math.Float64frombits(cells[2*i+1])
	}
}

// decodeF64 is the portable decoding a program does after os.ReadFile.
func decodeF64(dst []float64, b []byte) {
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
}

// readChunks reads the whole of r through one reused 1 MiB buffer, the
// way the read(2) ceiling is measured, and returns the byte count.
func readChunks(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// checkSum fails when a scan produced the wrong sum: a figure measured on
// wrong data is no figure.
func checkSum(what string, got float64, n int) error {
	if want := expectedSum(n); got != want {
		return fmt.Errorf("%s: sum of %d elements is %v, want %v", what, n, got, want)
	}
	return nil
}

// timed measures fn.
func timed(fn func() error) (time.Duration, error) {
	t := time.Now()
	err := fn()
	return time.Since(t), err
}

// gbps converts bytes in d to GB/s.
func gbps(bytes int64, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e9 }

// asBytes exposes a float slice's memory for read(2) and copies.
func asBytes[T float32 | float64](xs []T) []byte { return unsafeslice.Bytes(xs) }

// asUint64 and asInt64 reinterpret float64 memory.
func asUint64(xs []float64) []uint64 { return unsafeslice.Cast[uint64](asBytes(xs)) }
func asInt64(xs []float64) []int64   { return unsafeslice.Cast[int64](asBytes(xs)) }
