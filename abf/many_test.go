package abf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// manyRecords is more records than Linux's default vm.max_map_count
// (65530) allows mappings: a package that mapped each record on its own
// could not serve them all.
const manyRecords = 70000

// mappingsOf counts the mappings of path in this process (Linux), or
// returns -1 where /proc/self/maps is absent.
func mappingsOf(t *testing.T, path string) int {
	t.Helper()
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return -1
	}
	defer maps.Close()
	abs, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)
	n := 0
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		if strings.HasSuffix(sc.Text(), " "+abs) {
			n++
		}
	}
	require.NoError(t, sc.Err())
	return n
}

// TestManyRecords writes 70,000 scalar records and reads every one back,
// in the File that appended them (views of appended records), through
// Open and through package format: the file is mapped a few times, never
// once per record.
func TestManyRecords(t *testing.T) {
	p := filepath.Join(t.TempDir(), "many.abf")
	f, err := openMode(p, "w+", nil)
	require.NoError(t, err)
	key := func(i int) string { return "r" + strconv.Itoa(i) }
	view := func(f *File, i int) {
		t.Helper()
		v, err := View[int32](f, key(i))
		require.NoError(t, err, "record %d", i)
		require.Equal(t, []int32{int32(i)}, v)
	}
	// In batches: each batch appended, then viewed.
	const batch = manyRecords / 7
	for b := 0; b < manyRecords; b += batch {
		for i := b; i < b+batch; i++ {
			require.NoError(t, Write(f, key(i), []int64{}, []int32{int32(i)}))
		}
		for i := b; i < b+batch; i++ {
			view(f, i)
		}
	}
	for i := 0; i < manyRecords; i += 997 {
		view(f, i) // the earlier batches stay mapped
	}
	assert.Len(t, *f.wins.Load(), 7, "one mapping per batch of appends")
	if n := mappingsOf(t, p); n >= 0 {
		assert.LessOrEqual(t, n, 7)
	}
	require.NoError(t, f.Close())

	g, err := Open(p, nil)
	require.NoError(t, err)
	require.Equal(t, manyRecords, g.Len())
	for i := range manyRecords {
		view(g, i)
		x, err := Read[int32](g, key(i))
		require.NoError(t, err)
		require.Equal(t, []int32{int32(i)}, x)
	}
	assert.Len(t, *g.wins.Load(), 1, "one mapping of the whole file")
	if n := mappingsOf(t, p); n >= 0 {
		assert.Equal(t, 1, n)
	}
	require.NoError(t, g.Close())

	h, err := format.Open(p, nil)
	require.NoError(t, err)
	defer h.Close()
	recs := h.Records()
	require.Len(t, recs, manyRecords)
	dst := make([]byte, 4)
	for i, r := range recs {
		require.Equal(t, key(i), r.Name)
		require.Equal(t, layout.I32, r.Type)
		require.Equal(t, []int64{}, r.Shape)
		require.NoError(t, h.ReadArray(i, dst, 0, layout.RowMajor, binary.LittleEndian))
		require.Equal(t, uint32(i), binary.LittleEndian.Uint32(dst))
	}
	if n := mappingsOf(t, p); n >= 0 {
		assert.Equal(t, 1, n)
	}
}

// TestAppendAfterView: records appended after others were viewed are
// mapped together when first viewed, and a copy of an unviewed record maps
// nothing.
func TestAppendAfterView(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.abf")
	f, err := openMode(p, "w+", nil)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, Write(f, "a", []int64{3}, []float64{1, 2, 3}))
	a, err := View[float64](f, "a")
	require.NoError(t, err)
	require.NoError(t, Write(f, "b", []int64{2}, []int16{4, 5}))
	require.NoError(t, f.WriteString("s", "text"))
	require.NoError(t, Write(f, "e", []int64{0}, []float64{}))
	require.NoError(t, Write(f, "c", []int64{1}, []uint8{6}))
	s, err := f.ReadString("s")
	require.NoError(t, err)
	assert.Equal(t, "text", s)
	assert.Len(t, *f.wins.Load(), 1, "a copy maps nothing")
	b, err := View[int16](f, "b")
	require.NoError(t, err)
	c, err := View[uint8](f, "c")
	require.NoError(t, err)
	e, err := View[float64](f, "e")
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3}, a)
	assert.Equal(t, []int16{4, 5}, b)
	assert.Equal(t, []uint8{6}, c)
	assert.Equal(t, []float64{}, e)
	assert.Len(t, *f.wins.Load(), 2, "b, s, e and c in one mapping")
	// Create maps what it appends, with everything appended before it.
	require.NoError(t, Write(f, "d", []int64{1}, []int64{7}))
	z, err := Create[int64](f, "z", []int64{2})
	require.NoError(t, err)
	z[1] = 9
	d, err := View[int64](f, "d")
	require.NoError(t, err)
	assert.Equal(t, []int64{7}, d)
	assert.Len(t, *f.wins.Load(), 3)
	got, err := Read[int64](f, "z")
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 9}, got)
}

// manyScalars returns a Format C file of n 0-d Int8 arrays with keys
// "0", "1", …: about the smallest records ABF has (31 bytes and the key).
func manyScalars(n int) []byte {
	w := newC()
	for i := range n {
		w.u8(0).str(strconv.Itoa(i)).str("Array{Int8,0}").u8(byte(i))
	}
	return w.b
}

// TestOpenMemory: opening a file of a million tiny records allocates less
// than the file's size (plus 1 MiB), as for any crafted file, and keeps
// about 25 bytes per record; package format's face adds its Records,
// built on first use.
func TestOpenMemory(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	data := manyScalars(n)
	p := tempFile(t, data)
	measure := func(fn func() any) (alloc, live float64) {
		var m0, m1, m2 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		v := fn()
		runtime.ReadMemStats(&m1)
		runtime.GC()
		runtime.ReadMemStats(&m2)
		runtime.KeepAlive(v)
		return float64(m1.TotalAlloc - m0.TotalAlloc), float64(int64(m2.HeapAlloc) - int64(m0.HeapAlloc))
	}
	var f *File
	alloc, live := measure(func() any {
		var err error
		f, err = Open(p, nil)
		require.NoError(t, err)
		return f
	})
	t.Logf("abf.Open of %d records (%d bytes): %.1f bytes/record allocated, %.1f live", n, len(data), alloc/float64(n), live/float64(n))
	assert.Less(t, alloc, float64(len(data)+1<<20), "opening allocates more than the file's size")
	assert.Less(t, live/float64(n), 30.0)
	r, ok := f.Lookup(strconv.Itoa(n - 1))
	require.True(t, ok)
	assert.Equal(t, int64(len(data)-1), r.Offset)
	require.NoError(t, f.Close())

	var ff format.File
	alloc, live = measure(func() any {
		var err error
		ff, err = format.Open(p, nil)
		require.NoError(t, err)
		return ff.Records()
	})
	rec := float64(reflect.TypeFor[format.Record]().Size()) // 120 on 64-bit platforms
	t.Logf("format.Open and Records of %d records: %.1f bytes/record allocated, %.1f live (a format.Record is %.0f)", n, alloc/float64(n), live/float64(n), rec)
	assert.Less(t, live/float64(n), rec+30+8.0)
	assert.Less(t, alloc/float64(n), rec+40+8.0)
	recs := ff.Records()
	assert.Equal(t, strconv.Itoa(n-1), recs[n-1].Name)
	assert.Equal(t, []int64{}, recs[n-1].Shape)
	require.NoError(t, ff.Close())
}

// Record describes a record exactly as Records does, and listing a million
// records one Record at a time through format.EachRecord keeps nothing:
// the list of Records (120 bytes a record and more) is never built.
func TestRecordOnDemand(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.abf"))
	require.NoError(t, err)
	opened := 0
	for _, p := range paths {
		ff, err := format.Open(p, nil)
		if err != nil {
			continue // files kept for their errors
		}
		opened++
		l, ok := ff.(format.RecordLister)
		require.True(t, ok)
		var fresh []format.Record
		require.NoError(t, format.EachRecord(ff, func(i int, r *format.Record) error {
			fresh = append(fresh, *r)
			return nil
		}))
		recs := ff.Records()
		require.Equal(t, len(recs), l.NumRecords(), p)
		assert.Equal(t, recs, fresh, p)
		assert.Panics(t, func() { l.Record(len(recs)) })
		require.NoError(t, ff.Close())
	}
	require.Greater(t, opened, 5)

	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	ff, err := format.Open(tempFile(t, manyScalars(n)), nil)
	require.NoError(t, err)
	defer ff.Close()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	var size int64
	require.NoError(t, format.EachRecord(ff, func(i int, r *format.Record) error {
		size += r.Size
		return nil
	}))
	runtime.GC()
	runtime.ReadMemStats(&m1)
	alloc := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)
	live := float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n)
	t.Logf("EachRecord over %d records: %.1f bytes/record allocated, %.1f live", n, alloc, live)
	assert.Equal(t, int64(n), size)
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates on its own account: the bounds are for normal builds")
	}
	assert.Less(t, alloc, 16.0)
	assert.Less(t, live, 1.0)
}

// BenchmarkOpenMany opens a file of a million tiny records.
func BenchmarkOpenMany(b *testing.B) {
	const n = 1_000_000
	p := tempFile(b, manyScalars(n))
	b.ReportAllocs()
	for b.Loop() {
		f, err := Open(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/record")
}

// TestCutShortWhileOpen: a file cut short by another program while open
// gives, on every copying read of a record that lost bytes, a FormatError
// naming the file, the first byte of the payload that is gone (exactly,
// whatever path the read took: the mapping, pread, a transposition, a
// BitArray's words) and wrapping mmapfile.ErrTruncated; records still
// whole read as before.
func TestCutShortWhileOpen(t *testing.T) {
	m := make([]float64, 300*200)
	for i := range m {
		m[i] = float64(i + 1)
	}
	bits := make([]bool, 300*200)
	for i := range bits {
		bits[i] = i%3 == 0
	}
	packed, err := PackBits([]int64{300, 200}, bits)
	require.NoError(t, err)
	data := build(t, FormatC, func(f *File) {
		must(Write(f, "m", []int64{300, 200}, m)) // payload [56, 480056)
		must(f.WriteBits("b", packed))            // payload [480104, 487608)
	})
	require.Len(t, data, 487608)
	type payload struct {
		key       string
		off, size int64
	}
	recs := []payload{{"m", 56, 480000}, {"b", 480104, 7504}}
	for _, cut := range []int64{0, 40, 4096, 401408, 480000, 480056, 484000} {
		for _, advice := range []mmapfile.Advice{mmapfile.AdviceNormal, mmapfile.AdviceSequential} {
			for _, order := range []layout.Order{layout.RowMajor, layout.ColMajor} {
				p := tempFile(t, data)
				o := &format.Options{}
				o.Advice = advice
				ff, err := format.Open(p, o)
				require.NoError(t, err)
				native, err := Open(p, &Options{Options: mmapfile.Options{Advice: advice}})
				require.NoError(t, err)
				require.NoError(t, os.Truncate(p, cut))
				for i, r := range recs {
					name := fmt.Sprintf("cut %d, advice %d, %v, %s", cut, advice, order, r.key)
					dst := make([]byte, 300*200*map[string]int{"m": 8, "b": 1}[r.key])
					reads := []error{ff.ReadArray(i, dst, 0, order, binary.LittleEndian)}
					if r.key == "m" {
						_, err = Read[float64](native, "m")
					} else {
						_, err = native.ReadBits("b")
					}
					reads = append(reads, err)
					for k, err := range reads {
						if cut >= r.off+r.size {
							require.NoError(t, err, "%s, read %d", name, k)
							continue
						}
						fe := requireFormatErr(t, err, max(cut, r.off), mmapfile.ErrTruncated)
						assert.Equal(t, p, fe.File, name)
						// The cause, always shown: the truncation, and the
						// fault that found it where a mapped read did.
						assert.Regexp(t, "^"+regexp.QuoteMeta(fmt.Sprintf("abf: %s: offset %d: record %q: the file was cut short while open: the payload [%d, %d) is no longer all there; it now ends at offset %d: ",
							p, max(cut, r.off), r.key, r.off, r.off+r.size, cut))+`(payload cut short: )?file is truncated: unexpected EOF(: access at offset \d+: (the file now ends at \d+: )?memory fault in mapping \(file truncated or unwritable\?\))?$`, fe.Error(), "%s, read %d", name, k)
					}
				}
				require.NoError(t, ff.Close())
				require.NoError(t, native.Close())
			}
		}
	}
}

// memWriter is a file in memory that counts its writes.
type memWriter struct {
	b     []byte
	calls int
}

func (m *memWriter) WriteAt(p []byte, off int64) (int, error) {
	m.calls++
	if end := int(off) + len(p); end > len(m.b) {
		m.b = append(m.b, make([]byte, end-len(m.b))...)
	}
	copy(m.b[off:], p)
	return len(p), nil
}

// TestCombiner: the combined writes leave the bytes the plain writes
// leave, in few write calls.
func TestCombiner(t *testing.T) {
	type w struct {
		off int64
		n   int
	}
	const cb = combineBytes
	for _, tc := range []struct {
		name   string
		writes []w
		calls  int
	}{
		{"sequential small", []w{{0, 10}, {10, 20}, {30, 5}}, 1},
		{"a count inside what is gathered", []w{{0, 22}, {22, 30}, {14, 8}, {52, 10}, {14, 8}}, 1},
		{"a large write passes through", []w{{0, 10}, {10, cb}, {10 + cb, 10}}, 3},
		{"gathered up to the limit", []w{{0, cb - 10}, {cb - 10, 20}}, 2},
		{"a gap", []w{{0, 10}, {20, 10}}, 2},
		{"a write across the gathered start", []w{{0, cb - 10}, {cb - 10, 20}, {cb - 15, 10}, {cb + 10, 4}}, 4},
		{"a large write, then a count", []w{{0, 22}, {22, cb}, {14, 8}, {22 + cb, 8}}, 4},
		{"counts kept until flush, the latest", []w{{0, 22}, {22, cb}, {14, 8}, {14, 8}, {14, 8}}, 3},
	} {
		plain, comb := &memWriter{}, &memWriter{}
		c := &combiner{w: comb}
		for k, wr := range tc.writes {
			p := make([]byte, wr.n)
			for i := range p {
				p[i] = byte(k*31 + i)
			}
			_, err := plain.WriteAt(p, wr.off)
			require.NoError(t, err)
			n, err := c.WriteAt(p, wr.off)
			require.NoError(t, err)
			require.Equal(t, wr.n, n)
		}
		require.NoError(t, c.flush())
		assert.Equal(t, plain.b, comb.b, tc.name)
		assert.Equal(t, tc.calls, comb.calls, tc.name)
	}
}
