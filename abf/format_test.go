package abf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/memsource"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSniff(t *testing.T) {
	g := goldenFiles(t)
	long := newC().u8(0).str(strings.Repeat("k", 600)).str("Array{Float64,1}").i64(1).padTo(8).f64s(1).b
	for _, tc := range []struct {
		name string
		head []byte
		want bool
	}{
		{"empty file: Format C", nil, true},
		{"A, little-endian header", g["tv2-a.abf"][:22], true},
		{"A, big-endian header", g["bigendian-a.abf"][:22], true},
		{"C", g["tv1-c.abf"], true},
		{"C, big-endian record", g["bigendian-c.abf"], true},
		{"B", g["tv3-b.abf"], true},
		{"C key longer than the sniffed bytes", long[:format.SniffLen], true},
		{"a C record cut short", long[:100], true},
		{"a flag alone", []byte{0xFF}, true},
		{"flag, then a key length no format has", newC().u8(0).i64(-4).b, false},
		{"flag, then neither C's key nor B's container", newAB().u8(0).str("hello").str("Tuple").b, false},
		{"Futhark binary", []byte("b\x02\x01 f64\x02\x00\x00\x00\x00\x00\x00\x00"), false},
		{"NumPy", []byte("\x93NUMPY\x01\x00v\x00{'descr': '<f8'}"), false},
		{"text", []byte("[1.0, 2.0]\n"), false},
	} {
		assert.Equal(t, tc.want, sniff(tc.head), tc.name)
	}

	// Detection through the registry: by extension, and by bytes.
	dir := t.TempDir()
	for name, data := range map[string][]byte{"x.abf": []byte("not really"), "noext": g["tv1-c.abf"], "empty.abf": nil} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		fm, err := format.Detect(p, nil)
		require.NoError(t, err, name)
		assert.Equal(t, "abf", fm.Name, name)
	}
	// An empty file without the extension is no ABF file: its bytes tell
	// no format, though an empty Format C file is valid.
	p := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	_, err := format.Detect(p, nil)
	assert.ErrorIs(t, err, format.ErrUnknownFormat)
	assert.Contains(t, fmt.Sprint(err), "empty file")
	fm, ok := format.Lookup("abf")
	require.True(t, ok)
	assert.Equal(t, []string{".abf"}, fm.Extensions)
	assert.Equal(t, []string{"abf-version", "abf-bits"}, []string{fm.Params[0].Name, fm.Params[1].Name})
	assert.True(t, fm.Params[1].Switch)
}

// openFormat opens a copy of data through the registry.
func openFormatBytes(t *testing.T, data []byte, mode mmapfile.Mode) (format.File, string) {
	t.Helper()
	p := tempFile(t, data)
	f, err := format.OpenFile(p, mode, nil)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f, p
}

func TestFormatRecords(t *testing.T) {
	g := goldenFiles(t)
	f, _ := openFormatBytes(t, g["readme1-c.abf"], mmapfile.ReadOnly)
	assert.Equal(t, "abf", f.Format())
	assert.Equal(t, "C", f.Version())
	col := layout.ColMajor
	assert.Equal(t, []format.Record{
		{Array: layout.Array{Name: "my x array", Type: layout.F16, Shape: []int64{5}, Order: col, Offset: 52, Size: 10}, Kind: format.KindArray},
		{Array: layout.Array{Name: "whY array", Type: layout.JuliaChar, Shape: []int64{3, 3, 3}, Order: col, Offset: 128, Size: 108}, Kind: format.KindArray},
		{Array: layout.Array{Name: "ζ!/b", Type: layout.F64, Shape: []int64{3, 5}, Order: col, Offset: 296, Size: 120}, Kind: format.KindArray},
		{Array: layout.Array{Name: "bitmat", Type: layout.Bool, Shape: []int64{3, 5}, Order: col, Offset: 472, Size: 8}, Kind: format.KindArray, TypeName: "bits"},
	}, f.Records())

	k, _ := openFormatBytes(t, g["keys-c.abf"], mmapfile.ReadOnly)
	assert.Equal(t, format.Record{Array: layout.Array{Name: "blahαש", Type: layout.U8, Shape: []int64{6}, Order: col, Offset: 79, Size: 6},
		Kind: format.KindString, TypeName: "string"}, k.Records()[1])
	s, p := openFormatBytes(t, g["serialized-c.abf"], mmapfile.ReadOnly)
	assert.Equal(t, format.Record{Array: layout.Array{Name: "T", Type: layout.Invalid, Shape: []int64{}, Order: col, Offset: 34, Size: 12},
		Kind: format.KindOpaque, TypeName: "datatype", Extra: map[string]any{"julia_type": "DataType"}}, s.Records()[0])
	assert.Equal(t, "serialized", s.Records()[1].TypeName)
	err := s.ReadArray(0, make([]byte, 12), 0, col, binary.LittleEndian)
	fe := requireFormatErr(t, err, 34, errors.ErrUnsupported)
	assert.Equal(t, p, fe.File)

	for name, v := range map[string]string{"tv1-c.abf": "C", "tv2-a.abf": "A", "tv3-b.abf": "B", "bigendian-a.abf": "A"} {
		f, _ := openFormatBytes(t, g[name], mmapfile.ReadOnly)
		assert.Equal(t, v, f.Version(), name)
	}
	be, _ := openFormatBytes(t, g["bigendian-c.abf"], mmapfile.ReadOnly)
	assert.True(t, be.Records()[0].BigEndian)
}

// readArray reads n elements of record i from first, in order and little-endian.
func readArray(t *testing.T, f format.Source, i int, first, n int64, order layout.Order) []byte {
	t.Helper()
	dst := make([]byte, n*int64(f.Records()[i].Type.Size()))
	require.NoError(t, f.ReadArray(i, dst, first, order, binary.LittleEndian))
	return dst
}

func f64s(b []byte) []float64 { return append([]float64(nil), unsafeslice.Cast[float64](b)...) }

func TestFormatReadArray(t *testing.T) {
	g := goldenFiles(t)
	f, p := openFormatBytes(t, g["readme1-c.abf"], mmapfile.ReadOnly)
	// Julia's z = reshape(1:15, 3, 5): logical (row-major) order is its rows.
	assert.Equal(t, []float64{1, 4, 7, 10, 13, 2, 5, 8, 11, 14, 3, 6, 9, 12, 15}, f64s(readArray(t, f, 2, 0, 15, layout.RowMajor)))
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, f64s(readArray(t, f, 2, 0, 15, layout.ColMajor)))
	assert.Equal(t, []float64{11, 14, 3}, f64s(readArray(t, f, 2, 8, 3, layout.RowMajor)))
	big := make([]byte, 8)
	require.NoError(t, f.ReadArray(2, big, 14, layout.ColMajor, binary.BigEndian))
	assert.Equal(t, []byte{0x40, 0x2e, 0, 0, 0, 0, 0, 0}, big) // 15.0, big-endian
	// The README's bitmat, [0 0 1 1 1; 1 1 0 0 0; 1 0 1 0 1], row by row.
	assert.Equal(t, []byte{0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 0, 1}, readArray(t, f, 3, 0, 15, layout.RowMajor))
	assert.Equal(t, []byte{0, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1}, readArray(t, f, 3, 0, 15, layout.ColMajor))
	assert.Equal(t, []byte{0, 0, 0}, readArray(t, f, 3, 7, 3, layout.RowMajor))
	err := f.ReadArray(2, make([]byte, 16), 14, layout.RowMajor, binary.LittleEndian)
	fe := requireFormatErr(t, err, 296, mmapfile.ErrOutOfRange)
	assert.Equal(t, p, fe.File)

	k, _ := openFormatBytes(t, g["keys-c.abf"], mmapfile.ReadOnly)
	assert.Equal(t, "a∘α", string(readArray(t, k, 1, 0, 6, layout.RowMajor)))

	// Big-endian records read in either byte order; BitArray words swap.
	be, _ := openFormatBytes(t, g["bigendian-c.abf"], mmapfile.ReadOnly)
	assert.Equal(t, []float64{1, 2}, f64s(readArray(t, be, 0, 0, 2, layout.RowMajor)))
	assert.Equal(t, []byte{0, 0, 0xb6, 0xce}, readArray(t, be, 1, 0, 1, layout.RowMajor)) // 'ζ' as a little-endian Julia Char
	assert.Equal(t, []byte{1, 0, 1}, readArray(t, be, 2, 0, 3, layout.RowMajor))

	// Closed: every call names the file and wraps mmapfile.ErrClosed.
	require.NoError(t, f.Close())
	err = f.ReadArray(0, make([]byte, 2), 0, layout.RowMajor, binary.LittleEndian)
	fe = requireFormatErr(t, err, -1, mmapfile.ErrClosed)
	assert.Equal(t, p, fe.File)
	fe = requireFormatErr(t, f.Close(), -1, mmapfile.ErrClosed)
	assert.Equal(t, p, fe.File)
}

// TestFormatReadBits reads BitArrays of several shapes in both orders over
// every range start, against the bools they were packed from.
func TestFormatReadBits(t *testing.T) {
	shapes := [][]int64{{3}, {5, 7, 3}, {70, 3}, {64, 2}, {1, 130}, {130, 1}, {0}, {}, {2, 0, 3}}
	data := build(t, FormatC, func(f *File) {
		for k, dims := range shapes {
			n, _ := layout.Count(dims)
			col := make([]bool, n)
			for i := range col {
				col[i] = (i*7+k)%3 == 0
			}
			b, err := PackBits(dims, col)
			must(err)
			must(f.WriteBits(string(rune('a'+k)), b))
		}
	})
	f, _ := openFormatBytes(t, data, mmapfile.ReadOnly)
	for k, dims := range shapes {
		n, _ := layout.Count(dims)
		col := make([]byte, n)
		for i := range col {
			if (i*7+k)%3 == 0 {
				col[i] = 1
			}
		}
		row := make([]byte, n)
		if n > 0 {
			require.NoError(t, layout.ReorderBytes(row, col, 1, dims, layout.ColMajor))
		}
		for _, order := range []layout.Order{layout.ColMajor, layout.RowMajor} {
			want := map[layout.Order][]byte{layout.ColMajor: col, layout.RowMajor: row}[order]
			for first := int64(0); first < n; first++ {
				for _, m := range []int64{1, 2, 63, 64, 65, n - first} {
					if m > n-first {
						continue
					}
					assert.Equal(t, want[first:first+m], readArray(t, f, k, first, m, order), "%v %v [%d,+%d)", dims, order, first, m)
				}
			}
		}
	}
}

// TestFormatReadBitsBoundedMemory reads a BitArray of 64 Mi elements (64
// MiB as bytes) row by row, in pieces: the reads allocate a bounded window,
// not the unpacked array.
func TestFormatReadBitsBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 Mi elements")
	}
	const d = 8192
	words := make([]uint64, d*d/64)
	for i := range words {
		words[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	p := filepath.Join(t.TempDir(), "bits.abf")
	w, err := openMode(p, "w", nil)
	require.NoError(t, err)
	require.NoError(t, w.WriteBits("b", BitArray{Dims: []int64{d, d}, Chunks: words}))
	require.NoError(t, w.Close())
	f, err := format.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()

	piece := make([]byte, 1<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for first := int64(0); first < d*d; first += int64(len(piece)) {
		require.NoError(t, f.ReadArray(0, piece, first, layout.RowMajor, binary.LittleEndian))
		for _, k := range []int64{0, 1, 4095, int64(len(piece)) - 1} {
			i, j := (first+k)/d, (first+k)%d // logical x[i,j] is column-major bit j*d+i
			bit := j*d + i
			require.Equal(t, byte(words[bit/64]>>(bit%64)&1), piece[k], "element [%d,%d]", i, j)
		}
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(24<<20), "64 MiB of elements read through a bounded window")
}

func TestFormatSetText(t *testing.T) {
	g := goldenFiles(t)
	f, p := openFormatBytes(t, g["readme1-c.abf"], mmapfile.ReadWrite)
	s, ok := f.(format.Setter)
	require.True(t, ok)
	require.NoError(t, s.SetText(2, []int64{1, 2}, "-8.5")) // Julia's z[2,3]
	require.NoError(t, s.SetText(3, []int64{0, 0}, "true"))
	require.NoError(t, s.SetText(1, []int64{2, 2, 2}, "ζ"))
	require.NoError(t, s.SetText(0, []int64{4}, "0.5"))
	fe := requireFormatErr(t, s.SetText(2, []int64{3, 0}, "1"), 236, mmapfile.ErrOutOfRange)
	assert.Equal(t, p, fe.File)
	requireFormatErr(t, s.SetText(2, []int64{0}, "1"), 236, mmapfile.ErrOutOfRange)
	// A bad literal is about the record, not a byte of the file.
	fe = requireFormatErr(t, s.SetText(2, []int64{0, 0}, "x"), -1, layout.ErrSyntax)
	assert.Equal(t, "ζ!/b", fe.Record)
	assert.Contains(t, fe.Error(), `"x" is not a f64`)
	require.NoError(t, s.Sync())
	require.NoError(t, f.Close())

	r, err := Open(p, nil)
	require.NoError(t, err)
	defer r.Close()
	z, _ := Read[float64](r, "ζ!/b")
	assert.Equal(t, -8.5, z[7])
	bits, _ := Read[bool](r, "bitmat")
	assert.True(t, bits[0])
	c, _ := Read[layout.Char](r, "whY array")
	assert.Equal(t, layout.Char(0xCEB60000), c[26])
	h, _ := Read[layout.Float16](r, "my x array")
	assert.Equal(t, layout.Float16(0x3800), h[4])

	k, _ := openFormatBytes(t, g["keys-c.abf"], mmapfile.ReadWrite)
	requireFormatErr(t, k.(format.Setter).SetText(1, []int64{0}, "b"), 40, errors.ErrUnsupported)
	ro, _ := openFormatBytes(t, g["tv1-c.abf"], mmapfile.ReadOnly)
	requireFormatErr(t, ro.(format.Setter).SetText(0, []int64{0}, "3"), -1, mmapfile.ErrNotWritable)
}

func TestFormatDamage(t *testing.T) {
	cut := goldenFiles(t)["tv1-c.abf"][:100]
	p := tempFile(t, cut)
	_, err := format.Open(p, nil)
	fe := requireFormatErr(t, err, 93, mmapfile.ErrTruncated)
	assert.Equal(t, p, fe.File)
	f, err := format.Open(p, &format.Options{Salvage: true})
	require.NoError(t, err)
	defer f.Close()
	assert.Len(t, f.Records(), 1)
	requireFormatErr(t, f.(format.Damaged).Damage(), 93, mmapfile.ErrTruncated)
}

// convert converts the bytes in through the registry with the given ABF
// version and returns the output's bytes.
func convert(t *testing.T, in []byte, params map[string]string) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "in.abf"), filepath.Join(dir, "out.abf")
	require.NoError(t, os.WriteFile(src, in, 0o644))
	if err := format.Convert(src, dst, nil, &format.Options{Params: params}); err != nil {
		return nil, err
	}
	return os.ReadFile(dst)
}

// TestConvertBetweenVersions converts the golden files between Formats A
// and C (and B to C): the output is byte for byte what the other version's
// writer makes of the same records, BitArrays and Bool arrays included.
func TestConvertBetweenVersions(t *testing.T) {
	g := goldenFiles(t)
	for _, tc := range []struct{ in, version, want string }{
		{"tv2-a.abf", "C", "tv1-c.abf"},
		{"tv1-c.abf", "A", "tv2-a.abf"},
		{"tv3-b.abf", "", "tv1-c.abf"},
		{"readme1-a.abf", "C", "readme1-c.abf"},
		{"readme1-c.abf", "A", "readme1-a.abf"},
		{"readme2-a.abf", "c", "readme2-c.abf"},
		{"readme2-c.abf", "A", "readme2-a.abf"},
		{"types-a.abf", "C", "types-c.abf"},
		{"types-c.abf", "A", "types-a.abf"},
		{"types-c.abf", "C", "types-c.abf"},
		{"keys-c.abf", "", "keys-c.abf"},
		{"bigendian-a.abf", "A", ""},
		{"bigendian-c.abf", "C", ""},
	} {
		got, err := convert(t, g[tc.in], map[string]string{"abf-version": tc.version})
		require.NoError(t, err, tc.in)
		want := g[tc.want]
		switch tc.in {
		case "bigendian-a.abf": // the same values, little-endian
			want = build(t, FormatA, func(f *File) { must(Write(f, "x", []int64{2}, []float64{1, 2})) })
		case "bigendian-c.abf":
			want = build(t, FormatC, func(f *File) {
				must(Write(f, "x", []int64{2}, []float64{1, 2}))
				must(Write(f, "c", []int64{1}, []layout.Char{0xCEB60000}))
				must(f.WriteBits("b", BitArray{Dims: []int64{3}, Chunks: []uint64{5}}))
			})
		}
		assert.Equal(t, want, got, "%s to %q", tc.in, tc.version)
	}

	// abf-bits packs Bool arrays; without it they stay Array{Bool}.
	got, err := convert(t, g["types-c.abf"], map[string]string{"abf-bits": "true"})
	require.NoError(t, err)
	f, err := NewReader(bytes.NewReader(got), int64(len(got)), nil)
	require.NoError(t, err)
	r, _ := f.Lookup("bool")
	assert.Equal(t, "BitArray{1}", r.TypeString)
	v, err := Read[bool](f, "bool")
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, v)

	for _, bad := range []map[string]string{{"abf-version": "B"}, {"abf-bits": "maybe"}} {
		_, err := convert(t, g["tv1-c.abf"], bad)
		var fe *FormatError
		require.ErrorAs(t, err, &fe, "%v", bad)
		assert.Contains(t, fe.File, "out.abf")
	}
}

var errSource = errors.New("source failed")

func memArray[T layout.Elem](name string, shape []int64, order layout.Order, v []T) (format.Record, []byte) {
	b := unsafeslice.Bytes(v)
	return format.Record{Array: layout.Array{Name: name, Type: layout.TypeOf[T](), Shape: shape, Order: order, Offset: -1, Size: int64(len(b))}}, b
}

// tableSource is a table whose column "a" may be null.
type tableSource struct {
	memsource.Source
	reasons []int8
}

func (s *tableSource) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	return fn(0, []format.Column{{Values: unsafeslice.Cast[int32](s.Data(0)), Reason: s.reasons}})
}

func TestWriteFromSource(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.abf")
	// A row-major 3×4 matrix becomes Julia's 3×4 matrix: column-major on
	// disk, the same logical shape.
	m := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	src := &memsource.Source{}
	src.Add(memArray("m", []int64{3, 4}, layout.RowMajor, m))
	src.Add(memArray("flags", []int64{2, 2}, layout.RowMajor, []bool{true, false, false, true}))
	src.Add(format.Record{Array: layout.Array{Name: "s", Type: layout.U8, Shape: []int64{4}, Offset: -1, Size: 4}, Kind: format.KindString}, []byte("a∘"))
	require.NoError(t, format.Write(p, src, nil))
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	x, err := Read[float32](f, "m")
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, x)
	rec, _ := f.Lookup("m")
	assert.Equal(t, []int64{3, 4}, rec.Shape)
	b, err := Read[bool](f, "flags")
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, false, true}, b)
	rec, _ = f.Lookup("flags")
	assert.Equal(t, "Array{Bool,2}", rec.TypeString)
	str, err := f.ReadString("s")
	require.NoError(t, err)
	assert.Equal(t, "a∘", str)

	// A nullable column travels as its values and an i8 "<name>.reason".
	ts := &tableSource{reasons: []int8{-1, 3, -1, -1}}
	ts.Add(memArray("a", []int64{4}, layout.RowMajor, []int32{1, 0, 3, 4}))
	ts.Records()[0].Kind, ts.Records()[0].Nullable = format.KindColumn, true
	q := filepath.Join(t.TempDir(), "t.abf")
	require.NoError(t, format.Write(q, ts, nil))
	g, err := Open(q, nil)
	require.NoError(t, err)
	defer g.Close()
	a, _ := Read[int32](g, "a")
	reason, _ := Read[int8](g, "a.reason")
	assert.Equal(t, []int32{1, 0, 3, 4}, a)
	assert.Equal(t, []int8{-1, 3, -1, -1}, reason)
}

// TestWriteRefuses checks that records ABF cannot hold are refused before
// anything is written, by name, and that a failed write leaves the target
// as it was.
func TestWriteRefuses(t *testing.T) {
	g := goldenFiles(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "keep.abf")
	old := []byte("the old contents")
	require.NoError(t, os.WriteFile(target, old, 0o600))
	in := filepath.Join(dir, "in.abf")
	cplx := &memsource.Source{}
	cplx.Add(memArray("z", []int64{1}, layout.RowMajor, []complex128{1i}))
	failing := (&memsource.Source{}).Fail(1, errSource)
	failing.Add(memArray("a", []int64{2}, layout.RowMajor, []int16{1, 2}))
	failing.Add(memArray("b", []int64{2}, layout.RowMajor, []int16{3, 4}))
	dup := &memsource.Source{}
	dup.Add(memArray("a", []int64{1}, layout.RowMajor, []int8{1}))
	dup.Add(memArray("a", []int64{1}, layout.RowMajor, []int8{2}))
	for _, tc := range []struct {
		name   string
		src    func() (format.Source, func())
		params map[string]string
		off    int64
		err    error
		msg    string
	}{
		{"serialized Julia values", fileSource(t, in, g["serialized-c.abf"]), nil, -1, format.ErrNotRepresentable, `record "T"`},
		{"String in Format A", fileSource(t, in, g["keys-c.abf"]), map[string]string{"abf-version": "A"}, -1, format.ErrNotRepresentable, `record "blahαש"`},
		{"complex numbers", func() (format.Source, func()) { return cplx, func() {} }, nil, -1, format.ErrNotRepresentable, "no complex numbers"},
		{"a source that fails", func() (format.Source, func()) { return failing, func() {} }, nil, 44, errSource, `record "b" not written; the file was left as it was: source failed`},
		{"a key twice", func() (format.Source, func()) { return dup, func() {} }, nil, 0, ErrKeyExists, `record "a" already exists`},
	} {
		src, done := tc.src()
		err := format.Write(target, src, &format.Options{Params: tc.params})
		done()
		fe := requireFormatErr(t, err, tc.off, tc.err)
		assert.Equal(t, target, fe.File, tc.name)
		assert.Contains(t, fe.Error(), tc.msg, tc.name)
		got, _ := os.ReadFile(target)
		assert.Equal(t, old, got, tc.name)
		fi, _ := os.Stat(target)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), tc.name)
		entries, _ := os.ReadDir(dir)
		assert.Len(t, entries, 2, "%s: a temporary file was left behind", tc.name)
	}
	// A new target is not created, and the error says so.
	fresh := filepath.Join(dir, "new.abf")
	err := format.Write(fresh, failing, nil)
	fe := requireFormatErr(t, err, 44, errSource)
	assert.Equal(t, fresh, fe.File)
	assert.Equal(t, "abf: "+fresh+`: offset 44: record "b" not written; the file was not created: source failed`, fe.Error())
	assert.NoFileExists(t, fresh)
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 2, "a temporary file was left behind")
	// A successful write replaces the file and keeps its permission bits.
	require.NoError(t, os.WriteFile(in, g["tv1-c.abf"], 0o644))
	require.NoError(t, format.Convert(in, target, nil, nil))
	got, _ := os.ReadFile(target)
	assert.Equal(t, g["tv1-c.abf"], got)
	fi, _ := os.Stat(target)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// fileSource opens data, written to path, as a format.File.
func fileSource(t *testing.T, path string, data []byte) func() (format.Source, func()) {
	return func() (format.Source, func()) {
		require.NoError(t, os.WriteFile(path, data, 0o644))
		f, err := format.Open(path, nil)
		require.NoError(t, err)
		return f, func() { f.Close() }
	}
}

// genSource is one f64 vector whose element k is k/2, made as it is read.
type genSource struct{ n int64 }

func (s genSource) Records() []format.Record {
	return []format.Record{{Array: layout.Array{Name: "x", Type: layout.F64, Shape: []int64{s.n}, Offset: -1, Size: 8 * s.n}}}
}

func (s genSource) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	for k := range len(dst) / 8 {
		bo.PutUint64(dst[8*k:], math.Float64bits(float64(first+int64(k))/2))
	}
	return nil
}

// TestWriteStreams writes a 96 MiB array: the writer holds a few chunks,
// never a copy of the array.
func TestWriteStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 96 MiB")
	}
	const n = 12 << 20
	p := filepath.Join(t.TempDir(), "big.abf")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	require.NoError(t, format.Write(p, genSource{n}, nil))
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(3*format.StreamBytes), "bytes allocated to write %d MiB", n*8>>20)
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	x, err := View[float64](f, "x")
	require.NoError(t, err)
	require.Len(t, x, n)
	for _, k := range []int{0, 1, 1<<20 - 1, 1 << 20, n - 1} {
		assert.Equal(t, float64(k)/2, x[k])
	}
}
