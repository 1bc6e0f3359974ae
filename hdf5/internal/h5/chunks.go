package h5

import "fmt"

// Chunk is a stored chunk of a chunked dataset.
type Chunk struct {
	Offset     []uint64 // element coordinates of the chunk's first element, one per dataset dim
	Addr       int64    // absolute file offset of the stored bytes
	Size       uint64   // stored (filtered) bytes
	FilterMask uint32   // bit i set: filter i of the pipeline was skipped
}

// Chunks calls fn for every allocated chunk of a chunked dataset, whatever the index,
// in the index's order; unallocated chunks are not reported. dims and maxDims are the
// dataspace's; filtered says whether the dataset has a filter pipeline (v4 indexes store
// chunk sizes and masks only then). Cycles are detected (tree levels must decrease and
// no block is read twice) and counts are checked against what the file can hold before
// anything is allocated.
func (r *Reader) Chunks(l *Layout, dims, maxDims []uint64, filtered bool, fn func(Chunk) error) error {
	if l.Class != Chunked {
		return fmt.Errorf("h5: Chunks of a %v layout", l.Class)
	}
	if len(dims) != len(l.ChunkDims) || len(maxDims) != len(dims) {
		return fmt.Errorf("h5: dataspace of rank %d (max dims %d) for chunks of rank %d", len(dims), len(maxDims), len(l.ChunkDims))
	}
	if IsUndefined(l.Index.Addr, r.OffsetSize) {
		return nil // no chunk was ever written
	}
	switch l.Index.Type {
	case IndexBTree1:
		return r.btree1Chunks(l.Index.Addr, len(dims), fn)
	case IndexSingle:
		return r.singleChunk(l, fn)
	case IndexImplicit:
		return r.implicitChunks(l, dims, maxDims, fn)
	case IndexFixedArray:
		return r.fixedArrayChunks(l, dims, maxDims, fn)
	case IndexExtArray:
		return r.extArrayChunks(l, dims, maxDims, fn)
	case IndexBTree2:
		return r.btree2Chunks(l, fn)
	}
	return unsupported(r.Base, "chunk index type %d", l.Index.Type)
}
