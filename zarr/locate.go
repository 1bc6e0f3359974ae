package zarr

import (
	"slices"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

var _ format.Locator = (*Store)(nil)

// Locate describes where array i's bytes are (format.Locator): for a
// version 2 array its chunk grid as .zarray has it, each stored chunk
// file as a whole ([key, 0, its size]), missing chunks left out; its
// attributes and dimension names. Version 3 arrays, and types NumPy
// lacks, cannot be described.
func (s *Store) Locate(i int) (*format.Location, error) {
	a, err := s.arrayAt(i)
	if err != nil {
		return nil, err
	}
	m := a.m
	switch {
	case m.version != 2:
		return nil, format.Unlocatable("a Zarr version %d array", m.version)
	case !m.dt.typ.Valid():
		return nil, format.Unlocatable("type %s", m.dt.typeName())
	}
	loc := &format.Location{Shape: m.shape, Order: layout.RowMajor, DType: dtypeV2(m.dt),
		Attributes: a.Attributes(), DimensionNames: slices.Clone(m.dims)}
	if m.colMajor() {
		loc.Order = layout.ColMajor
	}
	g := &format.ChunkGrid{Chunks: m.grid, Separator: m.sep, Compressor: jsonOrNull(m.compressor),
		Filters: []byte("null"), FillValue: jsonOrNull(m.fillJSON)}
	loc.Grid = g
	grid := m.unitGrid()
	if n, err := layout.Count(grid); err != nil || n == 0 {
		return loc, err
	}
	idx := make([]int64, len(grid))
	for {
		w, err := a.locateUnit(idx)
		if err != nil {
			return nil, err
		}
		if !w.missing {
			g.Stored = append(g.Stored, format.Chunk{Index: slices.Clone(idx), Path: w.key, Offset: w.off, Length: w.n})
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
	return s.readAttrs(".zattrs")
}
