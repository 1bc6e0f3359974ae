package h5

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Every chunked dataset of the reference files, read through a Reader that ends at
// every 3rd byte of chunked_v4.h5 (every 11th of chunked_v1btree.h5): every walk
// stops with an *Error, never a panic, and a read that succeeds gives h5py's bytes.
func TestChunksTruncatedAtEveryByte(t *testing.T) {
	for _, name := range []string{"chunked_v4.h5", "chunked_v1btree.h5"} {
		file := testFile(t, name)
		step := int64(3)
		if name == "chunked_v1btree.h5" {
			step = 11
		}
		type dataset struct {
			ds oracleDataset
			l  *Layout
			p  *Pipeline
			dm datasetMessages
		}
		var sets []dataset
		for _, ds := range h5pyDatasets(t, name) {
			if ds.Chunks == nil || ds.Error != "" {
				continue
			}
			dm := findDatasetMessages(t, file, ds.Addr)
			l, err := dm.parseLayout()
			if err != nil {
				t.Fatal(err)
			}
			var p *Pipeline
			if dm.Pipeline != nil {
				p, _ = ParsePipeline(dm.Pipeline.Body, dm.Pipeline.At)
			}
			sets = append(sets, dataset{ds, l, p, dm})
		}
		r := fileReader(file)
		truncated := 0
		for end := int64(0); end < int64(len(file)); end += step {
			r.End = end
			for _, s := range sets {
				err := r.Chunks(s.l, s.dm.Dims, s.dm.MaxDims, s.p != nil, func(Chunk) error { return nil })
				if err != nil {
					if errors.Is(err, mmapfile.ErrTruncated) {
						truncated++
					}
					var e *Error
					if !errors.As(err, &e) {
						t.Fatalf("%s %s ending at %d: %v is not an *Error", name, s.ds.Name, end, err)
					}
				}
				if end%127 != 0 {
					continue
				}
				dst := make([]byte, len(s.ds.Data)/2)
				if err := r.ReadChunked(s.l, s.p, s.dm.Dims, s.dm.MaxDims, s.ds.ItemSize, nil, dst, 0, int64(len(dst)/s.ds.ItemSize)); err == nil {
					if string(dst) != string(s.ds.data(t)) && s.ds.Fill == strings.Repeat("0", len(s.ds.Fill)) {
						t.Errorf("%s %s ending at %d: read without error gives other bytes than h5py", name, s.ds.Name, end)
					}
				}
			}
		}
		if truncated == 0 {
			t.Errorf("%s: no truncation reported", name)
		}
	}
}

// btree2File builds a v2 B-tree of record type 5 (11-byte records) with 64-byte nodes:
// a header at 0, an internal node at 100 over leaves at 200 and 300.
func btree2File(records [][]byte, rootAddr uint64, internal func() []byte) []byte {
	node := func(sig string, body []byte) []byte {
		b := append([]byte(sig), 0, 5)
		b = append(b, body...)
		return binary.LittleEndian.AppendUint32(b, Checksum(b))
	}
	hdr := []byte("BTHD\x00\x05")
	hdr = binary.LittleEndian.AppendUint32(hdr, 64)
	hdr = binary.LittleEndian.AppendUint16(hdr, 11)
	hdr = binary.LittleEndian.AppendUint16(hdr, 1) // depth
	hdr = append(hdr, 100, 40)
	hdr = binary.LittleEndian.AppendUint64(hdr, rootAddr)
	hdr = binary.LittleEndian.AppendUint16(hdr, 1)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(records)))
	hdr = binary.LittleEndian.AppendUint32(hdr, Checksum(hdr))
	file := placeAt(nil, 0, hdr)
	file = placeAt(file, 100, node("BTIN", internal()))
	file = placeAt(file, 200, node("BTLF", append(append([]byte(nil), records[0]...), records[1]...)))
	file = placeAt(file, 300, node("BTLF", append(append([]byte(nil), records[3]...), records[4]...)))
	return placeAt(file, 400, make([]byte, 64))
}

func TestBTree2Bytes(t *testing.T) {
	rec := func(i byte) []byte { return []byte{i, 0, 0, 0, 'i', 'd', 0, 0, 0, 0, i} }
	records := [][]byte{rec(1), rec(2), rec(3), rec(4), rec(5)}
	// Leaves hold at most (64-10)/11 = 4 records: child counts take 1 byte, so a child
	// pointer is 8+1 bytes and the internal node holds its one record and two pointers.
	internal := func(ptrs ...uint64) func() []byte {
		return func() []byte {
			b := append([]byte(nil), records[2]...)
			for _, p := range ptrs {
				b = binary.LittleEndian.AppendUint64(b, p)
				b = append(b, 2)
			}
			return b
		}
	}
	file := btree2File(records, 100, internal(200, 300))
	var got []byte
	err := memReader(file, 0).BTree2(0, func(typ uint8, r []byte) error {
		if typ != 5 || len(r) != 11 {
			t.Errorf("record type %d of %d bytes", typ, len(r))
		}
		got = append(got, r[0])
		return nil
	})
	if err != nil || string(got) != "\x01\x02\x03\x04\x05" {
		t.Fatalf("records %v, %v; want 1..5 in order", got, err)
	}
	for _, tc := range []struct {
		name string
		file []byte
		err  string
	}{
		{"a leaf reached twice", btree2File(records, 100, internal(200, 200)), "reached twice"},
		{"an internal node as its own child", btree2File(records, 100, internal(100, 300)), "node at address 0x64 is reached twice"},
		{"more records than the header says", func() []byte {
			f := append([]byte(nil), file...)
			binary.LittleEndian.PutUint64(f[26:], 4)
			binary.LittleEndian.PutUint32(f[34:], Checksum(f[:34]))
			return f
		}(), "more records than its header's 4"},
		{"a leaf claiming more records than fit", btree2File(records, 100, func() []byte {
			b := internal(200, 300)()
			b[11+8] = 5
			return b
		}), "claims 5 records, at most 4 fit"},
		{"header checksum", func() []byte { f := append([]byte(nil), file...); f[6] ^= 1; return f }(), "BTHD checksum mismatch"},
		{"leaf checksum", func() []byte { f := append([]byte(nil), file...); f[207] ^= 1; return f }(), "BTLF checksum mismatch"},
	} {
		err := memReader(tc.file, 0).BTree2(0, func(uint8, []byte) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

// fractalHeapFile builds a heap whose root is one 512-byte direct block at 200 holding
// "hello" at heap offset 19 (the block's header is 19 bytes: checksummed).
func fractalHeapFile(patchHeader func([]byte) []byte) []byte {
	h := []byte("FRHP\x00")
	h = binary.LittleEndian.AppendUint16(h, 4) // ID length: flags, 2 offset bytes, 1 length byte
	h = binary.LittleEndian.AppendUint16(h, 0) // no filters
	h = append(h, 2)                           // checksummed direct blocks
	h = binary.LittleEndian.AppendUint32(h, 100)
	for i := 0; i < 12; i++ { // 10 statistics, then starting and maximum direct block size
		v := uint64(0)
		if i == 10 {
			v = 512
		} else if i == 11 {
			v = 4096
		}
		if i == 1 || i == 2 { // after "next huge ID": huge B-tree address, then free space
			if i == 1 {
				h = binary.LittleEndian.AppendUint64(h, ^uint64(0))
			}
		}
		if i == 2 {
			h = binary.LittleEndian.AppendUint64(h, 0)
			h = binary.LittleEndian.AppendUint64(h, ^uint64(0)) // free space manager
			continue
		}
		if i == 10 {
			h = binary.LittleEndian.AppendUint16(h, 4) // table width
		}
		h = binary.LittleEndian.AppendUint64(h, v)
	}
	h = binary.LittleEndian.AppendUint16(h, 16) // maximum heap size: 16 bits
	h = binary.LittleEndian.AppendUint16(h, 1)
	h = binary.LittleEndian.AppendUint64(h, 200) // root block
	h = binary.LittleEndian.AppendUint16(h, 0)   // the root is a direct block
	if patchHeader != nil {
		h = patchHeader(h)
	}
	h = binary.LittleEndian.AppendUint32(h, Checksum(h))
	d := []byte("FHDB\x00")
	d = binary.LittleEndian.AppendUint64(d, 0) // owning heap
	d = append(d, 0, 0)                        // block offset
	d = append(d, 0, 0, 0, 0)                  // checksum, filled below
	d = append(d, "hello"...)
	d = append(d, make([]byte, 512-len(d))...)
	binary.LittleEndian.PutUint32(d[15:], Checksum(d))
	return placeAt(placeAt(nil, 0, h), 200, d)
}

func TestFractalHeapBytes(t *testing.T) {
	file := fractalHeapFile(nil)
	h, err := memReader(file, 0).FractalHeap(0)
	if err != nil {
		t.Fatal(err)
	}
	if h.IDLen() != 4 {
		t.Errorf("IDLen = %d, want 4", h.IDLen())
	}
	for _, tc := range []struct {
		name string
		id   []byte
		want string
		err  string
	}{
		{"managed", []byte{0, 19, 0, 5}, "hello", ""},
		{"managed prefix", []byte{0, 19, 0, 2}, "he", ""},
		{"tiny", []byte{0x22, 'a', 'b', 'c'}, "abc", ""},
		{"tiny longer than its ID", []byte{0x25, 'a', 'b', 'c'}, "", "tiny fractal heap object of 6 bytes"},
		{"huge in a heap without huge objects", []byte{0x10, 1, 0, 0}, "", "huge fractal heap object 1 in a heap without huge objects"},
		{"version 1", []byte{0x40, 19, 0, 5}, "", "fractal heap ID version 1"},
		{"in the block header", []byte{0, 4, 0, 5}, "", "lies outside its direct block"},
		{"past the block", []byte{0, 0xff, 1, 5}, "", "lies outside its direct block"},
		{"beyond the root block", []byte{0, 0, 2, 5}, "", "beyond the root direct block"},
		{"short ID", []byte{0, 19}, "", "managed fractal heap ID of 2 bytes"},
	} {
		got, err := h.Object(tc.id)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}

	corrupt := append([]byte(nil), file...)
	corrupt[200+20] ^= 1
	h2, _ := memReader(corrupt, 0).FractalHeap(0)
	if _, err := h2.Object([]byte{0, 19, 0, 5}); err == nil || !strings.Contains(err.Error(), "FHDB checksum mismatch") {
		t.Errorf("corrupted direct block: %v", err)
	}
	other := append([]byte(nil), file...)
	other[205] = 8 // owning heap address 8
	h3, _ := memReader(other, 0).FractalHeap(0)
	if _, err := h3.Object([]byte{0, 19, 0, 5}); err == nil || !strings.Contains(err.Error(), "belongs to the heap at 0x8") {
		t.Errorf("direct block of another heap: %v", err)
	}
	for _, tc := range []struct {
		name  string
		patch func([]byte) []byte
		err   string
	}{
		{"width 3", func(h []byte) []byte { binary.LittleEndian.PutUint16(h[len(h)-2-8-2-2-8-8-2:], 3); return h }, "table width 3 is not a power of two"},
		// Filters add the filtered root block's size, its mask and the pipeline.
		{"filtered", func(h []byte) []byte { h[7] = 8; return append(h, make([]byte, 8+4+8)...) }, "fractal heap with I/O filters"},
		{"filter information missing", func(h []byte) []byte { h[7] = 8; return h }, "FRHP checksum mismatch"},
	} {
		_, err := memReader(fractalHeapFile(tc.patch), 0).FractalHeap(0)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}
