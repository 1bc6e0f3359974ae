package benchmarks

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/edsrzf/mmap-go"

	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
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

// BenchmarkFutharkRawScanF32 scans the payload of the same file as
// BenchmarkFutharkViewScanF32 through a raw mapping (mmap-go, no mmapkit):
// the view's cost over the same bytes.
func BenchmarkFutharkRawScanF32(b *testing.B) {
	size := benchSize(b)
	path := filepath.Join(b.TempDir(), "aligned.fut")
	if err := writeFutharkArray(path, layout.F32, size/4, futhark.Align64); err != nil {
		b.Fatal(err)
	}
	f, err := futhark.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	off := f.Entries()[0].Data
	f.Close()
	b.SetBytes(size)
	for b.Loop() {
		file, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		m, err := mmap.Map(file, mmap.RDONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		xs := unsafeslice.Cast[float32](m[off : off+size])
		if err := checkSum("raw futhark f32", sumF32(xs), len(xs)); err != nil {
			b.Fatal(err)
		}
		m.Unmap()
		file.Close()
	}
}

// BenchmarkCeilingMmapScanF32 scans a raw mapping of a float32 file with
// the same loop: the ceiling of BenchmarkFutharkViewScanF32.
func BenchmarkCeilingMmapScanF32(b *testing.B) {
	size := benchSize(b)
	path := filepath.Join(b.TempDir(), "f32.bin")
	if err := writeF32File(path, size); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		sum, n, err := scanRawMappingF32(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := checkSum("raw f32", sum, n); err != nil {
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
		if err := futhark.ReadAt(f, 0, 0, dst); err != nil {
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
		f, err := futhark.NewReader(bytes.NewReader(text), int64(len(text)), nil)
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
