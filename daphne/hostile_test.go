package daphne

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll reads whatever f holds through every read path, as a tool
// would; it must never panic, whatever the file.
func readAll(f *File) error {
	h := f.Header()
	switch h.Kind {
	case KindFrame:
		_, err := ReadFrame(f)
		return err
	case KindCSR:
		var err error
		switch h.ValueType {
		case SI8:
			err = readCSRAll[int8](f)
		case SI32:
			err = readCSRAll[int32](f)
		case SI64:
			err = readCSRAll[int64](f)
		case UI8:
			err = readCSRAll[uint8](f)
		case UI32:
			err = readCSRAll[uint32](f)
		case UI64:
			err = readCSRAll[uint64](f)
		case F32:
			err = readCSRAll[float32](f)
		case F64:
			err = readCSRAll[float64](f)
		}
		return err
	}
	switch h.ValueType {
	case SI8:
		return readDenseAll[int8](f)
	case SI32:
		return readDenseAll[int32](f)
	case SI64:
		return readDenseAll[int64](f)
	case UI8:
		return readDenseAll[uint8](f)
	case UI32:
		return readDenseAll[uint32](f)
	case UI64:
		return readDenseAll[uint64](f)
	case F32:
		return readDenseAll[float32](f)
	}
	return readDenseAll[float64](f)
}

func readDenseAll[T numeric](f *File) error {
	if _, _, err := DenseValues[T](f); err != nil {
		return err
	}
	h := f.Header()
	_, err := ReadDenseRange[T](f, h.Rows/2, h.Rows, h.Cols/3, h.Cols)
	return err
}

func readCSRAll[T numeric](f *File) error {
	m, err := ReadCSR[T](f)
	if err != nil {
		return err
	}
	if _, err := m.ToDense(1 << 20); err != nil {
		return err
	}
	if m.Rows > 0 && m.Cols > 0 {
		_, err = m.At(m.Rows-1, m.Cols-1)
	}
	return err
}

// smallFiles are the golden files plus the doc-only layouts built from
// the spec.
func smallFiles(t *testing.T) map[string][]byte {
	files := map[string][]byte{
		"csr01":      unhex(t, hexCSR01),
		"csrdoc":     unhex(t, hexCSRDoc),
		"coo":        cooFile(t, 2),
		"empty":      emptyBlockFile(t),
		"multiblock": multiBlockFile(1),
	}
	if _, err := os.Stat(testdataDir); err == nil {
		paths, err := filepath.Glob(filepath.Join(testdataDir, "*.dbdf"))
		require.NoError(t, err)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			files[filepath.Base(p)] = b
		}
	} else {
		files["dense"] = unhex(t, hexDense2x3)
		files["csr"] = unhex(t, hexCSR3x3)
		files["frame"] = unhex(t, hexFrame)
	}
	return files
}

// TestTruncation: every proper prefix of every file is an error naming an
// offset inside the file — except the 109-byte prefix of §12(b), a valid
// release-0.1 file.
func TestTruncation(t *testing.T) {
	for name, data := range smallFiles(t) {
		for n := 0; n < len(data); n++ {
			for _, o := range []*Options{nil, {Lenient: true}} {
				f, err := open(t, data[:n], o)
				if err == nil {
					if (name == "csr_3x3_f64_nnz2.dbdf" || name == "csr") && n == 109 {
						assert.Equal(t, LayoutRelease01, f.Header().Layout)
						require.NoError(t, readAll(f))
						continue
					}
					// Doc-only multi-block files read leniently keep only
					// their first block.
					if o != nil && name == "multiblock" {
						continue
					}
					t.Fatalf("%s cut to %d bytes (lenient %v) opened without error", name, n, o != nil)
				}
				var fe *FormatError
				require.ErrorAs(t, err, &fe, "%s[:%d]", name, n)
				assert.True(t, fe.Offset >= 0 && fe.Offset <= int64(n), "%s[:%d]: offset %d: %v", name, n, fe.Offset, err)
			}
		}
	}
}

// TestTruncationOffsets cuts every file at every byte with its layout
// known (so that a cut CSR block is not read as another layout of the
// cut size): each cut is mmapfile.ErrTruncated at the start of the field
// the end of the file cuts short — the header field, the block field,
// the frame's column types, label or values, a block's values (dense) or
// its nnz (sparse and COO, whose whole body nnz sizes). A cut at the end
// of a block of a multi-block file leaves a file of fewer blocks, which
// the partition check refuses instead, and a cut file that fits the
// format document's layout exactly is ErrDocumentLayout.
func TestTruncationOffsets(t *testing.T) {
	for name, data := range smallFiles(t) {
		var o *Options
		f, err := open(t, data, nil)
		if err != nil {
			o = &Options{DocumentLayout: true}
			f, err = open(t, data, o)
		}
		require.NoError(t, err, name)
		h := f.Header()
		if o == nil {
			o = &Options{}
		}
		o.CSRLayout = h.Layout
		starts := fieldStarts(t, data, h)
		boundary := map[int]bool{}
		for i := 0; i+1 < len(h.Blocks); i++ {
			boundary[int(h.Blocks[i].End)] = true
		}
		for n := 0; n < len(data); n++ {
			if boundary[n] {
				continue
			}
			want := int64(0)
			for _, s := range starts {
				if s <= int64(n) {
					want = s
				}
			}
			_, err := open(t, data[:n], o)
			var fe *FormatError
			require.ErrorAs(t, err, &fe, "%s[:%d]", name, n)
			if errors.Is(err, ErrDocumentLayout) {
				continue // the cut file fits the document's layout exactly
			}
			require.ErrorIs(t, err, mmapfile.ErrTruncated, "%s[:%d]: %v", name, n, err)
			require.Equal(t, want, fe.Offset, "%s[:%d]: %v", name, n, err)
		}
	}
}

// fieldStarts lists where the fields of a file begin, in file order, as
// its header describes them (label lengths read from data).
func fieldStarts(t *testing.T, data []byte, h Header) []int64 {
	s := []int64{0, 1, 2, 10, headerSize}
	if h.Kind == KindFrame {
		p := headerSize + int64(len(h.ColumnTypes))
		for range h.ColumnTypes {
			s = append(s, p)
			p += 2 + int64(binary.LittleEndian.Uint16(data[p:]))
		}
		require.Equal(t, p+16, h.DataOffset, "the frame's values follow rx and cx")
		return append(s, p, p+8, p+16)
	}
	for _, b := range h.Blocks {
		s = append(s, b.Offset, b.Offset+8, b.Offset+16, b.Offset+20, b.Offset+24, b.Offset+25, b.Offset+26)
	}
	return s
}

// TestBitFlips: a single-bit flip anywhere gives an error or a valid
// parse, never a panic, in both modes and through every read path.
func TestBitFlips(t *testing.T) {
	for name, data := range smallFiles(t) {
		b := append([]byte(nil), data...)
		for i := range b {
			for bit := 0; bit < 8; bit++ {
				b[i] ^= 1 << bit
				for _, o := range []*Options{nil, {Lenient: true, MaxAlloc: 1 << 20}} {
					f, err := open(t, b, o)
					if err != nil {
						var fe *FormatError
						require.ErrorAs(t, err, &fe, "%s byte %d bit %d", name, i, bit)
						continue
					}
					_ = readAll(f)
				}
				b[i] ^= 1 << bit
			}
		}
	}
}

func TestHostile(t *testing.T) {
	dense := unhex(t, hexDense2x3)
	csr := unhex(t, hexCSR3x3)
	put64 := func(b []byte, off int, v uint64) []byte {
		b = append([]byte(nil), b...)
		binary.LittleEndian.PutUint64(b[off:], v)
		return b
	}
	put32 := func(b []byte, off int, v uint32) []byte {
		b = append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	hugeDense := put32(put32(put64(put64(dense, 2, 1<<32-1), 10, 1<<32-1), 35, 1<<32-1), 39, 1<<32-1)
	hugeFrame := put64(unhex(t, hexFrame), 10, 1<<62)
	hugeFrameRows := put64(unhex(t, hexFrame), 2, 1<<61)
	tests := []struct {
		name     string
		data     []byte
		openOff  int64 // -1: Open succeeds
		readOff  int64 // strict read error offset, -2: read succeeds
		lenient  bool  // lenient read succeeds
		sentinel error
	}{
		{"huge dense dims", hugeDense, 45, 0, false, mmapfile.ErrTruncated},
		{"huge frame cols", hugeFrame, 18, 0, false, mmapfile.ErrTruncated},
		{"huge frame rows", hugeFrameRows, 0x2b, 0, false, mmapfile.ErrTruncated},
		{"nnz beyond file", put64(csr, 45, 1<<40), 45, 0, false, nil},
		{"nnz 3 of 2", put64(csr, 45, 3), 45, 0, false, nil},
		{"rowOffsets[0] = 1", put64(csr, 53, 1), -1, 53, true, nil},
		{"rowOffsets decreasing", put64(csr, 69, 0), -1, 69, false, nil},
		{"rowOffsets[3] = 1", put64(csr, 77, 1), -1, 77, true, nil},
		{"column index = cols", put64(csr, 85, 3), -1, 85, false, nil},
		{"column index huge", put64(csr, 93, 1<<63), -1, 93, false, nil},
		{"columns not increasing", func() []byte {
			b := put64(put64(csr, 61, 2), 69, 2) // row 0 holds both entries
			return put64(b, 93, 0)               // cols 1, then 0
		}(), -1, 93, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			f, err := open(t, tc.data, nil)
			var fe *FormatError
			if tc.openOff >= 0 {
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tc.openOff, fe.Offset, "%v", err)
				if tc.sentinel != nil {
					assert.ErrorIs(t, err, tc.sentinel)
				}
				_, err = open(t, tc.data, &Options{Lenient: true})
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				err = readAll(f)
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tc.readOff, fe.Offset, "%v", err)
				lf, err := open(t, tc.data, &Options{Lenient: true})
				require.NoError(t, err)
				m, err := ReadCSR[float64](lf)
				require.NoError(t, err, "lenient reads the arrays unvalidated")
				_, err = m.ToDense(0)
				_, err2 := m.At(0, 0)
				if tc.lenient {
					assert.NoError(t, err)
					assert.NoError(t, err2)
				} else {
					assert.Error(t, err, "indexing a malformed lenient CSR validates first")
					assert.Error(t, err2)
				}
			}
			runtime.ReadMemStats(&after)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "hostile input allocates < 1 MiB")
		})
	}
}

// TestAllocBound: opening and reading files whose headers claim huge
// sizes allocates less than 1 MiB.
func TestAllocBound(t *testing.T) {
	hostile := [][]byte{}
	for _, dims := range [][2]uint64{{1 << 32, 1 << 32}, {1<<32 - 1, 1<<32 - 1}, {1 << 62, 3}} {
		b := unhex(t, hexDense2x3)
		binary.LittleEndian.PutUint64(b[2:], dims[0])
		binary.LittleEndian.PutUint64(b[10:], dims[1])
		binary.LittleEndian.PutUint32(b[35:], uint32(dims[0]))
		binary.LittleEndian.PutUint32(b[39:], uint32(dims[1]))
		hostile = append(hostile, b)
	}
	e := emptyBlockFile(t) // empty block claiming 2^32-1 squared zeros
	binary.LittleEndian.PutUint64(e[2:], 1<<32-1)
	binary.LittleEndian.PutUint64(e[10:], 1<<32-1)
	binary.LittleEndian.PutUint32(e[35:], 1<<32-1)
	binary.LittleEndian.PutUint32(e[39:], 1<<32-1)
	hostile = append(hostile, e)
	c := cooFile(t, 2) // COO block claiming a huge matrix
	binary.LittleEndian.PutUint64(c[2:], 1<<32-1)
	binary.LittleEndian.PutUint32(c[35:], 1<<32-1)
	hostile = append(hostile, c)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, b := range hostile {
		for _, o := range []*Options{nil, {Lenient: true}} {
			if f, err := open(t, b, o); err == nil {
				// Lenient mode takes the u32 block dims: 0×0, 0×3, ….
				_ = readAll(f)
			}
		}
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))
}

func TestMappedFileTruncatedUnderneath(t *testing.T) {
	// A copying read of a file shrunk after Open is an error, not a crash.
	path := filepath.Join(t.TempDir(), "x.dbdf")
	v := make([]float64, 4096)
	require.NoError(t, WriteDense(path, 64, 64, v, &WriteOptions{NoMeta: true}))
	f, err := Open(path, nil)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, os.Truncate(path, 100))
	_, err = Read[float64](f, "matrix")
	require.Error(t, err)
	var fe *FormatError
	assert.ErrorAs(t, err, &fe)
}
