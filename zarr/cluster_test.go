package zarr

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// pyCluster computes on a store in a dask.distributed LocalCluster of two
// worker processes, and opens it in xarray by dimension name.
const pyCluster = `
import sys, json, numpy as np, dask.array as da, xarray as xr
from dask.distributed import Client, LocalCluster
if __name__ == '__main__':
    store = sys.argv[1]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        x = da.from_zarr(store, component='x')
        total, top, cols = da.compute(x.sum(), x.max(), x.sum(axis=0))
        workers = len(client.scheduler_info()['workers'])
        ds = xr.open_zarr(store)
        v = ds['x']
        xcols = v.sum(dim='dim_0').compute()
        out = dict(workers=workers, nchunks=x.npartitions, sum=float(total), max=float(top),
                   colsum=cols.tolist(), dims=list(v.dims), xr_colsum=xcols.values.tolist(), xr_dims=list(xcols.dims))
    print(json.dumps(out))
`

// TestDaskCluster converts an array file of 32 MiB — a column-major f64
// matrix, as Julia writes them, mapped from disk — to a v2 store, then
// has two dask worker processes compute its sum, max and column sums and
// xarray open it by dimension name: the results equal the source's.
func TestDaskCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dask cluster")
	}
	oracle.Python(t, "numpy", "zarr", "dask", "distributed", "xarray")
	const rows, cols = 2048, 2048
	dir := t.TempDir()
	// The array file: raw column-major f64, values (i·7 + j·13) mod 1000
	// (integers, so that every sum is exact in any order).
	raw := make([]float64, rows*cols)
	var sum, top float64
	colsum := make([]float64, cols)
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			v := float64((i*7 + j*13) % 1000)
			raw[j*rows+i] = v
			sum += v
			top = math.Max(top, v)
			colsum[j] += v
		}
	}
	file := filepath.Join(dir, "matrix.f64")
	if err := os.WriteFile(file, f64bytes(raw...), 0o644); err != nil {
		t.Fatal(err)
	}
	mf, err := mmapfile.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	region, err := mf.MapAll()
	if err != nil {
		t.Fatal(err)
	}
	a := layout.Array{Name: "x", Type: layout.F64, Shape: []int64{rows, cols}, Order: layout.ColMajor, Offset: 0, Size: int64(len(raw) * 8)}
	src := &memSource{recs: []format.Record{{Array: a, Kind: format.KindArray}}, pay: []*format.Payload{{Array: a, Data: region}}}
	store := filepath.Join(dir, "matrix.zarr")
	if err := format.Write(store, src, &format.Options{Params: map[string]string{"zarr-version": "2"}}); err != nil {
		t.Fatal(err)
	}
	// Storage order kept: Fortran-order chunks, each a raw block of the
	// file's columns.
	s, err := Open(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := s.Array("x")
	if x.Order() != layout.ColMajor || len(x.Codecs()) != 0 || x.Grid()[0] != 1 {
		t.Errorf("order %v codecs %v grid %v", x.Order(), x.Codecs(), x.Grid())
	}
	c, err := ViewChunk[float64](x, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c[:rows], raw[x.ChunkShape()[1]*rows:][:rows]) {
		t.Error("chunk (0, 1) is not the file's columns")
	}
	s.Close()
	out := oracle.Run(t, []string{"numpy", "zarr", "dask", "distributed", "xarray"}, pyCluster, store)
	var got struct {
		Workers  int       `json:"workers"`
		Nchunks  int       `json:"nchunks"`
		Sum      float64   `json:"sum"`
		Max      float64   `json:"max"`
		Colsum   []float64 `json:"colsum"`
		Dims     []string  `json:"dims"`
		XrColsum []float64 `json:"xr_colsum"`
		XrDims   []string  `json:"xr_dims"`
	}
	last := strings.TrimSpace(out)
	last = last[strings.LastIndex(last, "\n")+1:]
	if err := json.Unmarshal([]byte(last), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("dask LocalCluster: %d worker processes, %d chunks: sum %v (source %v), max %v (source %v), column sums equal: %v; xarray dims %v, sum over dim_0 equal: %v",
		got.Workers, got.Nchunks, got.Sum, sum, got.Max, top, slices.Equal(got.Colsum, colsum), got.Dims, slices.Equal(got.XrColsum, colsum))
	if got.Workers != 2 || got.Nchunks < 2 || got.Sum != sum || got.Max != top || !slices.Equal(got.Colsum, colsum) || !slices.Equal(got.XrColsum, colsum) ||
		!slices.Equal(got.Dims, []string{"dim_0", "dim_1"}) || !slices.Equal(got.XrDims, []string{"dim_1"}) {
		t.Errorf("dask and xarray disagree with the source")
	}
}
