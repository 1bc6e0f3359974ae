package benchmarks

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/scidb"
)

// benchSciDBCells writes a file of (int64, double) cells.
func benchSciDBCells(b *testing.B) (string, *scidb.Schema, int64) {
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

// BenchmarkSciDBDecodeVsGather pairs scidb.File.DecodeInto with the gather
// ceiling's kernel (splitCells over the same number of records in memory):
// each iteration runs one of each, back to back, so both see the same
// moments of a busy machine. It reports the best rate of each, "ratio"
// (the ceiling's best time over DecodeInto's best, as the suite takes
// scidb_fixed_decode's ratio) and "median-ratio" (the median of the
// ratios of the pairs, steadier on a busy machine).
func BenchmarkSciDBDecodeVsGather(b *testing.B) {
	path, format, cells := benchSciDBCells(b)
	b.SetBytes(0) // an op is two passes: the rates are reported below
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
	recs := make([]uint64, 2*cells)
	for i := range recs {
		recs[i] = uint64(i)
	}
	ints, floats := make([]int64, cells), make([]float64, cells)
	splitCells(ints, floats, recs)
	bestDecode, bestGather := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	var ratios []float64
	for b.Loop() {
		t0 := time.Now()
		splitCells(ints, floats, recs)
		t1 := time.Now()
		if n, err := m.DecodeInto(t, 0); err != nil || int64(n) != cells {
			b.Fatalf("%d cells, want %d: %v", n, cells, err)
		}
		t2 := time.Now()
		bestGather, bestDecode = min(bestGather, t1.Sub(t0)), min(bestDecode, t2.Sub(t1))
		ratios = append(ratios, t1.Sub(t0).Seconds()/t2.Sub(t1).Seconds())
	}
	slices.Sort(ratios)
	size := float64(cells * 16)
	b.ReportMetric(size/bestDecode.Seconds()/1e9, "decode-GB/s")
	b.ReportMetric(size/bestGather.Seconds()/1e9, "gather-GB/s")
	b.ReportMetric(bestGather.Seconds()/bestDecode.Seconds(), "ratio")
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
}
