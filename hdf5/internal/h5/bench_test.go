package h5

import (
	"bytes"
	stdflate "compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"testing"

	kflate "github.com/klauspost/compress/flate"

	"github.com/mmapkit/mmapkit/internal/cputime"
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

// BenchmarkInflate compares the standard library's inflater with klauspost's on the
// deflate data of one chunk (its zlib header and Adler-32 left out), which is how
// inflate's was chosen, with the bench's values (i%1000 · 0.25, compressing ~20×) and
// smooth ones (a sine, ~1.3×).
func BenchmarkInflate(b *testing.B) {
	for _, c := range []struct {
		name  string
		value func(i int) float64
	}{
		{"bench", func(i int) float64 { return float64(i%1000) * 0.25 }},
		{"sine", func(i int) float64 { return math.Sin(float64(i)/100) * 1000 }},
	} {
		raw := make([]byte, 32768*8)
		for i := 0; i < 32768; i++ {
			binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(c.value(i)))
		}
		zlibbed := deflateForTest(b, shuffleForTest(raw, 8))
		data := zlibbed[2 : len(zlibbed)-4]
		dst := make([]byte, len(raw))
		for _, lib := range []struct {
			name string
			open func(io.Reader) io.Reader
		}{
			{"stdlib", func(r io.Reader) io.Reader { return stdflate.NewReader(r) }},
			{"klauspost", func(r io.Reader) io.Reader { return kflate.NewReader(r) }},
		} {
			b.Run(c.name+"/"+lib.name, func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				fr := lib.open(bytes.NewReader(data))
				cpu := cputime.Process()
				for b.Loop() {
					fr.(stdflate.Resetter).Reset(bytes.NewReader(data), nil)
					if _, err := io.ReadFull(fr, dst); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// BenchmarkDecodeShuffleDeflate is one chunk through Decode's shuffle + deflate.
func BenchmarkDecodeShuffleDeflate(b *testing.B) {
	raw, stored := benchChunk(b)
	p := &Pipeline{Filters: []Filter{{ID: FilterShuffle, Params: []uint32{8}}, {ID: FilterDeflate, Params: []uint32{4}}}}
	dst := make([]byte, len(raw))
	b.SetBytes(int64(len(raw)))
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		if err := p.Decode(dst, stored, 0, 8); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkReadChunkedGzip reads surface.h5's /height_gz (256×384 f64 in 16 shuffled,
// deflated chunks of 64×96) with one worker and with one per core. cpu-ns/op is the
// process's CPU time per read: what parallel decoding costs beyond one core's work.
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
			cpu := cputime.Process()
			for i := 0; i < b.N; i++ {
				if err := r.ReadChunked(l, p, dm.Dims, dm.MaxDims, 8, nil, dst, 0, 256*384); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
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
