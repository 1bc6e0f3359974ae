package daphne

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
)

// benchSize is the payload size of the benchmarks: 1 GiB, or
// MMAPKIT_BENCH_SIZE bytes.
func benchSize(b *testing.B) int64 {
	if s := os.Getenv("MMAPKIT_BENCH_SIZE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1024 {
			b.Fatalf("MMAPKIT_BENCH_SIZE=%q: want a byte count ≥ 1024", s)
		}
		return n
	}
	return 1 << 30
}

// BenchmarkDenseF64 reads a dense f64 matrix of benchSize bytes (values at
// the misaligned offset 45, so every read copies) beside a plain copy() of
// the same number of bytes in memory, into a preallocated and into a fresh
// buffer, for the ratio.
func BenchmarkDenseF64(b *testing.B) {
	size := benchSize(b)
	const cols = 1024
	rows := size / 8 / cols
	n := rows * cols
	path := filepath.Join(b.TempDir(), "dense.dbdf")
	{
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i)
		}
		if err := WriteDense(path, uint64(rows), cols, v, &WriteOptions{NoMeta: true}); err != nil {
			b.Fatal(err)
		}
	}
	src := make([]byte, n*8)
	for i := range src {
		src[i] = byte(i)
	}
	b.Run("copy", func(b *testing.B) {
		dst := make([]byte, len(src))
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			copy(dst, src)
		}
	})
	b.Run("make+copy", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			dst := make([]byte, len(src))
			copy(dst, src)
		}
	})
	b.Run("Read", func(b *testing.B) {
		f, err := Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		b.SetBytes(n * 8)
		for b.Loop() {
			v, err := Read[float64](f, "matrix")
			if err != nil || int64(len(v)) != n {
				b.Fatal(err)
			}
		}
	})
	b.Run("CopyDenseRange-prealloc", func(b *testing.B) {
		f, err := Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		dst := make([]float64, n)
		b.SetBytes(n * 8)
		for b.Loop() {
			if err := CopyDenseRange(f, dst, 0, uint64(rows), 0, cols); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadDenseRange-64MiB-chunks", func(b *testing.B) {
		f, err := Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		step := uint64(max(1, (64<<20)/(cols*8)))
		b.SetBytes(n * 8)
		for b.Loop() {
			for r := uint64(0); r < uint64(rows); r += step {
				if _, err := ReadDenseRange[float64](f, r, min(r+step, uint64(rows)), 0, cols); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkCSRF64 reads a CSR f64 matrix file of about benchSize bytes
// (10 entries a row) and reports the file's bytes per second.
func BenchmarkCSRF64(b *testing.B) {
	size := benchSize(b)
	const cols, perRow = 100000, 10
	rows := uint64(size / (8 + perRow*16))
	path := filepath.Join(b.TempDir(), "csr.dbdf")
	{
		m := &CSR[float64]{Rows: rows, Cols: cols, RowOffsets: make([]uint64, rows+1), ColIdxs: make([]uint64, rows*perRow), Values: make([]float64, rows*perRow)}
		for i := uint64(0); i < rows; i++ {
			m.RowOffsets[i+1] = (i + 1) * perRow
			for k := uint64(0); k < perRow; k++ {
				m.ColIdxs[i*perRow+k] = k*(cols/perRow) + i%(cols/perRow)
				m.Values[i*perRow+k] = float64(i + k)
			}
		}
		if err := WriteCSR(path, m, &WriteOptions{NoMeta: true}); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	src := make([]byte, st.Size())
	b.Run("copy", func(b *testing.B) {
		dst := make([]byte, len(src))
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			copy(dst, src)
		}
	})
	for _, strict := range []bool{true, false} {
		name := "ReadCSR-strict"
		if !strict {
			name = "ReadCSR-lenient"
		}
		b.Run(name, func(b *testing.B) {
			f, err := Open(path, &Options{Lenient: !strict})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			b.SetBytes(st.Size())
			for b.Loop() {
				m, err := ReadCSR[float64](f)
				if err != nil || m.Rows != rows {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFormatWriteDense writes a dense f64 matrix of benchSize bytes
// (256 MiB at most) through the registry's Write — streamed from its
// source with format.Stream into a temporary file, fsync, rename, .meta —
// and, alternately, the same bytes with plain write(2) calls of 8 MiB into
// a temporary file, fsync and rename (atomicfile.Write: what any writer
// that never leaves a half-written file does). It reports the ratio of
// the two speeds (x-write: 1 is as fast as write(2)).
func BenchmarkFormatWriteDense(b *testing.B) {
	size := min(benchSize(b), 256<<20)
	const cols = 1024
	rows := size / 8 / cols
	v := make([]float64, rows*cols)
	for i := range v {
		v[i] = float64(i)
	}
	rec, data := arrayOf("x", v, rows, cols)
	src := source(rec, data)
	dir := b.TempDir()
	out, raw := filepath.Join(dir, "out.dbdf"), filepath.Join(dir, "raw.bin")
	plain := func() {
		err := atomicfile.Write(raw, 0, func(f *os.File) error {
			for off := 0; off < len(data); off += 8 << 20 {
				if _, err := f.Write(data[off:min(len(data), off+8<<20)]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	var tWrite, tPlain time.Duration
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := range b.N {
		// Alternate which goes first, so that neither always meets the
		// other's writeback.
		t0 := time.Now()
		if i%2 == 1 {
			plain()
		}
		t1 := time.Now()
		if err := Write(out, src, nil); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if i%2 == 0 {
			plain()
		}
		tWrite += t2.Sub(t1)
		tPlain += t1.Sub(t0) + time.Since(t2)
	}
	b.ReportMetric(float64(tPlain)/float64(tWrite), "x-write")
	b.ReportMetric(float64(len(data))*float64(b.N)/tWrite.Seconds()/1e6, "Write-MB/s")
	b.ReportMetric(float64(len(data))*float64(b.N)/tPlain.Seconds()/1e6, "write(2)-MB/s")
}

// BenchmarkFrameColumns reads every column of a frame one after another,
// as a table printer does (format.ScanTable): a frame of 100,000 si8
// columns and 4 rows (rows of 100 KB, read value by value), and one of
// 10 f64 columns and 100,000 rows (read through one mapped window). Each
// column read mapped and unmapped its rows before: 100,000 mappings.
func BenchmarkFrameColumns(b *testing.B) {
	for _, bc := range []struct {
		name       string
		rows, cols int
		col        func(rows int) any
	}{
		{"wide", 4, 100_000, func(rows int) any { return make([]int8, rows) }},
		{"narrow", 100_000, 10, func(rows int) any { return make([]float64, rows) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cols := make([]any, bc.cols)
			for c := range cols {
				cols[c] = bc.col(bc.rows)
			}
			p := filepath.Join(b.TempDir(), "f.dbdf")
			if err := WriteFrame(p, &Frame{Rows: uint64(bc.rows), Columns: cols}, nil); err != nil {
				b.Fatal(err)
			}
			f, err := Open(p, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			size := f.hdr.ColumnTypes[0].Size()
			dst := make([]byte, bc.rows*size)
			b.SetBytes(int64(bc.rows * bc.cols * size))
			for b.Loop() {
				for c := range bc.cols {
					if err := f.ReadArray(c, dst, 0, layout.RowMajor, layout.HostOrder()); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
