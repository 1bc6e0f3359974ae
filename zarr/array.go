package zarr

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Array is one array of a store. Its chunks are the units this package
// reads, maps and edits: the chunks of the chunk grid, or, in a sharded
// array, the inner chunks of the shards.
type Array struct {
	s *Store
	m *meta
	i int // its record in the store
}

// Name is the array's name as zarr-python names it: "/" for a store whose
// root is an array, "/group/name" inside groups.
func (a *Array) Name() string { return a.m.name }

// Shape is the array's shape.
func (a *Array) Shape() []int64 { return slices.Clone(a.m.shape) }

// Type is the element type (layout.Invalid for types this package cannot
// read, such as NumPy's strings).
func (a *Array) Type() layout.Type { return a.m.dt.typ }

// TypeName is the type's name where the element type says too little:
// "datetime64[s]", or the store's own name of a type that cannot be read.
func (a *Array) TypeName() string { return a.m.dt.typeName() }

// ChunkShape is the shape of one chunk (of one inner chunk of a shard).
// Every chunk holds this many elements, also at the array's edges.
func (a *Array) ChunkShape() []int64 { return slices.Clone(a.m.unit) }

// ShardShape is the shape of a shard, or nil if the array is not sharded.
func (a *Array) ShardShape() []int64 {
	if a.m.shard == nil {
		return nil
	}
	return slices.Clone(a.m.grid)
}

// Order is the order of the elements inside each chunk: RowMajor (C) or
// ColMajor (F, or a transpose that reverses the axes). Chunks stored in
// another permutation report RowMajor and cannot be viewed.
func (a *Array) Order() layout.Order {
	if a.m.colMajor() {
		return layout.ColMajor
	}
	return layout.RowMajor
}

// ByteOrder is the byte order of the stored elements.
func (a *Array) ByteOrder() binary.ByteOrder { return a.m.byteOrder() }

// Codecs names the compressors and checksums chunks pass through, in the
// order they were applied ("zstd", "crc32c"); none for chunks that are
// raw blocks of the array.
func (a *Array) Codecs() []string {
	var out []string
	for _, c := range a.m.chain {
		out = append(out, c.name)
	}
	return out
}

// Attributes are the array's user attributes (.zattrs, or zarr.json's
// "attributes").
func (a *Array) Attributes() map[string]any { return maps.Clone(a.m.attrs) }

// DimensionNames are the names of the array's axes (v3 dimension_names,
// else xarray's _ARRAY_DIMENSIONS), or nil.
func (a *Array) DimensionNames() []string { return slices.Clone(a.m.dims) }

// Grid is the number of chunks along each axis.
func (a *Array) Grid() []int64 { return a.m.unitGrid() }

func (m *meta) unitGrid() []int64 {
	g := make([]int64, len(m.shape))
	for i := range g {
		g[i] = ceilDiv(m.shape[i], m.unit[i])
	}
	return g
}

// ChunkBox is the part of the array that chunk idx covers: start and
// count, clipped at the array's edge.
func (a *Array) ChunkBox(idx ...int64) (start, count []int64, err error) {
	if err := a.checkChunk(idx); err != nil {
		return nil, nil, err
	}
	m := a.m
	start, count = make([]int64, len(idx)), make([]int64, len(idx))
	for i := range idx {
		start[i] = idx[i] * m.unit[i]
		count[i] = min(m.unit[i], m.shape[i]-start[i])
	}
	return start, count, nil
}

// ChunkKey is the key (the path inside the store) of the file holding
// chunk idx: the chunk's own file, or its shard's.
func (a *Array) ChunkKey(idx ...int64) (string, error) {
	if err := a.checkChunk(idx); err != nil {
		return "", err
	}
	key, _ := a.m.locate(idx)
	return key, nil
}

func (a *Array) checkChunk(idx []int64) error {
	g := a.m.unitGrid()
	if err := layout.CheckIndex("", g, idx); err != nil {
		return a.s.errf(a.m.metaKey, -1, format.IndexError(err), "array %q: chunk grid %s", a.m.name, layout.ShapeString(g))
	}
	return nil
}

// chunkKey is the key of the grid chunk (or shard) g.
func (m *meta) chunkKey(g []int64) string {
	var b strings.Builder
	if m.path != "" {
		b.WriteString(m.path)
		b.WriteByte('/')
	}
	if m.defaultKeys {
		b.WriteByte('c')
		for _, x := range g {
			b.WriteString(m.sep)
			b.WriteString(strconv.FormatInt(x, 10))
		}
		return b.String()
	}
	if len(g) == 0 {
		b.WriteByte('0')
	}
	for i, x := range g {
		if i > 0 {
			b.WriteString(m.sep)
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	return b.String()
}

// locate returns the key of the file holding unit u and, in a sharded
// array, the unit's position in its shard's index (-1 otherwise).
func (m *meta) locate(u []int64) (string, int64) {
	if m.shard == nil {
		return m.chunkKey(u), -1
	}
	g := make([]int64, len(u))
	var inner int64
	for i := range u {
		g[i] = u[i] / m.shard.perShard[i]
		inner = inner*m.shard.perShard[i] + u[i]%m.shard.perShard[i]
	}
	return m.chunkKey(g), inner
}

// checkBox checks a region of the array.
func (a *Array) checkBox(start, count []int64) (int64, error) {
	m := a.m
	if len(start) != len(m.shape) || len(count) != len(m.shape) {
		return 0, a.s.errf(m.metaKey, -1, mmapfile.ErrOutOfRange, "array %q: region start %v, count %v for rank %d", m.name, start, count, len(m.shape))
	}
	for i := range start {
		if end, ok := layout.Add(start[i], count[i]); !ok || end > m.shape[i] {
			return 0, a.s.errf(m.metaKey, -1, mmapfile.ErrOutOfRange, "array %q: region start %v, count %v outside the shape %v", m.name, start, count, m.shape)
		}
	}
	n, err := layout.Count(count)
	if err != nil {
		return 0, a.s.errf(m.metaKey, -1, mmapfile.ErrOutOfRange, "array %q: region count %v: %v", m.name, count, err)
	}
	if !m.dt.typ.Valid() {
		return 0, a.s.errf(m.metaKey, -1, ErrUnsupported, "array %q: type %s cannot be read", m.name, m.dt.typeName())
	}
	return n, nil
}

func (a *Array) String() string {
	return fmt.Sprintf("%s %s%s chunks %v", a.m.name, a.m.dt.typeName(), layout.ShapeString(a.m.shape), a.m.unit)
}
