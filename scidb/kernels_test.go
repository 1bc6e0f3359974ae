package scidb

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
)

// TestGather checks gather's loops (values read as aligned words, or
// assembled from bytes at any offset and stride) against a byte copy.
func TestGather(t *testing.T) {
	src := unsafeslice.Bytes(make([]uint64, (4096+64)/8)) // 8-byte aligned
	for i := range src {
		src[i] = byte(i*7 + i>>8)
	}
	for _, size := range []int{1, 2, 4, 8, 16, 3} {
		for _, stride := range []int{size, size + 1, 2 * size, 3 * size, 17, 24, 32} {
			for off := 0; off < 8; off++ {
				for _, n := range []int{0, 1, 2, 7, 100} {
					if n > 0 && off+(n-1)*stride+size > len(src) {
						continue
					}
					want := make([]byte, n*size)
					for i := 0; i < n; i++ {
						copy(want[i*size:(i+1)*size], src[off+i*stride:])
					}
					got := make([]uint64, n*size/8+2) // 8-byte aligned memory
					dst := unsafeslice.Bytes(got)[:n*size]
					gather(dst, size, src, off, stride, n)
					assert.Equal(t, want, dst, "size %d stride %d off %d n %d", size, stride, off, n)
				}
			}
		}
	}
}
