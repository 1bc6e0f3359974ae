package format_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy" // each import registers a format
	_ "github.com/mmapkit/mmapkit/zarr"
)

// A program that imports the format packages detects a file's format,
// lists its records, reads them in the order it wants and converts the
// file to any other registered format, without naming the format.
func Example() {
	dir, err := os.MkdirTemp("", "format-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "data.npy")
	writeSample(in) // a 2×3 float64 NumPy array, 0.5 … 5.5

	// Detect: from the name, else the first bytes.
	fm, err := format.Detect(in, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("format:", fm.Name)

	// List.
	f, err := format.Open(in, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range f.Records() {
		fmt.Println("record:", r.Name, r.TypeString(), r.Shape, r.Order)
	}

	// Read: a copy in logical row-major order, in the host's byte order,
	// aligned so that it can be used as the element type's Go slice.
	b, err := format.ReadAll(f, 0, layout.RowMajor, layout.HostOrder())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("values:", layout.SliceOf(layout.F64, b))

	// A record the file does not have: one sentinel for every format, and
	// an error that names the file.
	_, err = format.Find(f, "nope")
	fmt.Println("missing:", errors.Is(err, format.ErrNoRecord))
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	// Convert: to a Zarr v3 store, whose one chunk is mapped when read.
	out := filepath.Join(dir, "data.zarr")
	if err := format.Convert(in, out, nil, nil); err != nil {
		log.Fatal(err)
	}
	g, err := format.Open(out, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	r := g.Records()[0]
	b, err = format.ReadAll(g, 0, layout.RowMajor, layout.HostOrder())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("converted:", g.Format(), g.Version(), r.Name, r.TypeString(), r.Shape, layout.SliceOf(r.Type, b))
	// Output:
	// format: npy
	// record: 0 f64 [2 3] row
	// values: [0.5 1.5 2.5 3.5 4.5 5.5]
	// missing: true
	// converted: zarr 3 /0 f64 [2 3] [0.5 1.5 2.5 3.5 4.5 5.5]
}

// writeSample creates path, a .npy file of a 2×3 float64 array, filling
// it through a writable view.
func writeSample(path string) {
	dt, err := npy.DTypeOf(layout.F64)
	if err != nil {
		log.Fatal(err)
	}
	f, err := npy.Create(path, npy.Header{DType: dt, Shape: []int64{2, 3}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	x, err := npy.View[float64](f, "0")
	if err != nil {
		log.Fatal(err)
	}
	for i := range x {
		x[i] = float64(i) + 0.5
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
