package benchmarks

import (
	"bufio"
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
// value(i) as little-endian float64, and fsyncs it so that its pages can
// be dropped for cold reads.
func writeF64File(path string, size int64) error {
	return writeFile(path, size, 8, func(b []byte, first int) {
		for i := 0; i+8 <= len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], math.Float64bits(value(first+i/8)))
		}
	})
}

// writeF32File is writeF64File for little-endian float32.
func writeF32File(path string, size int64) error {
	return writeFile(path, size, 4, func(b []byte, first int) {
		for i := 0; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(value(first+i/4))))
		}
	})
}

func writeFile(path string, size int64, elem int, gen func(b []byte, first int)) (err error) {
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

// sumF64 is the scan every float64 figure runs: eight independent
// accumulators, so that the loop runs at memory speed rather than at the
// latency of one floating-point add.
func sumF64(xs []float64) float64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	for len(xs) >= 8 {
		v := xs[:8:8]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
		s4 += v[4]
		s5 += v[5]
		s6 += v[6]
		s7 += v[7]
		xs = xs[8:]
	}
	for _, x := range xs {
		s0 += x
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// sumF32 is sumF64 for float32 elements, accumulated in float64.
func sumF32(xs []float32) float64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	for len(xs) >= 8 {
		v := xs[:8:8]
		s0 += float64(v[0])
		s1 += float64(v[1])
		s2 += float64(v[2])
		s3 += float64(v[3])
		s4 += float64(v[4])
		s5 += float64(v[5])
		s6 += float64(v[6])
		s7 += float64(v[7])
		xs = xs[8:]
	}
	for _, x := range xs {
		s0 += float64(x)
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
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

// newBufWriter is the buffered writer the text printers write through.
func newBufWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 1<<20) }
