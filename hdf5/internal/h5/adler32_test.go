package h5

import (
	stdadler32 "hash/adler32"
	"math/rand"
	"testing"

	"github.com/mmapkit/mmapkit/internal/cputime"
)

// adler32 agrees with hash/adler32 around its block and reduction sizes,
// on random bytes and on all-255 bytes (the largest sums), continuing
// from any checksum.
func TestAdler32(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 7, 8, 127, 128, 129, 255, 5503, 5504, 5505, 5552, 5553, 11008, 100003, 256 << 10} {
		random := make([]byte, n)
		rnd.Read(random)
		ones := make([]byte, n)
		for i := range ones {
			ones[i] = 255
		}
		for _, b := range [][]byte{random, ones} {
			if got, want := adler32(1, b), adler32std(b); got != want {
				t.Fatalf("%d bytes: %#08x, hash/adler32 %#08x", n, got, want)
			}
			if n > 10 {
				if got, want := adler32(adler32(1, b[:n/3]), b[n/3:]), adler32std(b); got != want {
					t.Fatalf("%d bytes in two: %#08x, hash/adler32 %#08x", n, got, want)
				}
			}
		}
	}
}

func adler32std(b []byte) uint32 { return stdadler32.Checksum(b) }

func BenchmarkAdler32(b *testing.B) {
	buf := make([]byte, 256<<10)
	rand.New(rand.NewSource(1)).Read(buf)
	b.Run("hash/adler32", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		cpu := cputime.Process()
		for b.Loop() {
			adler32std(buf)
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("lanes", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		cpu := cputime.Process()
		for b.Loop() {
			adler32(1, buf)
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
	})
}
