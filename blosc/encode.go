package blosc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/mmapkit/mmapkit/internal/parallel"
)

// errDoesNotPay stops the compression of a frame once its blocks have
// grown past the bytes they compress: the frame is then stored as it is.
var errDoesNotPay = errors.New("blosc: compression does not pay")

// Options are the parameters of numcodecs' Blosc codec.
type Options struct {
	Codec    Codec
	Level    int     // 0 (stored) to 9
	Shuffle  Shuffle // NoShuffle, ByteShuffle or BitShuffle
	TypeSize int     // the element size; above MaxTypeSize, bytes are compressed as bytes
	// BlockSize is the size of the blocks; 0 chooses it from the level,
	// codec and element size as c-blosc does.
	BlockSize int
}

// DefaultOptions are numcodecs' defaults: lz4 at level 5, byte shuffle.
func DefaultOptions(typeSize int) Options {
	return Options{Codec: LZ4, Level: 5, Shuffle: ByteShuffle, TypeSize: typeSize}
}

// Encode compresses src into a frame appended to dst. It makes the
// choices c-blosc makes — the block size, whether blocks are split, a
// frame stored as it is when compression does not pay — so that c-blosc
// decodes the frame at the same speed as its own.
func Encode(dst, src []byte, o Options) ([]byte, error) {
	if len(src) > MaxSize {
		return nil, fmt.Errorf("blosc: %d bytes are more than a frame holds (%d)", len(src), MaxSize)
	}
	if o.Level < 0 || o.Level > 9 {
		return nil, fmt.Errorf("blosc: level %d is not 0 to 9", o.Level)
	}
	if o.Shuffle > BitShuffle {
		return nil, fmt.Errorf("blosc: shuffle %d is not 0, 1 or 2", o.Shuffle)
	}
	if int(o.Codec) >= len(codecNames) {
		return nil, fmt.Errorf("blosc: codec %d: %w", o.Codec, ErrUnsupported)
	}
	if o.TypeSize <= 0 {
		return nil, fmt.Errorf("blosc: element size %d is not positive", o.TypeSize)
	}
	if o.BlockSize < 0 {
		return nil, fmt.Errorf("blosc: block size %d is negative", o.BlockSize)
	}
	k := o.TypeSize
	if k > MaxTypeSize {
		k = 1
	}
	h := Header{Version: formatVersion, CodecVersion: codecVersion, TypeSize: k, Size: len(src)}
	h.BlockSize = blockSize(o, k, len(src))
	h.Flags = o.Codec.format() << 5
	switch o.Shuffle {
	case ByteShuffle:
		h.Flags |= flagShuffle
	case BitShuffle:
		h.Flags |= flagBitShuffle
	}
	if !splits(o.Codec, k, h.BlockSize) {
		h.Flags |= flagDontSplit
	}
	if o.Level > 0 && len(src) >= minBufferSize {
		if out, ok, err := encodeBlocks(dst, src, h, o); err != nil || ok {
			return out, err
		}
	}
	h.Flags |= flagMemcpyed
	h.FrameSize = HeaderSize + len(src)
	dst = appendHeader(dst, h)
	return append(dst, src...), nil
}

func appendHeader(dst []byte, h Header) []byte {
	dst = append(dst, h.Version, h.CodecVersion, h.Flags, byte(h.TypeSize))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.Size))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.BlockSize))
	return binary.LittleEndian.AppendUint32(dst, uint32(h.FrameSize))
}

// splits is c-blosc's rule for splitting blocks into one stream per byte
// of the element when writing: every codec but zstd, for elements of up to
// 16 bytes and streams of at least 128 bytes.
func splits(c Codec, k, blockSize int) bool {
	return c != Zstd && k <= maxSplits && blockSize/k >= minBufferSize
}

// blockSize is the block size c-blosc chooses: a forced size clamped to
// [128, max], else from the L1 cache size scaled by the level (doubled for
// the codecs that compress hard), enlarged for split codecs, at most the
// buffer and a multiple of the element size.
func blockSize(o Options, k, n int) int {
	if n < k {
		return 1
	}
	const l1 = 32 << 10
	bs := n
	hard := o.Codec == LZ4HC || o.Codec == Zlib || o.Codec == Zstd
	switch {
	case o.BlockSize > 0:
		bs = min(max(o.BlockSize, minBufferSize), maxBlockSize)
	case n >= l1:
		bs = l1
		if hard {
			bs *= 2
		}
		switch o.Level {
		case 0:
			bs /= 4
		case 1:
			bs /= 2
		case 2:
		case 3:
			bs *= 2
		case 4, 5:
			bs *= 4
		case 6, 7, 8:
			bs *= 8
		case 9:
			bs *= 8
			if hard {
				bs *= 2
			}
		}
	}
	if o.Level > 0 && splits(o.Codec, k, bs) {
		bs = min(bs, 1<<18) * k
		bs = min(max(bs, 1<<16), 1<<20)
	}
	bs = min(bs, n)
	if bs > k {
		bs = bs / k * k
	}
	return bs
}

// encodeBlocks compresses the blocks of src on every core and appends the
// frame to dst; ok is false when the frame would be larger than src
// stored as it is.
func encodeBlocks(dst, src []byte, h Header, o Options) (_ []byte, ok bool, _ error) {
	nblocks := h.Blocks()
	parts := make([][]byte, nblocks)
	budget := int64(len(src)) // the streams of a frame that pays fit in this
	var used atomic.Int64
	workers := runtime.GOMAXPROCS(0)
	if len(src) < parallelMin {
		workers = 1
	}
	err := parallel.Do(nblocks, workers, func() *encoder { return newEncoder(o.Codec, o.Level) }, nil,
		func(e *encoder, j int) error {
			start := j * h.BlockSize
			b, err := e.block(h, src[start:min(start+h.BlockSize, len(src))])
			if err != nil {
				return err
			}
			if used.Add(int64(len(b))) > budget {
				return errDoesNotPay
			}
			parts[j] = b
			return nil
		})
	if errors.Is(err, errDoesNotPay) {
		return dst, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	total := int64(HeaderSize) + 4*int64(nblocks) + used.Load()
	if total > int64(len(src))+HeaderSize {
		return dst, false, nil
	}
	h.FrameSize = int(total)
	dst = appendHeader(dst, h)
	off := HeaderSize + 4*nblocks
	for _, p := range parts {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(off))
		off += len(p)
	}
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return dst, true, nil
}

// block shuffles and compresses one block into its streams, each preceded
// by its size.
func (e *encoder) block(h Header, b []byte) ([]byte, error) {
	k := h.TypeSize
	in := b
	shuffle := h.Flags&flagShuffle != 0 && k > 1
	bits := !shuffle && h.Flags&flagBitShuffle != 0 && len(b) >= k
	if shuffle || bits {
		in = make([]byte, len(b))
		if shuffle {
			shuffleBytes(in, b, k)
		} else {
			bitShuffle(in, b, k)
		}
	}
	nsplits := 1
	if h.Flags&flagDontSplit == 0 && len(b) == h.BlockSize && h.Split() {
		nsplits = k
	}
	stream := len(b) / nsplits
	out := make([]byte, 0, len(b)+4*nsplits)
	for s := range nsplits {
		part := in[s*stream : (s+1)*stream]
		at := len(out)
		out = append(out, 0, 0, 0, 0)
		out = out[:at+4+stream]
		n, err := e.encodeStream(out[at+4:], part)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			n = copy(out[at+4:], part)
		}
		binary.LittleEndian.PutUint32(out[at:], uint32(n))
		out = out[:at+4+n]
	}
	return out, nil
}
