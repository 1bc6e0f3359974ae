package scidb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// benchSize is the benchmark file size: 1 GiB, or MMAPKIT_BENCH_SIZE bytes.
func benchSize(b *testing.B) int64 {
	if s := os.Getenv("MMAPKIT_BENCH_SIZE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("MMAPKIT_BENCH_SIZE=%q: want a positive byte count", s)
		}
		return n
	}
	return 1 << 30
}

const benchFormat = "(int64, double, int32 null)"

// writeBenchFile writes about size bytes of (int64, double, int32 null)
// cells, every 7th int32 null, and returns the path.
func writeBenchFile(b *testing.B, size int64) (string, *Schema) {
	b.Helper()
	f := mustFormat(b, benchFormat)
	stride, _ := f.Stride()
	n := size / int64(stride)
	path := filepath.Join(b.TempDir(), "bench.scidb")
	fh, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(fh, 1<<20)
	var cell [21]byte
	for i := int64(0); i < n; i++ {
		binary.LittleEndian.PutUint64(cell[0:], uint64(i))
		binary.LittleEndian.PutUint64(cell[8:], math.Float64bits(float64(i)*0.5))
		if i%7 == 0 {
			cell[16] = 0
			binary.LittleEndian.PutUint32(cell[17:], 0)
		} else {
			cell[16] = 0xff
			binary.LittleEndian.PutUint32(cell[17:], uint32(i))
		}
		w.Write(cell[:])
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		b.Fatal(err)
	}
	return path, f
}

// BenchmarkDecodeFixed decodes a file of fixed-size cells into columns,
// against copy() of the same mapped bytes. Throughput is file bytes.
func BenchmarkDecodeFixed(b *testing.B) {
	path, f := writeBenchFile(b, benchSize(b))
	m, err := Open(path, &Options{Format: f, Lenient: true})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	data := m.Bytes()
	b.Run("copy", func(b *testing.B) {
		dst := make([]byte, len(data))
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			copy(dst, data)
		}
	})
	// Decode allocates its columns; so does this baseline.
	b.Run("alloc+copy", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			dst := make([]byte, len(data))
			copy(dst, data)
			benchSink += int64(dst[len(dst)-1])
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Decode(data, &Options{Format: f, Lenient: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DecodeStrict", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Decode(data, &Options{Format: f}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStridedColumn reads attributes of the mapped file in place,
// against copy() of the same mapped bytes. Throughput is file bytes: a
// strided column touches every cache line of the file.
func BenchmarkStridedColumn(b *testing.B) {
	path, f := writeBenchFile(b, benchSize(b))
	m, err := Open(path, &Options{Format: f, Lenient: true})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	data := m.Bytes()
	size := int64(len(data))
	b.Run("copy", func(b *testing.B) {
		dst := make([]byte, len(data))
		b.SetBytes(size)
		for b.Loop() {
			copy(dst, data)
		}
	})
	ids, _ := ColumnOf[int64](m, 0)
	xs, _ := ColumnOf[float64](m, 1)
	ks, _ := ColumnOf[int32](m, 2)
	b.Run("Copy/int64", func(b *testing.B) {
		dst := make([]int64, m.Len())
		b.SetBytes(size)
		for b.Loop() {
			if _, err := ids.Copy(dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Copy/double", func(b *testing.B) {
		dst := make([]float64, m.Len())
		b.SetBytes(size)
		for b.Loop() {
			if _, err := xs.Copy(dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Copy/int32null", func(b *testing.B) {
		dst := make([]int32, m.Len())
		b.SetBytes(size)
		for b.Loop() {
			if _, err := ks.Copy(dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("At/int64", func(b *testing.B) {
		b.SetBytes(size)
		n := m.Len()
		var sum int64
		for b.Loop() {
			for i := int64(0); i < n; i++ {
				v, _, _ := ids.At(i)
				sum += v
			}
		}
		benchSink = sum
	})
}

var benchSink int64

// BenchmarkReader streams the cells of a file through a Reader (memory
// bounded by a cell), against copy() of the same bytes.
func BenchmarkReader(b *testing.B) {
	size := min(benchSize(b), 256<<20)
	path, f := writeBenchFile(b, size)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("copy", func(b *testing.B) {
		dst := make([]byte, len(data))
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			copy(dst, data)
		}
	})
	b.Run("Read", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		row := make(Row, len(f.Attrs))
		for b.Loop() {
			r := NewDecoder(bytes.NewReader(data), &Options{Format: f, Lenient: true})
			var sum int64
			for r.Read(row) == nil {
				sum += row[0].Int64()
			}
			benchSink = sum
		}
	})
}

// BenchmarkEncodeFixed writes a table of fixed-size cells, against copy()
// of the same number of bytes. Throughput is file bytes.
func BenchmarkEncodeFixed(b *testing.B) {
	size := min(benchSize(b), 256<<20)
	path, f := writeBenchFile(b, size)
	t, err := DecodeFile(path, &Options{Format: f, Lenient: true})
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("copy", func(b *testing.B) {
		dst := make([]byte, len(data))
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			copy(dst, data)
		}
	})
	b.Run("Encode", func(b *testing.B) {
		var buf bytes.Buffer
		buf.Grow(len(data))
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			buf.Reset()
			if err := Encode(&buf, t); err != nil {
				b.Fatal(err)
			}
		}
		if !bytes.Equal(buf.Bytes(), data) {
			b.Fatal("Encode did not reproduce the file")
		}
	})
}
