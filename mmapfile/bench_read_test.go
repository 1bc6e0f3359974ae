package mmapfile

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// The guarded copies check the file's size (fstat) when the last byte they
// copied is zero: a range past a truncation inside the last page reads as
// zeros instead of faulting. These measure the copy with and without that
// check: an 8-byte read that ends in a non-zero byte (no fstat), one that
// ends in a zero byte (fstat), and a 1 MiB read.
//
//	go test ./mmapfile -run '^$' -bench 'ReadAt' -count 5
func benchReadAt(b *testing.B, n int, last byte) {
	p, _ := writeFile(b, 4<<20)
	r := mapAllForBench(b, p)
	// Find an offset whose byte n-1 further on is last.
	off := int64(0)
	for r.Bytes()[off+int64(n)-1] != last {
		off++
	}
	buf := make([]byte, n)
	b.SetBytes(int64(n))
	for b.Loop() {
		if _, err := r.ReadAt(buf, off); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadAt8NonZeroEnd(b *testing.B) { benchReadAt(b, 8, 1) }
func BenchmarkReadAt8ZeroEnd(b *testing.B)    { benchReadAt(b, 8, 0) }
func BenchmarkReadAt1MiB(b *testing.B)        { benchReadAt(b, 1<<20, 0) }

func BenchmarkCopyF64x1(b *testing.B) {
	p, _ := writeFile(b, 1<<16)
	r := mapAllForBench(b, p)
	dst := make([]float64, 1)
	for b.Loop() {
		if err := Copy(dst, r, 64, binary.LittleEndian); err != nil {
			b.Fatal(err)
		}
	}
}

// An 8-byte read ending in a zero byte, in a file of zeros: the fstat path.
func BenchmarkReadAt8Zeros(b *testing.B) {
	p := filepath.Join(b.TempDir(), "zeros")
	if err := os.WriteFile(p, make([]byte, 1<<16), 0o644); err != nil {
		b.Fatal(err)
	}
	r := mapAllForBench(b, p)
	buf := make([]byte, 8)
	b.SetBytes(8)
	for b.Loop() {
		if _, err := r.ReadAt(buf, 64); err != nil {
			b.Fatal(err)
		}
	}
}

// mapAllForBench maps the whole file at p read-only until b ends.
func mapAllForBench(b *testing.B, p string) *Region {
	f, err := Open(p)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	r, err := f.MapAll()
	if err != nil {
		b.Fatal(err)
	}
	return r
}
