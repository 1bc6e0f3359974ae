package futhark_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/layout"
)

// Read a stream that mixes text and binary values, and print it
// canonically, as `futhark dataset` does.
func Example() {
	in := "[1, 2, 3] -- a comment\n" + "b\x02\x00 f32\x00\x00\xc0\x3f" + "\n[[true], [false]]"
	f, err := futhark.NewReader(strings.NewReader(in), int64(len(in)), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	enc := futhark.NewEncoder(os.Stdout)
	for i, e := range f.Entries() {
		v, _ := f.Value(i)
		fmt.Printf("-- value %d: %s, binary %v\n", i, e.TypeString(), e.Binary)
		enc.EncodeText(v)
	}
	// Output:
	// -- value 0: [3]i32, binary false
	// [1i32, 2i32, 3i32]
	// -- value 1: f32, binary true
	// 1.5f32
	// -- value 2: [2][1]bool, binary false
	// [[true],
	// [false]]
}

// Write an aligned binary file and view its payload without copying.
func ExampleView() {
	dir, _ := os.MkdirTemp("", "futhark")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "x.data")
	v, _ := futhark.NewValue([]int64{2, 2}, []float32{1, 2, 3, 4})
	err := futhark.WriteFile(path, &futhark.Options{Align: futhark.AlignElement}, func(e *futhark.Encoder) error {
		return e.EncodeBinary(v)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := futhark.Open(path, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	xs, err := futhark.View[float32](f, 0) // aliases the mapping
	fmt.Println(xs, err, f.Entries()[0].Data)
	// Output:
	// [1 2 3 4] <nil> 24
}

// Stream a value element chunk by element chunk: the whole array never
// needs to be in memory.
func ExampleEncoder_BeginText() {
	enc := futhark.NewEncoder(os.Stdout)
	enc.BeginText(layout.I16, []int64{2, 3})
	enc.WriteElems([]byte{1, 0, 2, 0})       // 1, 2
	enc.WriteElems([]byte{3, 0, 0xff, 0xff}) // 3, -1
	enc.WriteElems([]byte{5, 0, 6, 0})       // 5, 6
	// Output:
	// [[1i16, 2i16, 3i16],
	// [-1i16, 5i16, 6i16]]
}

// Decode a stream value by value, reading binary payloads in chunks.
func ExampleDecoder() {
	d := futhark.NewDecoder(strings.NewReader("b\x02\x01  i8\x03\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03\n7u8"))
	for {
		h, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		payload, _ := io.ReadAll(d)
		fmt.Println(futhark.TypeString(h.Type, h.Shape), h.Binary, payload)
	}
	// Output:
	// [3]i8 true [1 2 3]
	// u8 false [7]
}

// Malformed input is a *FormatError naming the offset, line and column.
func ExampleFormatError() {
	in := "[1, 2]\n[3, 4.5]"
	_, err := futhark.NewReader(strings.NewReader(in), int64(len(in)), nil)
	fmt.Println(err)
	// Output:
	// futhark: offset 12 (line 2, column 6): unexpected '.', expected ',' or ']'
}
