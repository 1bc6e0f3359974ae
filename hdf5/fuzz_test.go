package hdf5

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen opens arbitrary bytes as an HDF5 file (superblock, object
// headers, the group walk, attributes) and reads every small record: it
// must fail with an error, never panic, hang or allocate beyond what the
// bytes can describe. Seeded from the reference files of up to 64 KiB.
func FuzzOpen(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join(testdata, "*"))
	for _, p := range names {
		if fi, err := os.Stat(p); err == nil && fi.Size() <= 64<<10 && filepath.Ext(p) != ".json" && filepath.Ext(p) != ".md" && filepath.Ext(p) != ".py" {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(signature))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = openAll(b, "/x")
	})
}
