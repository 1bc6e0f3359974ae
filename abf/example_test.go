package abf_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
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
	w, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w"}) // Format C, what Julia reads today
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

	f, err := abf.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println("format", f.Version())
	for _, r := range f.Entries() {
		fmt.Printf("%s %s %v offset %d, %d bytes\n", r.Name, r.TypeName(), r.Shape, r.Offset, r.Size)
	}
	// Output:
	// format C
	// x f64 [2 3] offset 56, 48 bytes
	// log string [3] offset 138, 6 bytes
}

func ExampleView() {
	path, cleanup := tempPath("x.abf")
	defer cleanup()
	w, _ := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	_ = abf.Write(w, "z", []int64{3, 5}, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	_ = w.Close()

	f, err := abf.Open(path, nil)
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
	w, _ := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	_ = abf.Write(w, "x", []int64{3}, []int32{1, 2, 3})
	_ = w.Close()

	f, err := abf.OpenFile(path, mmapfile.ReadWrite, nil) // Julia's "r+"
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

	g, _ := abf.Open(path, nil)
	defer g.Close()
	y, _ := abf.Read[int32](g, "x")
	fmt.Println(y)
	// Output: [1 -20 3]
}

func Example_append() {
	path, cleanup := tempPath("x.abf")
	defer cleanup()
	w, _ := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w", Format: abf.FormatA})
	_ = abf.Write(w, "x", []int64{2}, []float64{1, 2})
	_ = w.Close()

	a, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "a"}) // scans the file, keeps its format
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

	f, _ := abf.Open(path, nil)
	defer f.Close()
	for _, r := range f.Entries() {
		fmt.Println(f.Version(), r.Name, r.TypeString, r.Offset)
	}
	// Output:
	// true
	// A x Array{Float64,1} 80
	// A b BitArray{1} 144
}

// Create makes an array on disk and hands it out as a writable view, to be
// filled in place: NumPy's open_memmap(mode="w+").
func ExampleCreate() {
	path, cleanup := tempPath("x.abf")
	defer cleanup()
	f, err := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w+"})
	if err != nil {
		log.Fatal(err)
	}
	m, err := abf.Create[float64](f, "m", []int64{2, 3}) // Julia's zeros(2, 3), on disk
	if err != nil {
		log.Fatal(err)
	}
	for i := range m {
		m[i] = float64(i + 1) // column-major: m[1,2] is m[2]
	}
	if err := f.Close(); err != nil { // flushes; m is dead from here on
		log.Fatal(err)
	}

	g, _ := abf.Open(path, nil)
	defer g.Close()
	row, _ := abf.ReadRowMajor[float64](g, "m")
	fmt.Println(row)
	// Output: [1 3 5 2 4 6]
}

// Set changes one element in place by its Julia index, less one.
func ExampleSet() {
	path, cleanup := tempPath("x.abf")
	defer cleanup()
	w, _ := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	_ = abf.Write(w, "z", []int64{2, 2}, []int16{1, 2, 3, 4})
	_ = w.Close()

	f, err := abf.OpenFile(path, mmapfile.ReadWrite, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := abf.Set[int16](f, "z", []int64{0, 1}, -3); err != nil { // Julia's z[1,2] = -3
		log.Fatal(err)
	}
	err = abf.Set(f, "z", []int64{0, 1}, 1.5)
	fmt.Println(errors.Is(err, mmapfile.ErrTypeMismatch))
	z, _ := abf.Read[int16](f, "z")
	fmt.Println(z)
	_ = f.Close()
	// Output:
	// true
	// [1 2 -3 4]
}

// WriteStream writes an array from a producer, a chunk at a time, without
// holding it in memory.
func ExampleFile_WriteStream() {
	path, cleanup := tempPath("x.abf")
	defer cleanup()
	w, _ := abf.OpenFile(path, mmapfile.ReadWrite, &abf.Options{Mode: "w"})
	err := w.WriteStream("ramp", layout.U8, []int64{4, 2}, func(out io.Writer) error {
		for c := 0; c < 2; c++ { // one column at a time
			if _, err := out.Write([]byte{byte(10 * c), byte(10*c + 1), byte(10*c + 2), byte(10*c + 3)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = w.Close()

	f, _ := abf.Open(path, nil)
	defer f.Close()
	x, _ := abf.Read[uint8](f, "ramp")
	fmt.Println(x)
	// Output: [0 1 2 3 10 11 12 13]
}

// Through package format, ABF converts to and from every registered format;
// between ABF versions, BitArrays stay BitArrays.
func Example_convert() {
	a, cleanup := tempPath("a.abf")
	defer cleanup()
	w, _ := abf.OpenFile(a, mmapfile.ReadWrite, &abf.Options{Mode: "w", Format: abf.FormatA})
	_ = abf.Write(w, "x", []int64{2}, []float64{1, 2})
	bits, _ := abf.PackBits([]int64{3}, []bool{true, false, true})
	_ = w.WriteBits("b", bits)
	_ = w.Close()

	c := filepath.Join(filepath.Dir(a), "c.abf")
	if err := format.Convert(a, c, nil, &format.Options{Params: map[string]string{"abf-version": "C"}}); err != nil {
		log.Fatal(err)
	}
	f, _ := abf.Open(c, nil)
	defer f.Close()
	for _, r := range f.Entries() {
		fmt.Println(f.Version(), r.Name, r.TypeString, r.Offset)
	}
	// Output:
	// C x Array{Float64,1} 48
	// C b BitArray{1} 104
}
