package benchmarks

import (
	"errors"
	"fmt"
	"strconv"
)

// numpyScript times numpy.memmap(...).sum() and numpy.fromfile(...).sum()
// on a little-endian float64 file, best of reps, and prints one JSON
// object; without numpy it prints {"error": ...}.
var numpyScript = pyBest + pyImport("import numpy as np", "numpy") + `
path, reps = sys.argv[1], int(sys.argv[2])
def memmap():
    a = np.memmap(path, dtype="<f8", mode="r")
    s = a.sum()
    del a
    return float(s)
def fromfile():
    return float(np.fromfile(path, dtype="<f8").sum())
t1, s1 = best(memmap, reps)
t2, s2 = best(fromfile, reps)
print(json.dumps({"version": np.__version__, "memmap": t1, "memmap_sum": s1, "fromfile": t2, "fromfile_sum": s2}))
`

type numpyResult struct {
	Error       string  `json:"error"`
	Version     string  `json:"version"`
	Memmap      float64 `json:"memmap"`
	MemmapSum   float64 `json:"memmap_sum"`
	Fromfile    float64 `json:"fromfile"`
	FromfileSum float64 `json:"fromfile_sum"`
	err         error
	ref         float64 // the reference's best rate beside the script
}

// runNumpy runs numpyScript once for both numpy figures.
// Both figures come from one run of the script, so both take their
// ratio against the reference scans run beside it.
func (s *suite) runNumpy() *numpyResult {
	if s.numpy == nil {
		py, err := s.pythonWith("numpy")
		if err != nil {
			s.numpy = &numpyResult{err: err}
			return s.numpy
		}
		s.numpy = s.runNumpyWith(py)
		if s.pair != nil {
			s.numpy.ref = s.pair.best
		}
	}
	if s.pair != nil {
		s.pair.best = max(s.pair.best, s.numpy.ref)
	}
	return s.numpy
}

func (s *suite) runNumpyWith(py string) *numpyResult {
	r := &numpyResult{}
	if r.err = s.runPython(py, numpyScript, r, s.f64, strconv.Itoa(s.o.repeat)); r.err != nil {
		return r
	}
	want := expectedSum(s.elems())
	if r.MemmapSum != want || r.FromfileSum != want {
		r.err = fmt.Errorf("numpy sums %v and %v, want %v", r.MemmapSum, r.FromfileSum, want)
	}
	if r.Memmap <= 0 || r.Fromfile <= 0 {
		r.err = errors.New("numpy reported no time")
	}
	return r
}

func (s *suite) numpyMemmap() (float64, int64, error) {
	r := s.runNumpy()
	if r.err != nil {
		return 0, 0, r.err
	}
	return float64(s.o.Size) / r.Memmap / 1e9, s.o.Size, nil
}

func (s *suite) numpyFromfile() (float64, int64, error) {
	r := s.runNumpy()
	if r.err != nil {
		return 0, 0, r.err
	}
	return float64(s.o.Size) / r.Fromfile / 1e9, s.o.Size, nil
}
