package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// formatExt is the extension convert infers each format from.
var formatExt = map[string]string{"abf": ".abf", "futhark": ".in", "daphne": ".dbdf", "scidb": ".scidb", "csv": ".csv", "npy": ".npy", "npz": ".npz", "zarr": ".zarr"}

// readFlagsFor are the flags needed to read a file of the format written
// from the base table: SciDB needs its format string and names, Futhark's
// values are unnamed, and a structured .npy converted to an .npz is one
// member, "0", whose fields are "0/id" and "0/x".
func readFlagsFor(format string) []string {
	switch format {
	case "scidb":
		return []string{"--scidb-format", "(int64, double)", "--scidb-names", "id,x"}
	case "futhark", "npz":
		return []string{"--names", "id,x"}
	}
	return nil
}

// A table of two columns goes through every ordered pair of formats and
// comes back as the same CSV.
func TestConvertTableEveryPair(t *testing.T) {
	dir := t.TempDir()
	const base = "id,x\n1,0.5\n-2,2\n3,-1e+300\n"
	csv := writeFile(t, filepath.Join(dir, "base.csv"), base)
	names := []string{"abf", "futhark", "daphne", "scidb", "csv", "npy", "npz", "zarr"}
	files := map[string]string{}
	for _, f := range names {
		p := filepath.Join(dir, "src-"+f+formatExt[f])
		args := []string{"convert"}
		if f == "scidb" {
			args = append(args, "--out-scidb-format", "(int64, double)")
		}
		mustMk(t, append(args, csv, p)...)
		files[f] = p
	}
	for _, from := range names {
		for _, to := range names {
			if from == to {
				continue
			}
			out := filepath.Join(dir, from+"-to-"+to+formatExt[to])
			args := append([]string{"convert"}, readFlagsFor(from)...)
			if from != "futhark" && to == "futhark" {
				args = append(args, "--text")
			}
			mustMk(t, append(args, files[from], out)...)
			back := filepath.Join(dir, from+"-to-"+to+"-back.csv")
			args = append([]string{"convert"}, readFlagsFor(to)...)
			if to == "futhark" || to == "npz" {
				args = []string{"convert", "--names", "id,x"}
			}
			mustMk(t, append(args, out, back)...)
			got, err := os.ReadFile(back)
			require.NoError(t, err)
			assert.Equal(t, base, string(got), "%s -> %s", from, to)
		}
	}
}

// A 2-D array goes through every ordered pair of the array formats, in
// logical order, and comes back as the same ABF bytes.
func TestConvertMatrixEveryPair(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "m.abf")
	writeABFFile(t, src, func(f *abf.File) error {
		return abf.Write(f, "m", []int64{2, 3}, []float64{1, 4, 2, 5, 3, 6.5}) // Julia [1 2 3; 4 5 6.5]
	})
	const text = "[[1.0f64, 2.0f64, 3.0f64],\n[4.0f64, 5.0f64, 6.5f64]]\n"
	require.Equal(t, text, mustMk(t, "cat", src))
	orig, err := os.ReadFile(src)
	require.NoError(t, err)
	files := map[string]string{"abf": src}
	for _, f := range []string{"futhark", "daphne", "npy", "npz", "zarr"} {
		files[f] = filepath.Join(dir, "m"+formatExt[f])
		mustMk(t, "convert", src, files[f])
	}
	for from, in := range files {
		for to := range files {
			if from == to {
				continue
			}
			out := filepath.Join(dir, from+"-"+to+formatExt[to])
			mustMk(t, "convert", "--names", "m", in, out)
			assert.Equal(t, text, mustMk(t, "cat", out), "%s -> %s", from, to)
			back := filepath.Join(dir, from+"-"+to+"-back.abf")
			mustMk(t, "convert", "--names", "m", out, back)
			got, err := os.ReadFile(back)
			require.NoError(t, err)
			assert.Equal(t, orig, got, "%s -> %s -> abf", from, to)
		}
	}
	// ABF Format A output.
	a := filepath.Join(dir, "m-a.abf")
	mustMk(t, "convert", "--abf-version", "A", files["daphne"], a)
	d := lsJSON(t, a)
	require.NotNil(t, d.Version)
	assert.Equal(t, "A", *d.Version)
	assert.Equal(t, text, mustMk(t, "cat", a))
}
