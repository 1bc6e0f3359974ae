package zarr

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
)

// chunking returns the chunk (unit) shape and the grid's chunk shape (the
// shard shape, or the chunk shape again) of an array.
func chunking(sp ArraySpec, o *Options, version int) (unit, grid []int64, err error) {
	k := len(sp.Shape)
	chunks, shards := sp.Chunks, sp.Shards
	if chunks == nil && len(o.Chunks) == k {
		chunks = o.Chunks
	}
	if shards == nil && len(o.Shards) == k && k > 0 {
		shards = o.Shards
	}
	if shards != nil && version != 3 {
		return nil, nil, fmt.Errorf("shards need Zarr version 3")
	}
	clampTo := func(c []int64, what string) ([]int64, error) {
		if len(c) != k {
			return nil, fmt.Errorf("%s %v for rank %d", what, c, k)
		}
		out := make([]int64, k)
		for i := range c {
			if c[i] <= 0 {
				return nil, fmt.Errorf("%s %v: dimension %d is not positive", what, c, i)
			}
			out[i] = min(c[i], max(sp.Shape[i], 1))
		}
		return out, nil
	}
	if shards != nil {
		if grid, err = clampTo(shards, "shards"); err != nil {
			return nil, nil, err
		}
	}
	if chunks != nil {
		if unit, err = clampTo(chunks, "chunks"); err != nil {
			return nil, nil, err
		}
	} else {
		unit = chooseChunks(sp.Shape, sp.Order, sp.Type.Size())
		if grid != nil { // inner chunks dividing the shards
			for i := range unit {
				for grid[i]%unit[i] != 0 {
					unit[i]--
				}
			}
		}
	}
	if grid == nil {
		return unit, slices.Clone(unit), nil
	}
	for i := range grid {
		if grid[i]%unit[i] != 0 {
			return nil, nil, fmt.Errorf("shards %v are not a multiple of the chunks %v", grid, unit)
		}
	}
	if _, err := layout.ByteSize(layout.C128, grid); err != nil {
		return nil, nil, fmt.Errorf("shards %v: a shard's size overflows", grid)
	}
	return unit, grid, nil
}

// chooseChunks picks chunks of about chunkTarget bytes (see
// layout.ChooseChunks).
func chooseChunks(shape []int64, order layout.Order, size int) []int64 {
	return layout.ChooseChunks(shape, order, size, chunkTarget)
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0, without overflowing.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// parseCompress parses "none", "zlib", "gzip" or "zstd", with an optional
// ":LEVEL", or "blosc[:CNAME[:LEVEL]]".
func parseCompress(s string) ([]codec, error) {
	name, lv, hasLevel := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	if name == "blosc" {
		return parseBloscCompress(s, lv)
	}
	if name == "" || name == "none" {
		if hasLevel {
			return nil, fmt.Errorf("compress %q: none takes no level", s)
		}
		return nil, nil
	}
	c := codec{name: name, level: 1}
	lo, hi := -1, 9
	switch name {
	case "zlib", "gzip":
	case "zstd":
		lo, hi = 1, 22
	default:
		return nil, fmt.Errorf("compress %q: not one of none, zlib, gzip, zstd, blosc", s)
	}
	if hasLevel {
		l, err := strconv.Atoi(lv)
		if err != nil || l < lo || l > hi {
			return nil, fmt.Errorf("compress %q: the level of %s is %d to %d", s, name, lo, hi)
		}
		c.level = l
	}
	return []codec{c}, nil
}
