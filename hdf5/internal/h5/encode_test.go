package h5

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
)

func TestShuffleBytes(t *testing.T) {
	src := []byte{1, 2, 3, 4, 5, 6, 7}
	dst := make([]byte, len(src))
	shuffle(dst, src, 2)
	if want := []byte{1, 3, 5, 2, 4, 6, 7}; !bytes.Equal(dst, want) {
		t.Fatalf("shuffle = %v, want %v", dst, want)
	}
	back := make([]byte, len(src))
	unshuffle(back, dst, 2)
	if !bytes.Equal(back, src) {
		t.Fatalf("unshuffle(shuffle) = %v", back)
	}
}

// A chunk the encoder writes decodes through the reading pipeline.
func TestChunkEncoderDecodes(t *testing.T) {
	chunk := make([]byte, 8*1000)
	for i := range 1000 {
		binary.LittleEndian.PutUint64(chunk[8*i:], uint64(i*i))
	}
	e, err := NewChunkEncoder(8, 4)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := e.Encode(chunk)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) >= len(chunk)/2 {
		t.Fatalf("%d bytes deflated to %d", len(chunk), len(enc))
	}
	inflated := make([]byte, len(chunk))
	if err := inflate(inflated, enc); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(chunk))
	unshuffle(got, inflated, 8)
	if !bytes.Equal(got, chunk) {
		t.Fatal("the chunk does not decode to itself")
	}
}

// Trees of one leaf, of two levels and of three read back through the
// reader's chunk listing, each chunk where it was put.
func TestChunkBTreeReadsBack(t *testing.T) {
	for _, n := range []int{1, 64, 65, 200, 64*64 + 1} {
		chunks := make([]ChunkEntry, n)
		want := make([]Chunk, n)
		for i := range chunks {
			chunks[i] = ChunkEntry{Offset: []int64{int64(i) * 4}, Size: uint32(10 + i%7), Addr: uint64(1<<20 + i)}
			want[i] = Chunk{[]uint64{uint64(i) * 4}, int64(1<<20 + i), uint64(10 + i%7), 0}
		}
		const base = 64
		file, root := AppendChunkBTree(make([]byte, base), base, chunks, []int64{4}, 4)
		if got := int64(len(file) - base); got != ChunkBTreeSize(int64(n), 1) {
			t.Fatalf("%d chunks: %d bytes of tree, ChunkBTreeSize says %d", n, got, ChunkBTreeSize(int64(n), 1))
		}
		if want := base + ChunkBTreeSize(int64(n), 1) - ChunkNodeSize(1); int64(root) != want {
			t.Fatalf("%d chunks: the root at %d, not the last node at %d", n, root, want)
		}
		file = append(file, make([]byte, 1<<20+64*64+64-len(file))...)
		r := memReader(file, 0)
		l := &Layout{Class: Chunked, ChunkDims: []uint64{4}, ElemSize: 4, Index: ChunkIndex{Type: IndexBTree1, Addr: root}}
		dims := []uint64{uint64(n) * 4}
		var got []Chunk
		if err := r.Chunks(l, dims, dims, true, func(c Chunk) error { got = append(got, c); return nil }); err != nil {
			t.Fatalf("%d chunks: %v", n, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d chunks: read back %v", n, got[:min(3, len(got))])
		}
	}
}
