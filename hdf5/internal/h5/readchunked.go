package h5

import (
	"fmt"
	"runtime"

	"github.com/mmapkit/mmapkit/internal/bufpool"
	"github.com/mmapkit/mmapkit/internal/parallel"
	"github.com/mmapkit/mmapkit/layout"
)

// maxExpansion and maxExpansionSlack bound what a stored chunk can decode to: deflate
// expands at most about 1032 times, lzf and the other filters less.
const (
	maxExpansion      = 1040
	maxExpansionSlack = 1 << 16
)

// chunkTask is one stored chunk that a read touches.
type chunkTask struct {
	c       Chunk
	lo, hi  uint64 // row-major indexes of its first and last element inside the dataset
	partial bool   // an edge chunk reaching beyond the dataset's dims
}

// ChunkTable is the allocated chunks of a chunked dataset that lie inside its current
// dims, collected from the chunk index once, so that many reads of one dataset walk the
// index once. It is immutable: safe for concurrent use.
type ChunkTable struct {
	layout     *Layout
	dims       []uint64
	strides    []uint64 // elements per step along each dim
	total      uint64   // elements in the dataset
	chunkBytes uint64
	chunks     []chunkTask
	complete   bool // every chunk of the grid is allocated: no fill needed
}

// Len is the number of allocated chunks inside the dataset.
func (t *ChunkTable) Len() int { return len(t.chunks) }

// Each calls fn for each allocated chunk inside the dataset, in the index's order;
// partial says whether it reaches beyond the dataset's dims (an edge chunk).
func (t *ChunkTable) Each(fn func(c Chunk, partial bool) error) error {
	for _, task := range t.chunks {
		if err := fn(task.c, task.partial); err != nil {
			return err
		}
	}
	return nil
}

// ChunkBytes is the bytes of one chunk's elements.
func (t *ChunkTable) ChunkBytes() uint64 { return t.chunkBytes }

// ChunkTable collects the allocated chunks of a chunked dataset through Chunks, keeping
// those inside dims; a chunk listed twice or at an offset that is not a multiple of the
// chunk dims is an error.
func (r *Reader) ChunkTable(l *Layout, dims, maxDims []uint64, filtered bool) (*ChunkTable, error) {
	if l.Class != Chunked || len(dims) != len(l.ChunkDims) {
		return nil, fmt.Errorf("h5: chunk table of a %v layout of rank %d over %d dims", l.Class, len(l.ChunkDims), len(dims))
	}
	t := &ChunkTable{layout: l, dims: dims, strides: make([]uint64, len(dims)), total: 1}
	for i := len(dims) - 1; i >= 0; i-- {
		t.strides[i] = t.total
		var ok bool
		if t.total, ok = mul64(t.total, dims[i]); !ok {
			return nil, errorf(r.Base, "dataspace %v overflows", dims)
		}
	}
	var ok bool
	if t.chunkBytes, ok = l.ChunkBytes(); !ok || t.chunkBytes >= 1<<32 {
		return nil, errorf(r.Base, "chunks of %v × %d bytes reach HDF5's 4 GiB limit", l.ChunkDims, l.ElemSize)
	}
	seen := map[uint64]bool{}
	err := r.Chunks(l, dims, maxDims, filtered, func(c Chunk) error {
		task := chunkTask{c: c}
		for i, o := range c.Offset {
			if o >= dims[i] {
				return nil // beyond the current extent (a dataset that shrank)
			}
			if o%l.ChunkDims[i] != 0 {
				return errorf(c.Addr, "chunk offset %v is not a multiple of the chunk dims %v", c.Offset, l.ChunkDims)
			}
			end := min(o+l.ChunkDims[i], dims[i])
			task.partial = task.partial || o+l.ChunkDims[i] > dims[i]
			task.lo += o * t.strides[i]
			task.hi += (end - 1) * t.strides[i]
		}
		if seen[task.lo] {
			return errorf(c.Addr, "chunk %v is listed twice in the chunk index", c.Offset)
		}
		seen[task.lo] = true
		t.chunks = append(t.chunks, task)
		return nil
	})
	if err != nil {
		return nil, err
	}
	gridN, _ := gridCount(chunkGrid(dims, l.ChunkDims))
	t.complete = uint64(len(t.chunks)) == gridN
	return t, nil
}

// ReadChunked copies elements [first, first+n) (row-major logical order, the file's
// byte order, elemSize bytes each) of a chunked dataset into dst (len n*elemSize). The
// chunks that range touches are decoded in parallel, one worker per core
// (runtime.GOMAXPROCS), each straight into dst where the chunk's bytes are contiguous
// there, else into a per-worker buffer copied row by row (edge chunks clipped). Elements
// of unallocated chunks read as fill (elemSize bytes; nil = zeros). It walks the chunk
// index on every call; ReadChunkTable reads through a ChunkTable collected once.
func (r *Reader) ReadChunked(l *Layout, p *Pipeline, dims, maxDims []uint64, elemSize int,
	fill []byte, dst []byte, first, n int64) error {
	t, err := r.ChunkTable(l, dims, maxDims, p != nil && len(p.Filters) > 0)
	if err != nil {
		return err
	}
	return r.ReadChunkTable(t, p, elemSize, fill, dst, first, n)
}

// ReadChunkTable is ReadChunked over the chunks of t.
func (r *Reader) ReadChunkTable(t *ChunkTable, p *Pipeline, elemSize int, fill []byte, dst []byte, first, n int64) error {
	l := t.layout
	if elemSize <= 0 || uint32(elemSize) != l.ElemSize {
		return errorf(r.Base, "element size %d, the chunk layout says %d", elemSize, l.ElemSize)
	}
	if fill != nil && len(fill) != elemSize {
		return fmt.Errorf("h5: fill value of %d bytes for elements of %d", len(fill), elemSize)
	}
	if first < 0 || n < 0 || uint64(first) > t.total || uint64(n) > t.total-uint64(first) {
		return fmt.Errorf("h5: elements [%d, +%d) outside the dataset's %d", first, n, t.total)
	}
	if want, ok := mul64(uint64(n), uint64(elemSize)); !ok || uint64(len(dst)) != want {
		return fmt.Errorf("h5: destination of %d bytes for %d elements of %d", len(dst), n, elemSize)
	}
	if n == 0 {
		return nil
	}
	if p != nil && len(p.Filters) > 0 {
		if err := p.Supported(); err != nil {
			return err
		}
	}
	last := uint64(first + n - 1)
	var tasks []chunkTask
	for _, c := range t.chunks {
		if c.hi >= uint64(first) && c.lo <= last {
			tasks = append(tasks, c)
		}
	}
	if !t.complete {
		fillElements(dst, fill, elemSize)
	}
	if len(tasks) == 0 {
		return nil
	}
	dims, strides, chunkBytes := t.dims, t.strides, t.chunkBytes

	newReader := func() *chunkReader {
		return &chunkReader{r: r, l: l, p: p, dims64: dims, strides: strides, elemSize: elemSize,
			chunkBytes: int(chunkBytes), dst: dst, first: uint64(first), last: last}
	}
	return parallel.Do(len(tasks), runtime.GOMAXPROCS(0), newReader, (*chunkReader).release,
		func(cr *chunkReader, i int) error { return cr.read(tasks[i]) })
}

// buffers keeps the chunk buffers of finished reads for the next ones.
var buffers bufpool.Pool

// release returns the worker's buffers to the pool.
func (cr *chunkReader) release() {
	buffers.Put(cr.stored)
	buffers.Put(cr.decoded)
	cr.stored, cr.decoded = nil, nil
}

// fillElements sets every element of dst to fill (zeros when nil).
func fillElements(dst, fill []byte, elemSize int) {
	if fill == nil || allZero(fill) {
		clear(dst)
		return
	}
	copy(dst, fill)
	for done := elemSize; done < len(dst); done *= 2 {
		copy(dst[done:], dst[:done])
	}
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// chunkReader is one worker's state: its buffers and the geometry of the read.
type chunkReader struct {
	r          *Reader
	l          *Layout
	p          *Pipeline
	dims64     []uint64
	strides    []uint64
	elemSize   int
	chunkBytes int
	dst        []byte
	first      uint64
	last       uint64
	stored     []byte
	decoded    []byte
	// The geometry of the strided copies, made at the first chunk copied
	// in part: the dataset's dims and strides, a chunk's strides, the
	// range read as boxes of the dataset (at the first chunk it cuts).
	dims         []int64
	dstStrides   []int64
	chunkStrides []int64
	count        []int64
	boxes        [][2][]int64
	copier       layout.StridedCopy
}

// CheckStored checks a stored chunk's size and filter mask before anything is read or
// allocated for it: no stored chunk reaches HDF5's 4 GiB limit or is much larger than
// its chunkBytes of elements (no filter decoded here grows data by more than a few
// bytes, and a filter that did not help is skipped), none is so small that decoding
// it would have to expand it beyond what deflate can, and its mask names only filters
// of the pipeline of nfilters.
func CheckStored(c Chunk, chunkBytes uint64, nfilters int) error {
	switch {
	case c.Size >= 1<<32:
		return errorf(c.Addr, "chunk %v of %d stored bytes reaches HDF5's 4 GiB limit", c.Offset, c.Size)
	case c.Size > chunkBytes+chunkBytes/8+maxExpansionSlack:
		return errorf(c.Addr, "chunk %v of %d stored bytes for %d bytes of elements: larger than any filter makes it", c.Offset, c.Size, chunkBytes)
	case chunkBytes > maxExpansion*c.Size+maxExpansionSlack:
		// No filter here expands more than deflate does, so such a chunk cannot decode;
		// refusing it first keeps a tiny hostile chunk from sizing a huge buffer.
		return errorf(c.Addr, "chunk %v of %d stored bytes cannot hold %d bytes of elements", c.Offset, c.Size, chunkBytes)
	case nfilters < 32 && c.FilterMask>>uint(nfilters) != 0:
		return errorf(c.Addr, "chunk %v has filter mask %#x for a pipeline of %d filters", c.Offset, c.FilterMask, nfilters)
	}
	return nil
}

func (cr *chunkReader) read(t chunkTask) error {
	c := t.c
	nfilters := 0
	if cr.p != nil {
		nfilters = len(cr.p.Filters)
	}
	if err := CheckStored(c, uint64(cr.chunkBytes), nfilters); err != nil {
		return err
	}
	if c.Size > uint64(cap(cr.stored)) {
		buffers.Put(cr.stored)
		cr.stored = buffers.Get(int(c.Size))
	}
	stored := cr.stored[:c.Size]
	if err := cr.r.readAt(stored, c.Addr, "chunk"); err != nil {
		return err
	}
	mask := c.FilterMask
	if t.partial && cr.l.EdgeChunksUnfiltered {
		mask = ^uint32(0)
	}
	if out, ok := cr.contiguousTarget(c, t.partial); ok {
		if err := cr.p.Decode(out, stored, mask, cr.elemSize); err != nil {
			return wrapf(c.Addr, err, "chunk %v", c.Offset)
		}
		return nil
	}
	if cr.decoded == nil {
		cr.decoded = buffers.Get(cr.chunkBytes)[:cr.chunkBytes]
	}
	if err := cr.p.Decode(cr.decoded, stored, mask, cr.elemSize); err != nil {
		return wrapf(c.Addr, err, "chunk %v", c.Offset)
	}
	cr.copyRows(t)
	return nil
}

// contiguousTarget returns the part of dst a whole chunk occupies when the chunk's
// elements are consecutive in the dataset (every dim after its first one of extent > 1
// spans the whole dataset) and all inside the range read.
func (cr *chunkReader) contiguousTarget(c Chunk, partial bool) ([]byte, bool) {
	if partial {
		return nil, false
	}
	cd := cr.l.ChunkDims
	j := 0
	for j < len(cd)-1 && cd[j] == 1 {
		j++
	}
	for i := j + 1; i < len(cd); i++ {
		if cd[i] != cr.dims64[i] {
			return nil, false
		}
	}
	var lo uint64
	for i, o := range c.Offset {
		lo += o * cr.strides[i]
	}
	n := uint64(cr.chunkBytes / cr.elemSize)
	if lo < cr.first || lo+n-1 > cr.last {
		return nil, false
	}
	start := (lo - cr.first) * uint64(cr.elemSize)
	return cr.dst[start : start+uint64(cr.chunkBytes)], true
}

// copyRows copies the part of the decoded chunk that lies in the dataset
// and in the range read into its place in dst, as strided copies: one for
// a chunk inside the range, else one for its overlap with each box of the
// range (cut into boxes once per worker).
func (cr *chunkReader) copyRows(t chunkTask) {
	c := t.c
	cd := cr.l.ChunkDims
	rank := len(cd)
	if len(cr.count) != rank {
		geometry := make([]int64, 4*rank)
		cr.dims, cr.count, cr.dstStrides = geometry[:rank], geometry[rank:2*rank], geometry[2*rank:3*rank]
		for i := range rank {
			cr.dims[i], cr.dstStrides[i], geometry[3*rank+i] = int64(cr.dims64[i]), int64(cr.strides[i]), int64(cd[i])
		}
		cr.chunkStrides = layout.Strides(geometry[3*rank:], layout.RowMajor)
	}
	if t.lo >= cr.first && t.hi <= cr.last {
		for i := range rank {
			cr.count[i] = min(int64(cd[i]), cr.dims[i]-int64(c.Offset[i]))
		}
		cr.copier.Plan(cr.count, cr.chunkStrides, cr.dstStrides, cr.elemSize)
		cr.copier.Copy(cr.dst, int64(t.lo-cr.first), cr.decoded, 0)
		return
	}
	if cr.boxes == nil {
		_ = layout.LinearBoxes(cr.dims, int64(cr.first), int64(cr.last)+1, func(start, count []int64) error {
			cr.boxes = append(cr.boxes, [2][]int64{start, count})
			return nil
		})
	}
	for _, b := range cr.boxes {
		start, n := b[0], b[1]
		var s0, d0 int64
		inside := true
		for i := range rank {
			o := int64(c.Offset[i])
			lo := max(o, start[i])
			hi := min(o+int64(cd[i]), cr.dims[i], start[i]+n[i])
			if hi <= lo {
				inside = false
				break
			}
			cr.count[i] = hi - lo
			s0 += (lo - o) * cr.chunkStrides[i]
			d0 += lo * cr.dstStrides[i]
		}
		if inside {
			cr.copier.Plan(cr.count, cr.chunkStrides, cr.dstStrides, cr.elemSize)
			cr.copier.Copy(cr.dst, d0-int64(cr.first), cr.decoded, s0)
		}
	}
}
