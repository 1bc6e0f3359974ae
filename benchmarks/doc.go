// Package benchmarks is mmapkit's throughput suite: it measures how fast
// mmapkit reads, writes, edits and converts array data, next to what a
// program would use instead (os.ReadFile, read(2), encoding/binary,
// golang.org/x/exp/mmap, pread, NumPy, zarr-python) and next to what the
// machine can do at best (its ceilings), all in one run, so that every
// figure is reported as a ratio a noisy machine cannot fake.
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
// Futhark figure) with the same kernel — 128 bytes per iteration into
// eight accumulators, packed SSE2 adds on amd64 — which adds faster than
// memory delivers, so that only the way the bytes reach it differs and
// float32 is scanned as fast as float64. A scan through a mapping
// includes opening, mapping, the page faults of a fresh mapping, and
// unmapping; a read-based scan includes its allocation, its copy and its
// decoding. Files are settled in the page cache before they are scanned
// (as large aligned writes leave them), since a file cached in small
// folios faults more when mapped.
//
// Every figure is taken against a ceiling — what the machine does at best
// for the same job without mmapkit: a raw mapping scanned by one core or
// by all, read(2), memmove, the best plain loop splitting records into
// columns, write(2) of the same bytes + fsync, a copy of the same file +
// fsync — or against a peer (numpy, zarr-python, encoding/binary, …).
// Every throughput figure is repeated and the best repetition kept, and
// one repetition of its ceiling runs before each of its own, so that both
// see the same moments of a busy machine; latencies are medians, each edit
// paired with a pwrite + fdatasync of the same size. The page cache is
// warm unless a figure says "cold", in which case the file's pages are
// dropped with posix_fadvise(DONTNEED) before each repetition (Linux
// only; elsewhere cold figures are not measured). Ratios of data that fit
// in twice the last-level cache are marked not meaningful.
//
// The Python figures (numpy, zarr-python) run the interpreter package
// internal/oracle finds ($MMAPKIT_PYTHON, python3 on PATH,
// /usr/bin/python3), timed inside Python.
//
// Figures that cannot be measured here (numpy missing, a cold read on a
// system without posix_fadvise, a format not registered in this build)
// are reported with a null value and a note saying why, never with an
// invented number.
//
// The suite writes its files to a temporary directory under
// [Options.Dir] and removes them when it finishes. It needs about eight
// times [Options.Size] of free memory (mapped file pages included) and
// four times of free disk.
//
// [RunFiles] measures a user's own files instead (any format that
// package format opens; they are opened read-only and never written): for
// each record, each way of reading it that applies — a view scan, a
// copying read in logical order, the parallel decode of a chunked record,
// a view scan on every core, random elements through a view, and the tool
// a user of the format would use (NumPy, h5py, zarr-python) — warm and
// cold, each beside its ceiling on the same bytes of the same file in the
// same run (a raw mapping scanned the same way, pread(2), one core's
// decode times the cores), and from disk a mapping advised sequential.
// Cold means the pages were dropped from the bench's own mappings and
// from the page cache, then checked with mincore; a note says when the
// kernel kept some. [FileOptions.Time] bounds the whole run, record by
// record. Each record ends with a line of advice, warm and from disk. A
// file that changes while it is measured is an error.
package benchmarks
