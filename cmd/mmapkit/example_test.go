package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Printing an ABF file (abf.md's TV-1: x = [1.0, 2.0], b = BitVector([1,0,1]))
// and changing one bit of it in place.
func Example() {
	dir, _ := os.MkdirTemp("", "mmapkit-example-")
	defer os.RemoveAll(dir)
	tv1, _ := hex.DecodeString(strings.Join([]string{
		"00040000000000000078400000000000", "000041727261797b466c6f617436342c",
		"317d0200000000000000000000000000", "000000000000f03f0000000000000040",
		"000400000000000000622c0000000000", "000042697441727261797b317d030000",
		"00000000000000000500000000000000"}, ""))
	path := filepath.Join(dir, "tv1.abf")
	_ = os.WriteFile(path, tv1, 0o644)

	run([]string{"cat", path}, nil, os.Stdout, os.Stderr)
	run([]string{"set", path, "b", "[1]", "true"}, nil, os.Stdout, os.Stderr)
	run([]string{"cat", "--name", "b", path}, nil, os.Stdout, os.Stderr)
	var stderr strings.Builder
	code := run([]string{"cat", "--name", "nope", path}, nil, os.Stdout, &stderr)
	fmt.Print(strings.ReplaceAll(stderr.String(), path, "tv1.abf"))
	fmt.Println("exit status", code)
	// Output:
	// -- x
	// [1.0f64, 2.0f64]
	// -- b
	// [true, false, true]
	// [true, true, true]
	// mmapkit: tv1.abf: no such record "nope"; the file has "x" and "b"
	// exit status 1
}
