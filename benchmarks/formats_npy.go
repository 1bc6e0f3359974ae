package benchmarks

import (
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/npy"
	"time"
)

func init() {
	figureReps["npy_view_scan"] = func(s *suite) ceilingRep { return s.npyRep(false) }
	figureReps["npz_view_scan"] = func(s *suite) ceilingRep { return s.npyRep(true) }
	formatMeasures["npy_view_scan"] = func(s *suite) (float64, int64, error) { return s.npyViewScan(false) }
	formatMeasures["npz_view_scan"] = func(s *suite) (float64, int64, error) { return s.npyViewScan(true) }
	formatMeasures["numpy_npy_load_sum"] = func(s *suite) (float64, int64, error) { return s.numpyLoadSum(false) }
	formatMeasures["numpy_npz_load_sum"] = func(s *suite) (float64, int64, error) { return s.numpyLoadSum(true) }
	formatMeasures["npy_create_fill_view"] = (*suite).npyCreateFill
	formatMeasures["npy_edit_sync"] = (*suite).npyEditSync
}

// The npy figures use the suite's data as the array the Zarr figures use
// (zarrShape, C order), in a .npy file and as the stored member "x" of an
// .npz archive written by this package (whose members are aligned, so
// that they can be viewed).

// npyFile writes, once, the .npy file (npz false) or the .npz archive of
// the suite's data and returns its path and the array's name in it.
func (s *suite) npyFile(npz bool) (path, name string, err error) {
	path, name = s.path("data.npy"), "0"
	if npz {
		path, name = s.path("data.npz"), "x"
	}
	if s.npyDone[npz] {
		return path, name, nil
	}
	shape := zarrShape(int64(s.elems()))
	if npz {
		err = writeNPZ(path, name, shape, s.src)
	} else {
		err = npy.Save(path, shape, layout.RowMajor, s.src)
	}
	if err == nil {
		err = settle(path)
	}
	if err != nil {
		return "", "", err
	}
	if s.npyDone == nil {
		s.npyDone = map[bool]bool{}
	}
	s.npyDone[npz] = true
	return path, name, nil
}

func writeNPZ(path, key string, shape []int64, xs []float64) error {
	z, err := npy.CreateZip(path, nil)
	if err != nil {
		return err
	}
	if err := npy.AddArray(z, key, shape, layout.RowMajor, xs); err != nil {
		z.Abort()
		return err
	}
	return z.Close()
}

// scanNPY opens a .npy or .npz, views the array name and sums it.
func scanNPY(path, name string) (float64, int, error) {
	f, err := npy.Open(path, nil)
	if err != nil {
		return 0, 0, err
	}
	xs, err := npy.View[float64](f, name)
	if err != nil {
		f.Close()
		return 0, 0, err
	}
	s := sumF64(xs)
	return s, len(xs), f.Close()
}

// npyRep is one scan of the .npy (.npz) file, as a reference.
func (s *suite) npyRep(npz bool) ceilingRep {
	p, name, err := s.npyFile(npz)
	if err != nil {
		return nil
	}
	return func() (time.Duration, int64, error) {
		return scanOnce("npy", func(p string) (float64, int, error) { return scanNPY(p, name) }, p, 8)
	}
}

func (s *suite) npyViewScan(npz bool) (float64, int64, error) {
	p, name, err := s.npyFile(npz)
	if err != nil {
		return 0, 0, err
	}
	what := "npy_view_scan"
	if npz {
		what = "npz_view_scan"
	}
	return s.scanGBps(what, func(p string) (float64, int, error) { return scanNPY(p, name) }, p, 8, nil)
}

// numpyLoadScript times np.load(path, mmap_mode="r").sum() of a .npy, or
// np.load(path)[key].sum() of an .npz (NumPy reads npz members into
// memory), opening included, best of reps.
var numpyLoadScript = pyBest + pyImport("import numpy as np", "numpy") + `
path, key, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
def load_sum():
    if key:
        with np.load(path) as z:
            a = z[key]
    else:
        a = np.load(path, mmap_mode="r")
    n = a.size
    return float(a.sum()), n
t, (s, n) = best(load_sum, reps)
print(json.dumps({"version": np.__version__, "t": t, "sum": s, "n": n}))
`

func (s *suite) numpyLoadSum(npz bool) (float64, int64, error) {
	p, name, err := s.npyFile(npz)
	if err != nil {
		return 0, 0, err
	}
	key := ""
	if npz {
		key = name
	}
	return s.pythonRate("numpy", numpyLoadScript, p, key)
}

// npyCreateFill creates a .npy with npy.Create (NumPy's
// open_memmap(mode="w+")), fills its view and closes it, which syncs and
// puts the file in place.
func (s *suite) npyCreateFill() (float64, int64, error) {
	dt, err := npy.DTypeOf(layout.F64)
	if err != nil {
		return 0, 0, err
	}
	h := npy.Header{DType: dt, Shape: zarrShape(int64(s.elems()))}
	return s.writeRate("write.npy", int64(len(s.src))*8, func(p string) error {
		f, err := npy.Create(p, h, nil)
		if err != nil {
			return err
		}
		xs, err := npy.View[float64](f, "0")
		if err != nil {
			f.Close()
			return err
		}
		copy(xs, s.src)
		return f.Close()
	})
}

// npyEditSync changes one element of the .npy with npy.Set and makes it
// durable with File.Sync, each repetition at another random element,
// beside pwrite + fdatasync.
func (s *suite) npyEditSync() (float64, int64, error) {
	p, name, err := s.npyFile(false)
	if err != nil {
		return 0, 0, err
	}
	if err := warm(p); err != nil {
		return 0, 0, err
	}
	f, err := npy.OpenFile(p, mmapfile.ReadWrite, nil)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	cols := zarrShape(int64(s.elems()))[1]
	idx := randomIndexes(s.o.latReps, s.elems())
	set := func(k int, v float64) error {
		i := int64(idx[k])
		if err := npy.Set(f, name, []int64{i / cols, i % cols}, v); err != nil {
			return err
		}
		return f.Sync()
	}
	us, err := s.editPaired(func(k int) error { return set(k, value(idx[k])+1) }, func(k int) error { return set(k, value(idx[k])) })
	return us, 8, err
}
