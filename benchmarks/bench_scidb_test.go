package benchmarks

import (
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/scidb"
)

// benchSciDBCells writes a file of (int64, double) cells.
func benchSciDBCells(b *testing.B) (string, *scidb.Format, int64) {
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
	return path, format, size / 16
}

// BenchmarkSciDBFixedDecode decodes the mapped file into a reused table
// with scidb.File.DecodeInto; compare BenchmarkCeilingMemmove.
func BenchmarkSciDBFixedDecode(b *testing.B) {
	path, format, cells := benchSciDBCells(b)
	m, err := scidb.Open(path, &scidb.Options{Format: format, Lenient: true})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	t, err := scidb.NewTable(format, int(cells))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.DecodeInto(t, 0); err != nil { // fault the table and the mapping in, untimed
		b.Fatal(err)
	}
	for b.Loop() {
		if n, err := m.DecodeInto(t, 0); err != nil || int64(n) != cells {
			b.Fatalf("%d cells, want %d: %v", n, cells, err)
		}
	}
}

// BenchmarkSciDBDecodeFile decodes the file with scidb.DecodeFile, which
// maps it and allocates the columns every time.
func BenchmarkSciDBDecodeFile(b *testing.B) {
	path, format, cells := benchSciDBCells(b)
	for b.Loop() {
		t, err := scidb.DecodeFile(path, &scidb.Options{Format: format, Lenient: true})
		if err != nil {
			b.Fatal(err)
		}
		if int64(t.Len) != cells {
			b.Fatalf("%d cells, want %d", t.Len, cells)
		}
	}
}
