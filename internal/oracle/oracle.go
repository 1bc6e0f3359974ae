// Package oracle finds the upstream tools that tests use as oracles —
// a Python 3 with NumPy, zarr-python, dask and xarray — and runs scripts
// in it. Tests call Python and skip with a message naming what is missing
// when it cannot be had; CI installs Debian's python3-numpy, python3-zarr,
// python3-dask, python3-distributed and python3-xarray, so there the tests
// run.
package oracle

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	found = map[string]string{} // module list → interpreter ("" = none)
)

// candidates are the interpreters tried, in order: $MMAPKIT_PYTHON, then
// the one on PATH, then Debian's (which is where apt installs the modules
// when PATH leads to another, such as pyenv's).
func candidates() []string {
	var c []string
	if p := os.Getenv("MMAPKIT_PYTHON"); p != "" {
		c = append(c, p)
	}
	return append(c, "python3", "/usr/bin/python3")
}

// Find returns a Python interpreter that imports every module, or "".
func Find(modules ...string) string {
	key := strings.Join(modules, ",")
	mu.Lock()
	defer mu.Unlock()
	if p, ok := found[key]; ok {
		return p
	}
	script := "import " + strings.Join(append([]string{"sys"}, modules...), ", ")
	for _, py := range candidates() {
		if command(py, script).Run() == nil {
			found[key] = py
			return py
		}
	}
	found[key] = ""
	return ""
}

// Python returns an interpreter that imports every module, or skips the
// test with a message that says which modules are missing and how CI gets
// them.
func Python(t testing.TB, modules ...string) string {
	t.Helper()
	py := Find(modules...)
	if py == "" {
		t.Skipf("no python3 here imports %s (CI installs Debian's python3-numpy python3-zarr python3-dask python3-distributed python3-xarray; set MMAPKIT_PYTHON to use another interpreter)", strings.Join(modules, ", "))
	}
	return py
}

// Run runs a Python script with args in the interpreter Python finds and
// returns its standard output; a failure fails the test with the script's
// standard error.
func Run(t testing.TB, modules []string, script string, args ...string) string {
	t.Helper()
	py := Python(t, modules...)
	cmd := command(py, script, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("python: %v\n%s", err, errb.String())
	}
	return out.String()
}

// Output runs a script like Run but returns its error instead of failing
// the test, for tests that expect Python to refuse something.
func Output(py, script string, args ...string) (string, error) {
	cmd := command(py, script, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// command runs script in py from the system's temporary directory: Python
// puts the working directory first on its module path, and a checkout's
// zarr/ or npy/ there would be imported in place of the real modules.
// Paths given as args must therefore be absolute.
func command(py, script string, args ...string) *exec.Cmd {
	cmd := exec.Command(py, append([]string{"-c", script}, args...)...)
	cmd.Dir = os.TempDir()
	return cmd
}
