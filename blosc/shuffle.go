package blosc

import (
	"encoding/binary"

	"github.com/mmapkit/mmapkit/internal/byteshuffle"
)

// The byte shuffle is package byteshuffle's, shared with HDF5's filter.
var shuffleBytes, unshuffleBytes = byteshuffle.Shuffle, byteshuffle.Unshuffle

// Bit shuffle: a block of n elements of size k, n a multiple of 8,
// becomes 8k rows of n/8 bytes, row 8j+b holding bit b of byte j of every
// element (element i at bit i%8 of byte i/8). A block whose element count
// is not a multiple of 8 is left as it is, and the bytes after the last
// whole element stay where they are, as c-blosc does.

// bitShuffle writes src's bit shuffle into dst (len(dst) == len(src)).
func bitShuffle(dst, src []byte, k int) {
	n := len(src) / k
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	row := n / 8
	for j := 0; j < k; j++ {
		for g := 0; g < row; g++ {
			var x uint64
			base := 8*g*k + j
			for b := 0; b < 8; b++ {
				x |= uint64(src[base+b*k]) << (8 * b)
			}
			x = transposeBits8(x)
			for b := 0; b < 8; b++ {
				dst[(8*j+b)*row+g] = byte(x >> (8 * b))
			}
		}
	}
	copy(dst[n*k:], src[n*k:])
}

// bitUnshuffle undoes bitShuffle in two steps: the bit rows of each byte
// plane become the plane's bytes (what a byte shuffle makes), 64 at a
// time — a byte transpose of 8 bytes of each of the plane's 8 rows, then
// a bit transpose of each word —, and the planes are unshuffled into
// elements.
func bitUnshuffle(dst, src []byte, k int) {
	n := len(src) / k
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	le := binary.LittleEndian
	planes := scratchBuffers.Get(n * k)
	defer scratchBuffers.Put(planes)
	row := n / 8
	for j := range k {
		rows := src[8*j*row : 8*(j+1)*row]
		plane := planes[j*n : (j+1)*n]
		r0, r1, r2, r3 := rows[0*row:1*row], rows[1*row:2*row], rows[2*row:3*row], rows[3*row:4*row]
		r4, r5, r6, r7 := rows[4*row:5*row], rows[5*row:6*row], rows[6*row:7*row], rows[7*row:8*row]
		g := 0
		for ; g+8 <= row; g += 8 {
			v0, v1, v2, v3, v4, v5, v6, v7 := byteshuffle.TransposeBytes8(
				le.Uint64(r0[g:]), le.Uint64(r1[g:]), le.Uint64(r2[g:]), le.Uint64(r3[g:]),
				le.Uint64(r4[g:]), le.Uint64(r5[g:]), le.Uint64(r6[g:]), le.Uint64(r7[g:]))
			q := plane[8*g : 8*g+64]
			le.PutUint64(q[0:], transposeBits8(v0))
			le.PutUint64(q[8:], transposeBits8(v1))
			le.PutUint64(q[16:], transposeBits8(v2))
			le.PutUint64(q[24:], transposeBits8(v3))
			le.PutUint64(q[32:], transposeBits8(v4))
			le.PutUint64(q[40:], transposeBits8(v5))
			le.PutUint64(q[48:], transposeBits8(v6))
			le.PutUint64(q[56:], transposeBits8(v7))
		}
		for ; g < row; g++ {
			var x uint64
			for b := range 8 {
				x |= uint64(rows[b*row+g]) << (8 * b)
			}
			le.PutUint64(plane[8*g:], transposeBits8(x))
		}
	}
	unshuffleBytes(dst[:n*k], planes, k)
	copy(dst[n*k:], src[n*k:])
}

// transposeBits8 transposes the 8×8 bit matrix whose row r is byte r of x
// and column c bit c: bit c of byte r becomes bit r of byte c.
func transposeBits8(x uint64) uint64 {
	t := (x ^ (x >> 7)) & 0x00aa00aa00aa00aa
	x ^= t ^ (t << 7)
	t = (x ^ (x >> 14)) & 0x0000cccc0000cccc
	x ^= t ^ (t << 14)
	t = (x ^ (x >> 28)) & 0x00000000f0f0f0f0
	x ^= t ^ (t << 28)
	return x
}
