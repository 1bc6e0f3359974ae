package blosc

import "testing"

// BenchmarkUnshuffle undoes the byte shuffle of one 1 MiB block, the
// block size of numcodecs' default frames of 8-byte elements.
func BenchmarkUnshuffle(b *testing.B) {
	for _, k := range []int{8, 4} {
		b.Run("typesize="+string(rune('0'+k)), func(b *testing.B) {
			src, dst := make([]byte, 1<<20), make([]byte, 1<<20)
			for i := range src {
				src[i] = byte(i * 31)
			}
			b.SetBytes(1 << 20)
			for b.Loop() {
				unshuffleBytes(dst, src, k)
			}
		})
	}
}
