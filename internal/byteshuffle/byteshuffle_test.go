package byteshuffle

import (
	"bytes"
	"testing"
)

// naive is the shuffle by its definition.
func naive(src []byte, k int) []byte {
	n := len(src) / k
	out := append([]byte(nil), src...)
	for i := 0; i < n; i++ {
		for j := 0; j < k; j++ {
			out[j*n+i] = src[i*k+j]
		}
	}
	return out
}

// Shuffle is the definition's for every element size and length around
// the fast paths' blocks (8 elements, 64 of a cache line), tails
// included, and Unshuffle undoes it.
func TestShuffleAsDefined(t *testing.T) {
	for k := 1; k <= 17; k++ {
		for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 200, 1000} {
			for _, tail := range []int{0, 1, k - 1} {
				src := make([]byte, n*k+tail)
				for i := range src {
					src[i] = byte(i*131 + i/7)
				}
				want := naive(src, k)
				got := make([]byte, len(src))
				Shuffle(got, src, k)
				if !bytes.Equal(got, want) {
					t.Fatalf("Shuffle of %d elements of %d bytes + %d: differs from the definition", n, k, tail)
				}
				back := make([]byte, len(src))
				Unshuffle(back, got, k)
				if !bytes.Equal(back, src) {
					t.Fatalf("Unshuffle of %d elements of %d bytes + %d: not the source", n, k, tail)
				}
			}
		}
	}
}

func BenchmarkUnshuffle(b *testing.B) {
	for _, k := range []int{8, 4, 2} {
		b.Run("typesize="+string(rune('0'+k)), func(b *testing.B) {
			src, dst := make([]byte, 256<<10), make([]byte, 256<<10)
			for i := range src {
				src[i] = byte(i * 31)
			}
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				Unshuffle(dst, src, k)
			}
		})
	}
}
