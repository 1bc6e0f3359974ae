package conformance

import (
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/hdf5"
	"github.com/mmapkit/mmapkit/npy"
	"github.com/mmapkit/mmapkit/scidb"
	"github.com/mmapkit/mmapkit/zarr"
)

// BenchmarkTypedRead is each package's typed Read of a small array (the
// files of TestFormatViewIsTheTypedView): the cost of a call, not of
// moving bytes.
func BenchmarkTypedRead(b *testing.B) {
	reads := map[string]func(f format.File) (int, error){
		"npy": func(f format.File) (int, error) { v, err := npy.Read[float64](f.(*npy.File), "0"); return len(v), err },
		"npz stored member": func(f format.File) (int, error) {
			v, err := npy.Read[float64](f.(*npy.File), "a")
			return len(v), err
		},
		"abf": func(f format.File) (int, error) { v, err := abf.Read[float64](f.(*abf.File), "a"); return len(v), err },
		"futhark": func(f format.File) (int, error) {
			v, err := futhark.Read[float64](f.(*futhark.File), 0)
			return len(v), err
		},
		"daphne dense": func(f format.File) (int, error) {
			v, err := daphne.Read[uint8](f.(*daphne.File), "matrix")
			return len(v), err
		},
		"scidb single fixed attribute": func(f format.File) (int, error) {
			v, err := scidb.Read[float64](f.(*scidb.File), 0)
			return len(v), err
		},
		"hdf5 contiguous": func(f format.File) (int, error) {
			v, err := hdf5.Read[float64](f.(*hdf5.File), "/a")
			return len(v), err
		},
		"zarr single chunk": func(f format.File) (int, error) {
			a, err := f.(*zarr.Store).Array("a")
			if err != nil {
				return 0, err
			}
			v, err := zarr.Read[float64](a)
			return len(v), err
		},
	}
	for _, c := range viewCases() {
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), c.file)
			if err := format.Write(path, c.src, &format.Options{Params: c.write}); err != nil {
				b.Fatal(err)
			}
			f, err := format.Open(path, &format.Options{Params: c.params})
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			read := reads[c.name]
			b.ReportAllocs()
			for b.Loop() {
				if n, err := read(f); err != nil || n == 0 {
					b.Fatal(n, err)
				}
			}
		})
	}
}
