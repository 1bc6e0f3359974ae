package npy_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/npy"
)

func tempDir() string {
	d, err := os.MkdirTemp("", "npy-example")
	if err != nil {
		log.Fatal(err)
	}
	return d
}

// Open a .npy file and use its array in place.
func Example() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "x.npy")
	if err := npy.Save(path, []int64{2, 3}, layout.RowMajor, []float64{1, 2, 3, 4, 5, 6}); err != nil {
		log.Fatal(err)
	}
	f, err := npy.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	x, err := npy.View[float64](f, "0") // no copy: the file's pages
	if err != nil {
		log.Fatal(err)
	}
	a, _ := f.Lookup("0")
	fmt.Println(a.DType, a.Shape, a.Version, a.Offset, x)
	// Output: <f8 [2 3] 1.0 128 [1 2 3 4 5 6]
}

// Create a file and fill it through a writable view, as NumPy's
// open_memmap(mode="w+") does; it appears at its path on Close.
func ExampleCreate() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "made.npy")
	f, err := npy.Create(path, npy.Header{DType: npy.DType{Kind: 'i', ItemSize: 4}, Shape: []int64{4}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	v, err := npy.View[int32](f, "0")
	if err != nil {
		log.Fatal(err)
	}
	for i := range v {
		v[i] = int32(i * i)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	g, _ := npy.Open(path, nil)
	defer g.Close()
	got, _ := npy.Read[int32](g, "0")
	fmt.Println(got)
	// Output: [0 1 4 9]
}

// Grow a file along its first axis in place.
func ExampleAppend() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "log.npy")
	if err := npy.Save(path, []int64{1, 2}, layout.RowMajor, []int64{1, 2}); err != nil {
		log.Fatal(err)
	}
	f, err := npy.OpenFile(path, mmapfile.ReadWrite, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := npy.Append(f, []int64{3, 4, 5, 6}); err != nil { // two rows
		log.Fatal(err)
	}
	a, _ := f.Lookup("0")
	v, _ := npy.Read[int64](f, "0")
	fmt.Println(a.Shape, v)
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	// Output: [3 2] [1 2 3 4 5 6]
}

// Write an archive whose members can all be viewed in place, and edit
// one: its CRC-32 is rewritten at Close.
func ExampleZipWriter() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "data.npz")
	z, err := npy.CreateZip(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	npy.AddArray(z, "x", []int64{3}, layout.RowMajor, []float32{1, 2, 3})
	npy.AddArray(z, "n", []int64{}, layout.RowMajor, []uint16{7})
	if err := z.Close(); err != nil {
		log.Fatal(err)
	}
	f, err := npy.OpenFile(path, mmapfile.ReadWrite, nil)
	if err != nil {
		log.Fatal(err)
	}
	x, err := npy.View[float32](f, "x")
	if err != nil {
		log.Fatal(err)
	}
	x[0] = 10
	for _, a := range f.Arrays() {
		fmt.Println(a.Name, a.DType, a.Shape, a.Offset%64 == 0)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// x <f4 [3] true
	// n <u2 [] true
}

// Read any NumPy file through the format-neutral interface: here a
// Fortran-order array, read in C (row-major) order.
func Example_format() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "f.npy")
	// Stored column by column: x[0,0], x[1,0], x[0,1], …
	if err := npy.Save(path, []int64{2, 3}, layout.ColMajor, []int16{1, 4, 2, 5, 3, 6}); err != nil {
		log.Fatal(err)
	}
	f, err := format.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r := f.Records()[0]
	b, err := format.ReadAll(f, 0, layout.RowMajor, layout.HostOrder())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Format(), f.Version(), r.Name, r.Type, r.Shape, r.Order, layout.SliceOf(r.Type, b))
	// Output: npy 1.0 0 i16 [2 3] col [1 2 3 4 5 6]
}
