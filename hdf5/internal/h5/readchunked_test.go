package h5

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// checkReadChunkedAgainstH5py asserts that ReadChunked of every chunked dataset of a
// reference file equals h5py's ds[()] bytes, whole and over random ranges.
func checkReadChunkedAgainstH5py(t *testing.T, name string) {
	checkReadChunked(t, name, testFile(t, name), h5pyDatasets(t, name))
}

func checkReadChunked(t *testing.T, name string, file []byte, datasets []oracleDataset) {
	r := fileReader(file)
	rng := rand.New(rand.NewSource(1))
	n := 0
	for _, ds := range datasets {
		if ds.Chunks == nil || ds.Error != "" {
			continue
		}
		dm := findDatasetMessages(t, file, ds.Addr)
		l, err := dm.parseLayout()
		if err != nil {
			t.Fatalf("%s: %v", ds.Name, err)
		}
		var p *Pipeline
		if dm.Pipeline != nil {
			if p, err = ParsePipeline(dm.Pipeline.Body, dm.Pipeline.At); err != nil {
				t.Fatal(err)
			}
		}
		fill, _ := hex.DecodeString(ds.Fill)
		want := ds.data(t)
		count := int64(len(want) / ds.ItemSize)
		ranges := [][2]int64{{0, count}, {0, 0}}
		for i := 0; i < 5 && count > 0; i++ {
			a := rng.Int63n(count)
			ranges = append(ranges, [2]int64{a, rng.Int63n(count-a) + 1})
		}
		table, err := r.ChunkTable(l, dm.Dims, dm.MaxDims, p != nil)
		if err != nil {
			t.Fatalf("%s %s: %v", name, ds.Name, err)
		}
		for k, rg := range ranges {
			dst := bytes.Repeat([]byte{0xa5}, int(rg[1])*ds.ItemSize)
			read := func() error { return r.ReadChunked(l, p, dm.Dims, dm.MaxDims, ds.ItemSize, fill, dst, rg[0], rg[1]) }
			if k%2 == 1 { // every other range through the table collected once
				read = func() error { return r.ReadChunkTable(table, p, ds.ItemSize, fill, dst, rg[0], rg[1]) }
			}
			if err := read(); err != nil {
				t.Errorf("%s %s [%d,+%d): %v", name, ds.Name, rg[0], rg[1], err)
				continue
			}
			w := want[rg[0]*int64(ds.ItemSize) : (rg[0]+rg[1])*int64(ds.ItemSize)]
			if !bytes.Equal(dst, w) {
				i := 0
				for i < len(dst) && dst[i] == w[i] {
					i++
				}
				t.Errorf("%s %s [%d,+%d): byte %d is %#x, h5py reads %#x", name, ds.Name, rg[0], rg[1], i, dst[i], w[i])
			}
		}
		n++
	}
	if n == 0 {
		t.Errorf("%s: no chunked dataset read", name)
	}
}

func TestReadChunkedV1BTreeReference(t *testing.T) {
	checkReadChunkedAgainstH5py(t, "chunked_v1btree.h5")
}
func TestReadChunkedV4Reference(t *testing.T) { checkReadChunkedAgainstH5py(t, "chunked_v4.h5") }
func TestReadChunkedSurface(t *testing.T)     { checkReadChunkedAgainstH5py(t, "surface.h5") }

// Indexes larger than the reference files': an extensible array with super blocks, a
// v2 B-tree of filtered chunks with internal nodes, a paged fixed array with holes.
func TestChunkIndexesLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "indexes.h5")
	oracle.Run(t, []string{"h5py", "numpy"}, `
import h5py, sys, numpy as np
with h5py.File(sys.argv[1], 'w', libver='latest') as f:
    n = 3000
    d = f.create_dataset('ea_big', shape=(n,), maxshape=(None,), chunks=(1,), dtype='u1')
    d[:] = np.arange(n) % 251
    f.create_dataset('bt2_big', data=(np.arange(120*120) % 7919).astype('<f4').reshape(120, 120),
                     chunks=(1, 4), maxshape=(None, None), fletcher32=True)
    h = f.create_dataset('fa_holes', shape=(5000,), dtype='<i2', chunks=(1,), fillvalue=-3)
    h[1030:1040] = 5
    h[4000:4001] = 9
    # Extensible arrays whose other dims may grow, and whose unlimited dim is not the first.
    f.create_dataset('ea_grow', data=np.arange(15, dtype='<i4').reshape(5, 3), chunks=(1, 2), maxshape=(None, 10))
    f.create_dataset('ea_last', data=np.arange(15, dtype='<i4').reshape(3, 5), chunks=(2, 1), maxshape=(10, None))
    e = f.create_dataset('ea_mid', shape=(3, 4, 5), dtype='<u1', chunks=(2, 1, 3), maxshape=(7, None, 9))
    e[...] = np.arange(60).reshape(3, 4, 5)
    # A fixed array over a grid of the maximum dims, larger than the current ones.
    f.create_dataset('fa_grow', data=np.arange(15, dtype='<i4').reshape(5, 3), chunks=(2, 2), maxshape=(10, 6), compression='gzip')
    # A chunk stored with its filter skipped (filter mask 1), beside deflated ones.
    m = f.create_dataset('masked', data=np.arange(6, dtype='<i4'), chunks=(2,), compression='gzip')
    m.id.write_direct_chunk((2,), np.array([70, 71], dtype='<i4').tobytes(), filter_mask=1)
`, path)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []string{"EASB", "BTIN", "FADB"} {
		if !bytes.Contains(file, []byte(sig)) {
			t.Errorf("the generated file has no %s block", sig)
		}
	}
	datasets := h5pyDatasetsAt(t, path)
	checkChunks(t, "indexes.h5", file, datasets)
	checkReadChunked(t, "indexes.h5", file, datasets)
}

func TestReadChunkedRefusesBadIndexes(t *testing.T) {
	l := &Layout{Class: Chunked, ChunkDims: []uint64{4}, ElemSize: 1, Index: ChunkIndex{Type: IndexBTree1, Addr: 100}}
	for _, tc := range []struct {
		name   string
		second uint64 // offset of the second chunk
		err    string
	}{
		{"a chunk listed twice", 0, "offset 1010: chunk [0] is listed twice"},
		{"an offset between chunks", 2, "offset 1010: chunk offset [2] is not a multiple of the chunk dims [4]"},
	} {
		file := placeAt(nil, 100, tree1Node(1, 0, [][]byte{chunkKey1(4, 0, 0), chunkKey1(4, 0, tc.second), chunkKey1(0, 0, 8)}, []uint64{1000, 1010}))
		file = placeAt(file, 1000, []byte("abcd______efgh"))
		dst := make([]byte, 8)
		err := memReader(file, 0).ReadChunked(l, nil, []uint64{8}, []uint64{8}, 1, nil, dst, 0, 8)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	// The same tree with the second chunk at 4 reads, and a missing third is filled.
	file := placeAt(nil, 100, tree1Node(1, 0, [][]byte{chunkKey1(4, 0, 0), chunkKey1(4, 0, 4), chunkKey1(0, 0, 8)}, []uint64{1000, 1010}))
	file = placeAt(file, 1000, []byte("abcd______efgh"))
	dst := make([]byte, 10)
	if err := memReader(file, 0).ReadChunked(l, nil, []uint64{10}, []uint64{10}, 1, []byte{'.'}, dst, 0, 10); err != nil || string(dst) != "abcdefgh.." {
		t.Errorf("ReadChunked = %q, %v; want \"abcdefgh..\"", dst, err)
	}
}

// A fixed array index built byte by byte over 2 chunks of 4 bytes of a 6-byte dataset
// whose pipeline deflates: the full chunk is deflated, the partial edge chunk stored
// raw, as the "don't filter partial edge chunks" flag of layout version 4 says.
func TestReadChunkedEdgeChunksUnfiltered(t *testing.T) {
	deflated := deflateForTest(t, []byte("abcd"))
	sum := func(b []byte) []byte { return binary.LittleEndian.AppendUint32(b, Checksum(b)) }
	entry := func(addr uint64, size uint16) []byte {
		b := binary.LittleEndian.AppendUint64(nil, addr)
		b = binary.LittleEndian.AppendUint16(b, size)
		return binary.LittleEndian.AppendUint32(b, 0)
	}
	hdr := append([]byte("FAHD"), 0, 1, 14, 10)
	hdr = binary.LittleEndian.AppendUint64(hdr, 2)
	hdr = sum(binary.LittleEndian.AppendUint64(hdr, 100))
	dblock := binary.LittleEndian.AppendUint64(append([]byte("FADB"), 0, 1), 0)
	dblock = sum(append(append(dblock, entry(300, uint16(len(deflated)))...), entry(400, 4)...))
	file := placeAt(placeAt(placeAt(placeAt(nil, 0, hdr), 100, dblock), 300, deflated), 400, []byte("efXY"))

	p := &Pipeline{Filters: []Filter{{ID: FilterDeflate, Name: "deflate", Params: []uint32{4}}}}
	l := &Layout{Class: Chunked, ChunkDims: []uint64{4}, ElemSize: 1, EdgeChunksUnfiltered: true,
		Index: ChunkIndex{Type: IndexFixedArray, Addr: 0, PageBits: 10}}
	dst := make([]byte, 6)
	if err := memReader(file, 0).ReadChunked(l, p, []uint64{6}, []uint64{6}, 1, nil, dst, 0, 6); err != nil || string(dst) != "abcdef" {
		t.Errorf("ReadChunked = %q, %v; want \"abcdef\"", dst, err)
	}
	l.EdgeChunksUnfiltered = false
	err := memReader(file, 0).ReadChunked(l, p, []uint64{6}, []uint64{6}, 1, nil, dst, 0, 6)
	if err == nil || !strings.Contains(err.Error(), "offset 400: chunk [4]: filter 0 (deflate)") {
		t.Errorf("without the flag: %v, want the raw edge chunk refused by deflate", err)
	}
	// An index of filtered entries for a dataset without a pipeline, and the reverse.
	if err := memReader(file, 0).ReadChunked(l, nil, []uint64{6}, []uint64{6}, 1, nil, dst, 0, 6); err == nil ||
		!strings.Contains(err.Error(), "offset 5: fixed array of filtered chunks: true, for a dataset with a filter pipeline: false") {
		t.Errorf("filtered entries without a pipeline: %v", err)
	}
	single := &Layout{Class: Chunked, ChunkDims: []uint64{4}, ElemSize: 1, Index: ChunkIndex{Type: IndexSingle, Addr: 300}}
	if err := memReader(file, 0).Chunks(single, []uint64{4}, []uint64{4}, true, func(Chunk) error { return nil }); err == nil ||
		!strings.Contains(err.Error(), "chunk index type 1 (filtered entries: false) for a dataset with a filter pipeline: true") {
		t.Errorf("unfiltered single chunk of a filtered dataset: %v", err)
	}
	// More entries than the grid holds.
	bad := append([]byte(nil), file...)
	bad[8] = 3
	copy(bad[24:], sum(bad[:24])[24:])
	if err := memReader(bad, 0).ReadChunked(l, p, []uint64{6}, []uint64{6}, 1, nil, dst, 0, 6); err == nil ||
		!strings.Contains(err.Error(), "fixed array of 3 entries for a grid of [2] chunks") {
		t.Errorf("3 entries for 2 chunks: %v", err)
	}
}

// One ChunkTable read by several goroutines at once (each read itself parallel) gives
// every reader h5py's bytes.
func TestReadChunkTableConcurrent(t *testing.T) {
	file := testFile(t, "chunked_v1btree.h5")
	r := fileReader(file)
	for _, ds := range h5pyDatasets(t, "chunked_v1btree.h5") {
		if ds.Name != "lots" {
			continue
		}
		dm := findDatasetMessages(t, file, ds.Addr)
		l, err := dm.parseLayout()
		if err != nil {
			t.Fatal(err)
		}
		table, err := r.ChunkTable(l, dm.Dims, dm.MaxDims, false)
		if err != nil {
			t.Fatal(err)
		}
		want := ds.data(t)
		n := int64(len(want) / ds.ItemSize)
		errs := make(chan error, 4)
		for g := 0; g < 4; g++ {
			go func(g int64) {
				first := g * n / 8
				dst := make([]byte, (n-first)*int64(ds.ItemSize))
				err := r.ReadChunkTable(table, nil, ds.ItemSize, nil, dst, first, n-first)
				if err == nil && !bytes.Equal(dst, want[first*int64(ds.ItemSize):]) {
					err = fmt.Errorf("reader %d: other bytes than h5py's", g)
				}
				errs <- err
			}(int64(g))
		}
		for g := 0; g < 4; g++ {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		return
	}
	t.Fatal("chunked_v1btree.h5 has no /lots")
}

// Files with 4-byte offsets: old style (v1 B-tree) with 4-byte lengths too, and new
// (v4 indexes) with 8-byte lengths (HDF5 itself cannot read unlimited dimensions stored
// in 4 bytes, which the extensible array and v2 B-tree indexes need).
func TestFourByteOffsets(t *testing.T) {
	dir := t.TempDir()
	oracle.Run(t, []string{"h5py", "numpy"}, `
import h5py, sys, numpy as np
for libver, lengths, name in (('earliest', 4, sys.argv[1] + '/old.h5'), ('latest', 8, sys.argv[1] + '/new.h5')):
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_sizes(4, lengths)
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    low = h5py.h5f.LIBVER_EARLIEST if libver == 'earliest' else h5py.h5f.LIBVER_LATEST
    fapl.set_libver_bounds(low, h5py.h5f.LIBVER_LATEST)
    fid = h5py.h5f.create(name.encode(), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl)
    with h5py.File(fid) as f:
        f.create_dataset('gz', data=np.arange(300, dtype='<i4').reshape(20, 15), chunks=(4, 4), compression='gzip', shuffle=True)
        f.create_dataset('one', data=np.arange(6, dtype='<u1'), chunks=(6,), compression='gzip')
        h = f.create_dataset('fa', shape=(3000,), dtype='<u2', chunks=(1,), fillvalue=7)
        h[5:2000] = 3
        if lengths == 8:
            f.create_dataset('ea', data=np.arange(700, dtype='<i2').reshape(350, 2), chunks=(1, 2), maxshape=(None, 2))
            f.create_dataset('bt2', data=np.arange(400, dtype='<f4').reshape(20, 20), chunks=(2, 3), maxshape=(None, None), fletcher32=True)
`, dir)
	for _, tc := range []struct {
		name    string
		lengths int
	}{{"old.h5", 4}, {"new.h5", 8}} {
		path := filepath.Join(dir, tc.name)
		file, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if o, l := fileSizes(file); o != 4 || l != tc.lengths {
			t.Fatalf("%s has offsets of %d bytes and lengths of %d", tc.name, o, l)
		}
		datasets := h5pyDatasetsAt(t, path)
		checkChunks(t, tc.name, file, datasets)
		checkReadChunked(t, tc.name, file, datasets)
	}
}

// sparseFile reads as b followed by zeros up to size, and fails the test when asked for
// more than a MiB at once: a guard must refuse a hostile chunk before reading it.
type sparseFile struct {
	t *testing.T
	b []byte
}

func (s sparseFile) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > 1<<20 {
		s.t.Errorf("a read of %d bytes at %d", len(p), off)
		return 0, io.EOF
	}
	clear(p)
	if off < int64(len(s.b)) {
		copy(p, s.b[off:])
	}
	return len(p), nil
}

// Stored chunk sizes and filter masks a fixed array index holds (entries of an 8-byte
// address, a 5-byte size and a mask) are checked before the chunk is read: a chunk of
// 4 GiB or more, one far larger than its elements, one too small to inflate to them,
// and a mask naming a filter the pipeline does not have, in a file of 16 GiB.
func TestReadChunkedRefusesHostileStoredSizes(t *testing.T) {
	sum := func(b []byte) []byte { return binary.LittleEndian.AppendUint32(b, Checksum(b)) }
	deflated := deflateForTest(t, bytes.Repeat([]byte("abcd"), 1024))
	build := func(size uint64, mask uint32) []byte {
		hdr := append([]byte("FAHD"), 0, 1, 17, 10)
		hdr = binary.LittleEndian.AppendUint64(hdr, 1)
		hdr = sum(binary.LittleEndian.AppendUint64(hdr, 100))
		dblock := binary.LittleEndian.AppendUint64(append([]byte("FADB"), 0, 1), 0)
		dblock = binary.LittleEndian.AppendUint64(dblock, 300)
		dblock = append(dblock, binary.LittleEndian.AppendUint64(nil, size)[:5]...)
		dblock = sum(binary.LittleEndian.AppendUint32(dblock, mask))
		return placeAt(placeAt(placeAt(nil, 0, hdr), 100, dblock), 300, deflated)
	}
	p := &Pipeline{Filters: []Filter{{ID: FilterDeflate, Name: "deflate", Params: []uint32{4}}}}
	for _, tc := range []struct {
		name       string
		chunkBytes uint64
		size       uint64
		mask       uint32
		err        string
	}{
		{"as written", 4096, uint64(len(deflated)), 0, ""},
		{"4 GiB stored", 1<<32 - 1, 1 << 32, 0, "offset 300: chunk [0] of 4294967296 stored bytes reaches HDF5's 4 GiB limit"},
		{"8 GiB stored", 1<<32 - 1, 1 << 33, 0, "reaches HDF5's 4 GiB limit"},
		{"far larger than its elements", 4096, 1 << 30, 0, "offset 300: chunk [0] of 1073741824 stored bytes for 4096 bytes of elements"},
		{"a bomb", 1<<32 - 1, uint64(len(deflated)), 0, "cannot hold 4294967295 bytes of elements"},
		{"mask of a second filter", 4096, uint64(len(deflated)), 2, "offset 300: chunk [0] has filter mask 0x2 for a pipeline of 1 filters"},
	} {
		file := build(tc.size, tc.mask)
		r := &Reader{R: sparseFile{t, file}, End: 1 << 34, OffsetSize: 8, LengthSize: 8}
		l := &Layout{Class: Chunked, ChunkDims: []uint64{tc.chunkBytes}, ElemSize: 1,
			Index: ChunkIndex{Type: IndexFixedArray, Addr: 0, PageBits: 10}}
		dst := make([]byte, 4)
		err := r.ReadChunked(l, p, []uint64{tc.chunkBytes}, []uint64{tc.chunkBytes}, 1, nil, dst, 0, 4)
		if tc.err == "" {
			if err != nil || string(dst) != "abcd" {
				t.Errorf("%s: %q, %v", tc.name, dst, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}
