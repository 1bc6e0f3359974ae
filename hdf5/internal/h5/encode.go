package h5

import (
	"bytes"
	"encoding/binary"

	"github.com/klauspost/compress/zlib"
)

// The writing side: the filters a writer applies to a chunk, and the
// version 1 B-tree that indexes a dataset's chunks.

// ChunkEncoder applies shuffle then deflate to chunks of one dataset. It
// holds its buffers between calls: one per goroutine.
type ChunkEncoder struct {
	size, level int
	shuffled    []byte
	out         bytes.Buffer
	zw          *zlib.Writer
}

// NewChunkEncoder returns an encoder for elements of size bytes and
// deflate at level (0-9).
func NewChunkEncoder(size, level int) (*ChunkEncoder, error) {
	e := &ChunkEncoder{size: size, level: level}
	zw, err := zlib.NewWriterLevel(&e.out, level)
	if err != nil {
		return nil, err
	}
	e.zw = zw
	return e, nil
}

// Encode returns chunk shuffled and deflated, as the pipeline shuffle,
// deflate stores it. The result is valid until the next call.
func (e *ChunkEncoder) Encode(chunk []byte) ([]byte, error) {
	if cap(e.shuffled) < len(chunk) {
		e.shuffled = make([]byte, len(chunk))
	}
	s := e.shuffled[:len(chunk)]
	shuffle(s, chunk, e.size)
	e.out.Reset()
	e.zw.Reset(&e.out)
	if _, err := e.zw.Write(s); err != nil {
		return nil, err
	}
	if err := e.zw.Close(); err != nil {
		return nil, err
	}
	return e.out.Bytes(), nil
}

// ChunkEntry is one chunk of a chunk B-tree being written.
type ChunkEntry struct {
	Offset []int64 // the chunk's first element, per axis
	Size   uint32  // bytes stored
	Addr   uint64
}

// btree1Fanout is the most children a version 1 B-tree node of chunks
// holds: 2K for K = 32, the value a version 2 superblock implies.
const btree1Fanout = 64

// chunkKeySize is a chunk key's size for a dataset of rank axes: stored
// size, filter mask and rank+1 offsets of 8 bytes.
func chunkKeySize(rank int) int { return 8 + 8*(rank+1) }

// ChunkNodeSize is the size of every node of a chunk B-tree (nodes are
// allocated whole, as libhdf5 reads them). The root is the last node of a
// tree AppendChunkBTree writes, at base + ChunkBTreeSize − ChunkNodeSize.
func ChunkNodeSize(rank int) int64 {
	return 8 + 16 + btree1Fanout*8 + (btree1Fanout+1)*int64(chunkKeySize(rank))
}

// ChunkBTreeSize is the size of the B-tree AppendChunkBTree writes for n
// chunks (n ≥ 1) of a dataset of rank axes.
func ChunkBTreeSize(n int64, rank int) int64 {
	nodes := int64(0)
	for {
		n = (n + btree1Fanout - 1) / btree1Fanout
		nodes += n
		if n == 1 {
			return nodes * ChunkNodeSize(rank)
		}
	}
}

// AppendChunkBTree appends to b the version 1 B-tree (node type 1) over
// chunks, given in row-major order of their offsets, built bottom-up: the
// leaves first, then each level above, the root last. The tree starts at
// address base; chunkDims are the chunk's dimensions and elemSize the
// element size (the layout's last dimension). It returns the root's
// address.
func AppendChunkBTree(b []byte, base uint64, chunks []ChunkEntry, chunkDims []int64, elemSize int) ([]byte, uint64) {
	rank := len(chunkDims)
	nodeSize := uint64(ChunkNodeSize(rank))
	key := func(size uint32, off []int64, last int64) []byte {
		k := binary.LittleEndian.AppendUint32(make([]byte, 0, chunkKeySize(rank)), size)
		k = binary.LittleEndian.AppendUint32(k, 0)
		for _, o := range off {
			k = binary.LittleEndian.AppendUint64(k, uint64(o))
		}
		return binary.LittleEndian.AppendUint64(k, uint64(last))
	}
	// A level's entries: each child's left key and address, and the right
	// key of the last.
	type entry struct {
		left []byte
		addr uint64
	}
	level := make([]entry, len(chunks))
	for i, c := range chunks {
		level[i] = entry{key(c.Size, c.Offset, 0), c.Addr}
	}
	end := make([]int64, rank)
	for i, o := range chunks[len(chunks)-1].Offset {
		end[i] = o + chunkDims[i]
	}
	right := key(0, end, int64(elemSize))
	addr := base
	for depth := 0; ; depth++ {
		nodes := (len(level) + btree1Fanout - 1) / btree1Fanout
		up := make([]entry, 0, nodes)
		for k := 0; k < nodes; k++ {
			part := level[k*btree1Fanout : min(len(level), (k+1)*btree1Fanout)]
			start := len(b)
			b = append(b, "TREE"...)
			b = append(b, 1, byte(depth))
			b = binary.LittleEndian.AppendUint16(b, uint16(len(part)))
			left, rightSib := ^uint64(0), ^uint64(0)
			if k > 0 {
				left = addr - nodeSize
			}
			if k < nodes-1 {
				rightSib = addr + nodeSize
			}
			b = binary.LittleEndian.AppendUint64(b, left)
			b = binary.LittleEndian.AppendUint64(b, rightSib)
			for _, e := range part {
				b = append(b, e.left...)
				b = binary.LittleEndian.AppendUint64(b, e.addr)
			}
			if k < nodes-1 {
				b = append(b, level[(k+1)*btree1Fanout].left...)
			} else {
				b = append(b, right...)
			}
			b = append(b, make([]byte, uint64(start)+nodeSize-uint64(len(b)))...)
			up = append(up, entry{part[0].left, addr})
			addr += nodeSize
		}
		if nodes == 1 {
			return b, addr - nodeSize
		}
		level = up
	}
}
