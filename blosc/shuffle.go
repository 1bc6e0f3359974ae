package blosc

import "encoding/binary"

// Byte shuffle: a block of n elements of size k becomes k planes of n
// bytes, plane j holding byte j of every element; the bytes after the last
// whole element stay where they are.

// shuffleBytes writes src's byte shuffle into dst (len(dst) == len(src)).
func shuffleBytes(dst, src []byte, k int) {
	n := len(src) / k
	if k == 8 {
		transpose8(dst, src, n, true)
	} else {
		for j := 0; j < k; j++ {
			plane := dst[j*n : j*n+n]
			for i := range plane {
				plane[i] = src[i*k+j]
			}
		}
	}
	copy(dst[n*k:], src[n*k:])
}

// unshuffleBytes undoes shuffleBytes.
func unshuffleBytes(dst, src []byte, k int) {
	n := len(src) / k
	switch k {
	case 8:
		transpose8(dst, src, n, false)
	case 4:
		p0, p1, p2, p3 := src[:n], src[n:2*n], src[2*n:3*n], src[3*n:4*n]
		d := dst[:4*n]
		for i := range p0 {
			e := d[4*i : 4*i+4 : 4*i+4]
			e[0], e[1], e[2], e[3] = p0[i], p1[i], p2[i], p3[i]
		}
	case 2:
		p0, p1 := src[:n], src[n:2*n]
		d := dst[:2*n]
		for i := range p0 {
			d[2*i], d[2*i+1] = p0[i], p1[i]
		}
	default:
		for j := 0; j < k; j++ {
			plane := src[j*n : j*n+n]
			for i, b := range plane {
				dst[i*k+j] = b
			}
		}
	}
	copy(dst[n*k:], src[n*k:])
}

// transpose8 moves bytes between 8 planes of n bytes (planar) and n
// elements of 8 bytes, eight elements at a time as an 8×8 byte matrix
// transpose in registers: toPlanes shuffles, otherwise unshuffles.
func transpose8(dst, src []byte, n int, toPlanes bool) {
	le := binary.LittleEndian
	i := 0
	for ; i+8 <= n; i += 8 {
		var r [8]uint64
		if toPlanes {
			e := src[i*8 : i*8+64]
			for j := range r {
				r[j] = le.Uint64(e[8*j:])
			}
		} else {
			for j := range r {
				r[j] = le.Uint64(src[j*n+i:])
			}
		}
		transposeBytes8(&r)
		if toPlanes {
			for j := range r {
				le.PutUint64(dst[j*n+i:], r[j])
			}
		} else {
			e := dst[i*8 : i*8+64]
			for j := range r {
				le.PutUint64(e[8*j:], r[j])
			}
		}
	}
	for ; i < n; i++ {
		for j := 0; j < 8; j++ {
			if toPlanes {
				dst[j*n+i] = src[i*8+j]
			} else {
				dst[i*8+j] = src[j*n+i]
			}
		}
	}
}

// transposeBytes8 transposes the 8×8 byte matrix whose row j is r[j]
// (column c is byte c, the least significant first): three rounds of
// swapping the off-diagonal halves of 4×4, 2×2 and 1×1 blocks.
func transposeBytes8(r *[8]uint64) {
	swap := func(a, b *uint64, shift uint, mask uint64) {
		t := ((*a >> shift) ^ *b) & mask
		*b ^= t
		*a ^= t << shift
	}
	for a := 0; a < 4; a++ {
		swap(&r[a], &r[a+4], 32, 0x00000000ffffffff)
	}
	for _, a := range [4]int{0, 1, 4, 5} {
		swap(&r[a], &r[a+2], 16, 0x0000ffff0000ffff)
	}
	for _, a := range [4]int{0, 2, 4, 6} {
		swap(&r[a], &r[a+1], 8, 0x00ff00ff00ff00ff)
	}
}

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

// bitUnshuffle undoes bitShuffle.
func bitUnshuffle(dst, src []byte, k int) {
	n := len(src) / k
	if n%8 != 0 {
		copy(dst, src)
		return
	}
	row := n / 8
	for j := 0; j < k; j++ {
		rows := src[8*j*row : 8*(j+1)*row]
		for g := 0; g < row; g++ {
			var x uint64
			for b := 0; b < 8; b++ {
				x |= uint64(rows[b*row+g]) << (8 * b)
			}
			x = transposeBits8(x)
			base := 8*g*k + j
			for b := 0; b < 8; b++ {
				dst[base+b*k] = byte(x >> (8 * b))
			}
		}
	}
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
