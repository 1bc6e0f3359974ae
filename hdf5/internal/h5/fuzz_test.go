package h5

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// referenceFiles are the reference files whose bytes seed the fuzz targets; absent
// ones are left out (the targets still run on their built seeds).
var referenceFiles = []string{"chunked_v1btree.h5", "chunked_v4.h5", "newstyle_numbers.h5", "tree_old.h5", "oldstyle_numbers.h5"}

func referenceBytes(name string) []byte {
	b, _ := readReference(name)
	return b
}

// signatures returns the offsets of every occurrence of sig in file.
func signatures(file []byte, sig string) []int {
	var at []int
	for off := 0; ; {
		i := bytes.Index(file[off:], []byte(sig))
		if i < 0 {
			return at
		}
		at = append(at, off+i)
		off += i + 1
	}
}

// v2HeaderMessages returns the messages of the first chunk of every version 2 object
// header of file (found by signature; continuation blocks are not followed), skipping
// anything malformed: seeds, not a parser.
func v2HeaderMessages(file []byte) []headerMessage {
	var msgs []headerMessage
	for _, a := range signatures(file, "OHDR") {
		if a+7 > len(file) || file[a+4] != 2 {
			continue
		}
		flags := file[a+5]
		p := a + 6
		if flags&0x20 != 0 {
			p += 16
		}
		if flags&0x10 != 0 {
			p += 4
		}
		w := 1 << (flags & 3)
		if p+w > len(file) {
			continue
		}
		var size int
		for i := w - 1; i >= 0; i-- {
			size = size<<8 | int(file[p+i])
		}
		p += w
		end := min(p+size-4, len(file))
		hdr := 4
		if flags&4 != 0 {
			hdr = 6
		}
		for p+hdr <= end {
			typ, n := file[p], int(binary.LittleEndian.Uint16(file[p+1:]))
			p += hdr
			if p+n > end {
				break
			}
			msgs = append(msgs, headerMessage{Type: uint16(typ), Body: file[p : p+n], At: int64(p)})
			p += n
		}
	}
	return msgs
}

// datasetSeed is a chunked dataset found in a reference file without package hdf5.
type datasetSeed struct {
	layout, pipeline []byte
	dims             []uint64
	maxDims          []uint64
}

// chunkedDatasets finds the chunked datasets of a file with version 2 object headers.
func chunkedDatasets(file []byte) []datasetSeed {
	var out []datasetSeed
	for _, a := range signatures(file, "OHDR") {
		var ds datasetSeed
		for _, m := range v2HeaderMessagesAt(file, a) {
			switch m.Type {
			case 1:
				if len(m.Body) >= 4 && m.Body[0] == 2 {
					rank, flags := int(m.Body[1]), m.Body[2]
					need := 4 + 8*rank
					if flags&1 != 0 {
						need += 8 * rank
					}
					if len(m.Body) < need {
						continue
					}
					for i := 0; i < rank; i++ {
						ds.dims = append(ds.dims, binary.LittleEndian.Uint64(m.Body[4+8*i:]))
					}
					ds.maxDims = ds.dims
					if flags&1 != 0 {
						ds.maxDims = nil
						for i := 0; i < rank; i++ {
							ds.maxDims = append(ds.maxDims, binary.LittleEndian.Uint64(m.Body[4+8*rank+8*i:]))
						}
					}
				}
			case 8:
				ds.layout = m.Body
			case 11:
				ds.pipeline = m.Body
			}
		}
		if len(ds.layout) > 1 && ds.layout[1] == byte(Chunked) && ds.dims != nil {
			out = append(out, ds)
		}
	}
	return out
}

// v2HeaderMessagesAt is v2HeaderMessages for the one header at a.
func v2HeaderMessagesAt(file []byte, a int) []headerMessage {
	end := len(file)
	if n := bytes.Index(file[a+4:], []byte("OHDR")); n >= 0 {
		end = a + 4 + n
	}
	return v2HeaderMessages(file[:end][a:]) // offsets relative to a; bodies are what matter
}

func FuzzParseLayout(f *testing.F) {
	f.Add([]byte{3, 1, 0, 8, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0}, uint8(2))
	f.Add([]byte{1, 3, 2, 0, 0, 0, 0, 0, 0x99, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0}, uint8(3))
	for _, name := range referenceFiles {
		for _, m := range v2HeaderMessages(referenceBytes(name)) {
			if m.Type == 8 {
				f.Add(append([]byte(nil), m.Body...), uint8(3))
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, rank uint8) {
		l, err := ParseLayout(body, 0, int(rank%35)-1, 8, 8)
		if err != nil {
			return
		}
		if l.Class == Chunked && (len(l.ChunkDims) == 0 || len(l.ChunkDims) > 32) {
			t.Fatalf("chunked layout with %d dims", len(l.ChunkDims))
		}
		if l.Compact != nil && (l.CompactAt < 0 || int(l.CompactAt)+len(l.Compact) > len(body)) {
			t.Fatalf("compact data [%d,+%d) outside the %d-byte body", l.CompactAt, len(l.Compact), len(body))
		}
	})
}

func FuzzPipelineDecode(f *testing.F) {
	v2 := func(ids ...uint16) []byte {
		b := []byte{2, byte(len(ids))}
		for _, id := range ids {
			b = binary.LittleEndian.AppendUint16(b, id)
			if id >= 256 {
				b = binary.LittleEndian.AppendUint16(b, 0)
			}
			b = binary.LittleEndian.AppendUint16(b, 0)
			b = binary.LittleEndian.AppendUint16(b, 1)
			b = binary.LittleEndian.AppendUint32(b, 4)
		}
		return b
	}
	data := []byte("a chunk of text, text, text and more text to compress and check")
	f.Add(v2(FilterDeflate), deflateForTest(f, data), uint16(len(data)), uint32(0))
	f.Add(v2(FilterShuffle), shuffleForTest(data, 4), uint16(len(data)), uint32(0))
	f.Add(v2(FilterFletcher32), appendFletcherForTest(data), uint16(len(data)), uint32(0))
	f.Add(v2(FilterLZF), []byte{2, 'a', 'b', 'c', 0xe0, 3, 2}, uint16(15), uint32(0))
	f.Add(v2(FilterShuffle, FilterDeflate, FilterFletcher32), appendFletcherForTest(deflateForTest(f, shuffleForTest(data, 4))), uint16(len(data)), uint32(0))
	// The first stored chunk of every chunked dataset of the reference files.
	for _, name := range referenceFiles {
		file := referenceBytes(name)
		r := fileReader(file)
		for _, ds := range chunkedDatasets(file) {
			l, err := ParseLayout(ds.layout, 0, len(ds.dims), 8, 8)
			if err != nil || len(ds.pipeline) == 0 {
				continue
			}
			size, _ := l.ChunkBytes()
			r.Chunks(l, ds.dims, ds.maxDims, true, func(c Chunk) error {
				if size < 1<<16 {
					f.Add(append([]byte(nil), ds.pipeline...), append([]byte(nil), file[c.Addr:c.Addr+int64(c.Size)]...), uint16(size), c.FilterMask)
				}
				return errStop
			})
		}
	}
	f.Fuzz(func(t *testing.T, msg, src []byte, n uint16, mask uint32) {
		p, err := ParsePipeline(msg, 0)
		if err != nil {
			return
		}
		p.Supported()
		dst := make([]byte, n)
		p.Decode(dst, src, mask, 4)
	})
}

// errStop ends a walk early in seeds.
var errStop = &Error{Msg: "stop"}

func FuzzBTree1(f *testing.F) {
	for _, name := range referenceFiles {
		file := referenceBytes(name)
		for _, at := range signatures(file, "TREE") {
			f.Add(file, uint32(at))
		}
	}
	f.Fuzz(func(t *testing.T, file []byte, root uint32) {
		r := fileReader(file)
		r.GroupBTree(uint64(root))
		for rank := 1; rank <= 3; rank++ {
			r.btree1Chunks(uint64(root), rank, func(Chunk) error { return nil })
		}
	})
}

func FuzzBTree2(f *testing.F) {
	for _, name := range referenceFiles {
		file := referenceBytes(name)
		for _, at := range signatures(file, "BTHD") {
			f.Add(file, uint32(at))
		}
	}
	f.Fuzz(func(t *testing.T, file []byte, root uint32) {
		n := 0
		fileReader(file).BTree2(uint64(root), func(typ uint8, rec []byte) error {
			n++
			return nil
		})
	})
}

func FuzzFractalHeap(f *testing.F) {
	for _, name := range referenceFiles {
		file := referenceBytes(name)
		r := fileReader(file)
		var ids [][]byte
		for _, at := range signatures(file, "BTHD") {
			r.BTree2(uint64(at), func(typ uint8, rec []byte) error {
				switch typ {
				case 5:
					ids = append(ids, append([]byte(nil), rec[4:]...))
				case 8:
					ids = append(ids, append([]byte(nil), rec[:8]...))
				}
				return nil
			})
		}
		for _, at := range signatures(file, "FRHP") {
			for _, id := range ids {
				f.Add(file, uint32(at), id)
			}
		}
	}
	f.Add([]byte{}, uint32(0), []byte{0x22, 'a', 'b', 'c'})
	f.Fuzz(func(t *testing.T, file []byte, addr uint32, id []byte) {
		h, err := fileReader(file).FractalHeap(uint64(addr))
		if err != nil {
			return
		}
		h.Object(id)
		h.IDLen()
	})
}

func FuzzChunkIndexes(f *testing.F) {
	encodeDims := func(dims, maxDims []uint64) []byte {
		var b []byte
		for i := range dims {
			b = binary.LittleEndian.AppendUint16(b, uint16(dims[i]))
			b = binary.LittleEndian.AppendUint16(b, uint16(min(maxDims[i], 0xffff)))
		}
		return b
	}
	for _, name := range referenceFiles {
		file := referenceBytes(name)
		for _, ds := range chunkedDatasets(file) {
			f.Add(file, append([]byte(nil), ds.layout...), encodeDims(ds.dims, ds.maxDims), len(ds.pipeline) > 0)
		}
	}
	f.Fuzz(func(t *testing.T, file, layoutBody, dimBytes []byte, filtered bool) {
		var dims, maxDims []uint64
		for i := 0; i+4 <= len(dimBytes) && len(dims) < 4; i += 4 {
			d := uint64(binary.LittleEndian.Uint16(dimBytes[i:]))
			m := uint64(binary.LittleEndian.Uint16(dimBytes[i+2:]))
			if m == 0xffff {
				m = Unlimited
			}
			dims, maxDims = append(dims, d), append(maxDims, m)
		}
		l, err := ParseLayout(layoutBody, 0, len(dims), 8, 8)
		if err != nil || l.Class != Chunked {
			return
		}
		r := fileReader(file)
		n := 0
		r.Chunks(l, dims, maxDims, filtered, func(Chunk) error {
			if n++; n > 1<<16 {
				return errStop
			}
			return nil
		})
		count := uint64(1)
		for _, d := range dims {
			count *= d
		}
		size, ok := l.ChunkBytes()
		if !ok || size > 1<<20 || count*uint64(l.ElemSize) > 1<<20 || l.ElemSize == 0 {
			return
		}
		dst := make([]byte, count*uint64(l.ElemSize))
		var p *Pipeline
		if filtered {
			p = &Pipeline{Filters: []Filter{{ID: FilterDeflate, Name: "deflate"}}}
		}
		r.ReadChunked(l, p, dims, maxDims, int(l.ElemSize), nil, dst, 0, int64(count))
	})
}
