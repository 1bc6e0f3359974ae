// Package byteshuffle is the byte shuffle of Blosc and of HDF5's shuffle
// filter: n elements of k bytes become k planes of n bytes, plane j
// holding byte j of every element (which makes smooth numbers compress
// better); the bytes after the last whole element stay where they are.
// 8-byte elements (and, undoing it, 4- and 2-byte ones) move eight at a
// time through registers, others byte by byte.
package byteshuffle

import "encoding/binary"

// Shuffle writes src's byte shuffle into dst (len(dst) == len(src)) for
// elements of k ≥ 1 bytes.
func Shuffle(dst, src []byte, k int) {
	n := len(src) / k
	if k == 8 {
		shuffle8(dst, src, n)
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

// Unshuffle undoes Shuffle.
func Unshuffle(dst, src []byte, k int) {
	n := len(src) / k
	switch k {
	case 8:
		unshuffle8(dst, src, n)
	case 4:
		unshuffle4(dst, src, n)
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

// shuffle8 is Shuffle for 8-byte elements: eight elements at a
// time, as an 8×8 byte matrix transposed in registers.
func shuffle8(dst, src []byte, n int) {
	le := binary.LittleEndian
	i := n &^ 7
	p0, p1, p2, p3 := dst[0*n:0*n+i], dst[1*n:1*n+i], dst[2*n:2*n+i], dst[3*n:3*n+i]
	p4, p5, p6, p7 := dst[4*n:4*n+i], dst[5*n:5*n+i], dst[6*n:6*n+i], dst[7*n:7*n+i]
	e := src[:8*i]
	// The length tests are all the bounds checks the loop needs.
	for len(p0) >= 8 && len(p1) >= 8 && len(p2) >= 8 && len(p3) >= 8 &&
		len(p4) >= 8 && len(p5) >= 8 && len(p6) >= 8 && len(p7) >= 8 && len(e) >= 64 {
		r0, r1, r2, r3, r4, r5, r6, r7 := TransposeBytes8(
			le.Uint64(e[0:]), le.Uint64(e[8:]), le.Uint64(e[16:]), le.Uint64(e[24:]),
			le.Uint64(e[32:]), le.Uint64(e[40:]), le.Uint64(e[48:]), le.Uint64(e[56:]))
		le.PutUint64(p0, r0)
		le.PutUint64(p1, r1)
		le.PutUint64(p2, r2)
		le.PutUint64(p3, r3)
		le.PutUint64(p4, r4)
		le.PutUint64(p5, r5)
		le.PutUint64(p6, r6)
		le.PutUint64(p7, r7)
		p0, p1, p2, p3, p4, p5, p6, p7 = p0[8:], p1[8:], p2[8:], p3[8:], p4[8:], p5[8:], p6[8:], p7[8:]
		e = e[64:]
	}
	for ; i < n; i++ {
		for j := range 8 {
			dst[j*n+i] = src[i*8+j]
		}
	}
}

// unshuffle8 is Unshuffle for 8-byte elements: the inverse of
// shuffle8, a cache line of every plane at a time (64 elements), so that
// each line is used whole while it is in the cache: the planes lie a
// multiple of 4 KiB apart and compete for the same L1 sets.
func unshuffle8(dst, src []byte, n int) {
	le := binary.LittleEndian
	i := n &^ 7
	p0, p1, p2, p3 := src[0*n:0*n+i], src[1*n:1*n+i], src[2*n:2*n+i], src[3*n:3*n+i]
	p4, p5, p6, p7 := src[4*n:4*n+i], src[5*n:5*n+i], src[6*n:6*n+i], src[7*n:7*n+i]
	e := dst[:8*i]
	// Whole lines first, then what is left of the planes 8 bytes at a
	// time; the length tests are all the bounds checks the loops need.
	for len(p0) >= 64 && len(p1) >= 64 && len(p2) >= 64 && len(p3) >= 64 &&
		len(p4) >= 64 && len(p5) >= 64 && len(p6) >= 64 && len(p7) >= 64 && len(e) >= 512 {
		for w := 0; w < 64; w += 8 {
			r0, r1, r2, r3, r4, r5, r6, r7 := TransposeBytes8(
				le.Uint64(p0[w:]), le.Uint64(p1[w:]), le.Uint64(p2[w:]), le.Uint64(p3[w:]),
				le.Uint64(p4[w:]), le.Uint64(p5[w:]), le.Uint64(p6[w:]), le.Uint64(p7[w:]))
			q := e[8*w : 8*w+64]
			le.PutUint64(q[0:], r0)
			le.PutUint64(q[8:], r1)
			le.PutUint64(q[16:], r2)
			le.PutUint64(q[24:], r3)
			le.PutUint64(q[32:], r4)
			le.PutUint64(q[40:], r5)
			le.PutUint64(q[48:], r6)
			le.PutUint64(q[56:], r7)
		}
		p0, p1, p2, p3, p4, p5, p6, p7 = p0[64:], p1[64:], p2[64:], p3[64:], p4[64:], p5[64:], p6[64:], p7[64:]
		e = e[512:]
	}
	for len(p0) >= 8 && len(p1) >= 8 && len(p2) >= 8 && len(p3) >= 8 &&
		len(p4) >= 8 && len(p5) >= 8 && len(p6) >= 8 && len(p7) >= 8 && len(e) >= 64 {
		r0, r1, r2, r3, r4, r5, r6, r7 := TransposeBytes8(
			le.Uint64(p0), le.Uint64(p1), le.Uint64(p2), le.Uint64(p3),
			le.Uint64(p4), le.Uint64(p5), le.Uint64(p6), le.Uint64(p7))
		le.PutUint64(e[0:], r0)
		le.PutUint64(e[8:], r1)
		le.PutUint64(e[16:], r2)
		le.PutUint64(e[24:], r3)
		le.PutUint64(e[32:], r4)
		le.PutUint64(e[40:], r5)
		le.PutUint64(e[48:], r6)
		le.PutUint64(e[56:], r7)
		p0, p1, p2, p3, p4, p5, p6, p7 = p0[8:], p1[8:], p2[8:], p3[8:], p4[8:], p5[8:], p6[8:], p7[8:]
		e = e[64:]
	}
	for ; i < n; i++ {
		for j := range 8 {
			dst[i*8+j] = src[j*n+i]
		}
	}
}

// unshuffle4 is Unshuffle for 4-byte elements, eight elements at a
// time: the four planes' next 8 bytes are two 4×4 byte matrices side by
// side (elements 0-3 in the low halves, 4-7 in the high ones), transposed
// together in two rounds of swaps.
func unshuffle4(dst, src []byte, n int) {
	le := binary.LittleEndian
	const m2, m1, hi = 0x0000ffff0000ffff, 0x00ff00ff00ff00ff, 0xffffffff00000000
	i := n &^ 7
	p0, p1, p2, p3 := src[0*n:0*n+i], src[1*n:1*n+i], src[2*n:2*n+i], src[3*n:3*n+i]
	e := dst[:4*i]
	for len(p0) >= 8 && len(p1) >= 8 && len(p2) >= 8 && len(p3) >= 8 && len(e) >= 32 {
		r0, r1, r2, r3 := le.Uint64(p0), le.Uint64(p1), le.Uint64(p2), le.Uint64(p3)
		r0, r2 = swapBlocks(r0, r2, 16, m2)
		r1, r3 = swapBlocks(r1, r3, 16, m2)
		r0, r1 = swapBlocks(r0, r1, 8, m1)
		r2, r3 = swapBlocks(r2, r3, 8, m1)
		// rj holds element j in its low half and element j+4 in its high one.
		le.PutUint64(e[0:], r0&^hi|r1<<32)
		le.PutUint64(e[8:], r2&^hi|r3<<32)
		le.PutUint64(e[16:], r0>>32|r1&hi)
		le.PutUint64(e[24:], r2>>32|r3&hi)
		p0, p1, p2, p3 = p0[8:], p1[8:], p2[8:], p3[8:]
		e = e[32:]
	}
	for ; i < n; i++ {
		for j := range 4 {
			dst[i*4+j] = src[j*n+i]
		}
	}
}

// TransposeBytes8 transposes the 8×8 byte matrix whose row j is rj
// (column c is byte c, the least significant first): three rounds that
// swap the off-diagonal halves of 4×4, 2×2 and 1×1 blocks, each swap of
// rows a < b moving a's upper columns and b's lower ones.
func TransposeBytes8(r0, r1, r2, r3, r4, r5, r6, r7 uint64) (uint64, uint64, uint64, uint64, uint64, uint64, uint64, uint64) {
	const m4, m2, m1 = 0x00000000ffffffff, 0x0000ffff0000ffff, 0x00ff00ff00ff00ff
	r0, r4 = swapBlocks(r0, r4, 32, m4)
	r1, r5 = swapBlocks(r1, r5, 32, m4)
	r2, r6 = swapBlocks(r2, r6, 32, m4)
	r3, r7 = swapBlocks(r3, r7, 32, m4)
	r0, r2 = swapBlocks(r0, r2, 16, m2)
	r1, r3 = swapBlocks(r1, r3, 16, m2)
	r4, r6 = swapBlocks(r4, r6, 16, m2)
	r5, r7 = swapBlocks(r5, r7, 16, m2)
	r0, r1 = swapBlocks(r0, r1, 8, m1)
	r2, r3 = swapBlocks(r2, r3, 8, m1)
	r4, r5 = swapBlocks(r4, r5, 8, m1)
	r6, r7 = swapBlocks(r6, r7, 8, m1)
	return r0, r1, r2, r3, r4, r5, r6, r7
}

// swapBlocks swaps the columns of row a that mask<<shift selects with
// those of row b that mask selects: one round of a byte matrix transpose.
func swapBlocks(a, b uint64, shift uint, mask uint64) (uint64, uint64) {
	t := ((a >> shift) ^ b) & mask
	return a ^ t<<shift, b ^ t
}
