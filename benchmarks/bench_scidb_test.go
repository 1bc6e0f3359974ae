package benchmarks

import (
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/scidb"
)

// BenchmarkSciDBFixedDecode decodes a file of (int64, double) cells with
// scidb.DecodeFile; compare BenchmarkCeilingMemmove.
func BenchmarkSciDBFixedDecode(b *testing.B) {
	size := benchSize(b) / 16 * 16
	format, err := scidb.ParseFormat(scidbFormat)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "cells.scidb")
	if err := writeSciDBCells(path, size/16); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		t, err := scidb.DecodeFile(path, format, scidb.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if int64(t.Len) != size/16 {
			b.Fatalf("%d cells, want %d", t.Len, size/16)
		}
	}
}
