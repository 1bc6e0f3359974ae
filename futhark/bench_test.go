package futhark

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// benchSize is the binary benchmark size: 1 GiB unless
// MMAPKIT_BENCH_SIZE says otherwise.
func benchSize(b *testing.B) int64 {
	if s := os.Getenv("MMAPKIT_BENCH_SIZE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 4 {
			b.Fatalf("bad MMAPKIT_BENCH_SIZE %q", s)
		}
		return n
	}
	return 1 << 30
}

// textBenchElems is the element count of the text benchmarks: 8M, or
// fewer when MMAPKIT_BENCH_SIZE is smaller.
func textBenchElems(b *testing.B) int {
	return int(min(benchSize(b)/4, 8<<20))
}

// writeF32File writes one [n]f32 binary value, aligned or at
// futhark-data's offset 15, and returns its path.
func writeF32File(b *testing.B, n int64, align int) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "f32.data")
	err := WriteFile(p, &Options{Align: align}, func(e *Encoder) error {
		if err := e.BeginBinary(layout.F32, []int64{n}); err != nil {
			return err
		}
		chunk := make([]float32, 1<<16)
		for i := range chunk {
			chunk[i] = float32(i%1000) * 0.5
		}
		for left := n; left > 0; {
			k := min(left, int64(len(chunk)))
			if err := e.WriteElems(unsafeslice.Bytes(chunk[:k])); err != nil {
				return err
			}
			left -= k
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

var sinkF float32

func sumF32(xs []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		s0 += xs[i]
		s1 += xs[i+1]
		s2 += xs[i+2]
		s3 += xs[i+3]
	}
	for ; i < len(xs); i++ {
		s0 += xs[i]
	}
	return s0 + s1 + s2 + s3
}

// BenchmarkBinaryF32 compares reading a large f32 array: the zero-copy
// view of an aligned file against a raw scan of the same mapping, and the
// copying read of an unaligned (futhark-data) file against copy() of the
// same bytes.
func BenchmarkBinaryF32(b *testing.B) {
	size := benchSize(b) / 4 * 4
	n := size / 4
	b.Run("aligned/View", func(b *testing.B) {
		p := writeF32File(b, n, AlignElement)
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f, err := Open(p, nil)
			if err != nil {
				b.Fatal(err)
			}
			xs, err := View[float32](f, 0)
			if err != nil {
				b.Fatal(err)
			}
			sinkF = sumF32(xs)
			f.Close()
		}
	})
	b.Run("aligned/rawscan", func(b *testing.B) {
		p := writeF32File(b, n, AlignElement)
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			mf, err := mmapfile.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			r, err := mf.MapAll()
			if err != nil {
				b.Fatal(err)
			}
			data := r.Bytes()
			off := len(data) - int(size)
			sinkF = sumF32(unsafeslice.Cast[float32](data[off:]))
			mf.Close()
		}
	})
	b.Run("unaligned/ReadAt", func(b *testing.B) {
		p := writeF32File(b, n, AlignNone)
		f, err := Open(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if _, err := View[float32](f, 0); err == nil {
			b.Fatal("payload at 15 should not be viewable")
		}
		dst := make([]float32, n)
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := ReadAt(f, 0, 0, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unaligned/copy", func(b *testing.B) {
		p := writeF32File(b, n, AlignNone)
		mf, err := mmapfile.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		defer mf.Close()
		r, err := mf.MapAll()
		if err != nil {
			b.Fatal(err)
		}
		src := r.Bytes()[15:]
		dst := make([]byte, size)
		b.SetBytes(size)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			copy(dst, src)
		}
	})
}

// textArray returns the canonical text of a random [n]t array and its
// tokens' values.
func textArray(b *testing.B, t layout.Type, n int) (Value, []byte) {
	r := rand.New(rand.NewPCG(1, 1))
	data := make([]byte, n*4)
	for i := 0; i < n; i++ {
		var u uint32
		if t == layout.F32 {
			u = math.Float32bits(float32(r.NormFloat64() * 1000))
		} else {
			u = uint32(r.Int32N(2000000) - 1000000)
		}
		binary.LittleEndian.PutUint32(data[i*4:], u)
	}
	v := Value{Type: t, Shape: []int64{int64(n)}, Data: data}
	var buf bytes.Buffer
	if err := NewEncoder(&buf).EncodeText(v); err != nil {
		b.Fatal(err)
	}
	return v, buf.Bytes()
}

func benchTextParse(b *testing.B, t layout.Type) {
	n := textBenchElems(b)
	_, txt := textArray(b, t, n)
	// index: the validating scan of Open, which keeps the decoded values
	// (up to 64 MiB); reader: NewReader's, a Decoder over an io.ReaderAt;
	// decode: one parse producing the payload, what Read of a text value
	// not kept does.
	b.Run("index", func(b *testing.B) {
		b.SetBytes(int64(len(txt)))
		for i := 0; i < b.N; i++ {
			if _, err := memFile(txt, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reader", func(b *testing.B) {
		b.SetBytes(int64(len(txt)))
		for i := 0; i < b.N; i++ {
			if _, err := newReader(txt, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(txt)))
		for i := 0; i < b.N; i++ {
			if _, err := decodeText(txt, 0, len(txt), Options{}, int64(n*4)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		// Baseline: split the same text into tokens and convert each with
		// strconv (no validation of the array syntax).
		b.SetBytes(int64(len(txt)))
		out := make([]byte, 0, n*4)
		for i := 0; i < b.N; i++ {
			out = out[:0]
			s := txt[1:]
			for len(s) > 0 {
				j := bytes.IndexAny(s, "fi")
				if j < 0 {
					break
				}
				tok := string(s[:j])
				var u uint32
				if t == layout.F32 {
					x, err := strconv.ParseFloat(tok, 32)
					if err != nil {
						b.Fatal(err)
					}
					u = math.Float32bits(float32(x))
				} else {
					x, err := strconv.ParseInt(tok, 10, 32)
					if err != nil {
						b.Fatal(err)
					}
					u = uint32(x)
				}
				out = binary.LittleEndian.AppendUint32(out, u)
				s = s[j+3:]
				if len(s) >= 2 && s[0] == ',' {
					s = s[2:]
				}
			}
		}
	})
}

func benchTextPrint(b *testing.B, t layout.Type) {
	n := textBenchElems(b)
	v, txt := textArray(b, t, n)
	b.Run("futhark", func(b *testing.B) {
		b.SetBytes(int64(len(txt)))
		w := bufio.NewWriterSize(io.Discard, 1<<16)
		for i := 0; i < b.N; i++ {
			if err := NewEncoder(w).EncodeText(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strconv", func(b *testing.B) {
		// Baseline: strconv's shortest formatting with the same separators
		// and suffixes (not futhark-data's digits).
		b.SetBytes(int64(len(txt)))
		buf := make([]byte, 0, 1<<16)
		for i := 0; i < b.N; i++ {
			buf = append(buf[:0], '[')
			for k := 0; k < n; k++ {
				if k > 0 {
					buf = append(buf, ',', ' ')
				}
				u := binary.LittleEndian.Uint32(v.Data[k*4:])
				if t == layout.F32 {
					buf = strconv.AppendFloat(buf, float64(math.Float32frombits(u)), 'g', -1, 32)
					buf = append(buf, "f32"...)
				} else {
					buf = strconv.AppendInt(buf, int64(int32(u)), 10)
					buf = append(buf, "i32"...)
				}
				if len(buf) > 1<<15 {
					io.Discard.Write(buf)
					buf = buf[:0]
				}
			}
		}
	})
}

func BenchmarkTextParseF32(b *testing.B) { benchTextParse(b, layout.F32) }
func BenchmarkTextParseI32(b *testing.B) { benchTextParse(b, layout.I32) }
func BenchmarkTextPrintF32(b *testing.B) { benchTextPrint(b, layout.F32) }
func BenchmarkTextPrintI32(b *testing.B) { benchTextPrint(b, layout.I32) }

// BenchmarkFormatWrite measures the format's writer against write(2): a
// [n]f32 value (256 MiB, or MMAPKIT_BENCH_SIZE if smaller) streamed from a
// mapped Futhark file into a new one by format.Write (temporary file,
// fsync, rename), and the same bytes written from memory in 8 MiB write(2)
// calls, then fsync and rename. The two alternate, so both see the same
// load; "ratio" is the writer's throughput over write(2)'s. The nosync
// pair leaves out the fsync (the Encode path, to a file): it shows what
// the writer costs on top of the writes themselves.
func BenchmarkFormatWrite(b *testing.B) {
	size := min(benchSize(b), 256<<20) / 4 * 4
	src := writeF32File(b, size/4, AlignNone)
	ff, err := format.Open(src, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ff.Close()
	bytes, err := format.ReadAll(ff, 0, layout.RowMajor, binary.LittleEndian)
	if err != nil {
		b.Fatal(err)
	}
	fut, _ := format.Lookup("futhark")
	dir := b.TempDir()
	write2 := func(sync bool) error {
		p := filepath.Join(dir, "w2.tmp") // what the writer does with its target
		if !sync {
			p = filepath.Join(dir, "w2.fut")
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		for off := 0; off < len(bytes); off += format.StreamBytes {
			if _, err := f.Write(bytes[off:min(len(bytes), off+format.StreamBytes)]); err != nil {
				return err
			}
		}
		if sync {
			if err := f.Sync(); err != nil {
				return err
			}
		}
		if err := f.Close(); err != nil || !sync {
			return err
		}
		return os.Rename(p, filepath.Join(dir, "w2.fut"))
	}
	ours := func(sync bool) error {
		if sync {
			return format.Write(filepath.Join(dir, "f.fut"), ff, nil)
		}
		f, err := os.Create(filepath.Join(dir, "e.fut"))
		if err != nil {
			return err
		}
		if err := fut.Encode(f, ff, nil); err != nil {
			return err
		}
		return f.Close()
	}
	for _, sync := range []bool{true, false} {
		name := "fsync"
		if !sync {
			name = "nosync"
		}
		b.Run(name, func(b *testing.B) {
			var tw, to time.Duration
			timed := func(fn func(bool) error) time.Duration {
				t0 := time.Now()
				if err := fn(sync); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			for i := 0; i < b.N; i++ {
				if i%2 == 0 { // alternate which goes first
					tw += timed(write2)
					to += timed(ours)
				} else {
					to += timed(ours)
					tw += timed(write2)
				}
			}
			b.ReportMetric(float64(size)*float64(b.N)/tw.Seconds()/1e6, "write2-MB/s")
			b.ReportMetric(float64(size)*float64(b.N)/to.Seconds()/1e6, "writer-MB/s")
			b.ReportMetric(tw.Seconds()/to.Seconds(), "ratio")
		})
	}
}
