package h5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"

	"github.com/mmapkit/mmapkit/internal/byteshuffle"
)

// ErrChecksum reports a chunk whose Fletcher-32 checksum does not match its bytes.
var ErrChecksum = errors.New("fletcher32 checksum mismatch")

// Decode undoes the pipeline on one stored chunk src into dst, whose length is the
// chunk's logical byte size: filters in reverse order, skipping those whose bit is set
// in mask. Decompression stops at the size each stage must produce; a short or long
// result or a Fletcher-32 mismatch is an error. elemSize is the datatype size, which
// shuffle uses when its parameters do not say. The errors carry no file offset: the
// caller knows the chunk's.
func (p *Pipeline) Decode(dst, src []byte, mask uint32, elemSize int) error {
	var applied []int // indexes of the filters to undo, last applied first
	fletchers, compressors := 0, 0
	if p != nil {
		for i := len(p.Filters) - 1; i >= 0; i-- {
			if i < 32 && mask&(1<<uint(i)) != 0 {
				continue
			}
			applied = append(applied, i)
			switch p.Filters[i].ID {
			case FilterFletcher32:
				fletchers++
			case FilterDeflate, FilterLZF:
				compressors++
			}
		}
	}
	if compressors > 1 {
		// The size between two decompressions is stored nowhere, so nothing bounds it.
		return fmt.Errorf("%d compression filters in one pipeline: %w", compressors, errors.ErrUnsupported)
	}
	if len(applied) == 0 {
		if len(src) != len(dst) {
			return fmt.Errorf("unfiltered chunk has %d bytes, want %d", len(src), len(dst))
		}
		copy(dst, src)
		return nil
	}
	var scratch [2][]byte
	if len(applied) > 1 {
		each := max(len(src), len(dst)+4*fletchers)
		bufs := getScratch(each)
		defer putScratch(bufs)
		scratch = [2][]byte{bufs.a, bufs.b}
	}
	cur, curBuf := src, -1
	for k, i := range applied {
		f := p.Filters[i]
		last := k == len(applied)-1
		if f.ID == FilterFletcher32 {
			fletchers--
		}
		// size is what this stage produces: known for decompression (everything below
		// it preserves sizes, fletcher32 adds 4), else derived from the input.
		var size int
		switch f.ID {
		case FilterDeflate, FilterLZF:
			size = len(dst) + 4*fletchers
		case FilterFletcher32:
			size = len(cur) - 4
		default:
			size = len(cur)
		}
		if size < 0 {
			return fmt.Errorf("filter %d (%s): %d bytes are too few for a checksum", i, f.Name, len(cur))
		}
		if last && size != len(dst) {
			return fmt.Errorf("filter %d (%s): %d bytes to decode into %d", i, f.Name, size, len(dst))
		}
		var out []byte
		outBuf := -1
		if last {
			out = dst
		} else {
			outBuf = 0
			if curBuf == 0 {
				outBuf = 1
			}
			out = scratch[outBuf][:size]
		}
		var err error
		switch f.ID {
		case FilterDeflate:
			err = inflate(out, cur)
		case FilterLZF:
			err = lzfDecode(out, cur)
		case FilterShuffle:
			elem := elemSize
			if len(f.Params) > 0 {
				elem = int(f.Params[0])
			}
			unshuffle(out, cur, elem)
		case FilterFletcher32:
			if err = checkFletcher32(cur); err == nil {
				if last {
					copy(out, cur[:size])
				} else {
					out, outBuf = cur[:size], curBuf
				}
			}
		default:
			err = fmt.Errorf("filter %s: %w", f.describe(), errors.ErrUnsupported)
		}
		if err != nil {
			return fmt.Errorf("filter %d (%s): %w", i, f.Name, err)
		}
		cur, curBuf = out, outBuf
	}
	return nil
}

// scratchBufs are the two intermediate buffers of a pipeline with several stages.
type scratchBufs struct{ a, b []byte }

var scratchPool sync.Pool

func getScratch(each int) *scratchBufs {
	if s, ok := scratchPool.Get().(*scratchBufs); ok && cap(s.a) >= each && cap(s.b) >= each {
		s.a, s.b = s.a[:each], s.b[:each]
		return s
	}
	buf := make([]byte, 2*each)
	return &scratchBufs{a: buf[:each:each], b: buf[each:]}
}

func putScratch(s *scratchBufs) { scratchPool.Put(s) }

// inflatePiece is how much inflate writes before it checksums what it wrote.
const inflatePiece = 64 << 10

// inflaters keeps raw deflate readers for reuse: one per worker decoding at a time.
var inflaters sync.Pool

// inflate decompresses the zlib stream src into dst, which it must fill exactly: the
// two-byte header checked, the deflate data inflated by klauspost's flate (faster than
// the standard library's), the Adler-32 that follows checked by adler32.
func inflate(dst, src []byte) error {
	if len(src) < 2 {
		return fmt.Errorf("deflate stream of %d bytes has no zlib header", len(src))
	}
	cmf, flg := src[0], src[1]
	switch {
	case cmf&0x0f != 8 || cmf>>4 > 7 || (uint16(cmf)<<8|uint16(flg))%31 != 0:
		return fmt.Errorf("deflate: %w (%#02x %#02x)", zlib.ErrHeader, cmf, flg)
	case flg&0x20 != 0:
		return fmt.Errorf("deflate: %w: %w", zlib.ErrDictionary, errors.ErrUnsupported)
	}
	br := bytes.NewReader(src[2:])
	var fr io.ReadCloser
	if r, ok := inflaters.Get().(io.ReadCloser); ok {
		if err := r.(flate.Resetter).Reset(br, nil); err != nil {
			return fmt.Errorf("deflate: %w", err)
		}
		fr = r
	} else {
		fr = flate.NewReader(br)
	}
	defer inflaters.Put(fr)
	// The checksum follows the inflating a piece at a time, while the piece is
	// still in the cache.
	sum := uint32(1)
	for n := 0; n < len(dst); {
		piece := dst[n:min(len(dst), n+inflatePiece)]
		k, err := io.ReadFull(fr, piece)
		n += k
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("deflate stream gives %d bytes, want %d", n, len(dst))
		}
		if err != nil {
			return fmt.Errorf("deflate: %w", err)
		}
		sum = adler32(sum, piece)
	}
	// One more read reaches the end of the deflate data; the reader takes a byte at
	// a time from br, so the checksum follows where it stopped.
	var extra [1]byte
	m, err := fr.Read(extra[:])
	if m > 0 {
		return fmt.Errorf("deflate stream gives more than %d bytes", len(dst))
	}
	if err != io.EOF {
		if err == nil {
			err = io.ErrNoProgress
		}
		return fmt.Errorf("deflate: %w", err)
	}
	var trailer [4]byte
	if _, err := io.ReadFull(br, trailer[:]); err != nil {
		return fmt.Errorf("deflate stream ends without its Adler-32")
	}
	if stored, got := binary.BigEndian.Uint32(trailer[:]), sum; stored != got {
		return fmt.Errorf("deflate: %w: Adler-32 %#08x, computed %#08x", zlib.ErrChecksum, stored, got)
	}
	return nil
}

// unshuffle undoes HDF5's shuffle (see shuffle).
func unshuffle(dst, src []byte, size int) {
	if size <= 1 || len(src) < 2*size {
		copy(dst, src)
		return
	}
	byteshuffle.Unshuffle(dst, src, size)
}

// shuffle is HDF5's shuffle filter: the first byte of every element, then
// the second byte of every element, and so on; bytes beyond the last whole
// element stay as they are.
func shuffle(dst, src []byte, size int) {
	if size <= 1 || len(src) < 2*size {
		copy(dst, src)
		return
	}
	byteshuffle.Shuffle(dst, src, size)
}

// fletcher32 is HDF5's Fletcher-32: sums over big-endian 16-bit words (an odd last
// byte is the high byte of a word), reduced modulo 65535 as it goes.
func fletcher32(b []byte) uint32 {
	var sum1, sum2 uint32
	words := len(b) / 2
	for words > 0 {
		n := min(words, 360) // keeps the sums within 32 bits between reductions
		words -= n
		for i := 0; i < n; i++ {
			sum1 += uint32(b[0])<<8 | uint32(b[1])
			sum2 += sum1
			b = b[2:]
		}
		sum1 = (sum1 & 0xffff) + (sum1 >> 16)
		sum2 = (sum2 & 0xffff) + (sum2 >> 16)
	}
	if len(b) == 1 {
		sum1 += uint32(b[0]) << 8
		sum2 += sum1
		sum1 = (sum1 & 0xffff) + (sum1 >> 16)
		sum2 = (sum2 & 0xffff) + (sum2 >> 16)
	}
	sum1 = (sum1 & 0xffff) + (sum1 >> 16)
	sum2 = (sum2 & 0xffff) + (sum2 >> 16)
	return sum2<<16 | sum1
}

// checkFletcher32 verifies the little-endian checksum in the last 4 bytes of b. HDF5
// before 1.6.3 stored it with the bytes of each half swapped; the library accepts both.
func checkFletcher32(b []byte) error {
	n := len(b) - 4
	stored := uint32(b[n]) | uint32(b[n+1])<<8 | uint32(b[n+2])<<16 | uint32(b[n+3])<<24
	sum := fletcher32(b[:n])
	swapped := (sum&0x00ff00ff)<<8 | (sum&0xff00ff00)>>8
	if stored != sum && stored != swapped {
		return fmt.Errorf("%w: stored %#08x, computed %#08x", ErrChecksum, stored, sum)
	}
	return nil
}

// lzfDecode decompresses LZF data (liblzf's format, no header, as h5py's filter stores
// it) into dst, which it must fill exactly. Each control byte below 32 starts a run of
// ctrl+1 literal bytes; otherwise its top 3 bits are a match length - 2 (7: add the
// next byte) and its low 5 bits with the byte after the length the distance - 1.
func lzfDecode(dst, src []byte) error {
	ip, op := 0, 0
	for ip < len(src) {
		ctrl := int(src[ip])
		ip++
		if ctrl < 32 {
			n := ctrl + 1
			if ip+n > len(src) {
				return fmt.Errorf("lzf literal run of %d bytes at %d overruns the %d-byte input", n, ip-1, len(src))
			}
			if op+n > len(dst) {
				return fmt.Errorf("lzf data decodes to more than %d bytes", len(dst))
			}
			copy(dst[op:], src[ip:ip+n])
			ip += n
			op += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if ip >= len(src) {
				return fmt.Errorf("lzf match length at %d overruns the input", ip)
			}
			n += int(src[ip])
			ip++
		}
		n += 2
		if ip >= len(src) {
			return fmt.Errorf("lzf match distance at %d overruns the input", ip)
		}
		ref := op - (ctrl&0x1f)<<8 - 1 - int(src[ip])
		ip++
		if ref < 0 {
			return fmt.Errorf("lzf match at output %d refers %d bytes before the start", op, -ref)
		}
		if op+n > len(dst) {
			return fmt.Errorf("lzf data decodes to more than %d bytes", len(dst))
		}
		if op-ref >= n {
			copy(dst[op:op+n], dst[ref:ref+n])
			op += n
		} else {
			for i := 0; i < n; i++ { // overlapping: repeats the last op-ref bytes
				dst[op] = dst[ref]
				op++
				ref++
			}
		}
	}
	if op != len(dst) {
		return fmt.Errorf("lzf data decodes to %d bytes, want %d", op, len(dst))
	}
	return nil
}
