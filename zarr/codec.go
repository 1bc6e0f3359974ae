package zarr

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/mmapkit/mmapkit/blosc"
	"github.com/mmapkit/mmapkit/internal/zstdpool"
)

// codec is one bytes-to-bytes codec of a chunk's chain: a compressor
// (v2's "compressor", v3's bytes→bytes codecs) or a checksum.
type codec struct {
	name  string // "zlib", "gzip", "zstd", "lz4", "blosc", "crc32c", or the unsupported codec's own name
	level int
	// unsupported, when set, says why chunks of this codec cannot be
	// decoded; listing the store still works.
	unsupported string
	// blosc is the configuration of a "blosc" codec, for chunks written.
	blosc *blosc.Options
}

// castagnoli is the CRC-32C table (RFC 3720).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errInflate and errShort describe chunks that do not decode to their
// size; callers wrap them with the key and offset.
func errInflate(want int) error {
	return fmt.Errorf("decompresses to more than the chunk's %d bytes: %w", want, ErrCorrupt)
}

func errShort(got, want int) error {
	return fmt.Errorf("decodes to %d bytes, the chunk has %d: %w", got, want, ErrCorrupt)
}

// decodeChain decodes enc, a chunk encoded with chain (applied in order
// when it was written), into dst, which it must fill exactly. The last
// step decompresses straight into dst.
func decodeChain(chain []codec, dst, enc []byte) error {
	cur := enc
	for i := len(chain) - 1; i >= 0; i-- {
		c := &chain[i]
		if c.unsupported != "" {
			return fmt.Errorf("codec %q: %s: %w", c.name, c.unsupported, ErrUnsupported)
		}
		if c.name == "crc32c" {
			if len(cur) < 4 {
				return fmt.Errorf("%d bytes cannot hold a crc32c checksum: %w", len(cur), ErrCorrupt)
			}
			data := cur[:len(cur)-4]
			if got, want := crc32.Checksum(data, castagnoli), binary.LittleEndian.Uint32(cur[len(cur)-4:]); got != want {
				return fmt.Errorf("checksum 0x%08x, the bytes give 0x%08x: %w", want, got, ErrChecksum)
			}
			cur = data
			continue
		}
		out := dst
		if i > 0 && int64(len(dst)) > maxDecoded {
			return fmt.Errorf("a chunk of %d bytes through %d compressors is too large to decode here: %w", len(dst), len(chain), ErrUnsupported)
		}
		if i > 0 {
			// An inner codec's input: bounded, since it is at most a
			// little larger than the chunk for every codec there is.
			out = make([]byte, len(dst)+len(dst)/8+64<<10)
		}
		n, err := decompress(c, out, cur, i > 0)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		cur = out[:n]
	}
	if len(chain) == 0 || chain[0].name == "crc32c" {
		if len(cur) != len(dst) {
			return errShort(len(cur), len(dst))
		}
		copy(dst, cur)
	}
	return nil
}

// decompress decodes src with c into dst. exact: dst must be filled
// exactly; otherwise dst bounds the output and n says how much was
// written.
func decompress(c *codec, dst, src []byte, partial bool) (int, error) {
	switch c.name {
	case "zlib", "gzip":
		r, err := flateReader(c.name, src)
		if err != nil {
			return 0, fmt.Errorf("%v: %w", err, ErrCorrupt)
		}
		defer flatePool(c.name).Put(r)
		n, err := io.ReadFull(r, dst)
		if partial && (err == io.EOF || err == io.ErrUnexpectedEOF) {
			return n, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, errShort(n, len(dst))
		}
		if err != nil {
			return n, fmt.Errorf("%v: %w", err, ErrCorrupt)
		}
		var one [1]byte
		for {
			m, err := r.Read(one[:])
			if m > 0 {
				return n, errInflate(len(dst))
			}
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, fmt.Errorf("%v: %w", err, ErrCorrupt)
			}
		}
	case "zstd":
		out, err := zstdpool.Decoder().DecodeAll(src, dst[:0:len(dst)])
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return 0, errInflate(len(dst))
		}
		if err != nil {
			return 0, fmt.Errorf("%v: %w", err, ErrCorrupt)
		}
		if len(out) > 0 && &out[0] != &dst[0] {
			return 0, errInflate(len(dst))
		}
		if !partial && len(out) != len(dst) {
			return len(out), errShort(len(out), len(dst))
		}
		return len(out), nil
	case "blosc":
		n, err := blosc.DecodeInto(dst, src)
		switch {
		case errors.Is(err, blosc.ErrTooLarge):
			return 0, errInflate(len(dst))
		case errors.Is(err, blosc.ErrUnsupported):
			return 0, fmt.Errorf("%v: %w", err, ErrUnsupported)
		case err != nil:
			return 0, fmt.Errorf("%v: %w", err, ErrCorrupt)
		case !partial && n != len(dst):
			return n, errShort(n, len(dst))
		}
		return n, nil
	case "lz4":
		// numcodecs' LZ4: the decoded size (u32, little-endian), then an
		// LZ4 block.
		if len(src) < 4 {
			return 0, fmt.Errorf("%d bytes cannot hold lz4's size header: %w", len(src), ErrCorrupt)
		}
		size := int64(binary.LittleEndian.Uint32(src))
		if size > int64(len(dst)) {
			return 0, errInflate(len(dst))
		}
		if !partial && size != int64(len(dst)) {
			return 0, errShort(int(size), len(dst))
		}
		n, err := lz4.UncompressBlock(src[4:], dst[:size])
		if err != nil {
			return n, fmt.Errorf("%v: %w", err, ErrCorrupt)
		}
		if int64(n) != size {
			return n, errShort(n, int(size))
		}
		return n, nil
	}
	return 0, fmt.Errorf("codec %q: %w", c.name, ErrUnsupported)
}

var zlibReaders, gzipReaders sync.Pool

func flatePool(name string) *sync.Pool {
	if name == "gzip" {
		return &gzipReaders
	}
	return &zlibReaders
}

// flateReader returns a pooled zlib or gzip reader reset to src.
func flateReader(name string, src []byte) (io.ReadCloser, error) {
	br := bytes.NewReader(src)
	if v := flatePool(name).Get(); v != nil {
		if name == "gzip" {
			r := v.(*gzip.Reader)
			if err := r.Reset(br); err != nil {
				return nil, err
			}
			r.Multistream(false)
			return r, nil
		}
		r := v.(io.ReadCloser)
		if err := r.(zlib.Resetter).Reset(br, nil); err != nil {
			return nil, err
		}
		return r, nil
	}
	if name == "gzip" {
		r, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		r.Multistream(false)
		return r, nil
	}
	return zlib.NewReader(br)
}

// encodeChain encodes a chunk's bytes with chain, appending to dst.
func encodeChain(chain []codec, dst, src []byte) ([]byte, error) {
	cur := src
	for i := range chain {
		c := &chain[i]
		var out []byte
		if i == len(chain)-1 {
			out = dst[:0]
		}
		var err error
		if out, err = compress(c, out, cur); err != nil {
			return nil, err
		}
		cur = out
	}
	if len(chain) == 0 {
		return append(dst[:0], src...), nil
	}
	return cur, nil
}

// compress encodes src with c, appending to dst.
func compress(c *codec, dst, src []byte) ([]byte, error) {
	if c.unsupported != "" {
		return nil, fmt.Errorf("codec %q: %s: %w", c.name, c.unsupported, ErrUnsupported)
	}
	switch c.name {
	case "crc32c":
		dst = append(dst, src...)
		return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(src, castagnoli)), nil
	case "zlib", "gzip":
		buf := bytes.NewBuffer(dst)
		var w io.WriteCloser
		var err error
		if c.name == "gzip" {
			w, err = gzip.NewWriterLevel(buf, c.level)
		} else {
			w, err = zlib.NewWriterLevel(buf, c.level)
		}
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case "zstd":
		return zstdpool.Encoder(c.level).EncodeAll(src, dst), nil
	case "blosc":
		if c.blosc == nil {
			return nil, fmt.Errorf("codec %q without its configuration: %w", c.name, ErrUnsupported)
		}
		return blosc.Encode(dst, src, *c.blosc)
	case "lz4":
		if int64(len(src)) > 1<<31-1 {
			return nil, fmt.Errorf("lz4: a chunk of %d bytes is too large for lz4's size header", len(src))
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(src)))
		start := len(dst)
		dst = append(dst, make([]byte, lz4.CompressBlockBound(len(src)))...)
		var lc lz4.Compressor
		n, err := lc.CompressBlock(src, dst[start:])
		if err != nil {
			return nil, err
		}
		return dst[:start+n], nil
	}
	return nil, fmt.Errorf("codec %q: %w", c.name, ErrUnsupported)
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
