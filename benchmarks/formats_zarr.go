package benchmarks

import (
	"encoding/binary"
	"runtime"
	"strings"
	"time"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/zarr"
)

func init() {
	figureReps["zarr_view_scan"] = func(s *suite) ceilingRep {
		p, err := s.zarrStore("")
		if err != nil {
			return nil
		}
		return func() (time.Duration, int64, error) { return scanOnce("zarr", scanZarr, p, 8) }
	}
	formatMeasures["zarr_view_scan"] = (*suite).zarrViewScan
	formatMeasures["zarr_python_read"] = func(s *suite) (float64, int64, error) { return s.zarrPython("") }
	formatMeasures["zarr_read_zstd"] = func(s *suite) (float64, int64, error) { return s.zarrReadZstd(0) }
	formatMeasures["zarr_read_zstd_one_core"] = func(s *suite) (float64, int64, error) { return s.zarrReadZstd(1) }
	formatMeasures["zarr_python_read_zstd"] = func(s *suite) (float64, int64, error) { return s.zarrPython("zstd") }
	formatMeasures["zarr_create_fill_view"] = (*suite).zarrCreateFill
	formatMeasures["zarr_edit_sync"] = (*suite).zarrEditSync
}

// The Zarr figures use the suite's data as a row-major 2-D f64 array of
// zarrShape, in version 2 stores (the zarr-python here reads version 2
// only) with chunks of whole rows, about 8 MiB each.

// zarrShape is the arrays' shape: rows of up to 1024 elements.
func zarrShape(n int64) []int64 {
	cols := int64(1024)
	for n%cols != 0 {
		cols /= 2
	}
	return []int64{n / cols, cols}
}

// zarrOptions are the stores' options: version 2, chunks of whole rows
// (8 MiB for rows of 1024 elements), compressed as compress says.
func zarrOptions(shape []int64, compress string) *zarr.Options {
	rows := max(1, min(shape[0], (8<<20)/(shape[1]*8)))
	return &zarr.Options{Version: 2, Chunks: []int64{rows, shape[1]}, Compress: compress}
}

// zarrStore writes, once per compression, a store of the suite's data.
func (s *suite) zarrStore(compress string) (string, error) {
	if p, ok := s.zarrStores[compress]; ok {
		return p, nil
	}
	p := s.path("data" + compress + ".zarr")
	shape := zarrShape(int64(s.elems()))
	src := newMemSource("x", asBytes(s.src), shape, layout.RowMajor)
	if err := zarr.Write(p, src, zarrOptions(shape, compress)); err != nil {
		return "", err
	}
	if err := settle(p); err != nil {
		return "", err
	}
	if s.zarrStores == nil {
		s.zarrStores = map[string]string{}
	}
	s.zarrStores[compress] = p
	return p, nil
}

// scanZarr opens a store, sums its one array through the views of its
// chunks (whole rows each, so the first count elements of a view are the
// chunk's part of the array) and closes it.
func scanZarr(path string) (float64, int, error) {
	st, err := zarr.Open(path, nil)
	if err != nil {
		return 0, 0, err
	}
	a := st.Arrays()[0]
	g := a.Grid()
	var sum float64
	n := 0
	for i := range g[0] {
		for j := range g[1] {
			xs, err := zarr.ViewChunk[float64](a, i, j)
			if err != nil {
				st.Close()
				return 0, 0, err
			}
			_, count, err := a.ChunkBox(i, j)
			if err != nil {
				st.Close()
				return 0, 0, err
			}
			k := int(count[0] * count[1])
			sum += sumF64(xs[:k])
			n += k
		}
	}
	return sum, n, st.Close()
}

func (s *suite) zarrViewScan() (float64, int64, error) {
	p, err := s.zarrStore("")
	if err != nil {
		return 0, 0, err
	}
	return s.scanGBps("zarr_view_scan", scanZarr, p, 8, nil)
}

// zarrReadZstd copies the whole zstd-compressed array into a reused
// buffer with Array.ReadRegion (chunks decoded on every core), with
// GOMAXPROCS set to procs for the measurement (0: as it is).
func (s *suite) zarrReadZstd(procs int) (float64, int64, error) {
	p, err := s.zarrStore("zstd")
	if err != nil {
		return 0, 0, err
	}
	st, err := zarr.Open(p, nil)
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	a := st.Arrays()[0]
	shape := a.Shape()
	dst := s.scratch()
	read := func() error {
		return a.ReadRegion(asBytes(dst), []int64{0, 0}, shape, layout.RowMajor, binary.LittleEndian)
	}
	if procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	}
	if err := read(); err != nil {
		return 0, 0, err
	}
	if err := checkSum("zarr_read_zstd", sumF64(dst), len(dst)); err != nil {
		return 0, 0, err
	}
	d, err := s.best(func() (time.Duration, error) { return timed(read) })
	if err != nil {
		return 0, 0, err
	}
	n := int64(len(dst)) * 8
	return gbps(n, d), n, nil
}

// zarrPythonScript times zarr-python's z[:] of a store's array (opening
// included), best of reps, and prints its time and the sum of what it
// read.
var zarrPythonScript = pyBest + pyImport("import zarr", "zarr-python") + `
path, name, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
def read():
    z = zarr.open(path, mode="r")
    if name:
        z = z[name]
    return z[:]
t, a = best(read, reps)
print(json.dumps({"version": zarr.__version__, "t": t, "sum": float(a.sum()), "n": int(a.size)}))
`

// zarrPython times zarr-python reading the store of the given compression.
func (s *suite) zarrPython(compress string) (float64, int64, error) {
	p, err := s.zarrStore(compress)
	if err != nil {
		return 0, 0, err
	}
	name, err := zarrArrayName(p)
	if err != nil {
		return 0, 0, err
	}
	return s.pythonRate("zarr", zarrPythonScript, p, name)
}

// zarrArrayName is the store's array as zarr-python's group indexing
// names it ("" for a store whose root is the array).
func zarrArrayName(path string) (string, error) {
	st, err := zarr.Open(path, nil)
	if err != nil {
		return "", err
	}
	defer st.Close()
	return strings.TrimPrefix(st.Arrays()[0].Name(), "/"), nil
}

// zarrCreateFill creates a store of one empty array with zarr.Create and
// fills every chunk through its writable view; Close syncs.
func (s *suite) zarrCreateFill() (float64, int64, error) {
	shape := zarrShape(int64(s.elems()))
	o := zarrOptions(shape, "")
	spec := []zarr.ArraySpec{{Name: "x", Type: layout.F64, Shape: shape}}
	n := int64(len(s.src)) * 8
	return s.writeRate("write.zarr", n, func(p string) error {
		st, err := zarr.Create(p, spec, o)
		if err != nil {
			return err
		}
		if err := fillZarr(st.Arrays()[0], s.src); err != nil {
			st.Close()
			return err
		}
		return st.Close()
	})
}

// fillZarr copies src, the array's elements in row-major order, into the
// views of its chunks (chunks of whole rows).
func fillZarr(a *zarr.Array, src []float64) error {
	g := a.Grid()
	for i := range g[0] {
		start, count, err := a.ChunkBox(i, 0)
		if err != nil {
			return err
		}
		xs, err := zarr.ViewChunk[float64](a, i, 0)
		if err != nil {
			return err
		}
		first := start[0] * count[1]
		copy(xs, src[first:first+count[0]*count[1]])
	}
	return nil
}

// zarrEditSync changes one element of the uncompressed store with
// zarr.Set and makes it durable with Store.Sync, each repetition at
// another random element, beside pwrite + fdatasync.
func (s *suite) zarrEditSync() (float64, int64, error) {
	p, err := s.zarrStore("")
	if err != nil {
		return 0, 0, err
	}
	if err := warm(p); err != nil {
		return 0, 0, err
	}
	st, err := zarr.OpenFile(p, mmapfile.ReadWrite, nil)
	if err != nil {
		return 0, 0, err
	}
	defer st.Close()
	a := st.Arrays()[0]
	cols := a.Shape()[1]
	idx := randomIndexes(s.o.latReps, s.elems())
	set := func(k int, v float64) error {
		i := int64(idx[k])
		if err := zarr.Set(a, []int64{i / cols, i % cols}, v); err != nil {
			return err
		}
		return st.Sync()
	}
	us, err := s.editPaired(func(k int) error {
		return set(k, value(idx[k])+1)
	}, func(k int) error {
		return set(k, value(idx[k]))
	})
	return us, 8, err
}
