package h5

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestParseLayoutBytes(t *testing.T) {
	u := func(x uint64, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(x >> (8 * i))
		}
		return b
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	undef := u(^uint64(0), 8)
	for _, tc := range []struct {
		name string
		body []byte
		rank int
		want Layout
		err  string
	}{
		{"v3 contiguous (h5py's 4-element i32)", cat([]byte{3, 1}, u(0x800, 8), u(16, 8)), 1,
			Layout{Version: 3, Class: Contiguous, Addr: 0x800, Size: 16}, ""},
		{"v3 contiguous unallocated", cat([]byte{3, 1}, undef, u(16, 8)), 1,
			Layout{Version: 3, Class: Contiguous, Addr: undefinedAddr, Size: 16}, ""},
		{"v3 compact", cat([]byte{3, 0}, u(3, 2), []byte("abc")), 1,
			Layout{Version: 3, Class: Compact, Compact: []byte("abc"), CompactAt: 104}, ""},
		{"v3 compact overruns", cat([]byte{3, 0}, u(4, 2), []byte("abc")), 1, Layout{}, "offset 104: compact data (4 bytes) runs past"},
		{"v3 chunked", cat([]byte{3, 2, 3}, u(0x1234, 8), u(10, 4), u(20, 4), u(8, 4)), 2,
			Layout{Version: 3, Class: Chunked, Addr: 0x1234, ChunkDims: []uint64{10, 20}, ElemSize: 8, Index: ChunkIndex{Type: IndexBTree1, Addr: 0x1234}}, ""},
		{"v3 chunked wrong rank", cat([]byte{3, 2, 3}, u(0x1234, 8), u(10, 4), u(20, 4), u(8, 4)), 1, Layout{}, "chunk has 3 dimensions, want the dataspace rank 1 + 1"},
		{"v3 chunked zero dim", cat([]byte{3, 2, 2}, u(0x1234, 8), u(0, 4), u(8, 4)), 1, Layout{}, "chunk dimension 0 is 0"},
		{"v3 chunked dimensionality 1", cat([]byte{3, 2, 1}, u(0x1234, 8), u(8, 4)), 0, Layout{}, "chunk dimensionality 1 is not 2-33"},
		{"v1 chunked", cat([]byte{1, 3, 2, 0, 0, 0, 0, 0}, u(0x99, 8), u(4, 4), u(5, 4), u(2, 4)), 2,
			Layout{Version: 1, Class: Chunked, Addr: 0x99, ChunkDims: []uint64{4, 5}, ElemSize: 2, Index: ChunkIndex{Type: IndexBTree1, Addr: 0x99}}, ""},
		{"v2 contiguous", cat([]byte{2, 2, 1, 0, 0, 0, 0, 0}, u(0x40, 8), u(6, 4), u(4, 4)), 1,
			Layout{Version: 2, Class: Contiguous, Addr: 0x40}, ""},
		{"v2 compact", cat([]byte{2, 2, 0, 0, 0, 0, 0, 0}, u(2, 4), u(1, 4), u(2, 4), []byte{7, 9}), 1,
			Layout{Version: 2, Class: Compact, Compact: []byte{7, 9}, CompactAt: 120}, ""},
		{"v4 single filtered", cat([]byte{4, 2, 2, 2, 2}, u(3, 2), u(4, 2), []byte{1}, u(40, 8), u(1, 4), u(0x500, 8)), 1,
			Layout{Version: 4, Class: Chunked, Addr: 0x500, ChunkDims: []uint64{3}, ElemSize: 4,
				Index: ChunkIndex{Type: IndexSingle, Addr: 0x500, Filtered: true, FilteredSize: 40, FilterMask: 1}}, ""},
		{"v4 implicit, edge chunks unfiltered", cat([]byte{4, 2, 1, 3, 1}, []byte{5, 6, 1}, []byte{2}, u(0x600, 8)), 2,
			Layout{Version: 4, Class: Chunked, Addr: 0x600, ChunkDims: []uint64{5, 6}, ElemSize: 1, EdgeChunksUnfiltered: true,
				Index: ChunkIndex{Type: IndexImplicit, Addr: 0x600}}, ""},
		{"v4 fixed array", cat([]byte{4, 2, 0, 2, 4}, u(100, 4), u(8, 4), []byte{3, 10}, u(0x700, 8)), 1,
			Layout{Version: 4, Class: Chunked, Addr: 0x700, ChunkDims: []uint64{100}, ElemSize: 8,
				Index: ChunkIndex{Type: IndexFixedArray, Addr: 0x700, PageBits: 10}}, ""},
		{"v4 extensible array", cat([]byte{4, 2, 0, 2, 1}, []byte{7, 4}, []byte{4, 32, 4, 4, 16, 10}, u(0x800, 8)), 1,
			Layout{Version: 4, Class: Chunked, Addr: 0x800, ChunkDims: []uint64{7}, ElemSize: 4,
				Index: ChunkIndex{Type: IndexExtArray, Addr: 0x800, MaxBits: 32, IndexElements: 4, MinPointers: 4, MinElements: 16, PageBits: 10}}, ""},
		{"v4 extensible array zero parameter", cat([]byte{4, 2, 0, 2, 1}, []byte{7, 4}, []byte{4, 32, 4, 0, 16, 10}, u(0x800, 8)), 1, Layout{}, "extensible array parameter 2 is 0"},
		{"v4 v2 B-tree", cat([]byte{4, 2, 0, 3, 8}, u(2, 8), u(3, 8), u(4, 8), []byte{5}, u(2048, 4), []byte{100, 40}, u(0x900, 8)), 2,
			Layout{Version: 4, Class: Chunked, Addr: 0x900, ChunkDims: []uint64{2, 3}, ElemSize: 4,
				Index: ChunkIndex{Type: IndexBTree2, Addr: 0x900, NodeSize: 2048, SplitPercent: 100, MergePercent: 40}}, ""},
		{"v4 index type 0", cat([]byte{4, 2, 0, 2, 1}, []byte{7, 4}, []byte{0}, u(0x800, 8)), 1, Layout{}, "chunk index type 0 is not 1-5"},
		{"v4 unknown flag", cat([]byte{4, 2, 4, 2, 1}, []byte{7, 4}, []byte{2}, u(0x800, 8)), 1, Layout{}, "flags 0x4 has unknown bits"},
		{"v4 dimension width 9", cat([]byte{4, 2, 0, 2, 9}), 1, Layout{}, "chunk dimension width 9 is not 1-8"},
		{"v4 virtual", cat([]byte{4, 3}, u(0x1000, 8), u(2, 4)), 1,
			Layout{Version: 4, Class: Virtual, VirtualHeapAddr: 0x1000, VirtualHeapIndex: 2}, ""},
		{"v3 virtual", cat([]byte{3, 3}, u(0x1000, 8), u(2, 4)), 1, Layout{}, "virtual layout in a version 3 layout message"},
		{"version 5", []byte{5, 1}, 1, Layout{}, "layout message version 5 is not 1-4"},
		{"class 7", []byte{3, 7}, 1, Layout{}, "layout class 7 is not"},
		{"empty", nil, 1, Layout{}, "offset 100: layout version (1 bytes) runs past"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseLayout(tc.body, 100, tc.rank, 8, 8)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseLayout = %+v, %v; want an error containing %q", l, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*l, tc.want) {
				t.Errorf("ParseLayout =\n%+v, want\n%+v", *l, tc.want)
			}
		})
	}
}

// Every dataset of the reference files parses to the class, chunk shape and element
// size h5py reports.
func TestParseLayoutReferenceFiles(t *testing.T) {
	for _, name := range []string{"chunked_v1btree.h5", "chunked_v4.h5", "newstyle_numbers.h5", "oldstyle_numbers.h5"} {
		file := testFile(t, name)
		for _, ds := range h5pyDatasets(t, name) {
			dm := findDatasetMessages(t, file, ds.Addr)
			l, err := dm.parseLayout()
			if err != nil {
				t.Errorf("%s %s: %v", name, ds.Name, err)
				continue
			}
			if ds.Chunks == nil {
				if l.Class == Chunked {
					t.Errorf("%s %s: chunked, h5py says it is not", name, ds.Name)
				}
				continue
			}
			if l.Class != Chunked || !reflect.DeepEqual(l.ChunkDims, ds.Chunks) || int(l.ElemSize) != ds.ItemSize {
				t.Errorf("%s %s: %v chunks %v of %d bytes, h5py says chunks %v of %d", name, ds.Name, l.Class, l.ChunkDims, l.ElemSize, ds.Chunks, ds.ItemSize)
			}
		}
	}
}
