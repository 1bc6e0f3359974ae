package benchmarks

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/hdf5"
	"github.com/mmapkit/mmapkit/layout"
)

func init() {
	figureReps["hdf5_view_scan"] = func(s *suite) ceilingRep {
		p, err := s.hdf5File(false)
		if err != nil {
			return nil
		}
		return func() (time.Duration, int64, error) { return scanOnce("hdf5", scanHDF5, p, 8) }
	}
	figureReps["hdf5_chunked_gzip_read"] = func(s *suite) ceilingRep {
		read, n, err := s.hdf5GzipReader()
		if err != nil {
			return nil
		}
		return func() (time.Duration, int64, error) {
			d, err := timed(read)
			return d, n, err
		}
	}
	figureReps["hdf5_open_10k"] = func(s *suite) ceilingRep {
		p, err := s.hdf5Many()
		if err != nil {
			return nil
		}
		return func() (time.Duration, int64, error) {
			d, err := timed(func() error { return listHDF5(p) })
			return d, 0, err
		}
	}
	formatMeasures["hdf5_view_scan"] = func(s *suite) (float64, int64, error) {
		p, err := s.hdf5File(false)
		if err != nil {
			return 0, 0, err
		}
		return s.scanGBps("hdf5_view_scan", scanHDF5, p, 8, nil)
	}
	formatMeasures["h5py_read_sum"] = func(s *suite) (float64, int64, error) { return s.h5pyRead(false) }
	formatMeasures["hdf5_chunked_gzip_read"] = func(s *suite) (float64, int64, error) { return s.hdf5ReadGzip(0) }
	formatMeasures["hdf5_chunked_gzip_read_one_core"] = func(s *suite) (float64, int64, error) { return s.hdf5ReadGzip(1) }
	formatMeasures["h5py_read_gzip"] = func(s *suite) (float64, int64, error) { return s.h5pyRead(true) }
	formatMeasures["convert_npy_hdf5"] = func(s *suite) (float64, int64, error) { return s.convert("npy", "hdf5") }
	formatMeasures["hdf5_open_10k"] = (*suite).hdf5Open10k
	formatMeasures["h5py_open_10k"] = (*suite).h5pyOpen10k
}

// The HDF5 figures use the suite's data as the row-major 2-D f64 array
// "/x" of zarrShape, written by hdf5.Write: contiguous (at an aligned
// offset, so that it maps), or chunked (chunks of about 1 MiB chosen from
// the shape), shuffled and deflated at gzip's level 4 — h5py's
// compression="gzip", shuffle=True.

// hdf5File writes, once, the contiguous (gzip false) or the compressed
// file of the suite's data and returns its path.
func (s *suite) hdf5File(gzip bool) (string, error) {
	if p, ok := s.hdf5Files[gzip]; ok {
		return p, nil
	}
	p, o := s.path("data.h5"), &format.Options{}
	if gzip {
		p, o = s.path("data-gzip.h5"), &format.Options{Params: map[string]string{"compress": "gzip"}}
	}
	src := newMemSource("x", asBytes(s.src), zarrShape(int64(s.elems())), layout.RowMajor)
	if err := hdf5.Write(p, src, o); err != nil {
		return "", err
	}
	if err := settle(p); err != nil {
		return "", err
	}
	if s.hdf5Files == nil {
		s.hdf5Files = map[bool]string{}
	}
	s.hdf5Files[gzip] = p
	return p, nil
}

// scanHDF5 opens an HDF5 file, views its dataset /x and sums it.
func scanHDF5(path string) (float64, int, error) {
	f, err := hdf5.Open(path, nil)
	if err != nil {
		return 0, 0, err
	}
	xs, err := hdf5.View[float64](f, "/x")
	if err != nil {
		f.Close()
		return 0, 0, err
	}
	sum := sumF64(xs)
	return sum, len(xs), f.Close()
}

// readHDF5Gzip opens the compressed file, reads its whole dataset into
// dst (chunks decoded on every core) and closes it.
func readHDF5Gzip(path string, dst []float64) error {
	f, err := hdf5.Open(path, nil)
	if err != nil {
		return err
	}
	if err := hdf5.ReadAt(f, "/x", 0, dst); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hdf5GzipReader returns a read of the whole compressed dataset into a
// reused buffer, opening and closing included, checked once, and the
// bytes it reads.
func (s *suite) hdf5GzipReader() (func() error, int64, error) {
	p, err := s.hdf5File(true)
	if err != nil {
		return nil, 0, err
	}
	dst := s.scratch()
	read := func() error { return readHDF5Gzip(p, dst) }
	if err := read(); err != nil {
		return nil, 0, err
	}
	if err := checkSum("hdf5_chunked_gzip_read", sumF64(dst), len(dst)); err != nil {
		return nil, 0, err
	}
	return read, int64(len(dst)) * 8, nil
}

// hdf5ReadGzip times hdf5GzipReader's read with GOMAXPROCS set to procs
// (0: as it is).
func (s *suite) hdf5ReadGzip(procs int) (float64, int64, error) {
	read, n, err := s.hdf5GzipReader()
	if err != nil {
		return 0, 0, err
	}
	if procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	}
	d, err := s.best(func() (time.Duration, error) { return timed(read) })
	if err != nil {
		return 0, 0, err
	}
	return gbps(n, d), n, nil
}

// h5pyReadScript times h5py's f["x"][:] and its .sum() (opening
// included), best of reps.
var h5pyReadScript = pyBest + pyImport("import h5py", "h5py") + `
path, reps = sys.argv[1], int(sys.argv[2])
def read_sum():
    with h5py.File(path, "r") as f:
        a = f["x"][:]
    return float(a.sum()), int(a.size)
t, (s, n) = best(read_sum, reps)
print(json.dumps({"version": h5py.__version__, "t": t, "sum": s, "n": n}))
`

// h5pyRead times h5py reading and summing the contiguous or the
// compressed file.
func (s *suite) h5pyRead(gzip bool) (float64, int64, error) {
	p, err := s.hdf5File(gzip)
	if err != nil {
		return 0, 0, err
	}
	return s.pythonRate("h5py", h5pyReadScript, p)
}

// manyDatasets is how many datasets the open figures' file holds: 100
// groups of 100 small datasets.
const manyDatasets = 10000

// hdf5Many writes, once, the file of manyDatasets datasets.
func (s *suite) hdf5Many() (string, error) {
	p := s.path("many.h5")
	if s.hdf5ManyDone {
		return p, nil
	}
	specs := make([]hdf5.DatasetSpec, manyDatasets)
	for i := range specs {
		specs[i] = hdf5.DatasetSpec{Name: fmt.Sprintf("g%02d/d%03d", i/100, i%100), Type: layout.F64, Shape: []int64{16}}
	}
	f, err := hdf5.Create(p, specs, nil)
	if err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	s.hdf5ManyDone = true
	return p, settle(p)
}

// listHDF5 opens the file and lists its datasets.
func listHDF5(path string) error {
	f, err := hdf5.Open(path, nil)
	if err != nil {
		return err
	}
	if n := len(f.Datasets()); n != manyDatasets {
		f.Close()
		return fmt.Errorf("%s: %d datasets listed, want %d", path, n, manyDatasets)
	}
	return f.Close()
}

func (s *suite) hdf5Open10k() (float64, int64, error) {
	p, err := s.hdf5Many()
	if err != nil {
		return 0, 0, err
	}
	if err := listHDF5(p); err != nil { // warm
		return 0, 0, err
	}
	us, err := s.median(func(int) (time.Duration, error) { return timed(func() error { return listHDF5(p) }) })
	if err != nil {
		return 0, 0, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0, 0, err
	}
	return us, fi.Size(), nil
}

// h5pyVisitScript times opening a file and listing its datasets with
// h5py's visititems, median of reps, in seconds.
var h5pyVisitScript = pyImport("import sys, time, json, h5py", "h5py") + `
path, reps = sys.argv[1], int(sys.argv[2])
def visit():
    names = []
    def fn(name, obj):
        if isinstance(obj, h5py.Dataset):
            names.append(name)
    with h5py.File(path, "r") as f:
        f.visititems(fn)
    return len(names)
visit()
ts = []
for _ in range(reps):
    t0 = time.perf_counter()
    n = visit()
    ts.append(time.perf_counter() - t0)
ts.sort()
print(json.dumps({"version": h5py.__version__, "t": ts[len(ts) // 2], "n": n}))
`

func (s *suite) h5pyOpen10k() (float64, int64, error) {
	p, err := s.hdf5Many()
	if err != nil {
		return 0, 0, err
	}
	py, err := s.pythonWith("h5py")
	if err != nil {
		return 0, 0, err
	}
	var r struct {
		T float64 `json:"t"`
		N int     `json:"n"`
	}
	if err := s.runPython(py, h5pyVisitScript, &r, p, strconv.Itoa(s.o.latReps)); err != nil {
		return 0, 0, err
	}
	if r.N != manyDatasets || r.T <= 0 {
		return 0, 0, fmt.Errorf("h5py listed %d datasets in %vs, want %d", r.N, r.T, manyDatasets)
	}
	return r.T * 1e6, 0, nil
}
