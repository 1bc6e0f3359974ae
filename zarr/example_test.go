package zarr_test

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/zarr"
)

// Create an array on disk and fill it chunk by chunk through writable
// views, as numpy's open_memmap(mode="w+") does for one file; then read a
// region back, across chunks.
func Example() {
	dir, _ := os.MkdirTemp("", "zarr")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "grid.zarr")
	s, err := zarr.Create(path, []zarr.ArraySpec{{Name: "t", Type: layout.F32, Shape: []int64{4, 6}, Chunks: []int64{2, 3}}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	a, _ := s.Array("t")
	for i := range a.Grid()[0] {
		for j := range a.Grid()[1] {
			chunk, err := zarr.ViewChunk[float32](a, i, j) // the chunk file's pages
			if err != nil {
				log.Fatal(err)
			}
			for k := range chunk {
				chunk[k] = float32(10*i + j)
			}
		}
	}
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}

	r, _ := zarr.Open(path, nil)
	defer r.Close()
	t, _ := r.Array("/t")
	row, _ := zarr.ReadRegion[float32](t, []int64{2, 0}, []int64{1, 6})
	fmt.Println(t.Name(), t.Shape(), t.ChunkShape(), row)
	// Output: /t [4 6] [2 3] [10 10 10 11 11 11]
}

// Convert a store through the format registry, as the command line does:
// here to a zstd-compressed version 2 store, which zarr-python, dask and
// xarray read.
func ExampleWrite() {
	dir, _ := os.MkdirTemp("", "zarr")
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "in.zarr")
	s, _ := zarr.Create(src, []zarr.ArraySpec{{Name: "x", Type: layout.I64, Shape: []int64{3}, FillValue: 7}}, nil)
	zarr.Set(s.Arrays()[0], []int64{1}, int64(-1))
	s.Close()

	out := filepath.Join(dir, "out.zarr")
	err := format.Convert(src, out, nil, &format.Options{Params: map[string]string{"zarr-version": "2", "compress": "zstd:3"}})
	if err != nil {
		log.Fatal(err)
	}
	f, _ := format.OpenFile(out, mmapfile.ReadOnly, nil)
	defer f.Close()
	r := f.Records()[0]
	v, _ := zarr.Read[int64](f.(*zarr.Store).Arrays()[0])
	comp, _ := json.Marshal(r.Extra["compressor"])
	fmt.Println(f.Format(), f.Version(), r.Name, r.Type, v, string(comp))
	// Output: zarr 2 /x i64 [7 -1 7] {"id":"zstd","level":3}
}
