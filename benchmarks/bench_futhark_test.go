package benchmarks

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/layout"
)

func BenchmarkFutharkViewScanF32(b *testing.B) {
	size := benchSize(b)
	path := filepath.Join(b.TempDir(), "aligned.fut")
	if err := writeFutharkArray(path, layout.F32, size/4, futhark.Align64); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		sum, n, err := scanFutharkF32(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := checkSum("futhark", sum, n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFutharkUnalignedDecode copies an unaligned f64 payload into a
// reused slice with futhark.ReadAt; compare BenchmarkCeilingMemmove.
func BenchmarkFutharkUnalignedDecode(b *testing.B) {
	size := benchSize(b)
	path := filepath.Join(b.TempDir(), "unaligned.fut")
	if err := writeFutharkArray(path, layout.F64, size/8, futhark.AlignNone); err != nil {
		b.Fatal(err)
	}
	f, err := futhark.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	dst := make([]float64, size/8)
	b.SetBytes(size)
	for b.Loop() {
		if _, err := futhark.ReadAt(f, 0, 0, dst); err != nil {
			b.Fatal(err)
		}
	}
	if err := checkSum("futhark", sumF64(dst), len(dst)); err != nil {
		b.Fatal(err)
	}
}

func benchText(b *testing.B) []float64 {
	xs := make([]float64, min(benchSize(b)/8, 4<<20))
	fillF64(xs, 0)
	return xs
}

// BenchmarkFutharkTextParse parses the text BenchmarkStrconvParse parses.
func BenchmarkFutharkTextParse(b *testing.B) {
	xs := benchText(b)
	text := appendFutharkText(nil, xs)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		f, err := futhark.NewReader(text, nil)
		if err != nil {
			b.Fatal(err)
		}
		got, err := futhark.Read[float64](f, 0)
		if err != nil {
			b.Fatal(err)
		}
		if len(got) != len(xs) {
			b.Fatalf("%d values, want %d", len(got), len(xs))
		}
	}
}

func BenchmarkFutharkTextPrint(b *testing.B) {
	xs := benchText(b)
	v, err := futhark.NewValue([]int64{int64(len(xs))}, xs)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		enc := futhark.NewEncoder(&buf)
		if err := enc.EncodeText(v); err != nil {
			b.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(buf.Len()))
	}
}
