package npy

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
)

// The benchmarks scan a float64 array of MMAPKIT_BENCH_SIZE bytes (64 MiB
// by default) through a view, as a .npy file and as a stored member of an
// archive this package wrote, and time the same sums in NumPy:
//
//	go test ./npy -run '^$' -bench . -benchtime 20x
//
// Each reports GB/s; NumPy's figures are timed inside Python (the mean of
// five sums, as Go's are means), so interpreter start-up is not counted.

func benchBytes(b *testing.B) int64 {
	if s := os.Getenv("MMAPKIT_BENCH_SIZE"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 64 {
			b.Fatalf("MMAPKIT_BENCH_SIZE=%q: want a byte count of at least 64", s)
		}
		return n / 64 * 64
	}
	return 64 << 20
}

// benchValues are the array's values: i/4 for element i, exact in float64.
func benchValues(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i%1000) / 4
	}
	return v
}

func benchSum(n int) float64 {
	full := n / 1000
	s := float64(full) * (999 * 1000 / 2) / 4
	for i := full * 1000; i < n; i++ {
		s += float64(i%1000) / 4
	}
	return s
}

// sum adds xs with eight accumulators, as a scan kernel would.
func sum(xs []float64) float64 {
	var s [8]float64
	for len(xs) >= 8 {
		v := xs[:8:8]
		s[0] += v[0]
		s[1] += v[1]
		s[2] += v[2]
		s[3] += v[3]
		s[4] += v[4]
		s[5] += v[5]
		s[6] += v[6]
		s[7] += v[7]
		xs = xs[8:]
	}
	for _, x := range xs {
		s[0] += x
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// benchFiles writes the .npy and .npz that the benchmarks scan, once per
// benchmark.
func benchFiles(b *testing.B) (npyPath, npzPath string, n int) {
	b.Helper()
	size := benchBytes(b)
	n = int(size / 8)
	dir := b.TempDir()
	npyPath, npzPath = filepath.Join(dir, "x.npy"), filepath.Join(dir, "x.npz")
	v := benchValues(n)
	if err := Save(npyPath, []int64{int64(n)}, layout.RowMajor, v); err != nil {
		b.Fatal(err)
	}
	z, err := CreateZip(npzPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := AddArray(z, "x", []int64{int64(n)}, layout.RowMajor, v); err != nil {
		b.Fatal(err)
	}
	if err := z.Close(); err != nil {
		b.Fatal(err)
	}
	return npyPath, npzPath, n
}

// ViewSum opens path, views its array name (a .npy's "0", an archive's
// member key) as []float64 and sums it: the scan the benchmarks time.
func viewSum(path, name string) (float64, int, error) {
	f, err := Open(path, nil)
	if err != nil {
		return 0, 0, err
	}
	v, err := View[float64](f, name)
	if err != nil {
		f.Close()
		return 0, 0, err
	}
	s := sum(v)
	return s, len(v), f.Close()
}

func benchView(b *testing.B, npz bool) {
	npyPath, npzPath, n := benchFiles(b)
	path, name := npyPath, "0"
	if npz {
		path, name = npzPath, "x"
	}
	want := benchSum(n)
	b.SetBytes(int64(n) * 8)
	for b.Loop() {
		s, k, err := viewSum(path, name)
		if err != nil {
			b.Fatal(err)
		}
		if k != n || s != want {
			b.Fatalf("sum of %d elements is %v, want %v of %d", k, s, want, n)
		}
	}
	b.ReportMetric(float64(n*8)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkViewScanNPY opens a .npy, views its float64 array and sums it.
func BenchmarkViewScanNPY(b *testing.B) { benchView(b, false) }

// BenchmarkViewScanNPZ opens an .npz this package wrote, views its stored
// (64-byte aligned) member and sums it: NumPy cannot map npz members.
func BenchmarkViewScanNPZ(b *testing.B) { benchView(b, true) }

// BenchmarkReadNPZNumPyWritten reads (copies) a member of an archive that
// np.savez wrote, whose data are not aligned, and sums it.
func BenchmarkReadNPZNumPyWritten(b *testing.B) {
	py := oracle.Python(b, "numpy")
	npyPath, _, n := benchFiles(b)
	p := filepath.Join(b.TempDir(), "savez.npz")
	if out, err := exec.Command(py, "-c", "import sys, numpy as np; np.savez(sys.argv[2], x=np.load(sys.argv[1]))", npyPath, p).CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	want := benchSum(n)
	b.SetBytes(int64(n) * 8)
	for b.Loop() {
		f, err := Open(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		v, err := Read[float64](f, "x")
		if err != nil {
			b.Fatal(err)
		}
		if s := sum(v); s != want {
			b.Fatalf("sum %v, want %v", s, want)
		}
		f.Close()
	}
	b.ReportMetric(float64(n*8)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// numpySumScript times, as the mean of five, np.load(npy, mmap_mode="r").sum()
// and np.load(npz)["x"].sum() (NumPy maps .npy files, but reads npz
// members into memory), and prints the seconds and sums as JSON.
const numpySumScript = `
import sys, time, json
import numpy as np
npy, npz = sys.argv[1], sys.argv[2]
def best(fn):
    ts, s = [], None
    for _ in range(5):
        t = time.perf_counter(); s = fn(); ts.append(time.perf_counter() - t)
    return sum(ts) / len(ts), float(s)
def mm():
    a = np.load(npy, mmap_mode="r"); s = a.sum(); del a; return s
def z():
    with np.load(npz) as d:
        return d["x"].sum()
t1, s1 = best(mm)
t2, s2 = best(z)
print(json.dumps({"npy": t1, "npy_sum": s1, "npz": t2, "npz_sum": s2}))
`

// NumPySums runs numpySumScript: the seconds NumPy takes for each sum.
func numpySums(b *testing.B, npyPath, npzPath string, n int) (npySec, npzSec float64) {
	b.Helper()
	var r struct {
		Npy, NpySum, Npz, NpzSum float64
	}
	out := oracle.Run(b, []string{"numpy"}, numpySumScript, npyPath, npzPath)
	var raw map[string]float64
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		b.Fatalf("numpy printed %q: %v", out, err)
	}
	r.Npy, r.NpySum, r.Npz, r.NpzSum = raw["npy"], raw["npy_sum"], raw["npz"], raw["npz_sum"]
	if want := benchSum(n); r.NpySum != want || r.NpzSum != want {
		// NumPy sums pairwise: the order differs, the values are exact.
		b.Fatalf("numpy sums %v and %v, want %v", r.NpySum, r.NpzSum, want)
	}
	return r.Npy, r.Npz
}

func benchNumPy(b *testing.B, npz bool) {
	npyPath, npzPath, n := benchFiles(b)
	var sec float64
	for b.Loop() {
		a, z := numpySums(b, npyPath, npzPath, n)
		sec = a
		if npz {
			sec = z
		}
	}
	b.ReportMetric(sec*1e9, "ns/op")
	b.ReportMetric(float64(n*8)/sec/1e9, "GB/s")
}

// BenchmarkNumPyMmapSum is np.load(npy, mmap_mode="r").sum(), timed inside
// Python; ns/op is NumPy's time for one sum.
func BenchmarkNumPyMmapSum(b *testing.B) { benchNumPy(b, false) }

// BenchmarkNumPyNPZSum is np.load(npz)["x"].sum() (a copy: NumPy cannot
// map npz members), timed inside Python.
func BenchmarkNumPyNPZSum(b *testing.B) { benchNumPy(b, true) }

// BenchmarkMemberCRC is what the CRC-32 check of a stored member costs
// its first copying read: hash/crc32's IEEE table over the member's
// bytes (the CPU's CRC instructions where it has them), in memory and
// through crcOf, which copies the bytes out of the file a MiB at a time
// as the check does.
func BenchmarkMemberCRC(b *testing.B) {
	n := benchBytes(b)
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b.Run("memory", func(b *testing.B) {
		b.SetBytes(n)
		for b.Loop() {
			crc32.Update(0, crc32.IEEETable, data)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
	b.Run("member", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "crc.npz")
		z, err := CreateZip(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := AddArray(z, "x", []int64{n}, layout.RowMajor, data); err != nil {
			b.Fatal(err)
		}
		if err := z.Close(); err != nil {
			b.Fatal(err)
		}
		f, err := Open(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		m := f.arrays[0].m
		b.SetBytes(m.csize)
		for b.Loop() {
			c, err := f.memberCRC(m)
			if err != nil || c != m.crc {
				b.Fatalf("CRC-32 %08x, want %08x: %v", c, m.crc, err)
			}
		}
		b.ReportMetric(float64(m.csize)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
}

// gatherFile writes, once per benchmark, a .npy of benchBytes bytes: a
// Fortran-order float64 matrix of 1,024 rows, or an array of records of
// ten float64 fields (1-D, or with fortran a matrix of 1,024 rows).
func gatherFile(b *testing.B, structured, fortran bool) (path string, n int64) {
	b.Helper()
	size := benchBytes(b)
	n = size / 8
	h := Header{DType: DType{Kind: 'f', ItemSize: 8}, Shape: []int64{1024, n / 1024}, FortranOrder: true}
	if structured {
		h = Header{DType: DType{ItemSize: 80}, Shape: []int64{n / 10}}
		if fortran {
			h.Shape, h.FortranOrder = []int64{1024, n / 10 / 1024}, true
		}
		for i := range 10 {
			h.DType.Fields = append(h.DType.Fields, Field{Name: "f" + strconv.Itoa(i), Offset: 8 * i, DType: DType{Kind: 'f', ItemSize: 8}})
		}
	}
	vals := benchValues(int(n))
	path = filepath.Join(b.TempDir(), "g.npy")
	if err := WriteFile(path, h, bytes.NewReader(unsafeslice.Bytes(vals)), nil); err != nil {
		b.Fatal(err)
	}
	return path, n
}

// benchGather reads the Fortran-order matrix in C order, or field f3 of
// the records (in C order), through a mapping or (reader) through
// NewReader.
func benchGather(b *testing.B, structured, fortran, reader bool) {
	path, n := gatherFile(b, structured, fortran)
	var f *File
	var err error
	if reader {
		fh, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer fh.Close()
		st, _ := fh.Stat()
		f, err = NewReader(fh, st.Size(), nil)
	} else {
		f, err = Open(path, nil)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	i, rec := 0, f.Records()[0]
	if structured {
		i, rec = 3, f.Records()[3]
		n = rec.Size / 8
	}
	dst := unsafeslice.AlignedBytes(n * 8)
	b.SetBytes(n * 8)
	b.ResetTimer()
	for range b.N {
		if err := f.ReadArray(i, dst, 0, layout.RowMajor, binary.LittleEndian); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if structured {
		want := float64(3%1000) / 4
		if got := unsafeslice.Cast[float64](dst)[0]; got != want || rec.Name != "f3" {
			b.Fatalf("%s[0] = %v, want %v", rec.Name, got, want)
		}
	}
}

// BenchmarkReadFortran reads a Fortran-order float64 array of benchBytes
// in C order; …Reader through NewReader (no mapping).
func BenchmarkReadFortran(b *testing.B)       { benchGather(b, false, true, false) }
func BenchmarkReadFortranReader(b *testing.B) { benchGather(b, false, true, true) }

// BenchmarkReadField reads one float64 field of a 1-D array of records
// of ten; …Reader through NewReader; …Fortran of a Fortran-order matrix
// of records, in C order.
func BenchmarkReadField(b *testing.B)              { benchGather(b, true, false, false) }
func BenchmarkReadFieldReader(b *testing.B)        { benchGather(b, true, false, true) }
func BenchmarkReadFieldFortran(b *testing.B)       { benchGather(b, true, true, false) }
func BenchmarkReadFieldFortranReader(b *testing.B) { benchGather(b, true, true, true) }
