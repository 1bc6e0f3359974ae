package blosc

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/mmapkit/mmapkit/internal/bufpool"
	"github.com/mmapkit/mmapkit/internal/parallel"
)

// Decode decodes a whole frame into a new buffer. limit bounds the decoded
// size: a frame that says it holds more is refused with ErrTooLarge before
// anything is allocated.
func Decode(frame []byte, limit int) ([]byte, error) {
	h, err := ReadHeader(frame)
	if err != nil {
		return nil, err
	}
	if h.Size > limit {
		return nil, fmt.Errorf("blosc: offset 4: the frame decodes to %d bytes, more than the limit of %d: %w", h.Size, limit, ErrTooLarge)
	}
	dst := make([]byte, h.Size)
	if err := decodeFrame(h, dst, frame); err != nil {
		return nil, err
	}
	return dst, nil
}

// DecodeInto decodes a whole frame into dst and returns its decoded size;
// a frame that decodes to more than len(dst) bytes is refused with
// ErrTooLarge before anything is written.
func DecodeInto(dst, frame []byte) (int, error) {
	h, err := ReadHeader(frame)
	if err != nil {
		return 0, err
	}
	if h.Size > len(dst) {
		return 0, fmt.Errorf("blosc: offset 4: the frame decodes to %d bytes, more than the %d there is room for: %w", h.Size, len(dst), ErrTooLarge)
	}
	return h.Size, decodeFrame(h, dst[:h.Size], frame)
}

// parallelMin is the decoded size from which blocks are decoded on every
// core; below it, starting goroutines costs more than it saves.
const parallelMin = 256 << 10

// decodeFrame decodes the frame of h into dst (len(dst) == h.Size).
func decodeFrame(h Header, dst, frame []byte) error {
	if h.Size == 0 {
		return nil
	}
	if h.Stored() {
		copy(dst, frame[HeaderSize:])
		return nil
	}
	workers := runtime.GOMAXPROCS(0)
	if h.Size < parallelMin {
		workers = 1
	}
	return parallel.Do(h.Blocks(), workers, func() *blockDecoder { return &blockDecoder{h: h, frame: frame} },
		(*blockDecoder).release, func(d *blockDecoder, j int) error { return d.block(dst, j) })
}

// blockDecoder decodes blocks of one frame; each goroutine has its own,
// for its scratch buffer.
type blockDecoder struct {
	h     Header
	frame []byte
	tmp   []byte
}

// block decodes block j into its place in dst.
func (d *blockDecoder) block(dst []byte, j int) error {
	h := d.h
	first := j * h.BlockSize
	size := min(h.BlockSize, h.Size-first)
	out := dst[first : first+size]
	last := size < h.BlockSize // the short last block is never split
	// Byte shuffle wins when both flags are set, and is a no-op for bytes.
	shuffle := h.Flags&flagShuffle != 0 && h.TypeSize > 1
	bits := !shuffle && h.Flags&flagBitShuffle != 0 && size >= h.TypeSize
	target := out
	if shuffle || bits {
		if cap(d.tmp) < size {
			d.tmp = scratchBuffers.Get(min(h.BlockSize, h.Size))
		}
		target = d.tmp[:size]
	}
	nsplits := 1
	if !last && h.Split() {
		nsplits = h.TypeSize
	}
	stream := size / nsplits
	if stream*nsplits != size {
		return corrupt(8, "block size %d is not a multiple of the element size %d its split needs", h.BlockSize, h.TypeSize)
	}
	at := 16 + 4*j
	off := int(int32(binary.LittleEndian.Uint32(d.frame[at:])))
	for s := range nsplits {
		if off < 0 || off > len(d.frame)-4 {
			return corrupt(at, "block %d: stream %d starts at %d, outside the frame of %d bytes", j, s, off, len(d.frame))
		}
		n := int(int32(binary.LittleEndian.Uint32(d.frame[off:])))
		if n < 0 || n > len(d.frame)-off-4 {
			return corrupt(off, "block %d: stream %d of %d bytes does not fit in the frame of %d bytes", j, s, n, len(d.frame))
		}
		src := d.frame[off+4 : off+4+n]
		part := target[s*stream : (s+1)*stream]
		if n == stream {
			copy(part, src)
		} else if !decodeStream(h.Codec(), part, src) {
			return corrupt(off+4, "block %d: stream %d: %d bytes of %s do not decode to %d", j, s, n, h.Codec(), stream)
		}
		off += 4 + n
	}
	switch {
	case shuffle:
		unshuffleBytes(out, target, h.TypeSize)
	case bits:
		bitUnshuffle(out, target, h.TypeSize)
	}
	return nil
}

// scratchBuffers are the blocks' shuffle buffers, reused across frames:
// a chunk's decode would otherwise allocate (and clear) one block per core.
var scratchBuffers bufpool.Pool

func (d *blockDecoder) release() {
	if d.tmp != nil {
		scratchBuffers.Put(d.tmp)
		d.tmp = nil
	}
}
