package blosc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrCorrupt reports a frame that contradicts itself or its length.
	ErrCorrupt = errors.New("corrupt blosc frame")
	// ErrTooLarge reports a frame that decodes to more than the caller's limit.
	ErrTooLarge = errors.New("blosc frame decodes to more than the limit")
	// ErrUnsupported reports a frame of a format version or codec this
	// package does not know.
	ErrUnsupported = errors.New("unsupported blosc frame")
)

// HeaderSize is the size of a frame's header.
const HeaderSize = 16

const (
	formatVersion = 2 // the frame layout of c-blosc 1.x
	codecVersion  = 1 // every codec's stream version in c-blosc 1.x

	// MaxTypeSize is the largest element size a frame records; larger
	// elements are compressed as bytes.
	MaxTypeSize = 255
	// MaxSize is the largest buffer a frame can hold.
	MaxSize = 1<<31 - 1 - HeaderSize
	// maxBlockSize is c-blosc's limit on a block.
	maxBlockSize = (1<<31 - 1 - MaxTypeSize*4) / 3

	// minBufferSize: smaller buffers are stored, not compressed; and a
	// block splits only when each stream gets at least this many bytes.
	minBufferSize = 128
	// maxSplits is the largest element size whose blocks split.
	maxSplits = 16
)

// Header flags.
const (
	flagShuffle    = 0x01
	flagMemcpyed   = 0x02
	flagBitShuffle = 0x04
	flagReserved   = 0x08
	flagDontSplit  = 0x10
)

// Codec is a compressor inside a frame.
type Codec uint8

// The codecs, in the order of numcodecs' names; lz4 and lz4hc write the
// same stream format.
const (
	BloscLZ Codec = iota
	LZ4
	LZ4HC
	Snappy
	Zlib
	Zstd
)

var codecNames = [...]string{"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"}

func (c Codec) String() string {
	if int(c) < len(codecNames) {
		return codecNames[c]
	}
	return fmt.Sprintf("codec(%d)", c)
}

// ParseCodec returns the codec of a numcodecs cname.
func ParseCodec(name string) (Codec, error) {
	for i, n := range codecNames {
		if strings.EqualFold(name, n) {
			return Codec(i), nil
		}
	}
	return 0, fmt.Errorf("blosc: codec %q is not one of %s: %w", name, strings.Join(codecNames[:], ", "), ErrUnsupported)
}

// format is the codec's number in the header's top three flag bits.
func (c Codec) format() uint8 {
	switch c {
	case LZ4, LZ4HC:
		return 1
	case Snappy:
		return 2
	case Zlib:
		return 3
	case Zstd:
		return 4
	}
	return 0
}

// codecOfFormat is the codec that decodes a header's codec number.
func codecOfFormat(f uint8) (Codec, bool) {
	switch f {
	case 0:
		return BloscLZ, true
	case 1:
		return LZ4, true
	case 2:
		return Snappy, true
	case 3:
		return Zlib, true
	case 4:
		return Zstd, true
	}
	return 0, false
}

// Shuffle is the filter applied to each block before compression.
type Shuffle uint8

// The shuffles, numbered as in c-blosc and numcodecs.
const (
	NoShuffle   Shuffle = 0
	ByteShuffle Shuffle = 1
	BitShuffle  Shuffle = 2
)

func (s Shuffle) String() string {
	switch s {
	case NoShuffle:
		return "noshuffle"
	case ByteShuffle:
		return "shuffle"
	case BitShuffle:
		return "bitshuffle"
	}
	return fmt.Sprintf("shuffle(%d)", s)
}

// ParseShuffle returns the shuffle of a Zarr v3 name ("noshuffle",
// "shuffle", "bitshuffle").
func ParseShuffle(name string) (Shuffle, error) {
	for _, s := range []Shuffle{NoShuffle, ByteShuffle, BitShuffle} {
		if strings.EqualFold(name, s.String()) {
			return s, nil
		}
	}
	return 0, fmt.Errorf("blosc: shuffle %q is not one of noshuffle, shuffle, bitshuffle: %w", name, ErrUnsupported)
}

// Header is a frame's header, as stored.
type Header struct {
	Version      uint8 // frame format version (2)
	CodecVersion uint8 // version of the codec's stream format (1)
	Flags        uint8
	TypeSize     int // element size, 1 to 255
	Size         int // decoded size
	BlockSize    int // decoded size of every block but the last
	FrameSize    int // the frame's size, header included
}

// Codec is the codec of the frame's streams (LZ4 also for lz4hc, which
// shares its stream format).
func (h Header) Codec() Codec {
	c, _ := codecOfFormat(h.Flags >> 5)
	return c
}

// Shuffle is the filter of the frame's blocks.
func (h Header) Shuffle() Shuffle {
	switch {
	case h.Flags&flagShuffle != 0:
		return ByteShuffle
	case h.Flags&flagBitShuffle != 0:
		return BitShuffle
	}
	return NoShuffle
}

// Stored reports a frame whose data follows its header uncompressed.
func (h Header) Stored() bool { return h.Flags&flagMemcpyed != 0 }

// Split reports whether full blocks are split into one stream per byte of
// the element: the flag, or, in frames older than the flag, the rule
// c-blosc applied then.
func (h Header) Split() bool {
	return h.Flags&flagDontSplit == 0 && h.TypeSize > 0 && h.TypeSize <= maxSplits && h.BlockSize/h.TypeSize >= minBufferSize
}

// Blocks is the number of blocks.
func (h Header) Blocks() int {
	if h.Size == 0 {
		return 0
	}
	return (h.Size + h.BlockSize - 1) / h.BlockSize
}

func corrupt(off int, format string, a ...any) error {
	return fmt.Errorf("blosc: offset %d: %s: %w", off, fmt.Sprintf(format, a...), ErrCorrupt)
}

// ReadHeader reads and checks the header of frame, which must be the
// whole frame: the sizes it records are checked against len(frame), and
// the block table against the frame. Nothing is decoded.
func ReadHeader(frame []byte) (Header, error) {
	if len(frame) < HeaderSize {
		return Header{}, corrupt(0, "%d bytes cannot hold a blosc header (%d bytes)", len(frame), HeaderSize)
	}
	// The sizes are compared as uint32 before they become ints, which
	// hold less on 32-bit machines.
	size, block, framed := binary.LittleEndian.Uint32(frame[4:]), binary.LittleEndian.Uint32(frame[8:]), binary.LittleEndian.Uint32(frame[12:])
	h := Header{Version: frame[0], CodecVersion: frame[1], Flags: frame[2], TypeSize: int(frame[3])}
	if size > MaxSize {
		return h, corrupt(4, "decoded size %d is more than a frame can hold (%d)", size, MaxSize)
	}
	if block > maxBlockSize {
		return h, corrupt(8, "block size %d is more than %d", block, maxBlockSize)
	}
	if uint64(framed) != uint64(len(frame)) {
		return h, corrupt(12, "the header says the frame has %d bytes, it has %d", framed, len(frame))
	}
	h.Size, h.BlockSize, h.FrameSize = int(size), int(block), int(framed)
	if h.Version != formatVersion {
		return h, fmt.Errorf("blosc: offset 0: format version %d (this package reads version %d, what c-blosc 1.x writes): %w", h.Version, formatVersion, ErrUnsupported)
	}
	if h.Flags&flagReserved != 0 {
		return h, fmt.Errorf("blosc: offset 2: flags 0x%02x set the reserved bit 3: %w", h.Flags, ErrUnsupported)
	}
	if h.Size == 0 {
		return h, nil
	}
	if h.TypeSize == 0 {
		return h, corrupt(3, "element size 0")
	}
	if h.BlockSize == 0 {
		return h, corrupt(8, "block size 0")
	}
	if h.Stored() {
		if h.FrameSize != HeaderSize+h.Size {
			return h, corrupt(12, "a stored frame of %d bytes has %d, not %d+%d", h.Size, h.FrameSize, HeaderSize, h.Size)
		}
		return h, nil
	}
	if _, ok := codecOfFormat(h.Flags >> 5); !ok {
		return h, fmt.Errorf("blosc: offset 2: codec number %d (known: 0 blosclz, 1 lz4, 2 snappy, 3 zlib, 4 zstd): %w", h.Flags>>5, ErrUnsupported)
	}
	if h.CodecVersion != codecVersion {
		return h, fmt.Errorf("blosc: offset 1: %s stream version %d (known: %d): %w", h.Codec(), h.CodecVersion, codecVersion, ErrUnsupported)
	}
	// The block table: one 4-byte start per block, which the frame must
	// hold; nothing is allocated from the count.
	if h.Blocks() > (h.FrameSize-HeaderSize)/4 {
		return h, corrupt(16, "%d blocks of %d bytes need a table of 4 bytes each, the frame has %d after its header", h.Blocks(), h.BlockSize, h.FrameSize-HeaderSize)
	}
	return h, nil
}
