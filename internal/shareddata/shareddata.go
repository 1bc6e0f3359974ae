// Package shareddata finds the files that tests read from ../shared/testdata
// (beside the repository's root): real files written by the upstream
// systems — Futhark, DAPHNE, SciDB, h5py, netCDF — that this repository
// does not copy. Outside CI a checkout without them still tests: the tests
// that need them skip, and the first one to skip says so on standard error
// in a banner that a scrolling `go test ./...` does not hide. In CI
// (CI=true, as .ci/run runs) or with MMAPKIT_REQUIRE_SHARED=1, their
// absence fails the test instead, so that it cannot pass by skipping.
package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	rootOnce sync.Once
	root     string // ../shared/testdata, absolute; "" when absent
	warnOnce sync.Once
)

// testdata finds ../shared/testdata beside the module root, which is the
// first directory from the working directory (a test's package) up that
// holds go.mod.
func testdata() string {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				break
			}
			up := filepath.Dir(dir)
			if up == dir {
				return
			}
			dir = up
		}
		td := filepath.Join(filepath.Dir(dir), "shared", "testdata")
		if fi, err := os.Stat(td); err == nil && fi.IsDir() {
			root = td
		}
	})
	return root
}

// Required reports whether the shared files must be there: in CI, or when
// asked with MMAPKIT_REQUIRE_SHARED.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("MMAPKIT_REQUIRE_SHARED") == "1"
}

// Available reports whether ../shared/testdata is there.
func Available() bool { return testdata() != "" }

// Path returns the path of ../shared/testdata/elem..., skipping the test
// (failing it where Required) when that does not exist.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{testdata()}, elem...)...)
	if testdata() != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	where := filepath.Join(append([]string{"../shared/testdata"}, elem...)...)
	if Required() {
		t.Fatalf("%s is absent, and CI needs it (the upstream systems' files: see ../shared/testdata/*/README.md)", where)
	}
	warnOnce.Do(func() {
		fmt.Fprintf(os.Stderr, "\n"+
			"################################################################\n"+
			"# %s is absent: the tests that read the upstream\n"+
			"# systems' own files skip. Put ../shared beside the repository to\n"+
			"# run them; CI fails without it.\n"+
			"################################################################\n\n", where)
	})
	t.Skipf("%s is absent (see ../shared/testdata/*/README.md)", where)
	return ""
}
