package h5

// Version 1 B-trees ("TREE" nodes): node type 0 indexes a symbol-table group's symbol
// nodes, node type 1 a dataset's chunks (layout messages 1-3). Each node holds N
// children between N+1 keys; level 0 children are the indexed things, higher levels
// point to nodes one level down.

const (
	btree1Group  = 0
	btree1Chunks = 1
)

// btree1Node is one decoded node.
type btree1Node struct {
	level    int
	keys     [][]byte // N+1 raw keys
	children []uint64 // N relative addresses
}

// readBTree1Node reads the node at addr, expecting node type typ and keys of keySize
// bytes.
func (r *Reader) readBTree1Node(addr uint64, typ uint8, keySize int) (*btree1Node, int64, error) {
	prefix := 8 + 2*r.OffsetSize
	head, abs, err := r.read(addr, uint64(prefix), "v1 B-tree node")
	if err != nil {
		return nil, 0, err
	}
	if string(head[:4]) != "TREE" {
		return nil, 0, errorf(abs, "expected signature %q, found %q", "TREE", head[:4])
	}
	if head[4] != typ {
		return nil, 0, errorf(abs+4, "v1 B-tree node type %d, want %d", head[4], typ)
	}
	n := int(head[6]) | int(head[7])<<8
	size := uint64(prefix) + uint64(n)*uint64(keySize+r.OffsetSize) + uint64(keySize)
	if size > r.available(addr) {
		return nil, 0, errorf(abs+6, "v1 B-tree node claims %d entries, more than the file holds", n)
	}
	b, _, err := r.read(addr, size, "v1 B-tree node")
	if err != nil {
		return nil, 0, err
	}
	node := &btree1Node{level: int(head[5]), keys: make([][]byte, n+1), children: make([]uint64, n)}
	d := r.decoder(b, abs)
	d.skip(prefix, "node header")
	for i := 0; i < n; i++ {
		node.keys[i] = d.take(keySize, "key")
		node.children[i] = d.addr("child address")
	}
	node.keys[n] = d.take(keySize, "key")
	return node, abs, d.err
}

// walkBTree1 visits the level-0 children of the tree at addr in key order, calling fn
// with the child address and the keys on either side. Each node's children must be one
// level down, and no node is read twice.
func (r *Reader) walkBTree1(addr uint64, typ uint8, keySize int, fn func(child uint64, left, right []byte, at int64) error) error {
	visited := map[uint64]bool{}
	var walk func(addr uint64, wantLevel int) error
	walk = func(addr uint64, wantLevel int) error {
		if visited[addr] {
			return errorf(r.Base+int64(min(addr, 1<<62)), "v1 B-tree node at address %#x is reached twice (a cycle or shared subtree)", addr)
		}
		visited[addr] = true
		node, abs, err := r.readBTree1Node(addr, typ, keySize)
		if err != nil {
			return err
		}
		if wantLevel >= 0 && node.level != wantLevel {
			return errorf(abs+5, "v1 B-tree node at level %d, want %d", node.level, wantLevel)
		}
		for i, child := range node.children {
			if node.level == 0 {
				if err := fn(child, node.keys[i], node.keys[i+1], abs); err != nil {
					return err
				}
				continue
			}
			if err := walk(child, node.level-1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(addr, -1)
}

// GroupBTree returns the relative addresses of the symbol table nodes (SNOD) of an
// old-style group's v1 B-tree (node type 0), in key order.
func (r *Reader) GroupBTree(addr uint64) ([]uint64, error) {
	var nodes []uint64
	err := r.walkBTree1(addr, btree1Group, r.LengthSize, func(child uint64, _, _ []byte, _ int64) error {
		nodes = append(nodes, child)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return nodes, nil
}

// btree1Chunks reports the chunks of a layout 1-3 chunk B-tree. rank is the dataset's;
// keys hold the chunk's stored size, filter mask and rank+1 offsets (the last is the
// element-size dimension, always 0).
func (r *Reader) btree1Chunks(addr uint64, rank int, fn func(Chunk) error) error {
	keySize := 8 + 8*(rank+1)
	return r.walkBTree1(addr, btree1Chunks, keySize, func(child uint64, key, _ []byte, at int64) error {
		d := r.decoder(key, at)
		c := Chunk{Size: uint64(d.u32("chunk size")), FilterMask: d.u32("filter mask"), Offset: make([]uint64, rank)}
		for i := range c.Offset {
			c.Offset[i] = d.uint(8, "chunk offset")
		}
		if d.err != nil {
			return d.err
		}
		abs, err := r.span(child, c.Size, "chunk")
		if err != nil {
			return err
		}
		c.Addr = abs
		return fn(c)
	})
}
