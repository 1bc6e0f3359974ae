package h5

import "fmt"

// LayoutClass is how a dataset's raw data is stored.
type LayoutClass int

const (
	Compact    LayoutClass = 0 // inside the layout message
	Contiguous LayoutClass = 1 // one block of the file
	Chunked    LayoutClass = 2 // chunks found through an index
	Virtual    LayoutClass = 3 // mapped from other datasets; the caller refuses it
)

func (c LayoutClass) String() string {
	switch c {
	case Compact:
		return "compact"
	case Contiguous:
		return "contiguous"
	case Chunked:
		return "chunked"
	case Virtual:
		return "virtual"
	}
	return fmt.Sprintf("layout class %d", int(c))
}

// Chunk index types, as layout message version 4 numbers them; IndexBTree1 is the only
// index of versions 1-3.
const (
	IndexBTree1     = 0
	IndexSingle     = 1
	IndexImplicit   = 2
	IndexFixedArray = 3
	IndexExtArray   = 4
	IndexBTree2     = 5
)

// maxLayoutDims bounds the dimensionality of a chunk (32 dataset dims + the element size).
const maxLayoutDims = 33

// Layout is a parsed data layout message (type 8, versions 1-4).
type Layout struct {
	Version   int
	Class     LayoutClass
	Compact   []byte     // Compact: the raw data (aliases the message body)
	CompactAt int64      // absolute offset of Compact's first byte
	Addr      uint64     // Contiguous: data address (relative); undefined = not allocated
	Size      uint64     // Contiguous: bytes (v3/v4; v1/v2 computed by the caller)
	ChunkDims []uint64   // Chunked: the dataset's chunk dims (element-size dim removed)
	ElemSize  uint32     // Chunked: the trailing element-size dim as stored
	Index     ChunkIndex // Chunked: which index and its parameters
	// EdgeChunksUnfiltered (v4 flag bit 0): partial edge chunks are stored without
	// passing through the filter pipeline.
	EdgeChunksUnfiltered bool
	// Virtual: the global heap object holding the mappings.
	VirtualHeapAddr  uint64
	VirtualHeapIndex uint32
}

// ChunkIndex is the chunk index of a chunked layout and its creation parameters.
type ChunkIndex struct {
	Type int    // IndexBTree1 ... IndexBTree2
	Addr uint64 // relative address of the index (of the single chunk, of the implicit data)

	// Single chunk with a filter pipeline: its stored size and filter mask.
	Filtered     bool
	FilteredSize uint64
	FilterMask   uint32

	// Fixed array and extensible array: log2 of the entries in one data block page.
	PageBits uint8

	// Extensible array.
	MaxBits       uint8 // log2 of the maximum number of elements
	IndexElements uint8 // elements stored in the index block
	MinPointers   uint8 // minimum data block pointers in a super block
	MinElements   uint8 // minimum elements in a data block

	// v2 B-tree.
	NodeSize     uint32
	SplitPercent uint8
	MergePercent uint8
}

// ParseLayout parses a layout message body. rank is the dataspace rank (the chunk's
// dimensionality must be rank+1); a negative rank skips that check. at is the absolute
// offset of the body, for errors. Compact aliases body.
func ParseLayout(body []byte, at int64, rank int, offsetSize, lengthSize int) (*Layout, error) {
	d := &decoder{b: body, at: at, offsetSize: offsetSize, lengthSize: lengthSize}
	l := &Layout{Version: int(d.u8("layout version"))}
	if d.err != nil {
		return nil, d.err
	}
	var err error
	switch l.Version {
	case 1, 2:
		err = l.parseV1(d, rank)
	case 3, 4:
		err = l.parseV3(d, rank)
	default:
		return nil, errorf(at, "layout message version %d is not 1-4", l.Version)
	}
	if err != nil {
		return nil, err
	}
	return l, d.err
}

// parseV1 reads versions 1 and 2: dimensionality, class, reserved bytes, an address
// (contiguous and chunked), 4-byte dims and, for compact storage, the data.
func (l *Layout) parseV1(d *decoder, rank int) error {
	ndims := int(d.u8("dimensionality"))
	l.Class = LayoutClass(d.u8("layout class"))
	d.skip(5, "reserved")
	if d.err != nil {
		return d.err
	}
	if ndims == 0 || ndims > maxLayoutDims {
		return errorf(d.at+1, "layout dimensionality %d is not 1-%d", ndims, maxLayoutDims)
	}
	switch l.Class {
	case Contiguous, Chunked:
		l.Addr = d.addr("data address")
	case Compact:
	default:
		return errorf(d.at+2, "layout class %d is not compact, contiguous or chunked", int(l.Class))
	}
	dims := make([]uint64, ndims)
	for i := range dims {
		dims[i] = uint64(d.u32("dimension"))
	}
	switch l.Class {
	case Chunked:
		if err := l.setChunkDims(d, dims, rank); err != nil {
			return err
		}
		l.Index = ChunkIndex{Type: IndexBTree1, Addr: l.Addr}
	case Compact:
		n := d.u32("compact data size")
		l.CompactAt = d.offset()
		l.Compact = d.take(int(n), "compact data")
	}
	return d.err
}

func (l *Layout) parseV3(d *decoder, rank int) error {
	classAt := d.offset()
	l.Class = LayoutClass(d.u8("layout class"))
	switch l.Class {
	case Compact:
		n := d.u16("compact data size")
		l.CompactAt = d.offset()
		l.Compact = d.take(int(n), "compact data")
	case Contiguous:
		l.Addr = d.addr("data address")
		l.Size = d.length("data size")
	case Chunked:
		if l.Version == 3 {
			return l.parseChunkedV3(d, rank)
		}
		return l.parseChunkedV4(d, rank)
	case Virtual:
		if l.Version < 4 {
			return errorf(classAt, "virtual layout in a version %d layout message", l.Version)
		}
		l.VirtualHeapAddr = d.addr("virtual dataset heap address")
		l.VirtualHeapIndex = d.u32("virtual dataset heap index")
	default:
		if d.err == nil {
			return errorf(classAt, "layout class %d is not compact, contiguous, chunked or virtual", int(l.Class))
		}
	}
	return d.err
}

func (l *Layout) parseChunkedV3(d *decoder, rank int) error {
	ndimsAt := d.offset()
	ndims := int(d.u8("dimensionality"))
	l.Addr = d.addr("B-tree address")
	if d.err != nil {
		return d.err
	}
	if ndims < 2 || ndims > maxLayoutDims {
		return errorf(ndimsAt, "chunk dimensionality %d is not 2-%d", ndims, maxLayoutDims)
	}
	dims := make([]uint64, ndims)
	for i := range dims {
		dims[i] = uint64(d.u32("chunk dimension"))
	}
	l.Index = ChunkIndex{Type: IndexBTree1, Addr: l.Addr}
	return l.setChunkDims(d, dims, rank)
}

func (l *Layout) parseChunkedV4(d *decoder, rank int) error {
	flagsAt := d.offset()
	flags := d.u8("chunked layout flags")
	ndims := int(d.u8("dimensionality"))
	width := int(d.u8("dimension size width"))
	if d.err != nil {
		return d.err
	}
	if flags&^3 != 0 {
		return errorf(flagsAt, "chunked layout flags %#x has unknown bits", flags)
	}
	l.EdgeChunksUnfiltered = flags&1 != 0
	if ndims < 2 || ndims > maxLayoutDims {
		return errorf(flagsAt+1, "chunk dimensionality %d is not 2-%d", ndims, maxLayoutDims)
	}
	if width < 1 || width > 8 {
		return errorf(flagsAt+2, "chunk dimension width %d is not 1-8", width)
	}
	dims := make([]uint64, ndims)
	for i := range dims {
		dims[i] = d.uint(width, "chunk dimension")
	}
	if err := l.setChunkDims(d, dims, rank); err != nil {
		return err
	}
	typeAt := d.offset()
	ix := &l.Index
	ix.Type = int(d.u8("chunk index type"))
	switch ix.Type {
	case IndexSingle:
		if flags&2 != 0 {
			ix.Filtered = true
			ix.FilteredSize = d.length("filtered chunk size")
			ix.FilterMask = d.u32("filter mask")
		}
	case IndexImplicit:
	case IndexFixedArray:
		ix.PageBits = d.u8("fixed array page bits")
		if d.err == nil && ix.PageBits == 0 {
			return errorf(typeAt+1, "fixed array page bits is 0")
		}
	case IndexExtArray:
		params := d.take(5, "extensible array parameters")
		if d.err != nil {
			return d.err
		}
		for i, p := range params {
			if p == 0 {
				return errorf(typeAt+1+int64(i), "extensible array parameter %d is 0", i)
			}
		}
		ix.MaxBits, ix.IndexElements, ix.MinPointers, ix.MinElements, ix.PageBits = params[0], params[1], params[2], params[3], params[4]
	case IndexBTree2:
		ix.NodeSize = d.u32("v2 B-tree node size")
		ix.SplitPercent = d.u8("split percent")
		ix.MergePercent = d.u8("merge percent")
	default:
		if d.err == nil {
			return errorf(typeAt, "chunk index type %d is not 1-5", ix.Type)
		}
	}
	ix.Addr = d.addr("chunk index address")
	l.Addr = ix.Addr
	return d.err
}

// setChunkDims splits the stored dims into the chunk's dims and the element size.
func (l *Layout) setChunkDims(d *decoder, dims []uint64, rank int) error {
	if d.err != nil {
		return d.err
	}
	if len(dims) < 2 {
		// HDF5 chunks only datasets of rank 1 or more: a scalar is never
		// chunked, and a chunk of no dimensions holds nothing to index.
		return errorf(d.at, "chunk has %d dimensions: a chunked layout has at least one besides the element size", len(dims))
	}
	if rank >= 0 && len(dims) != rank+1 {
		return errorf(d.at, "chunk has %d dimensions, want the dataspace rank %d + 1", len(dims), rank)
	}
	for i, n := range dims {
		if n == 0 {
			return errorf(d.at, "chunk dimension %d is 0", i)
		}
	}
	last := dims[len(dims)-1]
	if last > 1<<32-1 {
		return errorf(d.at, "chunk element size %d does not fit 32 bits", last)
	}
	l.ChunkDims = dims[:len(dims)-1]
	l.ElemSize = uint32(last)
	return nil
}
