package daphne

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/memsource"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memSource is a format.Source of arrays held in memory, each stored in
// its record's order and byte order.
type memSource struct {
	memsource.Source
	// sparse, when set, makes record 0 a sparse matrix whose nonzeros
	// are the non-zero elements of its data.
	sparse bool
}

func (m *memSource) IsSparse(i int) bool { return m.sparse && i == 0 }

func (m *memSource) Nonzeros(i int, bo binary.ByteOrder, fn func(row, col int64, value []byte) error) error {
	r := m.Records()[i]
	b, err := format.ReadAll(m, i, layout.RowMajor, bo)
	if err != nil {
		return err
	}
	s := int64(r.Type.Size())
	for k := int64(0); k < int64(len(b))/s; k++ {
		v := b[k*s : (k+1)*s]
		if !allZero(v) {
			if err := fn(k/r.Shape[1], k%r.Shape[1], v); err != nil {
				return err
			}
		}
	}
	return nil
}

// arrayOf returns a record and its little-endian row-major bytes for v.
func arrayOf[T layout.Elem](name string, v []T, shape ...int64) (format.Record, []byte) {
	t := layout.TypeOf[T]()
	b := append([]byte(nil), unsafeslice.Bytes(v)...)
	layout.SwapOrder(b, t, layout.HostOrder(), binary.LittleEndian)
	return format.Record{Array: layout.Array{Name: name, Type: t, Shape: shape, Order: layout.RowMajor, Offset: -1, Size: int64(len(b))}}, b
}

func source(recs ...any) *memSource {
	m := &memSource{}
	for k := 0; k < len(recs); k += 2 {
		m.Add(recs[k].(format.Record), recs[k+1].([]byte))
	}
	return m
}

func TestFormatRegistered(t *testing.T) {
	f, ok := format.Lookup("daphne")
	require.True(t, ok)
	assert.Equal(t, []string{".dbdf"}, f.Extensions)
	assert.Nil(t, f.Sniff, "DAPHNE files have no magic number: never sniffed")
	got, ok := format.ForName("x.DBDF")
	require.True(t, ok)
	assert.Equal(t, "daphne", got.Name)

	// Under another name the bytes are not recognised.
	p := filepath.Join(t.TempDir(), "matrix.bin")
	require.NoError(t, os.WriteFile(p, goldenBytes(t, "dense_2x3_f64.dbdf"), 0o644))
	_, err := format.Open(p, nil)
	assert.ErrorIs(t, err, format.ErrUnknownFormat)
	file, err := format.Open(p, &format.Options{Format: "daphne"})
	require.NoError(t, err)
	assert.Equal(t, "daphne", file.Format())
	assert.Equal(t, "1", file.Version())
	require.NoError(t, file.Close())
	assert.ErrorIs(t, file.Close(), mmapfile.ErrClosed)
}

func TestFormatRecords(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []format.Record
	}{
		{"dense_2x3_f64.dbdf", []format.Record{{Array: layout.Array{Name: "matrix", Type: layout.F64, Shape: []int64{2, 3}, Offset: 45, Size: 48},
			Kind: format.KindArray, Extra: map[string]any{"layout": "dense"}}}},
		{"csr_3x3_f64_nnz2.dbdf", []format.Record{{Array: layout.Array{Name: "matrix", Type: layout.F64, Shape: []int64{3, 3}, Offset: 45, Size: 72},
			Kind: format.KindArray, Extra: map[string]any{"layout": "csr"}}}},
		{"frame_2x2_si64_f64.dbdf", []format.Record{
			{Array: layout.Array{Name: "a", Type: layout.I64, Shape: []int64{2}, Offset: -1, Size: 16}, Kind: format.KindColumn},
			{Array: layout.Array{Name: "bc", Type: layout.F64, Shape: []int64{2}, Offset: -1, Size: 16}, Kind: format.KindColumn}}},
	} {
		f, err := format.Open(golden(t, tc.file), nil)
		require.NoError(t, err, tc.file)
		assert.Equal(t, tc.want, f.Records(), tc.file)
		require.NoError(t, f.Close())
	}
}

// readAllOf reads record i of a source whole, in order and byte order bo.
func readAllOf(t *testing.T, src format.Source, i int, order layout.Order, bo binary.ByteOrder) []byte {
	t.Helper()
	b, err := format.ReadAll(src, i, order, bo)
	require.NoError(t, err)
	return b
}

func f64le(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func TestFormatReadArray(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	csr := []float64{0, 1, 0, 0, 0, 0, 0, 0, 2}
	csrCol := []float64{0, 0, 0, 1, 0, 0, 0, 0, 2}
	for _, tc := range []struct {
		name string
		data []byte
		o    *Options
		rec  int
		row  []float64 // row-major
		col  []float64 // column-major
	}{
		{"dense", goldenBytes(t, "dense_2x3_f64.dbdf"), nil, 0, []float64{1, 2, 3, 4, 5, 6}, []float64{1, 4, 2, 5, 3, 6}},
		{"csr", goldenBytes(t, "csr_3x3_f64_nnz2.dbdf"), nil, 0, csr, csrCol},
		{"csr 0.1", unhex(t, hexCSR01), nil, 0, csr, csrCol},
		{"csr doc", unhex(t, hexCSRDoc), nil, 0, csr, csrCol},
		{"coo", cooFile(t, 2), nil, 0, csr, csrCol},
		{"coo dense", cooFile(t, 1), nil, 0, csr, csrCol},
		{"empty block", emptyBlockFile(t), nil, 0, make([]float64, 9), make([]float64, 9)},
		{"frame a", goldenBytes(t, "frame_2x2_si64_f64.dbdf"), nil, 0, []float64{7, -1}, []float64{7, -1}},
		{"frame bc", goldenBytes(t, "frame_2x2_si64_f64.dbdf"), nil, 1, []float64{0.5, 1}, []float64{0.5, 1}},
	} {
		f, err := open(t, tc.data, tc.o)
		require.NoError(t, err, tc.name)
		rec := f.Records()[tc.rec]
		n := int64(len(tc.row))
		for _, order := range []layout.Order{layout.RowMajor, layout.ColMajor} {
			want := tc.row
			if order == layout.ColMajor {
				want = tc.col
			}
			// Every range, in both byte orders.
			for first := int64(0); first <= n; first++ {
				for end := first; end <= n; end++ {
					for _, bo := range []binary.ByteOrder{le, be} {
						dst := make([]byte, (end-first)*int64(rec.Type.Size()))
						require.NoError(t, f.ReadArray(tc.rec, dst, first, order, bo), "%s [%d,%d) %v", tc.name, first, end, order)
						if rec.Type == layout.I64 {
							got := make([]float64, end-first)
							for k := range got {
								got[k] = float64(int64(bo.Uint64(dst[8*k:])))
							}
							assert.Equal(t, want[first:end], got, "%s [%d,%d) %v", tc.name, first, end, order)
							continue
						}
						wantB := make([]byte, len(dst))
						for k, x := range want[first:end] {
							bo.PutUint64(wantB[8*k:], math.Float64bits(x))
						}
						assert.Equal(t, wantB, dst, "%s [%d,%d) %v %v", tc.name, first, end, order, bo)
					}
				}
			}
		}
		err = f.ReadArray(tc.rec, make([]byte, 8), n, layout.RowMajor, le)
		assert.ErrorIs(t, err, mmapfile.ErrOutOfRange, tc.name)
	}
}

// TestFormatReadArrayMultiBlock reads a matrix of four blocks (dense,
// empty, sparse, COO) in both orders.
func TestFormatReadArrayMultiBlock(t *testing.T) {
	f, err := open(t, multiBlockFile(1), nil)
	require.NoError(t, err)
	want, err := Read[float64](f, "matrix")
	require.NoError(t, err)
	got := readAllOf(t, f, 0, layout.RowMajor, binary.LittleEndian)
	assert.Equal(t, f64le(want...), got)
	rows, cols := int(f.Header().Rows), int(f.Header().Cols)
	colMajor := make([]float64, 0, len(want))
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			colMajor = append(colMajor, want[i*cols+j])
		}
	}
	assert.Equal(t, f64le(colMajor...), readAllOf(t, f, 0, layout.ColMajor, binary.LittleEndian))
}

// TestFormatReadArrayCSRBounded: a range of a CSR matrix of 2^33 cells is
// read without allocating anything near its rows.
func TestFormatReadArrayCSRBounded(t *testing.T) {
	const cols = 1<<32 - 1
	m := &CSR[float32]{Rows: 2, Cols: cols, RowOffsets: []uint64{0, 1, 3}, ColIdxs: []uint64{cols - 1, 0, cols - 2}, Values: []float32{1, 2, 3}}
	p := filepath.Join(t.TempDir(), "big.dbdf")
	require.NoError(t, WriteCSR(p, m, nil))
	f, err := format.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	dst := make([]byte, 16)
	read := func(first int64) []float32 {
		require.NoError(t, f.ReadArray(0, dst, first, layout.RowMajor, binary.LittleEndian))
		out := make([]float32, 4)
		for k := range out {
			out[k] = math.Float32frombits(binary.LittleEndian.Uint32(dst[4*k:]))
		}
		return out
	}
	allocs := testing.AllocsPerRun(3, func() { read(cols - 2) })
	assert.Equal(t, []float32{0, 1, 2, 0}, read(cols-2))
	assert.Equal(t, []float32{0, 0, 3, 0}, read(2*cols-4))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read(cols - 2)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by one small read")
	t.Logf("%.0f allocations per read", allocs)
}

func TestFormatNonzeros(t *testing.T) {
	for name, data := range map[string][]byte{"csr": goldenBytes(t, "csr_3x3_f64_nnz2.dbdf"), "0.1": unhex(t, hexCSR01),
		"doc": unhex(t, hexCSRDoc), "coo": cooFile(t, 2), "blocks": multiBlockFile(2)} {
		f, err := open(t, data, nil)
		require.NoError(t, err, name)
		require.True(t, f.IsSparse(0))
		var got [][3]float64
		require.NoError(t, f.Nonzeros(0, binary.BigEndian, func(r, c int64, v []byte) error {
			got = append(got, [3]float64{float64(r), float64(c), math.Float64frombits(binary.BigEndian.Uint64(v))})
			return nil
		}), name)
		dense, err := ReadRowsDense[float64](f, 0, f.Header().Rows)
		require.NoError(t, err)
		var want [][3]float64
		for k, x := range dense {
			if x != 0 {
				want = append(want, [3]float64{float64(k / int(f.Header().Cols)), float64(k % int(f.Header().Cols)), x})
			}
		}
		assert.Equal(t, want, got, name)
	}
	f, err := open(t, goldenBytes(t, "dense_2x3_f64.dbdf"), nil)
	require.NoError(t, err)
	assert.False(t, f.IsSparse(0))
	assert.ErrorIs(t, f.Nonzeros(0, binary.LittleEndian, nil), ErrKind)
}

func TestFormatSetText(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.dbdf")
	require.NoError(t, WriteDense(p, 2, 3, []int32{1, 2, 3, 4, 5, 6}, nil))
	f, err := format.OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	s := f.(format.Setter)
	require.NoError(t, s.SetText(0, []int64{1, 2}, "0x1f"))
	require.NoError(t, s.SetText(0, []int64{0, 0}, "-7i32"))
	for _, c := range []struct {
		idx   []int64
		value string
		is    error
	}{
		{[]int64{2, 0}, "1", mmapfile.ErrOutOfRange},
		{[]int64{1}, "1", mmapfile.ErrOutOfRange},
		{[]int64{0, 0}, "1.5", nil},
		{[]int64{0, 0}, "3000000000", nil},
	} {
		err := s.SetText(0, c.idx, c.value)
		require.Error(t, err, c.value)
		assert.ErrorContains(t, err, p)
		if c.is != nil {
			assert.ErrorIs(t, err, c.is)
		}
	}
	require.NoError(t, s.Sync())
	require.NoError(t, f.Close())
	assert.ErrorIs(t, s.SetText(0, []int64{0, 0}, "1"), mmapfile.ErrClosed)
	g, err := Open(p, nil)
	require.NoError(t, err)
	v, err := Read[int32](g, "matrix")
	require.NoError(t, err)
	assert.Equal(t, []int32{-7, 2, 3, 4, 5, 31}, v)
	require.NoError(t, g.Close())

	// Read-only files and CSR matrices cannot be set.
	ro, err := format.Open(p, nil)
	require.NoError(t, err)
	assert.ErrorIs(t, ro.(format.Setter).SetText(0, []int64{0, 0}, "1"), mmapfile.ErrNotWritable)
	require.NoError(t, ro.Close())
	c, err := format.Open(golden(t, "csr_3x3_f64_nnz2.dbdf"), nil)
	require.NoError(t, err)
	assert.ErrorIs(t, c.(format.Setter).SetText(0, []int64{0, 0}, "1"), errors.ErrUnsupported)
	require.NoError(t, c.Close())
}

// TestFormatConvertGolden converts every golden file to DAPHNE through the
// registry: the same bytes back, .meta included (frames: but the label
// bytes, which DAPHNE wrote as pointer bytes).
func TestFormatConvertGolden(t *testing.T) {
	for _, name := range []string{"dense_2x3_f64.dbdf", "csr_3x3_f64_nnz2.dbdf", "frame_2x2_si64_f64.dbdf", "aig.dbdf", "aig-csr.dbdf", "aig-f.dbdf"} {
		out := filepath.Join(t.TempDir(), name)
		require.NoError(t, format.Convert(golden(t, name), out, nil, nil), name)
		want := goldenBytes(t, name)
		if want[1] == 3 {
			want = append([]byte(nil), want...)
			f, err := Open(golden(t, name), nil)
			require.NoError(t, err)
			for i, off := range labelOffsets(want) {
				copy(want[off+2:], f.label(i))
			}
			require.NoError(t, f.Close())
		}
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
		assert.Equal(t, goldenBytes(t, name+".meta"), mustRead(t, out+".meta"), name)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func TestFormatWrite(t *testing.T) {
	dir := t.TempDir()
	// A column-major big-endian 2-D array: transposed, swapped.
	rec, data := arrayOf("x", []float64{1, 4, 2, 5, 3, 6}, 2, 3)
	rec.Order = layout.ColMajor
	rec.BigEndian = true
	layout.SwapOrder(data, layout.F64, binary.LittleEndian, binary.BigEndian)
	p := filepath.Join(dir, "d.dbdf")
	require.NoError(t, Write(p, source(rec, data), nil))
	assert.Equal(t, goldenBytes(t, "dense_2x3_f64.dbdf"), mustRead(t, p))
	assert.Equal(t, goldenBytes(t, "dense_2x3_f64.dbdf.meta"), mustRead(t, p+".meta"))

	// A sparse source is written as CSR from its nonzeros.
	rec, data = arrayOf("m", []float64{0, 1, 0, 0, 0, 0, 0, 0, 2}, 3, 3)
	src := source(rec, data)
	src.sparse = true
	p = filepath.Join(dir, "c.dbdf")
	require.NoError(t, Write(p, src, nil))
	assert.Equal(t, goldenBytes(t, "csr_3x3_f64_nnz2.dbdf"), mustRead(t, p))
	assert.Equal(t, goldenBytes(t, "csr_3x3_f64_nnz2.dbdf.meta"), mustRead(t, p+".meta"))

	// Equal-length 1-D arrays are a frame.
	a, ab := arrayOf("a", []int64{7, -1}, 2)
	bc, bcb := arrayOf("bc", []float64{0.5, 1}, 2)
	p = filepath.Join(dir, "f.dbdf")
	require.NoError(t, Write(p, source(a, ab, bc, bcb), nil))
	want := unhex(t, hexFrame)
	copy(want[0x16:], "a")
	copy(want[0x19:], "bc")
	assert.Equal(t, want, mustRead(t, p))
	assert.Equal(t, goldenBytes(t, "frame_2x2_si64_f64.dbdf.meta"), mustRead(t, p+".meta"))
}

func TestFormatWriteUnrepresentable(t *testing.T) {
	c, cb := arrayOf("z", []complex128{1, 2}, 1, 2)
	i16, i16b := arrayOf("s", []int16{1, 2}, 1, 2)
	b3, b3b := arrayOf("cube", []float64{1, 2}, 1, 1, 2)
	m1, m1b := arrayOf("m1", []float64{1, 2}, 1, 2)
	m2, m2b := arrayOf("m2", []float64{1, 2}, 1, 2)
	col, colb := arrayOf("v", []float64{1, 2}, 2)
	null, nullb := arrayOf("v.reason", []int8{-1, 3}, 2)
	str := format.Record{Array: layout.Array{Name: "text", Type: layout.U8, Shape: []int64{1}}, Kind: format.KindString}
	long, longb := arrayOf("a_label_longer_than_thirty_two_bytes", []float64{1}, 1)
	short, shortb := arrayOf("b", []float64{1, 2, 3}, 3)
	scalar, scalarb := arrayOf("x", []float64{1})
	for _, tc := range []struct {
		name string
		src  *memSource
		want string
		is   error
	}{
		{"complex", source(c, cb), `"z"`, format.ErrNotRepresentable},
		{"i16", source(i16, i16b), `"s"`, format.ErrNotRepresentable},
		{"3-D", source(b3, b3b), `"cube"`, format.ErrNotRepresentable},
		{"two matrices", source(m1, m1b, m2, m2b), `"m1"`, format.ErrNotRepresentable},
		{"string", source(str, []byte{'x'}), `"text"`, format.ErrNotRepresentable},
		{"null", source(col, colb, null, nullb), `"v"`, format.ErrNotRepresentable},
		{"lengths", source(col, colb, short, shortb), `"v"`, format.ErrNotRepresentable},
		{"long label", source(long, longb), "a_label_longer", nil},
		// It said "DAPHNE frames need columns of one length".
		{"scalar", source(scalar, scalarb), `record "x" (f64): the target format cannot hold this record: a scalar (a 0-d array) cannot be a DAPHNE matrix`, format.ErrNotRepresentable},
		{"scalar and column", source(col, colb, scalar, scalarb), `record "x" (f64)`, format.ErrNotRepresentable},
	} {
		p := filepath.Join(t.TempDir(), "x.dbdf")
		err := Write(p, tc.src, nil)
		require.Error(t, err, tc.name)
		assert.ErrorContains(t, err, tc.want, tc.name)
		if tc.is != nil {
			assert.ErrorIs(t, err, tc.is, tc.name)
		}
		_, serr := os.Stat(p)
		assert.ErrorIs(t, serr, os.ErrNotExist, tc.name)
		_, serr = os.Stat(p + ".meta")
		assert.ErrorIs(t, serr, os.ErrNotExist, tc.name)
	}
}

// TestFormatWriteAtomic: a write that fails — while reading the source, or
// in the .meta's rename after the data file's — leaves both files as they
// were, modes included; a write that succeeds keeps their modes (the data
// file is renamed before the .meta: atomicfile's Group tests that order).
func TestFormatWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.dbdf")
	require.NoError(t, WriteDense(p, 1, 2, []float64{1, 2}, nil))
	require.NoError(t, os.Chmod(p, 0o600))
	require.NoError(t, os.Chmod(p+".meta", 0o640))
	oldData, oldMeta := mustRead(t, p), mustRead(t, p+".meta")
	check := func(what string) {
		assert.Equal(t, oldData, mustRead(t, p), what)
		assert.Equal(t, oldMeta, mustRead(t, p+".meta"), what)
		for name, mode := range map[string]os.FileMode{p: 0o600, p + ".meta": 0o640} {
			fi, err := os.Stat(name)
			require.NoError(t, err)
			assert.Equal(t, mode, fi.Mode().Perm(), what)
		}
		left, err := filepath.Glob(filepath.Join(dir, ".*"))
		require.NoError(t, err)
		assert.Empty(t, left, what+": temporaries left behind")
	}
	big := make([]float64, 3<<20) // three chunks of format.Stream
	rec, data := arrayOf("x", big, 3<<10, 1<<10)
	src := source(rec, data)
	src.FailFrom(2<<20, errors.New("source fails"))
	assert.ErrorContains(t, Write(p, src, nil), "source fails")
	check("failing source")

	// The .meta's rename fails after the data file's (a directory took its
	// place after the group began): the old data file is put back.
	src.FailFrom(0, nil)
	metaAside := p + ".meta.aside"
	commitHook = func() error {
		require.NoError(t, os.Rename(p+".meta", metaAside))
		require.NoError(t, os.Mkdir(p+".meta", 0o755))
		return os.WriteFile(filepath.Join(p+".meta", "keep"), nil, 0o644)
	}
	defer func() { commitHook = nil }()
	assert.Error(t, Write(p, src, nil))
	commitHook = nil
	require.NoError(t, os.RemoveAll(p+".meta"))
	require.NoError(t, os.Rename(metaAside, p+".meta"))
	check("failing .meta rename")

	// Success: new contents, old modes.
	require.NoError(t, Write(p, src, nil))
	for name, mode := range map[string]os.FileMode{p: 0o600, p + ".meta": 0o640} {
		fi, err := os.Stat(name)
		require.NoError(t, err)
		assert.Equal(t, mode, fi.Mode().Perm())
	}
	assert.Equal(t, int64(45+len(data)), int64(len(mustRead(t, p))))

	// A failing .meta rename when there was no file: neither file appears.
	q := filepath.Join(dir, "new.dbdf")
	commitHook = func() error {
		require.NoError(t, os.Mkdir(q+".meta", 0o755))
		return os.WriteFile(filepath.Join(q+".meta", "keep"), nil, 0o644)
	}
	assert.Error(t, Write(q, src, nil))
	commitHook = nil
	_, err := os.Stat(q)
	assert.ErrorIs(t, err, os.ErrNotExist)

	// A target that is not a regular file fails the write before anything
	// is replaced: the data file stays as it was.
	r := filepath.Join(dir, "dir.dbdf")
	require.NoError(t, WriteDense(r, 1, 2, []float64{1, 2}, nil))
	require.NoError(t, os.Mkdir(r+".tmpdir", 0o755))
	require.NoError(t, os.Rename(r+".meta", r+".tmpdir/meta"))
	require.NoError(t, os.Mkdir(r+".meta", 0o755))
	before := mustRead(t, r)
	assert.Error(t, Write(r, src, nil))
	assert.Equal(t, before, mustRead(t, r))
}

// TestSalvageRefused: the format's Salvage option is refused, never
// ignored: a damaged DAPHNE file is not read as a smaller one.
func TestSalvageRefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.dbdf")
	require.NoError(t, WriteDense(p, 2, 2, []float64{1, 2, 3, 4}, nil))
	for _, mode := range []mmapfile.Mode{mmapfile.ReadOnly, mmapfile.ReadWrite} {
		_, err := format.OpenFile(p, mode, &format.Options{Salvage: true})
		require.ErrorIs(t, err, errors.ErrUnsupported)
		var fe *FormatError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, p, fe.File)
	}
	f, err := format.Open(p, &format.Options{Lenient: true})
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// Record(i) describes record i as Records does, for every golden file
// (matrices and frames), without building the list.
func TestRecordLister(t *testing.T) {
	paths, _ := filepath.Glob(golden(t, "*.dbdf"))
	require.NotEmpty(t, paths)
	frames := 0
	for _, p := range paths {
		f, err := Open(p, nil)
		if err != nil {
			continue // files only a lenient or document-layout open reads
		}
		var lister format.RecordLister = f
		n := lister.NumRecords()
		var got []format.Record
		for i := range n {
			got = append(got, lister.Record(i))
		}
		if f.Kind() == KindFrame {
			frames++
		}
		assert.Equal(t, f.Records(), got, p)
		require.NoError(t, f.Close())
	}
	assert.Positive(t, frames, "the golden files hold frames")
}
