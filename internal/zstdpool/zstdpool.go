// Package zstdpool holds the zstd decoder and encoders that the codecs of
// this module share: one decoder for every goroutine, bounded by its
// destination so that a hostile frame cannot make it allocate, and one
// encoder per level. Both are safe for concurrent use (DecodeAll and
// EncodeAll).
package zstdpool

import (
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

var (
	decOnce sync.Once
	dec     *zstd.Decoder
	encMu   sync.Mutex
	encs    = map[int]*zstd.Encoder{}
)

// Decoder returns the shared decoder. DecodeAll(src, dst[:0:n]) fails
// with zstd.ErrDecoderSizeExceeded rather than decode more than n bytes.
func Decoder() *zstd.Decoder {
	decOnce.Do(func() {
		var err error
		dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxWindow(1<<31))
		if err != nil {
			panic(err) // only invalid options fail
		}
	})
	return dec
}

// Encoder returns the shared encoder of a zstd level (1 to 22). Its frames
// carry their content size and no checksum, as numcodecs and c-blosc need.
func Encoder(level int) *zstd.Encoder {
	encMu.Lock()
	defer encMu.Unlock()
	if e, ok := encs[level]; ok {
		return e
	}
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithEncoderCRC(false),
		zstd.WithSingleSegment(true))
	if err != nil {
		panic(err) // only invalid options fail
	}
	encs[level] = e
	return e
}
