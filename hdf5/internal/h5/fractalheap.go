package h5

import (
	"math/bits"
	"sync"
)

// FractalHeap is an open fractal heap ("FRHP"): the store of dense links and dense
// attributes. Objects are found by heap ID: managed objects live in direct blocks
// ("FHDB") reached through a doubling table of indirect blocks ("FHIB"); tiny objects
// live in the ID itself; huge objects are stored outside the heap, their address and
// length either in the ID or in a v2 B-tree keyed by the ID (huge objects of heaps with
// I/O filters are refused).
type FractalHeap struct {
	r    *Reader
	addr uint64
	at   int64

	idLen          int
	hugeBTree      uint64 // v2 B-tree of huge objects' addresses
	filtered       bool
	checksumDirect bool
	maxManaged     uint32

	width          int    // columns of the doubling table
	startBlock     uint64 // size of the blocks of rows 0 and 1
	maxDirectBlock uint64 // largest direct block
	maxHeapBits    int    // bits of a heap offset
	rootAddr       uint64
	rootRows       int // 0: the root is a direct block

	offsetBytes int // bytes of a heap offset (in IDs and block headers)
	lengthBytes int // bytes of an object length in managed IDs
	maxDirRows  int // rows of direct blocks in an indirect block
	firstRowBit int // log2(startBlock * width)

	// Blocks already read and checked, so that reading every link of a group reads
	// each block once; bounded by heapCacheBytes.
	mu         sync.Mutex
	cache      map[uint64][]byte
	cacheBytes int
}

// heapCacheBytes bounds the blocks one FractalHeap keeps.
const heapCacheBytes = 8 << 20

func (h *FractalHeap) cached(addr uint64) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cache[addr]
}

func (h *FractalHeap) remember(addr uint64, b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cache == nil || h.cacheBytes+len(b) > heapCacheBytes {
		h.cache, h.cacheBytes = map[uint64][]byte{}, 0
	}
	h.cache[addr] = b
	h.cacheBytes += len(b)
}

// log2 returns floor(log2(x)) for x > 0, 0 for 0.
func log2(x uint64) int {
	if x == 0 {
		return 0
	}
	return bits.Len64(x) - 1
}

// encodedSize is the bytes HDF5 uses to encode values up to x: log2(x)/8 + 1.
func encodedSize(x uint64) int { return log2(x)/8 + 1 }

// FractalHeap opens the fractal heap whose header is at addr.
func (r *Reader) FractalHeap(addr uint64) (*FractalHeap, error) {
	// 14 bytes of fixed fields, 12 lengths, 3 addresses, 4 16-bit table fields, checksum.
	fixed := 14 + 12*r.LengthSize + 3*r.OffsetSize + 8 + 4
	head, abs, err := r.block(addr, uint64(fixed), "FRHP", false)
	if err != nil {
		return nil, err
	}
	h := &FractalHeap{r: r, addr: addr, at: abs}
	d := r.decoder(head, abs)
	d.skip(4, "signature")
	if v := d.u8("fractal heap version"); v != 0 {
		return nil, errorf(abs+4, "fractal heap version %d, want 0", v)
	}
	h.idLen = int(d.u16("heap ID length"))
	filterLen := int(d.u16("I/O filter length"))
	flags := d.u8("fractal heap flags")
	h.maxManaged = d.u32("maximum managed object size")
	d.length("next huge object ID")
	h.hugeBTree = d.addr("huge object B-tree address")
	d.length("free space in managed blocks")
	d.addr("free space manager address")
	d.length("managed space")
	d.length("allocated managed space")
	d.length("direct block allocation offset")
	d.length("managed objects")
	d.length("huge object size")
	d.length("huge objects")
	d.length("tiny object size")
	d.length("tiny objects")
	widthAt := d.offset()
	h.width = int(d.u16("table width"))
	h.startBlock = d.length("starting block size")
	h.maxDirectBlock = d.length("maximum direct block size")
	h.maxHeapBits = int(d.u16("maximum heap size"))
	d.u16("starting rows in root indirect block")
	h.rootAddr = d.addr("root block address")
	h.rootRows = int(d.u16("rows in root indirect block"))
	if d.err != nil {
		return nil, d.err
	}
	h.filtered = filterLen > 0
	h.checksumDirect = flags&2 != 0
	size := uint64(d.pos)
	if h.filtered {
		size += uint64(r.LengthSize) + 4 + uint64(filterLen)
	}
	size += 4
	// The whole header, its filter information included, is checksummed.
	if _, _, err := r.block(addr, size, "FRHP", true); err != nil {
		return nil, err
	}
	if h.filtered {
		return nil, unsupported(abs+7, "fractal heap with I/O filters")
	}
	switch {
	case h.width == 0 || h.width&(h.width-1) != 0 || h.width > 1<<15:
		return nil, errorf(widthAt, "fractal heap table width %d is not a power of two", h.width)
	case h.startBlock == 0 || h.startBlock&(h.startBlock-1) != 0:
		return nil, errorf(widthAt+2, "fractal heap starting block size %d is not a power of two", h.startBlock)
	case h.maxDirectBlock < h.startBlock || h.maxDirectBlock&(h.maxDirectBlock-1) != 0 || h.maxDirectBlock > 1<<40:
		return nil, errorf(widthAt+2, "fractal heap maximum direct block size %d is not a power of two ≥ the starting size", h.maxDirectBlock)
	case h.maxHeapBits == 0 || h.maxHeapBits > 64:
		return nil, errorf(widthAt+2, "fractal heap offsets of %d bits", h.maxHeapBits)
	case h.rootRows > 64:
		return nil, errorf(widthAt, "fractal heap root indirect block of %d rows", h.rootRows)
	}
	h.offsetBytes = (h.maxHeapBits + 7) / 8
	h.lengthBytes = min((log2(h.maxDirectBlock)+7)/8, encodedSize(uint64(h.maxManaged)))
	h.maxDirRows = log2(h.maxDirectBlock) - log2(h.startBlock) + 2
	h.firstRowBit = log2(h.startBlock) + log2(uint64(h.width))
	return h, nil
}

// IDLen is the length of this heap's object IDs.
func (h *FractalHeap) IDLen() int { return h.idLen }

// rowBlockSize is the size of the blocks of row i of the doubling table.
func (h *FractalHeap) rowBlockSize(row int) uint64 {
	if row == 0 {
		return h.startBlock
	}
	return h.startBlock << uint(row-1)
}

// rowOffset is the heap offset where row i of a doubling table starts, relative to the
// table's own start.
func (h *FractalHeap) rowOffset(row int) uint64 {
	if row == 0 {
		return 0
	}
	return uint64(h.width) * h.startBlock << uint(row-1)
}

// Object returns the bytes of the object whose heap ID is id: managed, tiny and huge
// objects (huge ones of filtered heaps are refused with errors.ErrUnsupported).
func (h *FractalHeap) Object(id []byte) ([]byte, error) {
	if len(id) == 0 {
		return nil, errorf(h.at, "empty fractal heap ID")
	}
	if id[0]&0xc0 != 0 {
		return nil, errorf(h.at, "fractal heap ID version %d, want 0", id[0]>>6)
	}
	switch id[0] & 0x30 {
	case 0x00:
		return h.managed(id)
	case 0x10:
		return h.huge(id)
	case 0x20:
		return h.tiny(id)
	}
	return nil, errorf(h.at, "fractal heap ID of reserved type 3")
}

// tiny returns an object stored in its ID: the length - 1 in the low 4 bits of the
// first byte, extended by the next byte when the heap's IDs are longer than 18 bytes.
func (h *FractalHeap) tiny(id []byte) ([]byte, error) {
	n, data := int(id[0]&0x0f)+1, id[1:]
	if h.idLen-1 > 17 {
		if len(id) < 2 {
			return nil, errorf(h.at, "tiny fractal heap ID of %d bytes", len(id))
		}
		n, data = (int(id[0]&0x0f)<<8|int(id[1]))+1, id[2:]
	}
	if n > len(data) {
		return nil, errorf(h.at, "tiny fractal heap object of %d bytes in an ID of %d", n, len(id))
	}
	return append([]byte(nil), data[:n]...), nil
}

func (h *FractalHeap) managed(id []byte) ([]byte, error) {
	if len(id) < 1+h.offsetBytes+h.lengthBytes {
		return nil, errorf(h.at, "managed fractal heap ID of %d bytes, want %d", len(id), 1+h.offsetBytes+h.lengthBytes)
	}
	d := &decoder{b: id, at: h.at}
	d.skip(1, "flags")
	off := d.uint(h.offsetBytes, "heap offset")
	n := d.uint(h.lengthBytes, "object length")
	if d.err != nil {
		return nil, d.err
	}
	if IsUndefined(h.rootAddr, h.r.OffsetSize) {
		return nil, errorf(h.at, "fractal heap object at heap offset %d in a heap with no blocks", off)
	}
	blockAddr, blockOff, blockSize, err := h.findDirectBlock(off)
	if err != nil {
		return nil, err
	}
	if off-blockOff < h.directHeaderSize() || n > blockSize-(off-blockOff) {
		return nil, errorf(h.at, "fractal heap object [%d, +%d) lies outside its direct block [%d, +%d)", off, n, blockOff, blockSize)
	}
	block := h.cached(blockAddr)
	if block == nil {
		if block, err = h.readDirectBlock(blockAddr, blockOff, blockSize); err != nil {
			return nil, err
		}
		h.remember(blockAddr, block)
	}
	if uint64(len(block)) != blockSize {
		return nil, errorf(h.at, "fractal heap block at address %#x is used at two sizes", blockAddr)
	}
	start := off - blockOff
	return append([]byte(nil), block[start:start+n]...), nil
}

func (h *FractalHeap) directHeaderSize() uint64 {
	n := uint64(5 + h.r.OffsetSize + h.offsetBytes)
	if h.checksumDirect {
		n += 4
	}
	return n
}

// findDirectBlock walks the doubling table from the root to the direct block holding
// heap offset off and returns its address, heap offset and size.
func (h *FractalHeap) findDirectBlock(off uint64) (addr, blockOff, size uint64, err error) {
	if h.rootRows == 0 {
		if off >= h.startBlock {
			return 0, 0, 0, errorf(h.at, "fractal heap offset %d beyond the root direct block of %d bytes", off, h.startBlock)
		}
		return h.rootAddr, 0, h.startBlock, nil
	}
	iaddr, ioff, rows := h.rootAddr, uint64(0), h.rootRows
	visited := map[uint64]bool{}
	for depth := 0; ; depth++ {
		if visited[iaddr] || depth > 64 {
			return 0, 0, 0, errorf(h.at, "fractal heap indirect blocks form a cycle at address %#x", iaddr)
		}
		visited[iaddr] = true
		entries, err := h.readIndirectBlock(iaddr, ioff, rows)
		if err != nil {
			return 0, 0, 0, err
		}
		rel := off - ioff
		row := h.rowOf(rel)
		if row >= rows {
			return 0, 0, 0, errorf(h.at, "fractal heap offset %d beyond its indirect block of %d rows", off, rows)
		}
		bsize, start := h.rowBlockSize(row), h.rowOffset(row)
		if h.firstRowBit+row > 64 || bsize == 0 || rel < start || (rel-start)/bsize >= uint64(h.width) {
			// A row this deep would start beyond 2^64 bytes of heap.
			return 0, 0, 0, errorf(h.at, "fractal heap offset %d does not fit the doubling table", off)
		}
		col := (rel - start) / bsize
		child := entries[row*h.width+int(col)]
		childOff := ioff + start + col*bsize
		if IsUndefined(child, h.r.OffsetSize) {
			return 0, 0, 0, errorf(h.at, "fractal heap offset %d lies in a block that was never allocated", off)
		}
		if row < h.maxDirRows {
			return child, childOff, bsize, nil
		}
		iaddr, ioff, rows = child, childOff, log2(bsize)-h.firstRowBit+1
		if rows <= 0 || rows > 64 {
			return 0, 0, 0, errorf(h.at, "fractal heap indirect block of %d rows", rows)
		}
	}
}

// rowOf returns the doubling-table row holding relative heap offset rel.
func (h *FractalHeap) rowOf(rel uint64) int {
	first := uint64(h.width) * h.startBlock
	if rel < first {
		return 0
	}
	return log2(rel/first) + 1
}

// readIndirectBlock reads an indirect block of rows rows at heap offset blockOff and
// returns its child addresses, row by row.
func (h *FractalHeap) readIndirectBlock(addr, blockOff uint64, rows int) ([]uint64, error) {
	n := rows * h.width
	size := uint64(5+h.r.OffsetSize+h.offsetBytes) + uint64(n*h.r.OffsetSize) + 4
	b, abs, err := h.r.block(addr, size, "FHIB", true)
	if err != nil {
		return nil, err
	}
	d := h.r.decoder(b, abs)
	d.skip(4, "signature")
	if v := d.u8("indirect block version"); v != 0 {
		return nil, errorf(abs+4, "fractal heap indirect block version %d, want 0", v)
	}
	if owner := d.addr("heap header address"); owner != h.addr {
		return nil, errorf(abs+5, "fractal heap indirect block belongs to the heap at %#x, not %#x", owner, h.addr)
	}
	if got := d.uint(h.offsetBytes, "block offset"); got != blockOff {
		return nil, errorf(abs+5+int64(h.r.OffsetSize), "fractal heap indirect block at heap offset %d, want %d", got, blockOff)
	}
	entries := make([]uint64, n)
	for i := range entries {
		entries[i] = d.addr("child block address")
	}
	return entries, d.err
}

// readDirectBlock reads a direct block and checks its header (and checksum when the
// heap's flags say so).
func (h *FractalHeap) readDirectBlock(addr, blockOff, size uint64) ([]byte, error) {
	b, abs, err := h.r.block(addr, size, "FHDB", false)
	if err != nil {
		return nil, err
	}
	d := h.r.decoder(b, abs)
	d.skip(4, "signature")
	if v := d.u8("direct block version"); v != 0 {
		return nil, errorf(abs+4, "fractal heap direct block version %d, want 0", v)
	}
	if owner := d.addr("heap header address"); owner != h.addr {
		return nil, errorf(abs+5, "fractal heap direct block belongs to the heap at %#x, not %#x", owner, h.addr)
	}
	if got := d.uint(h.offsetBytes, "block offset"); got != blockOff {
		return nil, errorf(abs+5+int64(h.r.OffsetSize), "fractal heap direct block at heap offset %d, want %d", got, blockOff)
	}
	if h.checksumDirect {
		// The checksum covers the whole block with its own 4 bytes zeroed.
		at := d.pos
		stored := d.u32("direct block checksum")
		if d.err != nil {
			return nil, d.err
		}
		zeroed := append([]byte(nil), b...)
		copy(zeroed[at:at+4], []byte{0, 0, 0, 0})
		if got := Checksum(zeroed); got != stored {
			return nil, errorf(abs, "FHDB checksum mismatch: stored %#08x, computed %#08x", stored, got)
		}
	}
	return b, d.err
}

// huge returns an object stored outside the heap. Its ID holds the address and length
// when they fit, else a key into the heap's v2 B-tree of huge objects (record type 1:
// address, length, key).
func (h *FractalHeap) huge(id []byte) ([]byte, error) {
	r := h.r
	if h.filtered {
		return nil, unsupported(h.at, "huge objects of a filtered fractal heap")
	}
	var addr, n uint64
	if h.idLen-1 >= r.OffsetSize+r.LengthSize {
		d := &decoder{b: id, at: h.at, offsetSize: r.OffsetSize, lengthSize: r.LengthSize}
		d.skip(1, "flags")
		addr, n = d.addr("huge object address"), d.length("huge object length")
		if d.err != nil {
			return nil, d.err
		}
	} else {
		keySize := min(h.idLen-1, 8)
		if len(id) < 1+keySize {
			return nil, errorf(h.at, "huge fractal heap ID of %d bytes, want %d", len(id), 1+keySize)
		}
		key := (&decoder{b: id[1 : 1+keySize]}).uint(keySize, "huge object key")
		if IsUndefined(h.hugeBTree, r.OffsetSize) {
			return nil, errorf(h.at, "huge fractal heap object %d in a heap without huge objects", key)
		}
		found := false
		err := r.BTree2(h.hugeBTree, func(typ uint8, rec []byte) error {
			if typ != 1 {
				return errorf(h.at, "huge object B-tree of record type %d, want 1", typ)
			}
			d := r.decoder(rec, h.at)
			a, l, k := d.addr("huge object address"), d.length("huge object length"), d.length("huge object key")
			if d.err != nil {
				return d.err
			}
			if k == key {
				addr, n, found = a, l, true
				return errStopWalk
			}
			return nil
		})
		if err != nil && err != errStopWalk {
			return nil, err
		}
		if !found {
			return nil, errorf(h.at, "fractal heap has no huge object %d", key)
		}
	}
	b, _, err := r.read(addr, n, "huge fractal heap object")
	return b, err
}

// errStopWalk ends a tree walk that found what it looked for.
var errStopWalk = &Error{Msg: "found"}
