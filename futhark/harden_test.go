package futhark

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scalarsFile writes n binary i8 scalars, as `futhark dataset -b` makes of
// "1i8 1i8 …", and returns its path.
func scalarsFile(t testing.TB, n int) string {
	p := filepath.Join(t.TempDir(), "scalars.in")
	out, err := os.Create(p)
	require.NoError(t, err)
	w := bufio.NewWriter(out)
	for i := 0; i < n; i++ {
		w.WriteString("b\x02\x00  i8\x01")
	}
	require.NoError(t, w.Flush())
	require.NoError(t, out.Close())
	return p
}

// mappingsOf counts the mappings of path in /proc/self/maps.
func mappingsOf(t *testing.T, path string) int {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps")
	}
	abs, _ := filepath.EvalSymlinks(path)
	return strings.Count(string(maps), abs+"\n")
}

// A file of 70,000 values is mapped once, not once per value (which ran
// out of vm.max_map_count, 65,530 by default), however its values are read.
func TestManyValuesOneMapping(t *testing.T) {
	const n = 70000
	p := scalarsFile(t, n)
	ff, err := format.Open(p, nil)
	require.NoError(t, err)
	recs := ff.Records()
	require.Len(t, recs, n)
	one := make([]byte, 1)
	for i := range recs {
		require.NoError(t, ff.ReadArray(i, one, 0, layout.RowMajor, binary.LittleEndian))
		require.Equal(t, byte(1), one[0])
	}
	f := ff.(*File)
	for i := 0; i < n; i += 997 {
		x, err := Read[int8](f, i)
		require.NoError(t, err)
		require.Equal(t, []int8{1}, x)
	}
	assert.LessOrEqual(t, mappingsOf(t, p), 1)
	var out bytes.Buffer
	require.NoError(t, futFormat(t).Encode(&out, ff, &format.Options{Params: map[string]string{"text": "true"}}))
	assert.Equal(t, strings.Repeat("1i8\n", n), out.String())
	require.NoError(t, ff.Close())
	assert.Zero(t, mappingsOf(t, p))
}

// The index of a file of a million scalars costs a few dozen bytes per
// value, allocated in few pieces: the file is 8 MB, the index 32 MB.
func TestIndexIsCompact(t *testing.T) {
	if testing.Short() {
		t.Skip("a million values")
	}
	const n = 1 << 20
	p := scalarsFile(t, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := Open(p, nil)
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	alloc := float64(after.TotalAlloc-before.TotalAlloc) / n
	live := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	t.Logf("Open of %d scalars: %.1f bytes allocated and %.1f bytes live per value", n, alloc, live)
	assert.Less(t, alloc, 40.0)
	assert.Less(t, live, 40.0)
	require.Equal(t, n, f.NumRecords())
	x, err := Read[int8](f, n-1)
	require.NoError(t, err)
	assert.Equal(t, []int8{1}, x)
	require.NoError(t, f.Close())

	allocs := testing.AllocsPerRun(1, func() {
		f, err := Open(p, nil)
		require.NoError(t, err)
		f.Close()
	})
	assert.Less(t, allocs, float64(n/1000), "entries come in chunks, not one by one")
	runtime.KeepAlive(f)
}

// Record describes a value exactly as Records does, before and after the
// list is built, and listing a million scalars one Record at a time
// through format.EachRecord holds none of them: a few bytes allocated per
// value (its name), nothing kept, and Records never built.
func TestRecordOnDemand(t *testing.T) {
	dir := testdata(t)
	for _, p := range []string{filepath.Join(dir, "generated", "all-types.bin"), filepath.Join(dir, "generated", "all-types.txt")} {
		ff, err := format.Open(p, nil)
		require.NoError(t, err, p)
		l, ok := ff.(format.RecordLister)
		require.True(t, ok)
		var fresh []format.Record
		require.NoError(t, format.EachRecord(ff, func(i int, r *format.Record) error {
			fresh = append(fresh, *r)
			return nil
		}))
		require.Nil(t, ff.(*File).recs, "EachRecord builds no list")
		recs := ff.Records()
		require.Equal(t, len(recs), l.NumRecords())
		assert.Equal(t, recs, fresh, p)
		for i := range recs {
			assert.Equal(t, recs[i], l.Record(i))
		}
		assert.Panics(t, func() { l.Record(len(recs)) })
		require.NoError(t, ff.Close())
		assert.Zero(t, l.NumRecords())
		assert.Zero(t, format.NumRecords(ff))
	}

	if testing.Short() {
		t.Skip("a million values")
	}
	const n = 1 << 20
	ff, err := format.Open(scalarsFile(t, n), nil)
	require.NoError(t, err)
	defer ff.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var bytes int64
	require.NoError(t, format.EachRecord(ff, func(i int, r *format.Record) error {
		bytes += r.Size
		return nil
	}))
	runtime.GC()
	runtime.ReadMemStats(&after)
	alloc := float64(after.TotalAlloc-before.TotalAlloc) / n
	live := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	t.Logf("EachRecord over %d scalars: %.1f bytes allocated and %.1f bytes live per value", n, alloc, live)
	assert.Equal(t, int64(n), bytes)
	assert.Less(t, alloc, 16.0)
	assert.Less(t, live, 1.0)
	assert.Nil(t, ff.(*File).recs)
	i, err := format.Find(ff, "1048575")
	require.NoError(t, err)
	assert.Equal(t, n-1, i)
	assert.Nil(t, ff.(*File).recs, "Find builds no list")
}

// bigF64File writes a text value and then an [n]f64 binary value of
// nonzero elements, and returns the path and the payload offset.
func bigF64File(t *testing.T, n int) (string, int64) {
	p := filepath.Join(t.TempDir(), "big.in")
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	require.NoError(t, WriteFile(p, nil, func(e *Encoder) error {
		if err := e.EncodeText(mustValue(t, []int64{2}, []int32{1, 2})); err != nil {
			return err
		}
		return e.EncodeBinary(mustValue(t, []int64{int64(n)}, xs))
	}))
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	return p, f.Entries()[1].Data
}

// A file truncated under the mapping makes the copying calls fail with
// ErrFault, Encode included (it died of SIGBUS).
func TestTruncatedUnderTheMapping(t *testing.T) {
	const n = 64 << 10 // 512 KiB of payload
	p, _ := bigF64File(t, n)
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, os.Truncate(p, 4096))
	var fe *FormatError
	for name, err := range map[string]error{
		"Encode binary": f.Encode(NewEncoder(io.Discard), 1, true),
		"Encode text":   f.Encode(NewEncoder(io.Discard), 1, false),
		"Read":          func() error { _, err := Read[float64](f, 1); return err }(),
		"ReadAt":        ReadAt(f, 1, n-10, make([]float64, 10)),
		"Value":         func() error { _, err := f.Value(1); return err }(),
		"ReadArray":     f.ReadArray(1, make([]byte, 80), n-10, layout.RowMajor, binary.LittleEndian),
		"ReadArray col": f.ReadArray(1, make([]byte, 8*n), 0, layout.ColMajor, binary.BigEndian),
	} {
		assert.ErrorIs(t, err, mmapfile.ErrFault, name)
		if assert.ErrorAs(t, err, &fe, name) {
			assert.Equal(t, p, fe.File, name)
		}
	}
	x, err := Read[int32](f, 0)
	require.NoError(t, err, "what is still in the file reads")
	assert.Equal(t, []int32{1, 2}, x)
}

// A file truncated inside the last page of a range reads as zeros through
// the mapping (no fault there): a copy that ends in zeros is checked
// against the file's size, so it is an error, not silent zeros.
func TestTruncatedInsideTheLastPage(t *testing.T) {
	const n = 4096 // 32 KiB of payload
	p, data := bigF64File(t, n)
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	size := data + 8*n
	cut := size - 10 // inside the last page
	require.Equal(t, (size-1)/4096, cut/4096)
	require.NoError(t, os.Truncate(p, cut))
	last := make([]float64, 10)
	err = ReadAt(f, 1, n-10, last)
	require.ErrorIs(t, err, mmapfile.ErrFault)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, cut, fe.Offset, "the error says where the file ends now")
	assert.Equal(t, p, fe.File)
	assert.ErrorIs(t, f.ReadArray(1, make([]byte, 80), n-10, layout.RowMajor, binary.LittleEndian), mmapfile.ErrFault)
	_, err = f.Value(1)
	assert.ErrorIs(t, err, mmapfile.ErrFault)
	assert.ErrorIs(t, f.Encode(NewEncoder(io.Discard), 1, true), mmapfile.ErrFault)
	// What lies before the cut still reads.
	first := make([]float64, 10)
	require.NoError(t, ReadAt(f, 1, 0, first))
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, first)
	require.NoError(t, f.ReadArray(1, make([]byte, 80), 0, layout.RowMajor, binary.LittleEndian))
}

// Zeros that are in the file are zeros: no error.
func TestZeroPayloadIsNotTruncation(t *testing.T) {
	p := filepath.Join(t.TempDir(), "z.in")
	require.NoError(t, WriteFile(p, nil, func(e *Encoder) error {
		return e.EncodeBinary(mustValue(t, []int64{1000}, make([]float64, 1000)))
	}))
	f, err := Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	x, err := Read[float64](f, 0)
	require.NoError(t, err)
	assert.Equal(t, make([]float64, 1000), x)
	require.NoError(t, f.ReadArray(0, make([]byte, 8000), 0, layout.ColMajor, binary.BigEndian))
}
