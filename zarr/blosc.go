package zarr

import (
	"encoding/json"
	"fmt"

	"github.com/mmapkit/mmapkit/blosc"
)

// bloscCodec is the codec of a Blosc configuration: v2's compressor
// {"id": "blosc", "cname", "clevel", "shuffle": 0, 1, 2 or -1 (automatic),
// "blocksize"} or v3's {"cname", "clevel", "shuffle": "noshuffle",
// "shuffle" or "bitshuffle", "typesize", "blocksize"}. Chunks decode from
// what their frames say; the configuration is what chunks written here
// get, with the element size of the array (as numcodecs takes it from the
// chunk's dtype) where v2 does not record one.
func bloscCodec(cfg json.RawMessage, elemSize int) (codec, *metaError) {
	var c struct {
		Cname     *string         `json:"cname"`
		Clevel    *int            `json:"clevel"`
		Shuffle   json.RawMessage `json:"shuffle"`
		Typesize  int             `json:"typesize"`
		Blocksize int             `json:"blocksize"`
	}
	if len(cfg) > 0 {
		if err := json.Unmarshal(cfg, &c); err != nil {
			return codec{}, bad("blosc configuration %s: %v", clip(cfg), err)
		}
	}
	o := blosc.DefaultOptions(max(elemSize, 1))
	if c.Cname != nil {
		var err error
		if o.Codec, err = blosc.ParseCodec(*c.Cname); err != nil {
			return codec{}, bad("blosc cname %q is not one of blosclz, lz4, lz4hc, snappy, zlib, zstd", *c.Cname)
		}
	}
	if c.Clevel != nil {
		if *c.Clevel < 0 || *c.Clevel > 9 {
			return codec{}, bad("blosc clevel %d is not 0 to 9", *c.Clevel)
		}
		o.Level = *c.Clevel
	}
	if len(c.Shuffle) > 0 {
		var n int
		var name string
		switch {
		case json.Unmarshal(c.Shuffle, &n) == nil && n >= -1 && n <= 2:
			o.Shuffle = blosc.Shuffle(n)
			if n == -1 { // numcodecs' AUTOSHUFFLE
				o.Shuffle = blosc.ByteShuffle
				if o.TypeSize == 1 {
					o.Shuffle = blosc.BitShuffle
				}
			}
		case json.Unmarshal(c.Shuffle, &name) == nil:
			s, err := blosc.ParseShuffle(name)
			if err != nil {
				return codec{}, bad("blosc shuffle %q is not one of noshuffle, shuffle, bitshuffle", name)
			}
			o.Shuffle = s
		default:
			return codec{}, bad("blosc shuffle %s is not 0, 1, 2, -1 or a name", clip(c.Shuffle))
		}
	}
	if c.Typesize > 0 {
		o.TypeSize = c.Typesize
	}
	if c.Blocksize < 0 {
		return codec{}, bad("blosc blocksize %d is negative", c.Blocksize)
	}
	o.BlockSize = c.Blocksize
	return codec{name: "blosc", level: o.Level, blosc: &o}, nil
}

// withElementSize gives the Blosc codecs of chain the element size of an
// array written here.
func withElementSize(chain []codec, elemSize int) []codec {
	out := append([]codec(nil), chain...)
	for i := range out {
		if out[i].blosc != nil {
			o := *out[i].blosc
			o.TypeSize = max(elemSize, 1)
			out[i].blosc = &o
		}
	}
	return out
}

// bloscConfigV2 is numcodecs' JSON of a Blosc compressor.
func bloscConfigV2(o *blosc.Options) map[string]any {
	return map[string]any{"id": "blosc", "cname": o.Codec.String(), "clevel": o.Level, "shuffle": int(o.Shuffle), "blocksize": o.BlockSize}
}

// bloscConfigV3 is the v3 blosc codec.
func bloscConfigV3(o *blosc.Options) map[string]any {
	return map[string]any{"name": "blosc", "configuration": map[string]any{
		"cname": o.Codec.String(), "clevel": o.Level, "shuffle": o.Shuffle.String(),
		"typesize": o.TypeSize, "blocksize": o.BlockSize,
	}}
}

// parseBloscCompress parses the options of "blosc[:CNAME[:LEVEL]]"
// (numcodecs' defaults: lz4, level 5, byte shuffle).
func parseBloscCompress(s, rest string) ([]codec, error) {
	o := blosc.DefaultOptions(1)
	if rest != "" {
		cname, lv, hasLevel := cutColon(rest)
		var err error
		if o.Codec, err = blosc.ParseCodec(cname); err != nil {
			return nil, fmt.Errorf("compress %q: blosc's codec is one of blosclz, lz4, lz4hc, snappy, zlib, zstd", s)
		}
		if hasLevel {
			if _, err := fmt.Sscan(lv, &o.Level); err != nil || o.Level < 0 || o.Level > 9 || fmt.Sprint(o.Level) != lv {
				return nil, fmt.Errorf("compress %q: the level of blosc is 0 to 9", s)
			}
		}
	}
	return []codec{{name: "blosc", level: o.Level, blosc: &o}}, nil
}

func cutColon(s string) (before, after string, found bool) {
	for i := range len(s) {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
