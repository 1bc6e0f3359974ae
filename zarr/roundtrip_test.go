package zarr

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
)

// TestRoundTrip writes a store of every version, order, compressor and
// sharding and reads it back.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	shape := []int64{5, 7}
	data := ramp(layout.F64, 35, 0)
	for _, v := range []int{2, 3} {
		for _, ord := range []layout.Order{layout.RowMajor, layout.ColMajor} {
			for _, comp := range []string{"", "zstd", "gzip", "blosc", "blosc:snappy:9"} {
				for _, shards := range [][]int64{nil, {4, 6}} {
					if v == 2 && shards != nil {
						continue
					}
					src := (&memSource{}).add("x", layout.F64, shape, ord, ord == layout.ColMajor, toOrder(t, layout.F64, shape, data, ord, ord == layout.ColMajor))
					p := filepath.Join(dir, fmt.Sprintf("s%d%v%s%v.zarr", v, ord, comp, shards))
					if err := Write(p, src, &Options{Version: v, Chunks: []int64{2, 3}, Shards: shards, Compress: comp}); err != nil {
						t.Fatal(err)
					}
					s, err := Open(p, nil)
					if err != nil {
						t.Fatal(err)
					}
					got := readAll(t, s, 0)
					if !bytes.Equal(got, data) {
						t.Errorf("%s: got %v", p, got)
					}
					s.Close()
				}
			}
		}
	}
}
