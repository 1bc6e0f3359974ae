package futhark_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
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
	// futhark: offset 12 (line 2, column 6): unexpected '.', expected ',' or ']': syntax error
}

// Create a file holding one zero-filled array and fill it through a view of
// the mapping, as numpy's open_memmap(mode="w+") does.
func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "futhark")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "grid.data")
	f, err := futhark.Create(path, layout.F32, []int64{2, 3}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	xs, _ := futhark.View[float32](f, 0) // writable: the file was opened read-write
	for i := range xs {
		xs[i] = float32(i) * 1.5
	}
	if err := f.Close(); err != nil { // syncs
		fmt.Println(err)
		return
	}
	g, _ := futhark.Open(path, nil)
	defer g.Close()
	g.Encode(futhark.NewEncoder(os.Stdout), 0, false)
	// Output:
	// [[0.0f32, 1.5f32, 3.0f32],
	// [4.5f32, 6.0f32, 7.5f32]]
}

// Append values to a file in place, under the write lock of a read-write
// open. A failed append leaves the file as it was.
func ExampleFile_Append() {
	dir, _ := os.MkdirTemp("", "futhark")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "log.in")
	os.WriteFile(path, []byte("[1, 2] -- the first value\n"), 0o644)
	f, err := futhark.OpenFile(path, mmapfile.ReadWrite, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := futhark.NewValue([]int64{3}, []int32{3, 4, 5})
	if err := f.Append(v); err != nil {
		fmt.Println(err)
	}
	fmt.Println(f.NumRecords(), f.Close())
	g, _ := futhark.Open(path, nil)
	defer g.Close()
	for i := range g.NumRecords() {
		g.Encode(futhark.NewEncoder(os.Stdout), i, false)
	}
	// Output:
	// 2 <nil>
	// [1i32, 2i32]
	// [3i32, 4i32, 5i32]
}

// Through the format registry a Futhark file is records named 0, 1, …,
// read in any order and byte order.
func ExampleFile_ReadArray() {
	in := "[[1, 2, 3], [4, 5, 6]]"
	f, _ := futhark.NewReader(strings.NewReader(in), int64(len(in)), nil)
	defer f.Close()
	r := f.Records()[0]
	dst := make([]byte, 6*4)
	f.ReadArray(0, dst, 0, layout.ColMajor, binary.LittleEndian)
	fmt.Println(r.Name, r.Type, r.Shape, r.Extra["encoding"])
	for i := 0; i < len(dst); i += 4 {
		fmt.Print(binary.LittleEndian.Uint32(dst[i:]), " ")
	}
	fmt.Println()
	// Output:
	// 0 i32 [2 3] text
	// 1 4 2 5 3 6
}
