package benchmarks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// The Python figures (numpy, zarr-python) run a script in the first
// interpreter that imports what they need ($MMAPKIT_PYTHON, python3 on
// PATH, /usr/bin/python3: package internal/oracle decides), which times
// its work itself (best of the suite's repetitions) and prints one JSON
// object; a script that cannot import what it needs prints
// {"error": ...}, and the figure is not measured.

// pyBest is the timing helper every script starts with: best(fn) runs fn
// reps times and returns the shortest time and fn's last result.
const pyBest = `
import sys, time, json
def best(fn, reps):
    b, r = None, None
    for _ in range(reps):
        t = time.perf_counter(); r = fn(); t = time.perf_counter() - t
        b = t if b is None or t < b else b
    return b, r
`

// pyImport is a script's import of what it needs: a failure prints
// {"error": ...} and ends the script.
func pyImport(stmt, module string) string {
	return "try:\n    " + stmt + "\nexcept Exception as e:\n" +
		"    print(json.dumps({\"error\": \"" + module + " does not import: %s\" % e}))\n    sys.exit(0)\n"
}

// pythonWith returns an interpreter that imports every module.
func (s *suite) pythonWith(modules ...string) (string, error) {
	if s.o.pythonPath != "" {
		py, err := exec.LookPath(s.o.pythonPath)
		if err != nil {
			return "", &notMeasured{s.o.pythonPath + " not found"}
		}
		return py, nil
	}
	py := oracle.Find(modules...)
	if py == "" {
		return "", &notMeasured{"no python3 here imports " + strings.Join(modules, " and ") + " (set MMAPKIT_PYTHON to an interpreter that does)"}
	}
	return py, nil
}

// runPython runs script with args in py and decodes the JSON object it
// prints into v. An object with an "error" member is a figure that cannot
// be measured here.
//
// While a figure is measured, its reference runs once before the script
// and once after (pairWith): Python times its own repetitions, so this is
// as close as the two can be measured together.
func (s *suite) runPython(py, script string, v any, args ...string) error {
	if s.pair != nil {
		if err := s.pair.run(); err != nil {
			return err
		}
		defer func() {
			if s.pair != nil {
				s.pair.run()
			}
		}()
	}
	cmd := exec.CommandContext(s.ctx, py, append([]string{"-c", script}, args...)...)
	cmd.Dir = s.dir // not the working directory, whose zarr/ would be imported as zarr
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", py, err, strings.TrimSpace(stderr.String()))
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &e); err != nil {
		return fmt.Errorf("%s printed %q: %v", py, out, err)
	}
	if e.Error != "" {
		return &notMeasured{e.Error}
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("%s printed %q: %v", py, out, err)
	}
	return nil
}

// pythonRate runs a script that times reading the suite's data (args, then
// the repetitions, are its arguments) with a Python module and prints
// {"t": seconds, "sum": ..., "n": elements}, checks what it read and
// returns its GB/s.
func (s *suite) pythonRate(module, script string, args ...string) (float64, int64, error) {
	py, err := s.pythonWith(module)
	if err != nil {
		return 0, 0, err
	}
	var r struct {
		T   float64 `json:"t"`
		Sum float64 `json:"sum"`
		N   int     `json:"n"`
	}
	if err := s.runPython(py, script, &r, append(args, strconv.Itoa(s.o.repeat))...); err != nil {
		return 0, 0, err
	}
	if want := s.elems(); r.N != want || r.Sum != expectedSum(r.N) || r.T <= 0 {
		return 0, 0, fmt.Errorf("%s read %d elements summing to %v in %vs, want %d summing to %v", module, r.N, r.Sum, r.T, want, expectedSum(want))
	}
	n := int64(r.N) * 8
	return float64(n) / r.T / 1e9, n, nil
}
