package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPath(t *testing.T) {
	if !Available() {
		t.Skip("../shared/testdata is absent")
	}
	p := Path(t, "futhark")
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Fatalf("Path gave %s: %v", p, err)
	}
	if filepath.Base(filepath.Dir(p)) != "testdata" || !filepath.IsAbs(p) {
		t.Errorf("Path gave %s", p)
	}
}
