package h5

import (
	"bytes"
	stdzlib "compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"testing"

	kzlib "github.com/klauspost/compress/zlib"
)

// benchChunk is a 256 KiB chunk of smooth f64 values, shuffled and deflated at level 4
// as h5py's compression="gzip", shuffle=True writes it.
func benchChunk(b *testing.B) (raw, stored []byte) {
	raw = make([]byte, 32768*8)
	for i := 0; i < 32768; i++ {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(math.Sin(float64(i)/100)*1000))
	}
	return raw, deflateForTest(b, shuffleForTest(raw, 8))
}

// BenchmarkInflate compares the standard library's inflater with klauspost's on one
// chunk, which is how Decode's deflate was chosen.
func BenchmarkInflate(b *testing.B) {
	raw, compressed := benchChunk(b)
	dst := make([]byte, len(raw))
	b.Run("stdlib", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		zr, _ := stdzlib.NewReader(bytes.NewReader(compressed))
		for i := 0; i < b.N; i++ {
			zr.(stdzlib.Resetter).Reset(bytes.NewReader(compressed), nil)
			if _, err := io.ReadFull(zr, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("klauspost", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		zr, _ := kzlib.NewReader(bytes.NewReader(compressed))
		for i := 0; i < b.N; i++ {
			zr.(kzlib.Resetter).Reset(bytes.NewReader(compressed), nil)
			if _, err := io.ReadFull(zr, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeShuffleDeflate is one chunk through Decode's shuffle + deflate.
func BenchmarkDecodeShuffleDeflate(b *testing.B) {
	raw, stored := benchChunk(b)
	p := &Pipeline{Filters: []Filter{{ID: FilterShuffle, Params: []uint32{8}}, {ID: FilterDeflate, Params: []uint32{4}}}}
	dst := make([]byte, len(raw))
	b.SetBytes(int64(len(raw)))
	for i := 0; i < b.N; i++ {
		if err := p.Decode(dst, stored, 0, 8); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadChunkedGzip reads surface.h5's /height_gz (256×384 f64 in 16 shuffled,
// deflated chunks of 64×96) with one worker and with one per core.
func BenchmarkReadChunkedGzip(b *testing.B) {
	file := testFile(b, "surface.h5")
	var ds *oracleDataset
	for _, d := range h5pyDatasets(b, "surface.h5") {
		if d.Name == "height_gz" {
			d := d
			ds = &d
		}
	}
	if ds == nil {
		b.Fatal("surface.h5 has no /height_gz")
	}
	dm := findDatasetMessages(b, file, ds.Addr)
	l, err := dm.parseLayout()
	if err != nil {
		b.Fatal(err)
	}
	p, err := ParsePipeline(dm.Pipeline.Body, dm.Pipeline.At)
	if err != nil {
		b.Fatal(err)
	}
	r := fileReader(file)
	dst := make([]byte, 256*384*8)
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			b.SetBytes(int64(len(dst)))
			for i := 0; i < b.N; i++ {
				if err := r.ReadChunked(l, p, dm.Dims, dm.MaxDims, 8, nil, dst, 0, 256*384); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRegionRead reads 10 elements of chunked_v1btree.h5's /lots (400 chunks in a
// v1 B-tree with internal nodes): walking the index on every read (ReadChunked) and
// through a ChunkTable collected once (ReadChunkTable).
func BenchmarkRegionRead(b *testing.B) {
	file := testFile(b, "chunked_v1btree.h5")
	var ds *oracleDataset
	for _, d := range h5pyDatasets(b, "chunked_v1btree.h5") {
		if d.Name == "lots" {
			d := d
			ds = &d
		}
	}
	if ds == nil {
		b.Fatal("chunked_v1btree.h5 has no /lots")
	}
	dm := findDatasetMessages(b, file, ds.Addr)
	l, err := dm.parseLayout()
	if err != nil {
		b.Fatal(err)
	}
	r := fileReader(file)
	dst := make([]byte, 10*ds.ItemSize)
	b.Run("ReadChunked", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := r.ReadChunked(l, nil, dm.Dims, dm.MaxDims, ds.ItemSize, nil, dst, 100, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadChunkTable", func(b *testing.B) {
		table, err := r.ChunkTable(l, dm.Dims, dm.MaxDims, false)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if err := r.ReadChunkTable(table, nil, ds.ItemSize, nil, dst, 100, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
}
