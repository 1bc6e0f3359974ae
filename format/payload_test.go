package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// payloadOf stores n elements of size bytes (values k*7+i in each byte) in
// order, and returns the bytes and the same array in the other order.
func testPayload(t *testing.T, size int, shape []int64, order layout.Order) (stored, other []byte) {
	n, err := layout.Count(shape)
	require.NoError(t, err)
	stored = make([]byte, n*int64(size))
	for i := range stored {
		stored[i] = byte(i*7 + i/253)
	}
	other = make([]byte, len(stored))
	require.NoError(t, layout.ReorderBytes(other, stored, size, shape, order))
	return stored, other
}

func typeOfSize(size int) layout.Type {
	return map[int]layout.Type{1: layout.U8, 2: layout.U16, 4: layout.U32, 8: layout.U64, 16: layout.U128}[size]
}

func TestPayloadReadsEveryRangeInBothOrders(t *testing.T) {
	dir := t.TempDir()
	shapes := [][]int64{{5}, {3, 4}, {1, 7}, {40, 3}, {3, 40}, {2, 3, 4}, {4, 1, 5, 2}, {0, 3}}
	for _, size := range []int{1, 2, 4, 8, 16} {
		for _, shape := range shapes {
			for _, storage := range []layout.Order{layout.RowMajor, layout.ColMajor} {
				stored, other := testPayload(t, size, shape, storage)
				want := map[layout.Order][]byte{storage: stored}
				if storage == layout.RowMajor {
					want[layout.ColMajor] = other
				} else {
					want[layout.RowMajor] = other
				}
				// Stored at an odd offset after a prefix, read through a
				// ReaderAt and through a mapping.
				file := append([]byte("prefix!"), stored...)
				path := filepath.Join(dir, "p.bin")
				require.NoError(t, os.WriteFile(path, file, 0o644))
				mf, err := mmapfile.Open(path)
				require.NoError(t, err)
				reg, err := mf.MapAll()
				require.NoError(t, err)
				a := layout.Array{Name: "x", Type: typeOfSize(size), Shape: shape, Order: storage, Offset: 7, Size: int64(len(stored))}
				for _, data := range []interface {
					ReadAt([]byte, int64) (int, error)
				}{bytes.NewReader(file), reg} {
					p := &Payload{Array: a, Data: data, Off: 7}
					n := int64(len(stored) / size)
					for _, order := range []layout.Order{layout.RowMajor, layout.ColMajor} {
						// Every range [lo, hi).
						for lo := int64(0); lo <= n; lo++ {
							for hi := lo; hi <= n; hi++ {
								dst := make([]byte, (hi-lo)*int64(size))
								require.NoError(t, p.ReadArray(dst, lo, order, binary.LittleEndian))
								require.Equal(t, want[order][lo*int64(size):hi*int64(size)], dst,
									"size %d shape %v storage %v order %v [%d,%d) %T", size, shape, storage, order, lo, hi, data)
							}
						}
					}
					// Past the end is an error.
					err := p.ReadArray(make([]byte, size), n, layout.RowMajor, binary.LittleEndian)
					require.ErrorIs(t, err, mmapfile.ErrOutOfRange)
				}
				require.NoError(t, mf.Close())
			}
		}
	}
}

func TestPayloadSwapsAndChecksBools(t *testing.T) {
	be := []byte{0, 1, 0, 2, 0, 3}
	p := &Payload{Array: layout.Array{Name: "x", Type: layout.U16, Shape: []int64{3}, BigEndian: true, Size: 6}, Data: bytes.NewReader(be)}
	dst := make([]byte, 6)
	require.NoError(t, p.ReadArray(dst, 0, layout.RowMajor, binary.LittleEndian))
	assert.Equal(t, []byte{1, 0, 2, 0, 3, 0}, dst)
	require.NoError(t, p.ReadArray(dst, 0, layout.RowMajor, binary.BigEndian))
	assert.Equal(t, be, dst, "the file's own byte order is kept when asked for")

	// Complex numbers swap each part.
	c := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	p = &Payload{Array: layout.Array{Name: "z", Type: layout.C64, Shape: []int64{1}, BigEndian: true, Size: 8}, Data: bytes.NewReader(c)}
	dst = make([]byte, 8)
	require.NoError(t, p.ReadArray(dst, 0, layout.RowMajor, binary.LittleEndian))
	assert.Equal(t, []byte{4, 3, 2, 1, 8, 7, 6, 5}, dst)

	bools := []byte{0, 1, 7}
	p = &Payload{Array: layout.Array{Name: "b", Type: layout.Bool, Shape: []int64{3}, Size: 3}, Data: bytes.NewReader(bools)}
	err := p.ReadArray(make([]byte, 3), 0, layout.RowMajor, binary.LittleEndian)
	require.ErrorIs(t, err, mmapfile.ErrInvalidBool)
	assert.Contains(t, err.Error(), "element 2")
	p.Lenient = true
	dst = make([]byte, 3)
	require.NoError(t, p.ReadArray(dst, 0, layout.RowMajor, binary.LittleEndian))
	assert.Equal(t, []byte{0, 1, 1}, dst)
}

func TestPayloadTruncatedIsAnErrorWithTheOffset(t *testing.T) {
	data := make([]byte, 10)
	var gotOff int64 = -2
	p := &Payload{Array: layout.Array{Name: "x", Type: layout.U32, Shape: []int64{2, 3}, Offset: 100, Size: 24}, Data: bytes.NewReader(data),
		Wrap: func(off int64, err error) error { gotOff = off; return err }}
	err := p.ReadArray(make([]byte, 24), 0, layout.RowMajor, binary.LittleEndian)
	require.ErrorIs(t, err, mmapfile.ErrTruncated)
	assert.Equal(t, int64(110), gotOff)
}

// A file truncated under its mapping, inside the page its new end falls
// in, reads as zeros there: every read, transposed ones straight from the
// mapping included, is an error wrapping ErrFault at the new end.
func TestPayloadTruncatedUnderTheMapping(t *testing.T) {
	shape := []int64{64, 32} // 16 KiB of u64, column-major
	stored, _ := testPayload(t, 8, shape, layout.ColMajor)
	path := filepath.Join(t.TempDir(), "p.bin")
	require.NoError(t, os.WriteFile(path, stored, 0o644))
	mf, err := mmapfile.Open(path)
	require.NoError(t, err)
	defer mf.Close()
	reg, err := mf.MapAll()
	require.NoError(t, err)
	end := int64(len(stored)) - 100
	require.NoError(t, os.Truncate(path, end))
	var gotOff int64 = -2
	a := layout.Array{Name: "x", Type: layout.U64, Shape: shape, Order: layout.ColMajor, Size: int64(len(stored))}
	p := &Payload{Array: a, Data: reg, Wrap: func(off int64, err error) error { gotOff = off; return err }}
	for _, order := range []layout.Order{layout.ColMajor, layout.RowMajor} {
		gotOff = -2
		err := p.ReadArray(make([]byte, len(stored)), 0, order, binary.LittleEndian)
		require.ErrorIs(t, err, mmapfile.ErrFault, "%v", order)
		assert.Equal(t, end, gotOff, "%v", order)
	}
	// What is still in the file reads.
	require.NoError(t, p.ReadArray(make([]byte, 8), 0, layout.ColMajor, binary.LittleEndian))
}

// memSource is Memory's records built a record at a time, for listers
// and for lists too long for a Payload per record.
type memSource struct {
	recs []Record
	data [][]byte
}

func (m *memSource) Records() []Record { return m.recs }
func (m *memSource) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	return Memory(m.recs[i:i+1], m.data[i:i+1]).ReadArray(0, dst, first, order, bo)
}

func TestStreamDeliversEveryElementInOrder(t *testing.T) {
	shape := []int64{1500, 1100} // 13 MB of u64: two chunks and a part
	stored, other := testPayload(t, 8, shape, layout.ColMajor)
	src := Memory([]Record{{Array: layout.Array{Name: "x", Type: layout.U64, Shape: shape, Order: layout.ColMajor, Size: int64(len(stored))}}}, [][]byte{stored})
	var got []byte
	chunks := 0
	require.NoError(t, Stream(src, 0, layout.RowMajor, binary.LittleEndian, func(c []byte) error {
		chunks++
		assert.Zero(t, len(c)%(1100*8), "whole rows")
		got = append(got, c...)
		return nil
	}))
	assert.Equal(t, other, got)
	assert.Greater(t, chunks, 1)
	boom := errors.New("boom")
	assert.ErrorIs(t, Stream(src, 0, layout.RowMajor, binary.LittleEndian, func([]byte) error { return boom }), boom)
}

func TestScanTableFromArraysFoldsReasons(t *testing.T) {
	i64 := func(v ...int64) []byte {
		b := make([]byte, 8*len(v))
		for k, x := range v {
			binary.LittleEndian.PutUint64(b[8*k:], uint64(x))
		}
		return b
	}
	src := Memory([]Record{
		{Array: layout.Array{Name: "a", Type: layout.I64, Shape: []int64{3}, Size: 24}},
		{Array: layout.Array{Name: "a.reason", Type: layout.I8, Shape: []int64{3}, Size: 3}},
		{Array: layout.Array{Name: "b", Type: layout.I64, Shape: []int64{3}, Size: 24}},
	}, [][]byte{i64(1, 2, 3), {0xff, 5, 0xff}, i64(4, 5, 6)})
	require.True(t, IsTable(src))
	cols := TableColumns(src)
	require.Len(t, cols, 2)
	assert.True(t, cols[0].Nullable)
	var got [][]int64
	var reasons [][]int8
	require.NoError(t, ScanTable(src, 2, func(first int64, c []Column) error {
		require.Len(t, c, 2)
		got = append(got, append([]int64(nil), c[0].Values.([]int64)...), append([]int64(nil), c[1].Values.([]int64)...))
		reasons = append(reasons, append([]int8(nil), c[0].Reason...))
		assert.Nil(t, c[1].Reason)
		return nil
	}))
	assert.Equal(t, [][]int64{{1, 2}, {4, 5}, {3}, {6}}, got)
	assert.Equal(t, [][]int8{{-1, 5}, {-1}}, reasons)
}

func TestSelectAndRename(t *testing.T) {
	src := Memory([]Record{
		{Array: layout.Array{Name: "/g/a", Type: layout.U8, Shape: []int64{1}, Size: 1}},
		{Array: layout.Array{Name: "b", Type: layout.U8, Shape: []int64{1}, Size: 1}},
	}, [][]byte{{1}, {2}})
	s, err := Select(src, "b", "g/a")
	require.NoError(t, err)
	require.Len(t, s.Records(), 2)
	dst := make([]byte, 1)
	require.NoError(t, s.ReadArray(1, dst, 0, layout.RowMajor, binary.LittleEndian))
	assert.Equal(t, byte(1), dst[0])
	_, err = Select(src, "c")
	assert.ErrorIs(t, err, ErrNoRecord)
	r, err := Rename(src, []string{"x", "y"})
	require.NoError(t, err)
	assert.Equal(t, "y", r.Records()[1].Name)
	_, err = Rename(src, []string{"x", "x"})
	assert.Error(t, err)
	_, err = Rename(src, []string{"x"})
	assert.Error(t, err)
}

func TestOpenRefusesWhatCannotBeMapped(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for _, p := range []string{fifo, "/proc/self/status", "/dev/null"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		_, err := Open(p, &Options{Format: "any"})
		assert.ErrorIs(t, err, mmapfile.ErrNotRegular, p)
		assert.Contains(t, err.Error(), p)
	}
}

// TestSelectManyNamesMatchesFind: with many names Select looks them up
// through maps, with Find's rule (an exact name first, else one equal
// without a leading "/" on either side).
func TestSelectManyNamesMatchesFind(t *testing.T) {
	src := &memSource{recs: []Record{
		{Array: layout.Array{Name: "/a"}}, {Array: layout.Array{Name: "a"}}, {Array: layout.Array{Name: "/g/b"}},
		{Array: layout.Array{Name: "c"}}, {Array: layout.Array{Name: "c"}}, {Array: layout.Array{Name: "/d"}},
	}}
	names := []string{"a", "/a", "g/b", "/g/b", "c", "/c", "d", "/d", "a", "c"}
	s, err := Select(src, names...)
	require.NoError(t, err)
	for k, name := range names {
		i, err := Find(src, name)
		require.NoError(t, err)
		assert.Equal(t, i, s.(*view).index[k], name)
	}
	_, err = Select(src, append(names, "e")...)
	assert.ErrorIs(t, err, ErrNoRecord)
	assert.ErrorContains(t, err, `"e"`)
}

// manyColumns is a source of n records named c0, c1, ….
func manyColumns(n int) (*memSource, []string) {
	src := &memSource{recs: make([]Record, n)}
	names := make([]string, n)
	for i := range names {
		names[i] = "c" + strconv.Itoa(i)
		src.recs[i].Name = names[i]
	}
	return src, names
}

// TestSelectIsLinear: selecting 200,000 of 200,000 records took minutes
// (Find, a linear search, once per name: 2·10^10 comparisons); now a
// fraction of a second.
func TestSelectIsLinear(t *testing.T) {
	src, names := manyColumns(200_000)
	slices.Reverse(names)
	start := time.Now()
	s, err := Select(src, names...)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, "c0", s.Records()[len(names)-1].Name)
}

// BenchmarkSelect at two sizes: the time per name stays about the same.
func BenchmarkSelect(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		src, names := manyColumns(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Select(src, names...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/name")
		})
	}
}

// A target row larger than a band (a huge array with a short first axis)
// is gathered straight from the mapping, or in blocks read from any
// other ReaderAt: every range reads as the reordered array.
func TestPayloadGathersRowsLargerThanABand(t *testing.T) {
	for _, tc := range []struct {
		shape   []int64
		storage layout.Order
		order   layout.Order
	}{
		{[]int64{3, bandBytes/8 + 5}, layout.ColMajor, layout.RowMajor},
		{[]int64{bandBytes/8 + 3, 2}, layout.RowMajor, layout.ColMajor},
		{[]int64{2, 3, bandBytes/24 + 1}, layout.ColMajor, layout.RowMajor},
	} {
		stored, want := testPayload(t, 8, tc.shape, tc.storage)
		path := filepath.Join(t.TempDir(), "p.bin")
		file := append([]byte("prefix!"), stored...)
		require.NoError(t, os.WriteFile(path, file, 0o644))
		mf, err := mmapfile.Open(path)
		require.NoError(t, err)
		reg, err := mf.MapAll()
		require.NoError(t, err)
		a := layout.Array{Name: "x", Type: layout.U64, Shape: tc.shape, Order: tc.storage, Offset: 7, Size: int64(len(stored))}
		n := int64(len(stored) / 8)
		for _, data := range []interface {
			ReadAt([]byte, int64) (int, error)
		}{bytes.NewReader(file), reg} {
			p := &Payload{Array: a, Data: data, Off: 7}
			for _, r := range [][2]int64{{0, n}, {1, 2}, {5, n - 3}, {n/2 - 7, n/2 + 11}, {n - 1, n}} {
				dst := make([]byte, (r[1]-r[0])*8)
				require.NoError(t, p.ReadArray(dst, r[0], tc.order, binary.LittleEndian))
				require.True(t, bytes.Equal(want[r[0]*8:r[1]*8], dst), "shape %v %v from %v [%d,%d) %T", tc.shape, tc.order, tc.storage, r[0], r[1], data)
			}
		}
		require.NoError(t, mf.Close())
	}
}
