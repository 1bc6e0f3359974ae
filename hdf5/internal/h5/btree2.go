package h5

// Version 2 B-trees: a header ("BTHD") naming the root, internal nodes ("BTIN") and
// leaves ("BTLF"), each node checksummed. Records have a fixed size per tree; their
// meaning depends on the tree's type (5 and 6: links, 8 and 9: attributes, 10 and 11:
// chunks), which callers interpret.

// btree2 is an open v2 B-tree header with the node geometry derived from it.
type btree2 struct {
	r        *Reader
	at       int64
	typ      uint8
	nodeSize uint64
	recSize  int
	depth    int
	root     uint64
	rootRecs int
	total    uint64
	// Per depth: most records in a node, and bytes of the child record counts.
	maxRecs      []uint64
	cumMaxRecs   []uint64
	cumRecsBytes []int
	recsBytes    int // bytes of a child's own record count (the leaves' maximum)
}

// btree2Prefix is signature, version, type and checksum: the fixed part of every node.
const btree2Prefix = 10

func (r *Reader) openBTree2(addr uint64) (*btree2, error) {
	size := uint64(4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + r.OffsetSize + 2 + r.LengthSize + 4)
	b, abs, err := r.block(addr, size, "BTHD", true)
	if err != nil {
		return nil, err
	}
	t := &btree2{r: r, at: abs}
	d := r.decoder(b, abs)
	d.skip(4, "signature")
	if v := d.u8("v2 B-tree version"); v != 0 {
		return nil, errorf(abs+4, "v2 B-tree version %d, want 0", v)
	}
	t.typ = d.u8("v2 B-tree type")
	t.nodeSize = uint64(d.u32("node size"))
	t.recSize = int(d.u16("record size"))
	t.depth = int(d.u16("depth"))
	d.skip(2, "split and merge percents")
	t.root = d.addr("root node address")
	t.rootRecs = int(d.u16("records in root node"))
	t.total = d.length("records in tree")
	if d.err != nil {
		return nil, d.err
	}
	switch {
	case t.recSize == 0:
		return nil, errorf(abs+10, "v2 B-tree records of 0 bytes")
	case t.nodeSize < btree2Prefix+uint64(t.recSize):
		return nil, errorf(abs+6, "v2 B-tree node size %d does not fit a record of %d bytes", t.nodeSize, t.recSize)
	case t.depth > 64:
		return nil, errorf(abs+12, "v2 B-tree depth %d", t.depth)
	}
	// Node geometry, as the library derives it: a leaf holds (node - prefix) / record
	// records; an internal node at depth d also holds one more child pointer than
	// records, each an address, the child's record count (sized for a leaf's maximum)
	// and, above depth 1, the child subtree's total (sized for that subtree's maximum).
	t.maxRecs = make([]uint64, t.depth+1)
	t.cumMaxRecs = make([]uint64, t.depth+1)
	t.cumRecsBytes = make([]int, t.depth+1)
	t.maxRecs[0] = (t.nodeSize - btree2Prefix) / uint64(t.recSize)
	t.cumMaxRecs[0] = t.maxRecs[0]
	t.recsBytes = encodedSize(t.maxRecs[0])
	for u := 1; u <= t.depth; u++ {
		ptr := uint64(t.pointerSize(u))
		if t.nodeSize < btree2Prefix+ptr {
			return nil, errorf(abs+6, "v2 B-tree node size %d too small for depth %d", t.nodeSize, t.depth)
		}
		t.maxRecs[u] = (t.nodeSize - btree2Prefix - ptr) / (uint64(t.recSize) + ptr)
		cum := (t.maxRecs[u]+1)*t.cumMaxRecs[u-1] + t.maxRecs[u]
		if t.cumMaxRecs[u-1] != 0 && cum/t.cumMaxRecs[u-1] < t.maxRecs[u]+1 {
			cum = 1<<64 - 1 // saturate: no file holds that many records anyway
		}
		t.cumMaxRecs[u] = cum
		t.cumRecsBytes[u] = encodedSize(cum)
	}
	return t, nil
}

// pointerSize is the size of a child pointer in an internal node at depth u.
func (t *btree2) pointerSize(u int) int {
	n := t.r.OffsetSize + t.recsBytes
	if u > 1 {
		n += t.cumRecsBytes[u-1]
	}
	return n
}

// BTree2 calls fn for each record of the v2 B-tree whose header is at addr, in key
// order; rec is the raw record (the header's record size) and typ the tree's type.
func (r *Reader) BTree2(addr uint64, fn func(typ uint8, rec []byte) error) error {
	t, err := r.openBTree2(addr)
	if err != nil {
		return err
	}
	return t.walk(fn)
}

func (t *btree2) walk(fn func(typ uint8, rec []byte) error) error {
	if IsUndefined(t.root, t.r.OffsetSize) || t.rootRecs == 0 {
		return nil
	}
	visited := map[uint64]bool{}
	var seen uint64
	var visit func(addr uint64, nrec int, depth int) error
	visit = func(addr uint64, nrec int, depth int) error {
		if visited[addr] {
			return errorf(t.at, "v2 B-tree node at address %#x is reached twice", addr)
		}
		visited[addr] = true
		if uint64(nrec) > t.maxRecs[depth] {
			return errorf(t.at, "v2 B-tree node at address %#x claims %d records, at most %d fit", addr, nrec, t.maxRecs[depth])
		}
		sig := "BTLF"
		used := 6 + nrec*t.recSize
		if depth > 0 {
			sig = "BTIN"
			used += (nrec + 1) * t.pointerSize(depth)
		}
		b, abs, err := t.r.block(addr, uint64(used+4), sig, true)
		if err != nil {
			return err
		}
		if b[4] != 0 || b[5] != t.typ {
			return errorf(abs+4, "v2 B-tree node version %d type %d, want version 0 type %d", b[4], b[5], t.typ)
		}
		recs := b[6 : 6+nrec*t.recSize]
		if depth == 0 {
			for i := 0; i < nrec; i++ {
				if seen++; seen > t.total {
					return errorf(t.at, "v2 B-tree holds more records than its header's %d", t.total)
				}
				if err := fn(t.typ, recs[i*t.recSize:(i+1)*t.recSize]); err != nil {
					return err
				}
			}
			return nil
		}
		d := t.r.decoder(b, abs)
		d.skip(6+nrec*t.recSize, "records")
		for i := 0; i <= nrec; i++ {
			child := d.addr("child node address")
			childRecs := d.uint(t.recsBytes, "child record count")
			if depth > 1 {
				d.uint(t.cumRecsBytes[depth-1], "child subtree record count")
			}
			if d.err != nil {
				return d.err
			}
			if err := visit(child, int(min(childRecs, 1<<31)), depth-1); err != nil {
				return err
			}
			if i < nrec {
				if seen++; seen > t.total {
					return errorf(t.at, "v2 B-tree holds more records than its header's %d", t.total)
				}
				if err := fn(t.typ, recs[i*t.recSize:(i+1)*t.recSize]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return visit(t.root, t.rootRecs, t.depth)
}
