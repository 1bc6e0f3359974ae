package daphne

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/mmapkit/mmapkit/internal/shareddata"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdataDir is where fuzz seeds are taken from when it exists.
const testdataDir = "../../shared/testdata/daphne"

// golden returns the path of a DAPHNE-written test file, skipping the test
// when the shared test data is absent.
func golden(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(shareddata.Path(t, "daphne"), name)
}

func goldenBytes(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(golden(t, name))
	require.NoError(t, err)
	return b
}

// readCSV parses DAPHNE's CSV output (%f values, no header) row by row.
func readCSV(t *testing.T, path string) [][]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var rows [][]float64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var row []float64
		for _, s := range strings.Split(sc.Text(), ",") {
			v, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	return rows
}

// readMTX parses the MatrixMarket array file (column-major) into rows.
func readMTX(t *testing.T, path string) [][]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.True(t, strings.HasPrefix(lines[0], "%%MatrixMarket matrix array"))
	var r, c int
	_, err = fmt.Sscan(lines[1], &r, &c)
	require.NoError(t, err)
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
	}
	for k, l := range lines[2:] {
		v, err := strconv.ParseFloat(strings.TrimSpace(l), 64)
		require.NoError(t, err)
		out[k%r][k/r] = v
	}
	return out
}

func toFloats[T numeric](v []T) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func flatten(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

func columnFloats(col any) []float64 {
	switch c := col.(type) {
	case []int8:
		return toFloats(c)
	case []int32:
		return toFloats(c)
	case []int64:
		return toFloats(c)
	case []uint8:
		return toFloats(c)
	case []uint32:
		return toFloats(c)
	case []uint64:
		return toFloats(c)
	case []float32:
		return toFloats(c)
	case []float64:
		return c
	}
	panic("unknown column type")
}

// denseFloats reads any matrix file (dense or CSR) as row-major float64s.
func denseFloats(t *testing.T, f *File) []float64 {
	t.Helper()
	h := f.Header()
	if h.Kind == KindCSR {
		switch h.ValueType {
		case F64:
			m, err := ReadCSR[float64](f)
			require.NoError(t, err)
			d, err := m.ToDense(0)
			require.NoError(t, err)
			return d
		case SI32:
			m, err := ReadCSR[int32](f)
			require.NoError(t, err)
			d, err := m.ToDense(0)
			require.NoError(t, err)
			return toFloats(d)
		}
	}
	switch h.ValueType {
	case F64:
		v, err := Read[float64](f, "matrix")
		require.NoError(t, err)
		return v
	case SI32:
		v, err := Read[int32](f, "matrix")
		require.NoError(t, err)
		return toFloats(v)
	}
	t.Fatalf("unexpected value type %v", h.ValueType)
	return nil
}

// TestGoldenValues reads every DAPHNE-written file and compares it value by
// value with its CSV or MatrixMarket twin.
func TestGoldenValues(t *testing.T) {
	dir := golden(t, "")
	mtx := readMTX(t, filepath.Join(dir, "aig.mtx"))
	tests := []struct {
		file   string
		kind   Kind
		vt     ValueType
		twin   [][]float64
		labels []string
	}{
		{"dense_2x3_f64.dbdf", KindDense, F64, readCSV(t, filepath.Join(dir, "dense_2x3_f64.csv")), nil},
		{"csr_3x3_f64_nnz2.dbdf", KindCSR, F64, readCSV(t, filepath.Join(dir, "csr_3x3_f64_nnz2.csv")), nil},
		{"frame_2x2_si64_f64.dbdf", KindFrame, INVALID, readCSV(t, filepath.Join(dir, "frame_2x2_si64_f64.csv")), []string{"a", "bc"}},
		{"aig.dbdf", KindDense, SI32, mtx, nil},
		{"aig-csr.dbdf", KindCSR, SI32, mtx, nil},
		{"aig-f.dbdf", KindFrame, INVALID, mtx, []string{"col_0", "col_1", "col_2"}},
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.dbdf"))
	require.NoError(t, err)
	require.Len(t, files, len(tests), "every .dbdf in the test data has a case here")
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			f, err := Open(filepath.Join(dir, tc.file), nil)
			require.NoError(t, err)
			defer f.Close()
			h := f.Header()
			assert.Equal(t, uint8(1), h.Version)
			assert.Equal(t, tc.kind, h.Kind)
			assert.Equal(t, tc.vt, h.ValueType)
			assert.Equal(t, uint64(len(tc.twin)), h.Rows)
			assert.Equal(t, uint64(len(tc.twin[0])), h.Cols)
			assert.Empty(t, h.Relaxed)
			require.NotNil(t, h.Meta)
			if tc.kind != KindFrame {
				assert.Equal(t, flatten(tc.twin), denseFloats(t, f))
				return
			}
			fr, err := ReadFrame(f)
			require.NoError(t, err)
			assert.Equal(t, tc.labels, fr.Labels)
			require.Len(t, fr.Columns, len(tc.twin[0]))
			for c := range fr.Columns {
				var want []float64
				for _, row := range tc.twin {
					want = append(want, row[c])
				}
				assert.Equal(t, want, columnFloats(fr.Columns[c]), "column %d", c)
			}
		})
	}
}

// TestGoldenExactValues pins the spec's worked examples to typed values.
func TestGoldenExactValues(t *testing.T) {
	f, err := Open(golden(t, "csr_3x3_f64_nnz2.dbdf"), nil)
	require.NoError(t, err)
	defer f.Close()
	m, err := ReadCSR[float64](f)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 1, 1, 2}, m.RowOffsets)
	assert.Equal(t, []uint64{1, 2}, m.ColIdxs)
	assert.Equal(t, []float64{1, 2}, m.Values)
	assert.Equal(t, int64(2), f.Header().Meta.NumNonZeros)
	assert.Equal(t, LayoutCurrent, f.Header().Layout)

	g, err := Open(golden(t, "aig-csr.dbdf"), nil)
	require.NoError(t, err)
	defer g.Close()
	a, err := ReadCSR[int32](g)
	require.NoError(t, err)
	assert.Equal(t, []uint64{0, 3, 6, 9, 12}, a.RowOffsets)
	assert.Equal(t, []uint64{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}, a.ColIdxs)
	assert.Equal(t, []int32{1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12}, a.Values)

	fr, err := Open(golden(t, "frame_2x2_si64_f64.dbdf"), nil)
	require.NoError(t, err)
	defer fr.Close()
	d, err := ReadFrame(fr)
	require.NoError(t, err)
	assert.Equal(t, []any{[]int64{7, -1}, []float64{0.5, 1}}, d.Columns)
	assert.Equal(t, []ValueType{SI64, F64}, d.Types)
	assert.Equal(t, int64(0x2b), fr.Header().DataOffset)
}

// TestGoldenFrameLabelsWithoutMeta: without a .meta, DAPHNE's names; the
// label bytes are skipped, exactly len bytes each.
func TestGoldenFrameLabelsWithoutMeta(t *testing.T) {
	for _, tc := range []struct {
		file     string
		labelOff []int64
		data     int64
	}{
		{"frame_2x2_si64_f64.dbdf", []int64{0x14, 0x17}, 0x2b},
		{"aig-f.dbdf", []int64{21, 28, 35}, 58},
	} {
		b := goldenBytes(t, tc.file)
		f, err := NewReader(bytes.NewReader(b), int64(len(b)), nil)
		require.NoError(t, err)
		assert.Equal(t, tc.labelOff, labelOffsets(b))
		assert.Equal(t, tc.data, f.Header().DataOffset)
		fr, err := ReadFrame(f)
		require.NoError(t, err)
		assert.Equal(t, defaultLabels(len(tc.labelOff)), fr.Labels)
	}
}

// labelOffsets returns the offset of each label's u16 length in the bytes
// of a frame file.
func labelOffsets(b []byte) []int64 {
	cols := int64(binary.LittleEndian.Uint64(b[10:]))
	p := 18 + cols
	out := make([]int64, cols)
	for i := range out {
		out[i] = p
		p += 2 + int64(binary.LittleEndian.Uint16(b[p:]))
	}
	return out
}

// TestGoldenRewrite writes every file back: byte-identical data (frames:
// all but the label bytes, which we write correctly) and .meta.
func TestGoldenRewrite(t *testing.T) {
	dir := golden(t, "")
	files, err := filepath.Glob(filepath.Join(dir, "*.dbdf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, src := range files {
		t.Run(filepath.Base(src), func(t *testing.T) {
			want, err := os.ReadFile(src)
			require.NoError(t, err)
			wantMeta, err := os.ReadFile(src + ".meta")
			require.NoError(t, err)
			f, err := Open(src, nil)
			require.NoError(t, err)
			defer f.Close()
			out := filepath.Join(t.TempDir(), filepath.Base(src))
			h := f.Header()
			switch {
			case h.Kind == KindDense && h.ValueType == F64:
				v, err := Read[float64](f, "matrix")
				require.NoError(t, err)
				require.NoError(t, WriteDense(out, h.Rows, h.Cols, v, nil))
			case h.Kind == KindDense && h.ValueType == SI32:
				v, err := Read[int32](f, "matrix")
				require.NoError(t, err)
				require.NoError(t, WriteDense(out, h.Rows, h.Cols, v, nil))
			case h.Kind == KindCSR && h.ValueType == F64:
				m, err := ReadCSR[float64](f)
				require.NoError(t, err)
				require.NoError(t, WriteCSR(out, m, nil))
			case h.Kind == KindCSR && h.ValueType == SI32:
				m, err := ReadCSR[int32](f)
				require.NoError(t, err)
				require.NoError(t, WriteCSR(out, m, nil))
			case h.Kind == KindFrame:
				fr, err := ReadFrame(f)
				require.NoError(t, err)
				require.NoError(t, WriteFrame(out, fr, nil))
				// Our label bytes are the labels' text; DAPHNE's are pointer bytes.
				want = append([]byte(nil), want...)
				for i, off := range labelOffsets(want) {
					n := int(want[off]) | int(want[off+1])<<8
					require.Equal(t, len(fr.Labels[i]), n)
					copy(want[off+2:], fr.Labels[i])
				}
			default:
				t.Fatalf("no case for %v %v", h.Kind, h.ValueType)
			}
			got, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			gotMeta, err := os.ReadFile(out + ".meta")
			require.NoError(t, err)
			assert.Equal(t, string(wantMeta), string(gotMeta))
		})
	}
}

func TestGoldenLabelBytes(t *testing.T) {
	// §12(c): mmapkit writes 61 and 62 63 where DAPHNE wrote pointer bytes;
	// every other byte is identical.
	want := goldenBytes(t, "frame_2x2_si64_f64.dbdf")
	out := filepath.Join(t.TempDir(), "f.dbdf")
	require.NoError(t, WriteFrame(out, &Frame{Rows: 2, Labels: []string{"a", "bc"}, Columns: []any{[]int64{7, -1}, []float64{0.5, 1}}}, nil))
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Len(t, got, 75)
	assert.Equal(t, []byte{0x61}, got[0x16:0x17])
	assert.Equal(t, []byte{0x62, 0x63}, got[0x19:0x1b])
	var diff []int
	for i := range want {
		if want[i] != got[i] {
			diff = append(diff, i)
		}
	}
	assert.Equal(t, []int{0x16, 0x19, 0x1a}, diff)
}
