package h5

import (
	"bytes"
	"encoding/hex"
	"math/rand"
	"os"
	"path/filepath"
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
		l, err := ParseLayout(dm.Layout.Body, dm.Layout.At, len(dm.Dims), 8, 8)
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
		for _, rg := range ranges {
			dst := bytes.Repeat([]byte{0xa5}, int(rg[1])*ds.ItemSize)
			if err := r.ReadChunked(l, p, dm.Dims, dm.MaxDims, ds.ItemSize, fill, dst, rg[0], rg[1]); err != nil {
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
