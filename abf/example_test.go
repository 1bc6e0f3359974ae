package abf_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mmapkit/mmapkit/abf"
)

// tempPath returns a path in a fresh temporary directory.
func tempPath(name string) (string, func()) {
	dir, err := os.MkdirTemp("", "abf-example")
	if err != nil {
		log.Fatal(err)
	}
	return filepath.Join(dir, name), func() { os.RemoveAll(dir) }
}

func ExampleOpen() {
	path, cleanup := tempPath("x.abf")
	defer cleanup()
	w, err := abf.OpenFile(path, "w", nil) // Format C, what Julia reads today
	if err != nil {
		log.Fatal(err)
	}
	if err := abf.Write(w, "x", []int64{2, 3}, []float64{1, 2, 3, 4, 5, 6}); err != nil {
		log.Fatal(err)
	}
	if err := w.WriteString("log", "a∘α"); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	f, err := abf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println("format", f.Format())
	for _, r := range f.Records() {
		fmt.Printf("%s %s %v offset %d, %d bytes\n", r.Key, r.TypeName(), r.Dims, r.DataOffset, r.DataLen)
	}
	// Output:
	// format C
	// x f64 [2 3] offset 56, 48 bytes
	// log string [3] offset 138, 6 bytes
}

func ExampleView() {
	path, cleanup := tempPath("x.abf")
	defer cleanup()
	w, _ := abf.OpenFile(path, "w", nil)
	_ = abf.Write(w, "z", []int64{3, 5}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	_ = w.Close()

	f, err := abf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()                     // z must not be used after Close
	z, err := abf.View[float64](f, "z") // aliases the mapping: no copy
	if err != nil {
		log.Fatal(err)
	}
	rec, _ := f.Lookup("z")
	i, _ := rec.Index(1, 2) // Julia's z[2,3]
	sum := 0.0
	for _, v := range z {
		sum += v
	}
	fmt.Println(z[i], sum)
	// Output: 8 120
}

func Example_inPlaceEdit() {
	path, cleanup := tempPath("x.abf")
	defer cleanup()
	w, _ := abf.OpenFile(path, "w", nil)
	_ = abf.Write(w, "x", []int64{3}, []int32{1, 2, 3})
	_ = w.Close()

	f, err := abf.OpenFile(path, "r+", nil)
	if err != nil {
		log.Fatal(err)
	}
	x, err := abf.View[int32](f, "x")
	if err != nil {
		log.Fatal(err)
	}
	x[1] = -20                        // writes the file's page
	if err := f.Close(); err != nil { // flushes to disk
		log.Fatal(err)
	}

	g, _ := abf.Open(path)
	defer g.Close()
	y, _ := abf.Read[int32](g, "x")
	fmt.Println(y)
	// Output: [1 -20 3]
}

func Example_append() {
	path, cleanup := tempPath("x.abf")
	defer cleanup()
	w, _ := abf.OpenFile(path, "w", &abf.Options{Format: abf.FormatA})
	_ = abf.Write(w, "x", []int64{2}, []float64{1, 2})
	_ = w.Close()

	a, err := abf.OpenFile(path, "a", nil) // scans the file, keeps its format
	if err != nil {
		log.Fatal(err)
	}
	bits, _ := abf.PackBits([]int64{3}, []bool{true, false, true})
	if err := a.WriteBits("b", bits); err != nil {
		log.Fatal(err)
	}
	err = abf.Write(a, "x", []int64{1}, []float64{3})
	fmt.Println(errors.Is(err, abf.ErrKeyExists))
	_ = a.Close()

	f, _ := abf.Open(path)
	defer f.Close()
	for _, r := range f.Records() {
		fmt.Println(f.Format(), r.Key, r.TypeString, r.DataOffset)
	}
	// Output:
	// true
	// A x Array{Float64,1} 80
	// A b BitArray{1} 144
}
