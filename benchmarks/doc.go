// Package benchmarks is mmapkit's throughput suite: it measures how fast
// mmapkit reads and writes array data, next to what a Go program would use
// instead (os.ReadFile, read(2), encoding/binary, golang.org/x/exp/mmap,
// pread, os.File.Write, numpy) and next to what the machine can do at best
// (its ceilings), all in one run, so that every figure is reported as a
// ratio a noisy machine cannot fake.
//
// [Run] is the code behind `mmapkit bench`: it measures the ceilings and
// every figure, then prints a table, or the JSON document described at
// [Results], and optionally writes a Markdown report with a chart of
// throughput against file size. The same kernels are exercised by the Go
// benchmarks in this package's tests (`go test -bench . ./benchmarks`,
// file size from the environment variable MMAPKIT_BENCH_SIZE, default
// 1 GiB).
//
// # What is measured
//
// Scans sum every element of a file of float64 values (float32 for the
// Futhark figure) with the same eight-accumulator loop, so that only the
// way the bytes reach the loop differs. A scan through a mapping includes
// opening, mapping, the page faults of a fresh mapping, and unmapping; a
// read-based scan includes its allocation, its copy and its decoding.
// Every measurement is repeated and the best repetition is reported; the
// page cache is warm unless a figure says "cold", in which case the
// file's pages are dropped with posix_fadvise(DONTNEED) before each
// repetition (Linux only; elsewhere cold figures are not measured).
//
// The numpy figures run the first of python3 on PATH and /usr/bin/python3
// that imports numpy, or exactly $MMAPKIT_PYTHON when that is set.
//
// Figures that cannot be measured here (numpy missing, a cold read on a
// system without posix_fadvise, a format package absent from this build)
// are reported with a null value and a note saying why, never with an
// invented number.
//
// The suite writes its files to a temporary directory under
// [Options.Dir] and removes them when it finishes. It needs about five
// times [Options.Size] of free memory (the 1 GiB default peaks near
// 5 GiB resident, encoding/binary.Read's buffer included) and three
// times of free disk.
package benchmarks
