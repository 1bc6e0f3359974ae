package blosc

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"

	"github.com/mmapkit/mmapkit/internal/zstdpool"
)

// decodeStream decompresses one stream of codec c into dst, which it must
// fill exactly (c-blosc refuses a stream of any other decoded size).
func decodeStream(c Codec, dst, src []byte) bool {
	switch c {
	case BloscLZ:
		return blosclzDecode(dst, src) == len(dst)
	case LZ4, LZ4HC:
		n, err := lz4.UncompressBlock(src, dst)
		return err == nil && n == len(dst)
	case Snappy:
		if n, err := snappy.DecodedLen(src); err != nil || n != len(dst) {
			return false
		}
		out, err := snappy.DecodeStrict(dst, src)
		return err == nil && len(out) == len(dst) && (len(out) == 0 || &out[0] == &dst[0])
	case Zlib:
		return inflate(dst, src)
	case Zstd:
		out, err := zstdpool.Decoder().DecodeAll(src, dst[:0:len(dst)])
		return err == nil && len(out) == len(dst) && (len(out) == 0 || &out[0] == &dst[0])
	}
	return false
}

var zlibReaders sync.Pool

// inflate decodes a zlib stream that must decode to exactly len(dst)
// bytes and end there.
func inflate(dst, src []byte) bool {
	br := bytes.NewReader(src)
	var r io.ReadCloser
	if v := zlibReaders.Get(); v != nil {
		r = v.(io.ReadCloser)
		if r.(zlib.Resetter).Reset(br, nil) != nil {
			return false
		}
	} else {
		var err error
		if r, err = zlib.NewReader(br); err != nil {
			return false
		}
	}
	defer zlibReaders.Put(r)
	if _, err := io.ReadFull(r, dst); err != nil {
		return false
	}
	var one [1]byte
	n, err := r.Read(one[:])
	return n == 0 && err == io.EOF
}

// encoder compresses the streams of one goroutine; it keeps the state the
// codecs reuse.
type encoder struct {
	codec Codec
	level int
	table *[1 << blosclzHashLog]int32
	lz4   lz4.CompressorCCompat
	lz4hc lz4.CompressorHC
	buf   bytes.Buffer
	zw    *zlib.Writer
	out   []byte // the codecs' output before it is copied into the frame
}

// room returns e.out with a capacity of at least n bytes.
func (e *encoder) room(n int) []byte {
	if cap(e.out) < n {
		e.out = make([]byte, n)
	}
	return e.out[:n]
}

func newEncoder(c Codec, level int) *encoder {
	e := &encoder{codec: c, level: level}
	switch c {
	case BloscLZ:
		e.table = new([1 << blosclzHashLog]int32)
	case LZ4:
		e.lz4.Acceleration = 10 - level // as c-blosc: faster at lower levels
	case LZ4HC:
		e.lz4hc.Level = lz4.CompressionLevel(1 << (8 + level))
	}
	return e
}

// encodeStream compresses src into dst and returns the compressed size,
// or 0 when the result would not be smaller than src (the caller then
// stores src as it is). dst has room for len(src) bytes.
func (e *encoder) encodeStream(dst, src []byte) (int, error) {
	limit := len(src) - 1 // a stream of len(src) bytes would read as stored
	if limit <= 0 {
		return 0, nil
	}
	var out []byte
	switch e.codec {
	case BloscLZ:
		return blosclzEncode(dst[:limit], src, e.table), nil
	case LZ4, LZ4HC:
		// lz4 needs room for the worst case to try at all.
		buf := e.room(lz4.CompressBlockBound(len(src)))
		var n int
		var err error
		if e.codec == LZ4 {
			n, err = e.lz4.CompressBlock(src, buf)
		} else {
			n, err = e.lz4hc.CompressBlock(src, buf)
		}
		if err != nil {
			return 0, err
		}
		out = buf[:n]
	case Snappy:
		out = snappy.Encode(e.room(snappy.MaxEncodedLen(len(src))), src)
	case Zlib:
		e.buf.Reset()
		if e.zw == nil {
			w, err := zlib.NewWriterLevel(&e.buf, e.level)
			if err != nil {
				return 0, err
			}
			e.zw = w
		} else {
			e.zw.Reset(&e.buf)
		}
		if _, err := e.zw.Write(src); err != nil {
			return 0, err
		}
		if err := e.zw.Close(); err != nil {
			return 0, err
		}
		out = e.buf.Bytes()
	case Zstd:
		out = zstdpool.Encoder(zstdLevel(e.level)).EncodeAll(src, e.room(len(src))[:0])
	default:
		return 0, errors.New("blosc: unknown codec " + e.codec.String())
	}
	if len(out) == 0 || len(out) > limit {
		return 0, nil
	}
	return copy(dst, out), nil
}

// zstdLevel is the zstd level of a Blosc level, as c-blosc maps them
// (1→1, 2→3, … 7→13, 8→20, 9→22).
func zstdLevel(level int) int {
	switch level {
	case 8:
		return 20
	case 9:
		return 22
	}
	return 2*level - 1
}
