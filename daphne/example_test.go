package daphne_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func tempDir() string {
	dir, err := os.MkdirTemp("", "daphne-example")
	if err != nil {
		log.Fatal(err)
	}
	return dir
}

// Write a dense matrix as DaphneDSL's write() does, then read it back.
func ExampleWriteDense() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "X.dbdf")
	if err := daphne.WriteDense(path, 2, 3, []float64{1, 2, 3, 4, 5, 6}, nil); err != nil {
		log.Fatal(err)
	}
	meta, _ := os.ReadFile(path + ".meta")
	fmt.Println(string(meta))

	f, err := daphne.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	v, aliased, err := daphne.DenseValues[float64](f)
	if err != nil {
		log.Fatal(err)
	}
	h := f.Header()
	fmt.Println(h.Kind, h.Rows, h.Cols, h.ValueType, v, aliased)
	// Output:
	// {"numCols":3,"numRows":2,"valueType":"f64"}
	// dense 2 3 f64 [1 2 3 4 5 6] false
}

// Change one element in place through a read-write mapping, then copy the
// matrix and a frame column out: records go by name, "matrix" or a label.
func ExampleSet() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "X.dbdf")
	if err := daphne.WriteDense(path, 2, 3, []float64{1, 2, 3, 4, 5, 6}, nil); err != nil {
		log.Fatal(err)
	}
	f, err := daphne.OpenFile(path, mmapfile.ReadWrite, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := daphne.Set(f, "matrix", []int64{1, 2}, -6.0); err != nil { // row 1, column 2
		log.Fatal(err)
	}
	x, _ := daphne.Read[float64](f, "matrix")
	_, err = daphne.View[float64](f, "matrix") // f64 values at byte 45 cannot be aliased
	fmt.Println(x, errors.Is(err, mmapfile.ErrMisaligned))
	f.Close()

	fp := filepath.Join(dir, "F.dbdf")
	fr := &daphne.Frame{Rows: 2, Labels: []string{"id", "score"}, Columns: []any{[]int64{7, 8}, []float64{0.5, 0.25}}}
	if err := daphne.WriteFrame(fp, fr, nil); err != nil {
		log.Fatal(err)
	}
	g, _ := daphne.Open(fp, nil)
	defer g.Close()
	score, _ := daphne.Read[float64](g, "score")
	fmt.Println(score)
	// Output:
	// [1 2 3 4 5 -6] true
	// [0.5 0.25]
}

// Stream a dense matrix in row chunks: each call maps only its rows.
func ExampleReadDenseRange() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "big.dbdf")
	v := make([]int32, 10*4)
	for i := range v {
		v[i] = int32(i)
	}
	if err := daphne.WriteDense(path, 10, 4, v, nil); err != nil {
		log.Fatal(err)
	}
	f, err := daphne.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for r := uint64(0); r < 10; r += 4 {
		chunk, err := daphne.ReadDenseRange[int32](f, r, min(r+4, 10), 1, 3)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(chunk)
	}
	// Output:
	// [1 2 5 6 9 10 13 14]
	// [17 18 21 22 25 26 29 30]
	// [33 34 37 38]
}

func ExampleReadCSR() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "S.dbdf")
	m := &daphne.CSR[float64]{Rows: 3, Cols: 3, RowOffsets: []uint64{0, 1, 1, 2}, ColIdxs: []uint64{1, 2}, Values: []float64{1, 2}}
	if err := daphne.WriteCSR(path, m, nil); err != nil {
		log.Fatal(err)
	}
	f, err := daphne.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	s, err := daphne.ReadCSR[float64](f)
	if err != nil {
		log.Fatal(err)
	}
	d, _ := s.ToDense(0)
	fmt.Println(f.Size(), f.Header().Layout, s.NNZ(), d)
	// Output:
	// 117 current 2 [0 1 0 0 0 0 0 0 2]
}

func ExampleReadFrame() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "F.dbdf")
	fr := &daphne.Frame{Rows: 2, Labels: []string{"a", "bc"}, Columns: []any{[]int64{7, -1}, []float64{0.5, 1}}}
	if err := daphne.WriteFrame(path, fr, nil); err != nil {
		log.Fatal(err)
	}
	f, err := daphne.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	got, err := daphne.ReadFrame(f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Labels, got.Types, got.Columns)
	for _, a := range f.Records() {
		fmt.Println(a.Name, a.Type, a.Shape, a.Offset)
	}
	// Output:
	// [a bc] [si64 f64] [[7 -1] [0.5 1]]
	// a i64 [2] -1
	// bc f64 [2] -1
}

func ExampleParseMeta() {
	m, err := daphne.ParseMeta([]byte(`{ "valueType": "f64", "numRows": 3, "numCols": 3, "numNonZeros": 2 }`))
	if err != nil {
		log.Fatal(err)
	}
	b, _ := m.Bytes()
	fmt.Println(string(b))
	_, err = daphne.ParseMeta([]byte("2,3,1,f64"))
	fmt.Println(err)
	// Output:
	// {"numCols":3,"numNonZeros":2,"numRows":3,"valueType":"f64"}
	// daphne: .meta: offset 0: CSV-style .meta (DAPHNE before 2022-05) is not supported: bad .meta: unsupported operation
}

// Files that DAPHNE accepts but a strict read refuses open with Lenient.
func ExampleOptions() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "X.dbdf")
	if err := daphne.WriteDense(path, 1, 2, []float64{1, 2}, &daphne.WriteOptions{NoMeta: true}); err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	b[0] = 9 // DAPHNE never checks the version byte
	os.WriteFile(path, b, 0o644)
	_, err := daphne.Open(path, nil)
	fmt.Println(err != nil)
	f, err := daphne.Open(path, &daphne.Options{Lenient: true})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println(f.Header().Relaxed)
	// Output:
	// true
	// [offset 0: version 9, want 1]
}

// Walk a CSR matrix's entries straight from the file.
func ExampleNonzeros() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "S.dbdf")
	m := &daphne.CSR[float64]{Rows: 3, Cols: 3, RowOffsets: []uint64{0, 1, 1, 2}, ColIdxs: []uint64{1, 2}, Values: []float64{1, 2}}
	if err := daphne.WriteCSR(path, m, nil); err != nil {
		log.Fatal(err)
	}
	f, err := daphne.Open(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for e, err := range daphne.Nonzeros[float64](f) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(e.Row, e.Col, e.Value)
	}
	// Output:
	// 0 1 1
	// 2 2 2
}

// Open a frame through the format registry, as any program that imports
// the format packages can, and write one of its columns as a new file.
func Example_format() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "t.dbdf"), filepath.Join(dir, "x.dbdf")
	fr := &daphne.Frame{Rows: 2, Labels: []string{"id", "x"}, Columns: []any{[]int64{7, -1}, []float64{0.5, 1}}}
	if err := daphne.WriteFrame(in, fr, nil); err != nil {
		log.Fatal(err)
	}
	f, err := format.Open(in, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for _, r := range f.Records() {
		fmt.Println(r.Name, r.TypeString(), r.Shape, r.Kind)
	}
	x, err := format.Select(f, "x")
	if err != nil {
		log.Fatal(err)
	}
	if err := format.Write(out, x, nil); err != nil {
		log.Fatal(err)
	}
	meta, _ := os.ReadFile(out + ".meta")
	fmt.Println(string(meta))
	// Output:
	// id i64 [2] column
	// x f64 [2] column
	// {"numCols":1,"numRows":2,"schema":[{"label":"x","valueType":"f64"}]}
}
