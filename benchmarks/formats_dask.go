package benchmarks

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/refs"
)

// The dask figures: a dask.distributed LocalCluster of two worker
// processes sums the suite's .npy through its reference set (in place)
// and through the Zarr store format.Convert makes of it (a copy, whose
// time is reported beside), both with chunks of the same rows.
var daskSpecs = []spec{
	{name: "dask_refs_sum", title: "python3: a 2-worker dask LocalCluster summing the .npy through its reference set (da.from_zarr over fsspec's ReferenceFileSystem), in place", unit: GBps, ceiling: "dask_zarr_sum", goal: 0.9, pkg: "refs"},
	{name: "dask_zarr_sum", title: "python3: the same cluster summing the Zarr v2 store format.Convert wrote of the same file (da.from_zarr)", unit: GBps, ceiling: "dask_refs_sum", peer: true, pkg: "refs"},
}

func init() {
	formatMeasures["dask_refs_sum"] = func(s *suite) (float64, int64, error) { return s.daskFigure(true) }
	formatMeasures["dask_zarr_sum"] = func(s *suite) (float64, int64, error) { return s.daskFigure(false) }
}

// daskScript starts the cluster once and times both sums, best of reps.
var daskScript = pyBest + pyImport("import numpy as np, fsspec, zarr, dask.array as da\n    from dask.distributed import Client, LocalCluster", "dask.distributed, zarr and fsspec") + `
fo, store, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
    def by_refs():
        m = zarr.storage.KVStore(fsspec.get_mapper("reference://", fo=fo, remote_protocol="file"))
        return float(da.from_zarr(m, component="0").sum().compute())
    def by_store():
        return float(da.from_zarr(store).sum().compute())
    by_refs(); by_store()  # warm: the workers' imports, the page cache
    t1, s1 = best(by_refs, reps)
    t2, s2 = best(by_store, reps)
    n = da.from_zarr(store).size
    print(json.dumps({"refs": t1, "refs_sum": s1, "zarr": t2, "zarr_sum": s2, "n": int(n),
                      "workers": len(client.scheduler_info()["workers"])}))
`

type daskResult struct {
	Refs, RefsSum, Zarr, ZarrSum float64
	N, Workers                   int
	convert, build               time.Duration
	err                          error
}

// daskRuns holds each suite's result: both figures come from one run.
var (
	daskMu   sync.Mutex
	daskRuns = map[*suite]*daskResult{}
)

// daskFigure runs the script once for both figures and returns one.
func (s *suite) daskFigure(byRefs bool) (float64, int64, error) {
	daskMu.Lock()
	r := daskRuns[s]
	if r == nil {
		r = s.runDask()
		daskRuns[s] = r
	}
	daskMu.Unlock()
	if r.err != nil {
		return 0, 0, r.err
	}
	n := int64(r.N) * 8
	t := r.Zarr
	if byRefs {
		t = r.Refs
		s.noteOf["dask_refs_sum"] = fmt.Sprintf("the reference set took %.1f ms to make (metadata only), the store %.2f s to convert", r.build.Seconds()*1e3, r.convert.Seconds())
	}
	return float64(n) / t / 1e9, n, nil
}

func (s *suite) runDask() *daskResult {
	r := &daskResult{}
	py, err := s.pythonWith("numpy", "fsspec", "zarr", "dask", "distributed")
	if err != nil {
		r.err = err
		return r
	}
	src, _, err := s.npyFile(false)
	if err != nil {
		r.err = err
		return r
	}
	shape := zarrShape(int64(s.elems()))
	rows := zarrOptions(shape, "").Chunks[0]
	// The reference set: chunks of the store's rows.
	fo := s.path("dask-refs.json")
	start := time.Now()
	f, err := format.Open(src, nil)
	if err == nil {
		var set *refs.Set
		set, err = refs.Build(f, src, &refs.Options{Rows: rows})
		f.Close()
		var buf bytes.Buffer
		if err == nil {
			err = set.WriteJSON(&buf)
		}
		if err == nil {
			err = os.WriteFile(fo, buf.Bytes(), 0o644)
		}
	}
	r.build = time.Since(start)
	if err != nil {
		r.err = err
		return r
	}
	defer os.Remove(fo)
	// The copy: the store convert writes, chunks of the same rows.
	store := s.path("dask.zarr")
	start = time.Now()
	err = format.Convert(src, store, nil, &format.Options{Params: map[string]string{"zarr-version": "2",
		"chunks": strconv.FormatInt(rows, 10) + "," + strconv.FormatInt(shape[1], 10)}})
	r.convert = time.Since(start)
	if err != nil {
		r.err = err
		return r
	}
	defer os.RemoveAll(store)
	var out struct {
		Refs    float64 `json:"refs"`
		RefsSum float64 `json:"refs_sum"`
		Zarr    float64 `json:"zarr"`
		ZarrSum float64 `json:"zarr_sum"`
		N       int     `json:"n"`
		Workers int     `json:"workers"`
	}
	if r.err = s.runPython(py, daskScript, &out, fo, store+"/0", strconv.Itoa(s.o.repeat)); r.err != nil {
		return r
	}
	r.Refs, r.RefsSum, r.Zarr, r.ZarrSum, r.N, r.Workers = out.Refs, out.RefsSum, out.Zarr, out.ZarrSum, out.N, out.Workers
	want := expectedSum(s.elems())
	for _, got := range []float64{r.RefsSum, r.ZarrSum} {
		if r.N != s.elems() || math.Abs(got-want) > 1e-9*math.Abs(want) || r.Refs <= 0 || r.Zarr <= 0 || r.Workers != 2 {
			r.err = fmt.Errorf("dask read %d elements summing to %v on %d workers, want %d summing to %v on 2", r.N, got, r.Workers, s.elems(), want)
		}
	}
	return r
}
