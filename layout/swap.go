package layout

import "math/bits"

// SwapBytes reverses the byte order of each size-byte element of b in place
// (size 2, 4, 8 or 16; 16-byte elements are reversed whole, so a big-endian
// 128-bit integer becomes little-endian). Other sizes are left unchanged.
// len(b) must be a multiple of size.
func SwapBytes(b []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+1 < len(b); i += 2 {
			b[i], b[i+1] = b[i+1], b[i]
		}
	case 4:
		for i := 0; i+3 < len(b); i += 4 {
			v := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
			v = bits.ReverseBytes32(v)
			b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		}
	case 8, 16:
		for i := 0; i+size-1 < len(b); i += size {
			s := b[i : i+size]
			for l, r := 0, size-1; l < r; l, r = l+1, r-1 {
				s[l], s[r] = s[r], s[l]
			}
		}
	}
}
