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
// dataspace's; filtered says whether the dataset has a filter pipeline, which a version
// 4 index must agree with (its entries carry sizes and masks only then). Cycles are detected (tree levels must decrease and
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
	if err := r.checkFiltered(l, filtered); err != nil {
		return err
	}
	switch l.Index.Type {
	case IndexBTree1:
		return r.btree1Chunks(l.Index.Addr, len(dims), fn)
	case IndexSingle:
		return r.singleChunk(l, fn)
	case IndexImplicit:
		return r.implicitChunks(l, dims, maxDims, fn)
	case IndexFixedArray:
		return r.fixedArrayChunks(l, dims, maxDims, filtered, fn)
	case IndexExtArray:
		return r.extArrayChunks(l, dims, maxDims, filtered, fn)
	case IndexBTree2:
		return r.btree2Chunks(l, filtered, fn)
	}
	return unsupported(r.Base, "chunk index type %d", l.Index.Type)
}

// checkFiltered checks what a layout's own index parameters say about filtering
// against the dataset's pipeline: the single-chunk index stores a size and mask when
// filtered, and the implicit index is never filtered. Fixed arrays, extensible arrays
// and v2 B-trees say it in their headers, checked as they are read.
func (r *Reader) checkFiltered(l *Layout, filtered bool) error {
	switch {
	case l.Index.Type == IndexSingle && l.Index.Filtered != filtered,
		l.Index.Type == IndexImplicit && filtered:
		return errorf(r.Base, "chunk index type %d (filtered entries: %v) for a dataset with a filter pipeline: %v",
			l.Index.Type, l.Index.Filtered, filtered)
	}
	return nil
}

// indexFiltered checks that an index header's "filtered" agrees with the dataset's.
func indexFiltered(at int64, what string, index, dataset bool) error {
	if index != dataset {
		return errorf(at, "%s of filtered chunks: %v, for a dataset with a filter pipeline: %v", what, index, dataset)
	}
	return nil
}
