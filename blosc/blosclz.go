package blosc

import "encoding/binary"

// BloscLZ is an LZ77 format of FastLZ's family. A stream is a sequence of
// instructions, each starting with a control byte c:
//
//   - c < 32: a literal run of c+1 bytes, which follow;
//   - c >= 32: a match of length (c>>5)+2 — when c>>5 is 7, plus the sum
//     of the bytes that follow up to and including the first that is not
//     255 — at distance ((c&31)<<8 | next byte) + 1; when that distance
//     byte is 255 and c&31 is 31, the distance is instead 8192 plus the
//     big-endian 16-bit number in the next two bytes.
//
// The first instruction is a literal run whose control byte carries a
// marker in its top three bits, which decoders ignore. c-blosc's decoder
// stops when the input ends right after a match's operands, without
// copying that match, so streams end with a literal run.

const (
	blosclzMaxLiteral = 32
	blosclzNear       = 8191                    // distances up to here take 13 bits
	blosclzFar        = blosclzNear + 1 + 65535 // the longest distance there is
	blosclzMinMatch   = 4
	blosclzHashLog    = 14
)

// blosclzDecode decodes src into dst and returns how many bytes it wrote,
// or -1 when src is not a stream that fits in dst. It follows c-blosc's
// decoder, so that every frame decodes to what c-blosc makes of it.
func blosclzDecode(dst, src []byte) int {
	if len(src) == 0 {
		return 0
	}
	ip, op := 1, 0
	ctrl := int(src[0] & 31)
	for {
		if ctrl >= 32 {
			length := ctrl>>5 - 1
			if length == 6 {
				for {
					if ip+1 >= len(src) {
						return -1
					}
					code := int(src[ip])
					ip++
					length += code
					if length > len(dst) {
						return -1
					}
					if code != 255 {
						break
					}
				}
			} else if ip+1 >= len(src) {
				return -1
			}
			code := int(src[ip])
			ip++
			length += 3
			dist := (ctrl&31)<<8 + code + 1
			if code == 255 && ctrl&31 == 31 {
				if ip+1 >= len(src) {
					return -1
				}
				dist = int(src[ip])<<8 + int(src[ip+1]) + blosclzNear + 1
				ip += 2
			}
			if op+length > len(dst) || dist > op {
				return -1
			}
			if ip >= len(src) {
				return op
			}
			ctrl = int(src[ip])
			ip++
			copyMatch(dst, op, dist, length)
			op += length
		} else {
			n := ctrl + 1
			if op+n > len(dst) || ip+n > len(src) {
				return -1
			}
			copy(dst[op:op+n], src[ip:ip+n])
			op += n
			ip += n
			if ip >= len(src) {
				return op
			}
			ctrl = int(src[ip])
			ip++
		}
	}
}

// copyMatch copies length bytes from dist bytes back to dst[op:], where
// the source may overlap what is being written (a repeating pattern).
func copyMatch(dst []byte, op, dist, length int) {
	if dist >= length {
		copy(dst[op:op+length], dst[op-dist:])
		return
	}
	if dist == 1 {
		b := dst[op-1]
		run := dst[op : op+length]
		for i := range run {
			run[i] = b
		}
		return
	}
	// Each copy doubles the pattern written so far.
	start, end := op-dist, op+length
	for op < end {
		op += copy(dst[op:end], dst[start:op])
	}
}

// blosclzEncode compresses src into dst with a greedy hash-chain-free
// LZ77 search and returns the stream's length, or 0 when it does not fit
// in dst (the caller then stores src as it is).
func blosclzEncode(dst, src []byte, table *[1 << blosclzHashLog]int32) int {
	n := len(src)
	if n < 16 {
		return 0
	}
	clear(table[:])
	le := binary.LittleEndian
	w := blosclzWriter{dst: dst}
	anchor := 0
	// Matches stop short of the end so that a literal run closes the
	// stream; the search stops where a 4-byte read would leave src.
	limit := n - 12
	maxEnd := n - 1
	skip := 0
	for i := 1; i < limit; {
		seq := le.Uint32(src[i:])
		h := (seq * 2654435761) >> (32 - blosclzHashLog)
		cand := int(table[h]) - 1
		table[h] = int32(i + 1)
		dist := i - cand
		if cand < 0 || dist > blosclzFar || le.Uint32(src[cand:]) != seq {
			skip++
			i += 1 + skip>>5
			continue
		}
		skip = 0
		length := blosclzMinMatch
		for i+length < maxEnd && src[cand+length] == src[i+length] {
			length++
		}
		if dist > blosclzNear && length < 6 {
			i++
			continue
		}
		if !w.literals(src[anchor:i]) || !w.match(length, dist) {
			return 0
		}
		i += length
		anchor = i
		if i+4 <= n && i < limit {
			table[(le.Uint32(src[i-1:])*2654435761)>>(32-blosclzHashLog)] = int32(i)
		}
	}
	if !w.literals(src[anchor:]) {
		return 0
	}
	dst[0] |= 1 << 5
	return w.n
}

// blosclzWriter appends instructions to dst, failing once it is full.
type blosclzWriter struct {
	dst []byte
	n   int
}

func (w *blosclzWriter) put(b ...byte) bool {
	if w.n+len(b) > len(w.dst) {
		return false
	}
	w.n += copy(w.dst[w.n:], b)
	return true
}

func (w *blosclzWriter) literals(lit []byte) bool {
	for len(lit) > 0 {
		k := min(len(lit), blosclzMaxLiteral)
		if w.n+1+k > len(w.dst) {
			return false
		}
		w.dst[w.n] = byte(k - 1)
		w.n++
		w.n += copy(w.dst[w.n:], lit[:k])
		lit = lit[k:]
	}
	return true
}

// match writes a match of length >= 3 at distance 1..blosclzFar.
func (w *blosclzWriter) match(length, dist int) bool {
	field := length - 2 // 1..6 in the control byte, 7 and up extended
	far := dist > blosclzNear
	ofs := dist - 1
	hi := byte(ofs >> 8)
	if far {
		ofs = dist - blosclzNear - 1
		hi = 31
	}
	if field < 7 {
		if !w.put(byte(field<<5) | hi) {
			return false
		}
	} else {
		if !w.put(7<<5 | hi) {
			return false
		}
		rest := field - 7
		for ; rest >= 255; rest -= 255 {
			if !w.put(255) {
				return false
			}
		}
		if !w.put(byte(rest)) {
			return false
		}
	}
	if far {
		return w.put(255, byte(ofs>>8), byte(ofs))
	}
	return w.put(byte(ofs))
}
