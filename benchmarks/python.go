package benchmarks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
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
func (s *suite) runPython(py, script string, v any, args ...string) error {
	cmd := exec.CommandContext(s.ctx, py, append([]string{"-c", script}, args...)...)
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
