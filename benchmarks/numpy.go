package benchmarks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// numpyScript times numpy.memmap(...).sum() and numpy.fromfile(...).sum()
// on a little-endian float64 file, best of reps, and prints one JSON
// object; without numpy it prints {"error": ...}.
const numpyScript = `
import sys, time, json
try:
    import numpy as np
except Exception as e:
    print(json.dumps({"error": "numpy does not import: %s" % e}))
    sys.exit(0)
path, reps = sys.argv[1], int(sys.argv[2])
def best(fn):
    b, s = None, None
    for _ in range(reps):
        t = time.perf_counter(); s = fn(); t = time.perf_counter() - t
        b = t if b is None or t < b else b
    return b, float(s)
def memmap():
    a = np.memmap(path, dtype="<f8", mode="r")
    s = a.sum()
    del a
    return s
def fromfile():
    return np.fromfile(path, dtype="<f8").sum()
t1, s1 = best(memmap)
t2, s2 = best(fromfile)
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
}

// pythonCandidates are the interpreters tried, in order, until one
// imports numpy: $MMAPKIT_PYTHON alone if set, else python3 on PATH and
// the system's /usr/bin/python3 (which differ when a version manager
// such as pyenv shadows the system's).
func (s *suite) pythonCandidates() []string {
	if s.o.pythonPath != "" {
		return []string{s.o.pythonPath}
	}
	if p := os.Getenv("MMAPKIT_PYTHON"); p != "" {
		return []string{p}
	}
	return []string{"python3", "/usr/bin/python3"}
}

// runNumpy runs numpyScript once for both numpy figures, with the first
// interpreter that imports numpy.
func (s *suite) runNumpy() *numpyResult {
	if s.numpy != nil {
		return s.numpy
	}
	var why []string
	seen := map[string]bool{}
	for _, name := range s.pythonCandidates() {
		py, err := exec.LookPath(name)
		if err != nil {
			why = append(why, name+" not found")
			continue
		}
		if real, err := filepath.EvalSymlinks(py); err == nil {
			if seen[real] {
				continue
			}
			seen[real] = true
		}
		r := s.runNumpyWith(py)
		var nm *notMeasured
		if errors.As(r.err, &nm) {
			why = append(why, py+": "+nm.why)
			continue
		}
		s.numpy = r
		return r
	}
	s.numpy = &numpyResult{err: &notMeasured{strings.Join(why, "; ")}}
	return s.numpy
}

func (s *suite) runNumpyWith(py string) *numpyResult {
	r := &numpyResult{}
	cmd := exec.CommandContext(s.ctx, py, "-c", numpyScript, s.f64, strconv.Itoa(s.o.repeat))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.err = fmt.Errorf("%s: %v: %s", py, err, strings.TrimSpace(stderr.String()))
		return r
	}
	if err := json.Unmarshal(out, r); err != nil {
		r.err = fmt.Errorf("%s printed %q: %v", py, out, err)
		return r
	}
	if r.Error != "" {
		r.err = &notMeasured{r.Error}
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
