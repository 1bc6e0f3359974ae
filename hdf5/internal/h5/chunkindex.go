package h5

import (
	"math"
	"math/bits"
)

// Unlimited is how callers pass an unlimited maximum dimension (HDF5 stores all ones).
const Unlimited = math.MaxUint64

// mul64 multiplies with an overflow check.
func mul64(a, b uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0
}

// ChunkBytes is the logical byte size of one chunk: the product of the chunk dims and
// the element size, overflow-checked.
func (l *Layout) ChunkBytes() (uint64, bool) {
	n := uint64(l.ElemSize)
	for _, c := range l.ChunkDims {
		var ok bool
		if n, ok = mul64(n, c); !ok {
			return 0, false
		}
	}
	return n, true
}

// chunkGrid returns how many chunks span each of dims.
func chunkGrid(dims, chunk []uint64) []uint64 {
	g := make([]uint64, len(dims))
	for i, d := range dims {
		g[i] = d / chunk[i]
		if d%chunk[i] != 0 {
			g[i]++
		}
	}
	return g
}

// gridCount is the number of chunks in a grid, or false when it overflows.
func gridCount(g []uint64) (uint64, bool) {
	n := uint64(1)
	for _, c := range g {
		var ok bool
		if n, ok = mul64(n, c); !ok {
			return 0, false
		}
	}
	return n, true
}

// unravel turns the row-major index of a chunk in grid into its first element's
// coordinates. When swizzle >= 0, that dimension is the slowest (the extensible array's
// unlimited dimension) and its extent is unbounded.
func unravel(idx uint64, grid, chunk []uint64, swizzle int) []uint64 {
	off := make([]uint64, len(grid))
	order := make([]int, 0, len(grid))
	if swizzle >= 0 {
		order = append(order, swizzle)
	}
	for i := range grid {
		if i != swizzle {
			order = append(order, i)
		}
	}
	for k := len(order) - 1; k >= 0; k-- {
		d := order[k]
		if k == 0 {
			off[d] = idx * chunk[d]
			break
		}
		off[d] = idx % grid[d] * chunk[d]
		idx /= grid[d]
	}
	return off
}

// fixedGrid is the chunk grid over the maximum dims where they are bounded.
func fixedGrid(dims, maxDims, chunk []uint64) []uint64 {
	m := make([]uint64, len(dims))
	for i := range dims {
		m[i] = maxDims[i]
		if m[i] == Unlimited {
			m[i] = dims[i]
		}
	}
	return chunkGrid(m, chunk)
}

// singleChunk reports the one chunk of a single-chunk index.
func (r *Reader) singleChunk(l *Layout, fn func(Chunk) error) error {
	size, ok := l.ChunkBytes()
	if !ok {
		return errorf(r.Base, "chunk of %v × %d bytes overflows", l.ChunkDims, l.ElemSize)
	}
	c := Chunk{Offset: make([]uint64, len(l.ChunkDims)), Size: size}
	if l.Index.Filtered {
		c.Size, c.FilterMask = l.Index.FilteredSize, l.Index.FilterMask
	}
	abs, err := r.span(l.Index.Addr, c.Size, "single chunk")
	if err != nil {
		return err
	}
	c.Addr = abs
	return fn(c)
}

// implicitChunks reports the chunks of an implicit index: every chunk of the grid over
// the maximum dims, stored one after the other in row-major order.
func (r *Reader) implicitChunks(l *Layout, dims, maxDims []uint64, fn func(Chunk) error) error {
	for _, m := range maxDims {
		if m == Unlimited {
			return errorf(r.Base, "implicit chunk index of a dataset with an unlimited dimension")
		}
	}
	grid := chunkGrid(maxDims, l.ChunkDims)
	n, ok := gridCount(grid)
	size, ok2 := l.ChunkBytes()
	total, ok3 := mul64(n, size)
	if !ok || !ok2 || !ok3 {
		return errorf(r.Base, "implicit chunk index of %v chunks of %d bytes overflows", grid, size)
	}
	abs, err := r.span(l.Index.Addr, total, "implicitly indexed chunks")
	if err != nil {
		return err
	}
	for i := uint64(0); i < n; i++ {
		c := Chunk{Offset: unravel(i, grid, l.ChunkDims, -1), Addr: abs + int64(i*size), Size: size}
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// chunkEntry decodes a fixed or extensible array element: the chunk's address and, when
// filtered, its stored size (the rest of the entry but the 4-byte mask) and filter mask.
func (r *Reader) chunkEntry(e []byte, at int64, filtered bool, unfilteredSize uint64) (addr uint64, c Chunk, err error) {
	d := r.decoder(e, at)
	addr = d.addr("chunk address")
	c.Size = unfilteredSize
	if filtered {
		c.Size = d.uint(len(e)-r.OffsetSize-4, "chunk size")
		c.FilterMask = d.u32("filter mask")
	}
	return addr, c, d.err
}

// reportEntries reports the allocated chunks among entries, whose first has index first.
func (r *Reader) reportEntries(entries []byte, at int64, entrySize int, first uint64, filtered bool, l *Layout,
	locate func(idx uint64) ([]uint64, bool), fn func(Chunk) error) error {
	size, _ := l.ChunkBytes()
	for i := 0; i+entrySize <= len(entries); i += entrySize {
		addr, c, err := r.chunkEntry(entries[i:i+entrySize], at+int64(i), filtered, size)
		if err != nil {
			return err
		}
		if IsUndefined(addr, r.OffsetSize) {
			continue
		}
		idx := first + uint64(i/entrySize)
		off, ok := locate(idx)
		if !ok {
			return errorf(at+int64(i), "chunk index entry %d lies outside the dataset's chunk grid", idx)
		}
		c.Offset = off
		if c.Addr, err = r.span(addr, c.Size, "chunk"); err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// checkEntrySize checks an array's element size against the chunk entries it must hold.
func (r *Reader) checkEntrySize(entrySize int, filtered bool, at int64) error {
	if !filtered && entrySize != r.OffsetSize || filtered && (entrySize < r.OffsetSize+5 || entrySize > r.OffsetSize+12) {
		return errorf(at, "chunk index entries of %d bytes (filtered: %v)", entrySize, filtered)
	}
	return nil
}

// readPages reads the npages pages of nelmts entries of entrySize bytes (the last page
// may be shorter) that follow a paged data block at addr, each checksummed, and calls
// fn with the entries of each initialized page.
func (r *Reader) readPages(addr uint64, total, pageElems uint64, entrySize int, bitmap []byte, sig string,
	fn func(entries []byte, at int64, first uint64) error) error {
	pageBytes, ok := mul64(pageElems, uint64(entrySize))
	if !ok || pageBytes > math.MaxInt64/2 {
		return errorf(r.Base, "%s pages of %d entries overflow", sig, pageElems)
	}
	npages := (total + pageElems - 1) / pageElems
	if bitmap != nil && uint64(len(bitmap))*8 < npages {
		return errorf(r.Base, "%s page bitmap of %d bytes for %d pages", sig, len(bitmap), npages)
	}
	pos := addr
	for p := uint64(0); p < npages; p++ {
		n := min(pageElems, total-p*pageElems)
		size := n*uint64(entrySize) + 4
		if bitmap == nil || bitmap[p/8]&(0x80>>(p%8)) != 0 {
			b, abs, err := r.read(pos, size, sig+" page")
			if err != nil {
				return err
			}
			if err := verifyChecksum(b, abs, sig+" page"); err != nil {
				return err
			}
			if err := fn(b[:len(b)-4], abs, p*pageElems); err != nil {
				return err
			}
		}
		next := pos + pageBytes + 4
		if next < pos {
			return errorf(r.Base, "%s pages overflow the address space", sig)
		}
		pos = next
	}
	return nil
}

// fixedArrayChunks reports the chunks of a fixed array index (FAHD, FADB and, when the
// array is larger than a page, its pages).
func (r *Reader) fixedArrayChunks(l *Layout, dims, maxDims []uint64, datasetFiltered bool, fn func(Chunk) error) error {
	hsize := uint64(4 + 1 + 1 + 1 + 1 + r.LengthSize + r.OffsetSize + 4)
	head, abs, err := r.block(l.Index.Addr, hsize, "FAHD", true)
	if err != nil {
		return err
	}
	d := r.decoder(head, abs)
	d.skip(4, "signature")
	if v := d.u8("fixed array version"); v != 0 {
		return errorf(abs+4, "fixed array version %d, want 0", v)
	}
	client := d.u8("fixed array client")
	entrySize := int(d.u8("fixed array entry size"))
	pageBits := d.u8("fixed array page bits")
	n := d.length("fixed array entries")
	dblock := d.addr("fixed array data block address")
	if d.err != nil {
		return d.err
	}
	filtered := client == 1
	if client > 1 {
		return errorf(abs+5, "fixed array client %d is not a chunk index", client)
	}
	if err := indexFiltered(abs+5, "fixed array", filtered, datasetFiltered); err != nil {
		return err
	}
	if err := r.checkEntrySize(entrySize, filtered, abs+6); err != nil {
		return err
	}
	if pageBits == 0 || pageBits > 32 {
		return errorf(abs+7, "fixed array page bits %d", pageBits)
	}
	grid := fixedGrid(dims, maxDims, l.ChunkDims)
	gridN, ok := gridCount(grid)
	if !ok || n > gridN {
		return errorf(abs+8, "fixed array of %d entries for a grid of %v chunks", n, grid)
	}
	if IsUndefined(dblock, r.OffsetSize) {
		return nil
	}
	locate := func(idx uint64) ([]uint64, bool) {
		return unravel(idx, grid, l.ChunkDims, -1), idx < gridN
	}
	pageElems := uint64(1) << pageBits
	prefix := uint64(4 + 1 + 1 + r.OffsetSize)
	if n <= pageElems {
		entries, ok := mul64(n, uint64(entrySize))
		if !ok || entries > r.available(dblock) {
			return errorf(abs+8, "fixed array of %d entries is larger than the file", n)
		}
		b, dabs, err := r.block(dblock, prefix+entries+4, "FADB", true)
		if err != nil {
			return err
		}
		if err := r.checkArrayBlock(b, dabs, client, l.Index.Addr); err != nil {
			return err
		}
		return r.reportEntries(b[prefix:prefix+entries], dabs+int64(prefix), entrySize, 0, filtered, l, locate, fn)
	}
	npages := (n + pageElems - 1) / pageElems
	bitmapLen := (npages + 7) / 8
	if bitmapLen > r.available(dblock) {
		return errorf(abs+8, "fixed array of %d entries is larger than the file", n)
	}
	b, dabs, err := r.block(dblock, prefix+bitmapLen+4, "FADB", true)
	if err != nil {
		return err
	}
	if err := r.checkArrayBlock(b, dabs, client, l.Index.Addr); err != nil {
		return err
	}
	bitmap := b[prefix : prefix+bitmapLen]
	return r.readPages(dblock+uint64(len(b)), n, pageElems, entrySize, bitmap, "FADB",
		func(entries []byte, at int64, first uint64) error {
			return r.reportEntries(entries, at, entrySize, first, filtered, l, locate, fn)
		})
}

// checkArrayBlock checks the version, client and owning header of a fixed or extensible
// array block (signature, version, client, header address).
func (r *Reader) checkArrayBlock(b []byte, abs int64, client uint8, header uint64) error {
	d := r.decoder(b, abs)
	d.skip(4, "signature")
	version, c := d.u8("version"), d.u8("client")
	owner := d.addr("header address")
	if d.err != nil {
		return d.err
	}
	if version != 0 || c != client {
		return errorf(abs+4, "%s block version %d client %d, want version 0 client %d", b[:4], version, c, client)
	}
	if owner != header {
		return errorf(abs+6, "%s block belongs to the header at %#x, not %#x", b[:4], owner, header)
	}
	return nil
}

// extArray is an open extensible array header with its super block geometry.
type extArray struct {
	r           *Reader
	addr        uint64
	client      uint8
	filtered    bool
	entrySize   int
	idxElems    uint64
	minElems    uint64
	minPtrs     uint64
	pageElems   uint64
	offsetBytes int
	nsblks      int
	sblkDblks   []uint64 // data blocks in super block u
	sblkElems   []uint64 // elements in each data block of super block u
	sblkStart   []uint64 // index (after the index block's elements) of super block u's first element
}

// extArrayChunks reports the chunks of an extensible array index (EAHD, EAIB, EASB,
// EADB): the index block's own elements, then the data blocks it points at, then those
// of its super blocks. Element i is the chunk at row-major position i of the chunk grid
// with the unlimited dimension made the slowest.
func (r *Reader) extArrayChunks(l *Layout, dims, maxDims []uint64, datasetFiltered bool, fn func(Chunk) error) error {
	hsize := uint64(4+1+1+6+6*r.LengthSize+r.OffsetSize) + 4
	head, abs, err := r.block(l.Index.Addr, hsize, "EAHD", true)
	if err != nil {
		return err
	}
	d := r.decoder(head, abs)
	d.skip(4, "signature")
	if v := d.u8("extensible array version"); v != 0 {
		return errorf(abs+4, "extensible array version %d, want 0", v)
	}
	ea := &extArray{r: r, addr: l.Index.Addr}
	ea.client = d.u8("extensible array client")
	ea.entrySize = int(d.u8("element size"))
	maxBits := int(d.u8("maximum elements bits"))
	ea.idxElems = uint64(d.u8("index block elements"))
	ea.minElems = uint64(d.u8("minimum data block elements"))
	ea.minPtrs = uint64(d.u8("minimum super block pointers"))
	pageBits := int(d.u8("data block page bits"))
	d.skip(6*r.LengthSize, "statistics")
	iblock := d.addr("index block address")
	if d.err != nil {
		return d.err
	}
	ea.filtered = ea.client == 1
	switch {
	case ea.client > 1:
		return errorf(abs+5, "extensible array client %d is not a chunk index", ea.client)
	case maxBits == 0 || maxBits > 64:
		return errorf(abs+7, "extensible array of 2^%d elements", maxBits)
	case ea.minElems == 0 || ea.minElems&(ea.minElems-1) != 0 || log2(ea.minElems) > maxBits:
		return errorf(abs+9, "extensible array data blocks of at least %d elements", ea.minElems)
	case ea.minPtrs == 0 || ea.minPtrs&(ea.minPtrs-1) != 0:
		return errorf(abs+10, "extensible array super blocks of at least %d pointers", ea.minPtrs)
	case pageBits == 0 || pageBits > 32:
		return errorf(abs+11, "extensible array page bits %d", pageBits)
	}
	if err := r.checkEntrySize(ea.entrySize, ea.filtered, abs+6); err != nil {
		return err
	}
	if err := indexFiltered(abs+5, "extensible array", ea.filtered, datasetFiltered); err != nil {
		return err
	}
	ea.pageElems = 1 << uint(pageBits)
	ea.offsetBytes = (maxBits + 7) / 8
	ea.nsblks = 1 + maxBits - log2(ea.minElems)
	var start uint64
	for u := 0; u < ea.nsblks; u++ {
		nd := uint64(1) << uint(u/2)
		ne := ea.minElems << uint((u+1)/2)
		ea.sblkDblks = append(ea.sblkDblks, nd)
		ea.sblkElems = append(ea.sblkElems, ne)
		ea.sblkStart = append(ea.sblkStart, start)
		start += nd * ne // wraps only beyond 2^64 elements, which no file holds
	}
	if IsUndefined(iblock, r.OffsetSize) {
		return nil
	}
	unlim := -1
	for i, m := range maxDims {
		if m == Unlimited {
			if unlim >= 0 {
				return errorf(abs, "extensible array index of a dataset with two unlimited dimensions")
			}
			unlim = i
		}
	}
	grid := fixedGrid(dims, maxDims, l.ChunkDims)
	locate := func(idx uint64) ([]uint64, bool) {
		if unlim < 0 {
			n, _ := gridCount(grid)
			return unravel(idx, grid, l.ChunkDims, -1), idx < n
		}
		return unravel(idx, grid, l.ChunkDims, unlim), true
	}
	return ea.walk(l, iblock, locate, fn)
}

func (ea *extArray) walk(l *Layout, iblock uint64, locate func(uint64) ([]uint64, bool), fn func(Chunk) error) error {
	r := ea.r
	iblockSblks := 2 * log2(ea.minPtrs)
	if iblockSblks > ea.nsblks {
		iblockSblks = ea.nsblks
	}
	ndblkAddrs := 2 * (ea.minPtrs - 1)
	nsblkAddrs := uint64(ea.nsblks - iblockSblks)
	prefix := uint64(4 + 1 + 1 + r.OffsetSize)
	elems := ea.idxElems * uint64(ea.entrySize)
	size := prefix + elems + (ndblkAddrs+nsblkAddrs)*uint64(r.OffsetSize) + 4
	b, abs, err := r.block(iblock, size, "EAIB", true)
	if err != nil {
		return err
	}
	if err := r.checkArrayBlock(b, abs, ea.client, ea.addr); err != nil {
		return err
	}
	if err := r.reportEntries(b[prefix:prefix+elems], abs+int64(prefix), ea.entrySize, 0, ea.filtered, l, locate, fn); err != nil {
		return err
	}
	d := r.decoder(b, abs)
	d.skip(int(prefix+elems), "index block elements")
	dblk := uint64(0)
	for u := 0; u < iblockSblks; u++ {
		for k := uint64(0); k < ea.sblkDblks[u]; k++ {
			addr := d.addr("data block address")
			if d.err != nil {
				return d.err
			}
			if dblk++; dblk > ndblkAddrs {
				return errorf(abs, "extensible array index block has too few data block pointers")
			}
			first := ea.idxElems + ea.sblkStart[u] + k*ea.sblkElems[u]
			if err := ea.dataBlock(l, addr, ea.sblkElems[u], first, nil, locate, fn); err != nil {
				return err
			}
		}
	}
	d.skip(int(ndblkAddrs-dblk)*r.OffsetSize, "unused data block pointers")
	for u := iblockSblks; u < ea.nsblks; u++ {
		addr := d.addr("super block address")
		if d.err != nil {
			return d.err
		}
		if err := ea.superBlock(l, addr, u, locate, fn); err != nil {
			return err
		}
	}
	return d.err
}

func (ea *extArray) superBlock(l *Layout, addr uint64, u int, locate func(uint64) ([]uint64, bool), fn func(Chunk) error) error {
	if IsUndefined(addr, ea.r.OffsetSize) {
		return nil
	}
	r := ea.r
	nd, ne := ea.sblkDblks[u], ea.sblkElems[u]
	var bitmapBytes uint64
	if ne > ea.pageElems {
		bitmapBytes = (ne/ea.pageElems + 7) / 8
	}
	prefix := uint64(4 + 1 + 1 + r.OffsetSize + ea.offsetBytes)
	body, ok := mul64(nd, bitmapBytes+uint64(r.OffsetSize))
	if !ok || body > r.available(addr) {
		return errorf(r.Base, "extensible array super block %d of %d data blocks is larger than the file", u, nd)
	}
	b, abs, err := r.block(addr, prefix+body+4, "EASB", true)
	if err != nil {
		return err
	}
	if err := r.checkArrayBlock(b, abs, ea.client, ea.addr); err != nil {
		return err
	}
	bitmaps := b[prefix : prefix+nd*bitmapBytes]
	d := r.decoder(b, abs)
	d.skip(int(prefix+nd*bitmapBytes), "super block header and page bitmaps")
	for k := uint64(0); k < nd; k++ {
		daddr := d.addr("data block address")
		if d.err != nil {
			return d.err
		}
		var bitmap []byte
		if bitmapBytes > 0 {
			bitmap = bitmaps[k*bitmapBytes : (k+1)*bitmapBytes]
		}
		first := ea.idxElems + ea.sblkStart[u] + k*ne
		if err := ea.dataBlock(l, daddr, ne, first, bitmap, locate, fn); err != nil {
			return err
		}
	}
	return nil
}

// dataBlock reports the chunks of one data block of n elements whose first element has
// index first; a block larger than a page keeps its elements in pages after it.
func (ea *extArray) dataBlock(l *Layout, addr, n, first uint64, bitmap []byte, locate func(uint64) ([]uint64, bool), fn func(Chunk) error) error {
	if IsUndefined(addr, ea.r.OffsetSize) {
		return nil
	}
	r := ea.r
	prefix := uint64(4 + 1 + 1 + r.OffsetSize + ea.offsetBytes)
	paged := n > ea.pageElems
	var elems uint64
	if !paged {
		var ok bool
		if elems, ok = mul64(n, uint64(ea.entrySize)); !ok || elems > r.available(addr) {
			return errorf(r.Base, "extensible array data block of %d elements is larger than the file", n)
		}
	}
	b, abs, err := r.block(addr, prefix+elems+4, "EADB", true)
	if err != nil {
		return err
	}
	if err := r.checkArrayBlock(b, abs, ea.client, ea.addr); err != nil {
		return err
	}
	if !paged {
		return r.reportEntries(b[prefix:prefix+elems], abs+int64(prefix), ea.entrySize, first, ea.filtered, l, locate, fn)
	}
	return r.readPages(addr+uint64(len(b)), n, ea.pageElems, ea.entrySize, bitmap, "EADB",
		func(entries []byte, at int64, pageFirst uint64) error {
			return r.reportEntries(entries, at, ea.entrySize, first+pageFirst, ea.filtered, l, locate, fn)
		})
}

// btree2Chunks reports the chunks of a v2 B-tree index: records of type 10 (address and
// scaled offsets) or 11 (address, stored size, filter mask and scaled offsets).
func (r *Reader) btree2Chunks(l *Layout, datasetFiltered bool, fn func(Chunk) error) error {
	t, err := r.openBTree2(l.Index.Addr)
	if err != nil {
		return err
	}
	rank := len(l.ChunkDims)
	size, _ := l.ChunkBytes()
	var sizeBytes int
	switch t.typ {
	case 10:
		if t.recSize != r.OffsetSize+8*rank {
			return errorf(t.at+10, "chunk records of %d bytes for rank %d", t.recSize, rank)
		}
	case 11:
		sizeBytes = t.recSize - r.OffsetSize - 4 - 8*rank
		if sizeBytes < 1 || sizeBytes > 8 {
			return errorf(t.at+10, "filtered chunk records of %d bytes for rank %d", t.recSize, rank)
		}
	default:
		return errorf(t.at+5, "v2 B-tree of record type %d is not a chunk index", t.typ)
	}
	if err := indexFiltered(t.at+5, "v2 B-tree", t.typ == 11, datasetFiltered); err != nil {
		return err
	}
	return t.walk(func(typ uint8, rec []byte) error {
		d := r.decoder(rec, t.at)
		addr := d.addr("chunk address")
		c := Chunk{Size: size, Offset: make([]uint64, rank)}
		if typ == 11 {
			c.Size = d.uint(sizeBytes, "chunk size")
			c.FilterMask = d.u32("filter mask")
		}
		for i := range c.Offset {
			scaled := d.uint(8, "scaled chunk offset")
			var ok bool
			if c.Offset[i], ok = mul64(scaled, l.ChunkDims[i]); !ok {
				return errorf(t.at, "chunk offset %d × %d overflows", scaled, l.ChunkDims[i])
			}
		}
		if d.err != nil {
			return d.err
		}
		if IsUndefined(addr, r.OffsetSize) {
			return nil
		}
		abs, err := r.span(addr, c.Size, "chunk")
		if err != nil {
			return err
		}
		c.Addr = abs
		return fn(c)
	})
}
