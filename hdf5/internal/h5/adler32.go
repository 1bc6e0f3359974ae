package h5

import "encoding/binary"

// adlerMod is Adler-32's modulus, the largest prime below 2^16.
const adlerMod = 65521

// adler32 continues the Adler-32 checksum adler (1 to start) over p: the
// zlib stream's checksum, computed 128 bytes at a time in 16-bit lanes
// (hash/adler32 goes a byte at a time, which made it cost as much as the
// inflating of a well-compressed chunk).
//
// Over n bytes b_k from (s1, s2): s1 += Σ b_k and s2 += n·s1 + Σ (n-k)·b_k.
// For 16 words of 8 bytes, lane j of ae/ao sums byte j of every word (A_j,
// at most 16·255) and lane j of ce/co sums those running sums (C_j, at
// most 136·255), both within 16 bits; then Σ (n-k)·b_k = 8·Σ C_j - Σ j·A_j.
func adler32(adler uint32, p []byte) uint32 {
	const lanes = 0x00ff00ff00ff00ff
	s1, s2 := uint64(adler&0xffff), uint64(adler>>16)
	lane := func(x uint64, i uint) uint64 { return x >> (16 * i) & 0xffff }
	for len(p) >= 128 {
		// 43 blocks keep s1 and s2 far below 2^64 between reductions.
		n := min(len(p), 43*128) &^ 127
		blocks := p[:n]
		p = p[n:]
		for ; len(blocks) >= 128; blocks = blocks[128:] {
			q := (*[128]byte)(blocks)
			var ae, ao, ce, co uint64
			for k := 0; k < 128; k += 8 {
				v := binary.LittleEndian.Uint64(q[k : k+8])
				ae += v & lanes
				ao += v >> 8 & lanes
				ce += ae
				co += ao
			}
			var sumA, sumC, weighted uint64
			for i := uint(0); i < 4; i++ {
				even, odd := lane(ae, i), lane(ao, i)
				sumA += even + odd
				sumC += lane(ce, i) + lane(co, i)
				weighted += uint64(2*i)*even + uint64(2*i+1)*odd
			}
			s2 += 128*s1 + 8*sumC - weighted
			s1 += sumA
		}
		s1 %= adlerMod
		s2 %= adlerMod
	}
	for _, b := range p {
		s1 += uint64(b)
		s2 += s1
	}
	return uint32(s2%adlerMod<<16 | s1%adlerMod)
}
