package zarr

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

var _ format.Locator = (*Store)(nil)

// Locate describes where array i's bytes are (format.Locator): for a
// version 2 array its chunk grid as .zarray has it, each stored chunk
// file as a whole ([key, 0, its size]), missing chunks left out; its
// attributes and dimension names. A version 3 array is described in
// version 2 terms: its bytes codec's endianness in the dtype, a transpose
// reversing every axis as order F, gzip or zstd as the compressor, a
// final crc32c left out of each range, a shard's inner chunks as ranges
// of the shard file from its checked index, keys in version 2 form
// ("0.0"). Other codecs, and types NumPy lacks, cannot be described.
func (s *Store) Locate(i int) (*format.Location, error) {
	a, err := s.arrayAt(i, true)
	if err != nil {
		return nil, err
	}
	m := a.m
	if !m.dt.typ.Valid() {
		return nil, format.Unlocatable("type %s", m.dt.typeName())
	}
	loc := &format.Location{Shape: m.shape, Order: layout.RowMajor, DType: dtypeV2(m.dt),
		Attributes: a.Attributes(), DimensionNames: slices.Clone(m.dims)}
	switch {
	case m.colMajor():
		loc.Order = layout.ColMajor
	case !m.rowMajor():
		return nil, format.Unlocatable("transpose %v, which is neither C nor F order", m.perm)
	}
	g := &format.ChunkGrid{Chunks: m.unit, Separator: m.sep, Compressor: jsonOrNull(m.compressor),
		Filters: []byte("null"), FillValue: jsonOrNull(m.fillJSON)}
	// A trailing crc32c is left out of each range: the bytes before it
	// are the chunk as Zarr v2 stores it.
	var trim int64
	if m.version != 2 {
		g.Separator = "."
		chain := m.chain
		if n := len(chain); n > 0 && chain[n-1].name == "crc32c" {
			chain, trim = chain[:n-1], 4
		}
		switch {
		case len(chain) == 0:
			g.Compressor = []byte("null")
		case len(chain) == 1 && (chain[0].name == "gzip" || chain[0].name == "zstd" || chain[0].name == "zlib") && chain[0].unsupported == "":
			g.Compressor = mustJSON(map[string]any{"id": chain[0].name, "level": chain[0].level})
		default:
			names := []string{}
			for _, c := range chain {
				names = append(names, c.name)
			}
			return nil, format.Unlocatable("codecs %v have no Zarr v2 form", names)
		}
	}
	loc.Grid = g
	grid := m.unitGrid()
	if n, err := layout.Count(grid); err != nil || n == 0 {
		return loc, err
	}
	idx := make([]int64, len(grid))
	files := &chunkFiles{s: s, dirs: map[string]map[string]fs.DirEntry{}}
	for {
		var w where
		if key, inner := m.locate(idx); inner < 0 {
			w.key = key
			var ok bool
			w.n, ok, err = files.size(key)
			w.missing = !ok
		} else {
			w, err = a.locateUnit(idx)
		}
		if err != nil {
			return nil, err
		}
		if !w.missing {
			if w.n < trim {
				return nil, s.errf(w.key, w.off, ErrInvalid, "array %q: chunk %v of %d bytes has no room for its crc32c", m.name, idx, w.n)
			}
			g.Stored = append(g.Stored, format.Chunk{Index: slices.Clone(idx), Path: w.key, Offset: w.off, Length: w.n - trim})
		}
		// The next index, the last axis fastest.
		k := len(idx) - 1
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < grid[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return loc, nil
		}
	}
}

// chunkFiles finds chunk files by listing each directory once, instead of
// a lookup per chunk: a chunk absent from its directory's listing is
// missing, one listed as a regular file has its size from the listing's
// entry, and anything else (a link) is judged by statKey, as a read
// would be.
type chunkFiles struct {
	s    *Store
	dirs map[string]map[string]fs.DirEntry
}

// size is statKey's answer for key.
func (c *chunkFiles) size(key string) (int64, bool, error) {
	dir, name := path.Split(key)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	entries, ok := c.dirs[dir]
	if !ok {
		list, err := fs.ReadDir(c.s.fsys, dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return c.s.statKey(key)
		}
		entries = make(map[string]fs.DirEntry, len(list))
		for _, e := range list {
			entries[e.Name()] = e
		}
		c.dirs[dir] = entries
	}
	e, ok := entries[name]
	if !ok {
		return 0, false, nil
	}
	if e.Type().IsRegular() {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			return fi.Size(), true, nil
		}
	}
	return c.s.statKey(key)
}

// jsonOrNull is raw JSON, or null where there is none.
func jsonOrNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}

var _ format.Attributed = (*Store)(nil)

// Attributes returns the attributes of a version 2 store's root group
// (format.Attributed), read afresh; nil for a store whose root is an
// array (they are the array's) and for version 3 stores.
func (s *Store) Attributes() (map[string]any, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if s.version != 2 {
		return nil, nil
	}
	if _, root, err := s.readMeta(".zarray"); err != nil || root {
		return nil, err
	}
	attrs, err := s.readAttrs(&loader{}, ".zattrs")
	return decodeAttrs(attrs), err
}
