package h5

import "testing"

// expectedChunk returns the part of a dataset's row-major bytes that the chunk at
// offset covers, as a full chunk, and which of its bytes lie inside the dataset.
func expectedChunk(data []byte, dims, chunk, offset []uint64, elem int) (want []byte, inside []bool) {
	n := 1
	for _, c := range chunk {
		n *= int(c)
	}
	want = make([]byte, n*elem)
	inside = make([]bool, n*elem)
	idx := make([]uint64, len(chunk))
	for e := 0; e < n; e++ {
		rem := e
		for d := len(chunk) - 1; d >= 0; d-- {
			idx[d] = uint64(rem) % chunk[d]
			rem /= int(chunk[d])
		}
		pos, ok := 0, true
		for d := range chunk {
			c := offset[d] + idx[d]
			if c >= dims[d] {
				ok = false
				break
			}
			pos = pos*int(dims[d]) + int(c)
		}
		if ok {
			copy(want[e*elem:], data[pos*elem:(pos+1)*elem])
			for i := 0; i < elem; i++ {
				inside[e*elem+i] = true
			}
		}
	}
	return want, inside
}

// Every stored chunk of the reference files decodes to the bytes h5py reads there.
func TestDecodeReferenceChunks(t *testing.T) {
	for _, name := range []string{"chunked_v1btree.h5", "chunked_v4.h5"} {
		file := testFile(t, name)
		for _, ds := range h5pyDatasets(t, name) {
			if ds.Chunks == nil || ds.Error != "" {
				continue
			}
			dm := findDatasetMessages(t, file, ds.Addr)
			var p *Pipeline
			if dm.Pipeline != nil {
				var err error
				if p, err = ParsePipeline(dm.Pipeline.Body, dm.Pipeline.At); err != nil {
					t.Fatalf("%s %s: %v", name, ds.Name, err)
				}
			}
			data := ds.data(t)
			for _, c := range ds.ChunkList {
				want, inside := expectedChunk(data, ds.Shape, ds.Chunks, c.Offset, ds.ItemSize)
				got := make([]byte, len(want))
				if err := p.Decode(got, file[c.Addr:c.Addr+int64(c.Size)], c.Mask, ds.ItemSize); err != nil {
					t.Errorf("%s %s chunk %v: %v", name, ds.Name, c, err)
					continue
				}
				for i := range got {
					if inside[i] && got[i] != want[i] {
						t.Errorf("%s %s chunk %v: byte %d is %#x, h5py reads %#x", name, ds.Name, c, i, got[i], want[i])
						break
					}
				}
			}
		}
	}
}

func TestDecodeReferenceFiltersSeen(t *testing.T) {
	// The reference files exercise every filter Decode undoes.
	seen := map[uint16]bool{}
	for _, name := range []string{"chunked_v1btree.h5", "chunked_v4.h5"} {
		file := testFile(t, name)
		for _, ds := range h5pyDatasets(t, name) {
			if ds.Chunks == nil {
				continue
			}
			if dm := findDatasetMessages(t, file, ds.Addr); dm.Pipeline != nil {
				p, err := ParsePipeline(dm.Pipeline.Body, dm.Pipeline.At)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range p.Filters {
					seen[f.ID] = true
				}
			}
		}
	}
	for _, id := range []uint16{FilterDeflate, FilterShuffle, FilterFletcher32, FilterLZF} {
		if !seen[id] {
			t.Errorf("no reference dataset uses filter %d", id)
		}
	}
}
