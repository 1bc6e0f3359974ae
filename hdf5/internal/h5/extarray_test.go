package h5

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// extArrayFile builds an extensible array chunk index with small parameters, so that
// data blocks are paged (2 elements a page): index block elements, a data block the
// index block points at (paged, every page present), and a super block whose first
// data block has only its first page initialized and whose second was never written.
// Element i is the address 2000+i of a 1-byte chunk; element 4 is unallocated.
func extArrayFile() []byte {
	const undef = ^uint64(0)
	sum := func(b []byte) []byte { return binary.LittleEndian.AppendUint32(b, Checksum(b)) }
	u64 := binary.LittleEndian.AppendUint64
	elems := func(idx ...int) []byte {
		var b []byte
		for _, i := range idx {
			if i == 4 {
				b = u64(b, undef)
			} else {
				b = u64(b, uint64(2000+i))
			}
		}
		return b
	}
	head := func(sig string) []byte { return u64(append([]byte(sig), 0, 0), 0) } // version, client, header at 0

	hdr := append([]byte("EAHD"), 0, 0, 8, 8, 1, 2, 2, 1) // element 8 bytes, 2^8 elements, 1 in the index block, data blocks ≥ 2, super blocks ≥ 2 pointers, pages of 2
	hdr = append(hdr, make([]byte, 6*8)...)
	hdr = sum(u64(hdr, 100))

	iblock := append(head("EAIB"), elems(0)...)
	iblock = u64(u64(iblock, 200), 300) // data blocks of super blocks 0 and 1
	iblock = u64(iblock, 500)           // super block 2
	for i := 0; i < 5; i++ {
		iblock = u64(iblock, undef)
	}
	iblock = sum(iblock)

	d0 := sum(append(append(head("EADB"), 1), elems(1, 2)...)) // block offset: 1 byte
	d1 := sum(append(head("EADB"), 3))
	d1 = append(d1, sum(elems(3, 4))...)
	d1 = append(d1, sum(elems(5, 6))...)

	sblk := append(head("EASB"), 7, 0x80, 0x00)
	sblk = sum(u64(u64(sblk, 700), undef))
	d2 := sum(append(head("EADB"), 7))
	d2 = append(d2, sum(elems(7, 8))...)

	file := placeAt(nil, 0, hdr)
	file = placeAt(file, 100, iblock)
	file = placeAt(file, 200, d0)
	file = placeAt(file, 300, d1)
	file = placeAt(file, 500, sblk)
	file = placeAt(file, 700, d2)
	return placeAt(file, 2000, make([]byte, 16))
}

func TestExtensibleArrayPagedBytes(t *testing.T) {
	file := extArrayFile()
	l := &Layout{Class: Chunked, ChunkDims: []uint64{1}, ElemSize: 1,
		Index: ChunkIndex{Type: IndexExtArray, Addr: 0, MaxBits: 8, IndexElements: 1, MinPointers: 2, MinElements: 2, PageBits: 1}}
	var got []int64
	err := memReader(file, 0).Chunks(l, []uint64{11}, []uint64{Unlimited}, false, func(c Chunk) error {
		if c.Size != 1 || c.Offset[0] != uint64(c.Addr-2000) {
			t.Errorf("chunk %v at %d of %d bytes", c.Offset, c.Addr, c.Size)
		}
		got = append(got, c.Addr-2000)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 1, 2, 3, 5, 6, 7, 8}; !reflect.DeepEqual(got, want) {
		t.Errorf("chunks %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name string
		at   int
		err  string
	}{
		{"a page of the index block's data block", 300 + 19 + 3, "EADB page checksum mismatch"},
		{"a page of the super block's data block", 700 + 19 + 3, "EADB page checksum mismatch"},
		{"the super block", 500 + 16, "EASB checksum mismatch"},
		{"the index block", 100 + 15, "EAIB checksum mismatch"},
	} {
		f := append([]byte(nil), file...)
		f[tc.at] ^= 1
		err := memReader(f, 0).Chunks(l, []uint64{11}, []uint64{Unlimited}, false, func(Chunk) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s corrupted: %v, want %q", tc.name, err, tc.err)
		}
	}
}
