package abf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"github.com/mmapkit/mmapkit/mmapfile"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldens builds every golden file from the spec's test vectors.
func goldens(t testing.TB) map[string][]byte {
	be := &builder{order: binary.BigEndian, mult: 4}
	be.u8(0xFF).str("x").str("Array{Float64,1}").i64(2).padTo(8).f64s(1, 2)
	be.u8(0xFF).str("c").str("Array{Char,1}").i64(1).padTo(4).raw([]byte{0xce, 0xb6, 0, 0})
	be.u8(0xFF).str("b").str("BitArray{1}").i64(3).padTo(8).i64(5)
	beA := &builder{order: binary.BigEndian, mult: 1}
	beA.headerA(1).str("x").str("Array").str("Float64").i64(1).i64(2).padTo(8).f64s(1, 2)
	readme2 := func(f *File) {
		x := make([]float64, 50)
		for i := range x {
			x[i] = float64(i + 1)
		}
		x[0] = -10
		must(Write(f, "x", []int64{10, 5}, x))
	}
	return map[string][]byte{
		"tv1-c.abf":     build(t, FormatC, writeTV1),
		"tv2-a.abf":     build(t, FormatA, writeTV1),
		"tv3-b.abf":     tv3(),
		"readme1-a.abf": build(t, FormatA, readmeFile1),
		"readme1-c.abf": build(t, FormatC, readmeFile1),
		"readme2-a.abf": build(t, FormatA, readme2),
		"readme2-c.abf": build(t, FormatC, readme2),
		"keys-c.abf": build(t, FormatC, func(f *File) {
			must(Write(f, "", []int64{1}, []uint8{7}))
			must(f.WriteString("blahαש", "a∘α"))
			must(Write(f, "μy1234_", []int64{2}, []int16{-1, 2}))
		}),
		"serialized-c.abf": tv19(),
		"bigendian-c.abf":  be.b,
		"bigendian-a.abf":  beA.b,
		"types-c.abf":      build(t, FormatC, writeAllTypes),
		"types-a.abf":      build(t, FormatA, writeAllTypes),
	}
}

// writeAllTypes writes one small array of every element type, a 0-d
// array, empty arrays and BitArrays.
func writeAllTypes(f *File) {
	must(Write(f, "i8", []int64{3}, []int8{-128, 0, 127}))
	must(Write(f, "u8", []int64{2}, []uint8{0, 255}))
	must(Write(f, "i16", []int64{2}, []int16{-32768, 32767}))
	must(Write(f, "u16", []int64{1}, []uint16{65535}))
	must(Write(f, "i32", []int64{1, 2}, []int32{-1, 1 << 30}))
	must(Write(f, "u32", []int64{1}, []uint32{1<<32 - 1}))
	must(Write(f, "i64", []int64{2}, []int64{-1 << 63, 1<<63 - 1}))
	must(Write(f, "u64", []int64{1}, []uint64{1<<64 - 1}))
	must(Write(f, "f16", []int64{2}, []layout.Float16{0x3C00, 0x7E00}))
	must(Write(f, "f32", []int64{2}, []float32{1.5, -0.25}))
	must(Write(f, "f64", []int64{}, []float64{3.25}))
	must(Write(f, "bool", []int64{3}, []bool{true, false, true}))
	must(Write(f, "i128", []int64{1}, []layout.Int128{{Lo: 1, Hi: -2}}))
	must(Write(f, "u128", []int64{1}, []layout.Uint128{{Lo: 3, Hi: 4}}))
	must(Write(f, "char", []int64{2}, []layout.Char{0x61000000, 0xCEB60000}))
	must(Write(f, "empty", []int64{2, 0}, []int32{}))
	must(f.WriteBits("bits", BitArray{Dims: []int64{2, 2}, Chunks: []uint64{0b1001}}))
	must(f.WriteBits("nobits", BitArray{Dims: []int64{0}, Chunks: []uint64{}}))
}

func TestGoldenFiles(t *testing.T) {
	for name, want := range goldens(t) {
		p := filepath.Join("testdata", name)
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(p, want, 0o644))
			continue
		}
		got, err := os.ReadFile(p)
		require.NoError(t, err, "run go test -update to create %s", p)
		assert.Equal(t, want, got, name)
		// Every golden file parses, and what can be written re-writes to
		// the same bytes.
		f, err := NewReader(bytes.NewReader(got), int64(len(got)), nil)
		require.NoError(t, err, name)
		if f.Format() != FormatB && !strings.HasPrefix(name, "bigendian") && !strings.HasPrefix(name, "serialized") {
			assert.Equal(t, got, rewrite(t, f, f.Format()), name)
		}
	}
}

func goldenFiles(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	matches, _ := filepath.Glob(filepath.Join("testdata", "*.abf"))
	for _, p := range matches {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out[filepath.Base(p)] = b
	}
	require.NotEmpty(t, out, "no golden files in testdata/")
	return out
}

// exercise opens data and reads every record every way, as the fuzz
// target does; it must never panic.
func exercise(t testing.TB, data []byte) (*File, error) {
	f, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("error is not a *FormatError: %v", err)
		}
		return nil, err
	}
	prevEnd := int64(0)
	for _, r := range f.Records() {
		if r.Start < prevEnd || r.DataOffset < r.Start || r.End < r.DataOffset+r.DataLen && !r.Unpadded {
			t.Fatalf("record %q out of order: %+v (previous end %d)", r.Key, r, prevEnd)
		}
		if r.DataLen > 0 && r.DataOffset+r.DataLen > int64(len(data)) {
			t.Fatalf("record %q outside the file: %+v", r.Key, r)
		}
		prevEnd = r.End
		_, _ = f.ReadBytes(r.Key)
		switch r.Kind {
		case KindBitArray:
			_, _ = f.ReadBits(r.Key)
			_, _ = Read[bool](f, r.Key)
		case KindString:
			_, _ = f.ReadString(r.Key)
		case KindArray:
			readAny(f, r)
		}
	}
	return f, nil
}

func readAny(f *File, r Record) {
	switch r.Elem {
	case layout.I8:
		_, _ = Read[int8](f, r.Key)
	case layout.U8:
		_, _ = Read[uint8](f, r.Key)
	case layout.I16:
		_, _ = Read[int16](f, r.Key)
	case layout.U16:
		_, _ = Read[uint16](f, r.Key)
	case layout.I32:
		_, _ = Read[int32](f, r.Key)
	case layout.U32:
		_, _ = Read[uint32](f, r.Key)
	case layout.I64:
		_, _ = Read[int64](f, r.Key)
	case layout.U64:
		_, _ = Read[uint64](f, r.Key)
	case layout.F16:
		_, _ = Read[layout.Float16](f, r.Key)
	case layout.F32:
		_, _ = Read[float32](f, r.Key)
	case layout.F64:
		_, _ = ReadRowMajor[float64](f, r.Key)
	case layout.Bool:
		_, _ = Read[bool](f, r.Key)
	case layout.I128:
		_, _ = Read[layout.Int128](f, r.Key)
	case layout.U128:
		_, _ = Read[layout.Uint128](f, r.Key)
	case layout.JuliaChar:
		_, _ = Read[layout.Char](f, r.Key)
	}
}

// lePayload returns a record's payload in little-endian byte order.
func lePayload(t testing.TB, f *File, r Record) []byte {
	b, err := f.ReadBytes(r.Key)
	require.NoError(t, err)
	if r.BigEndian {
		switch r.Kind {
		case KindArray:
			layout.SwapBytes(b, r.Elem.Size())
		case KindBitArray:
			layout.SwapBytes(b, 8)
		}
	}
	return b
}

// rewritable reports whether the writer can reproduce the record.
func rewritable(t testing.TB, f *File, r Record, format Format) bool {
	if !utf8Valid(r.Key) || r.Kind == KindDataType || r.Kind == KindSerialized {
		return false
	}
	switch r.Kind {
	case KindString:
		s, err := f.ReadString(r.Key)
		return err == nil && format == FormatC && utf8Valid(s)
	case KindBitArray:
		_, err := f.ReadBits(r.Key)
		return err == nil
	}
	return true
}

// rewrite writes f's records to a new file of the given format (B is
// written as C) through the public write path and returns its bytes.
func rewrite(t testing.TB, f *File, format Format) []byte {
	if format == FormatB {
		format = FormatC
	}
	p := filepath.Join(t.TempDir(), "rewrite.abf")
	w, err := openMode(p, "w", &Options{Format: format})
	require.NoError(t, err)
	for _, r := range f.Records() {
		if !rewritable(t, f, r, format) {
			continue
		}
		payload := lePayload(t, f, r)
		rec := record{key: r.Key, kind: r.Kind, elem: r.Elem, dims: r.Dims, fill: writeAll(payload)}
		switch r.Kind {
		case KindArray:
			rec.n = r.Len()
		case KindBitArray:
			rec.chunks = make([]uint64, len(payload)/8)
			for i := range rec.chunks {
				rec.chunks[i] = binary.LittleEndian.Uint64(payload[8*i:])
			}
			rec.n = int64(len(rec.chunks))
		case KindString:
			rec.value = string(payload)
		}
		require.NoError(t, w.write(rec), "record %q", r.Key)
	}
	require.NoError(t, w.Close())
	out, err := os.ReadFile(p)
	require.NoError(t, err)
	return out
}

func TestTruncatedGoldenFiles(t *testing.T) {
	for name, data := range goldenFiles(t) {
		for size := 0; size < len(data); size++ {
			_, _ = exercise(t, data[:size])
		}
		// The mapped path too, for one file.
		if name == "tv1-c.abf" {
			for size := 0; size < len(data); size++ {
				f, err := Open(tempFile(t, data[:size]), nil)
				if err == nil {
					for _, r := range f.Records() {
						_, _ = f.ViewBytes(r.Key)
					}
					f.Close()
				}
			}
		}
	}
}

func TestBitFlips(t *testing.T) {
	for _, name := range []string{"tv1-c.abf", "tv2-a.abf", "tv3-b.abf", "serialized-c.abf", "bigendian-c.abf"} {
		data := goldenFiles(t)[name]
		for i := range data {
			for bit := 0; bit < 8; bit++ {
				flipped := append([]byte{}, data...)
				flipped[i] ^= 1 << bit
				_, _ = exercise(t, flipped)
			}
		}
	}
}

// TestHostile checks that hostile headers give the right error at the
// right offset.
func TestHostile(t *testing.T) {
	c := func() *builder { return newC().u8(0).str("x") } // the type prefix is at 10
	arr := func(typ string, dims ...int64) []byte {
		w := c().str(typ)
		for _, d := range dims {
			w.i64(d)
		}
		return w.padTo(8).f64s(1).b
	}
	a := func() *builder { return newAB().headerA(1).str("x") } // container prefix at 31
	for _, tc := range []struct {
		name string
		data []byte
		off  int64
		err  error
		msg  string
	}{
		{"huge dim", arr("Array{Float64,1}", 1<<40), 48, mmapfile.ErrTruncated, "payload truncated"},
		{"product overflows", arr("Array{Float64,2}", 1<<32, 1<<32), 42, nil, "overflows"},
		{"byte size overflows", arr("Array{Float64,1}", 1<<62), 34, nil, "payload size overflows"},
		{"bits size", arr("BitArray{1}", 1<<62), 40, mmapfile.ErrTruncated, "payload truncated"},
		{"negative dim", arr("Array{Float64,2}", 1, -1), 42, nil, "negative"},
		{"zero dim hides overflow", c().str("Array{Float64,3}").i64(1 << 40).i64(0).i64(1 << 40).b, -1, nil, ""},
		{"many dims", c().str("Array{Float64,1024}").i64(1).b, 45, mmapfile.ErrTruncated, "dimension 2 truncated"},
		{"key prefix not multiple of 4", newC().u8(0).i64(5).raw([]byte("x")).b, 1, nil, "multiple of 4"},
		{"negative key prefix", newC().u8(0).i64(-4).b, 1, nil, "negative"},
		{"huge key prefix", newC().u8(0).i64(1 << 62).raw([]byte("xyz")).b, 9, mmapfile.ErrTruncated, "key truncated"},
		{"type prefix not multiple of 4", c().i64(6).raw([]byte("String")).b, 10, nil, "multiple of 4"},
		{"unknown type", c().str("Dict{Int64,Int64}").b, 10, nil, "not recognized"},
		{"long unknown type", c().str(strings.Repeat("Q", 100)).b, 10, nil, "…"},
		{"bad flag", append(arr("Array{Float64,1}", 1), 7), 56, nil, "flag"},
		{"serialized negative", c().str("DataType").i64(-1).b, 26, nil, "negative"},
		{"serialized beyond EOF", c().str("DataType").i64(100).raw([]byte{1}).b, 34, mmapfile.ErrTruncated, "truncated"},
		{"string value beyond EOF", c().str("String").i64(400).raw([]byte("ab")).b, 32, mmapfile.ErrTruncated, "truncated"},
		{"A negative count", newAB().headerA(-1).b, 14, nil, "negative"},
		{"A count too large", newAB().headerA(1 << 60).b, 22, mmapfile.ErrTruncated, "key length truncated"},
		{"A short header", newAB().i64(6).raw([]byte("LITTLE")).i64(1).b[:20], 14, mmapfile.ErrTruncated, "record count"},
		{"A unknown container", a().str("Dict").b, 31, nil, "container"},
		{"A unknown element", a().str("Array").str("Complex").i64(1).b, 44, nil, "element type"},
		{"A negative N", a().str("Array").str("Float64").i64(-1).b, 59, nil, "number of dimensions"},
		{"A huge N", a().str("BitArray").i64(1 << 40).b, 47, nil, "number of dimensions"},
		{"neither B nor C", newAB().u8(0).str("x").i64(6).raw([]byte("Strin")).b, 1, nil, "multiple of 4"},
		{"B unknown container", append(tv3(), newAB().u8(0).str("y").str("Tuple").b...), 128 + 10, nil, "container"},
		{"key characters cut by EOF", newC().u8(0).i64(8).raw([]byte{0xce, 0xb1}).b, 9, mmapfile.ErrTruncated, "read before end of file"},
		{"not ABF", []byte("hello world"), 0, nil, "not an ABF file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(tc.data), int64(len(tc.data)), nil)
			if tc.off < 0 {
				require.NoError(t, err)
				return
			}
			fe := requireFormatErr(t, err, tc.off, tc.err)
			assert.Contains(t, fe.Error(), tc.msg)
			// The mapped path gives the same error.
			_, err = Open(tempFile(t, tc.data), nil)
			fe = requireFormatErr(t, err, tc.off, tc.err)
			assert.Contains(t, fe.Error(), tc.msg)
		})
	}
}

// TestHostileAllocations checks that hostile headers cost no large
// allocations.
func TestHostileAllocations(t *testing.T) {
	hostile := [][]byte{
		newC().u8(0).i64(1 << 62).raw([]byte("xyz")).b,
		newC().u8(0).str("x").str("Array{Float64,1024}").i64(1 << 40).b,
		newC().u8(0).str("x").str("Array{Float64,3}").i64(1 << 40).i64(1 << 40).i64(1 << 40).b,
		newAB().headerA(1 << 62).str("x").str("BitArray").i64(1000).b,
		newC().u8(0).str("x").str("DataType").i64(1 << 60).b,
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 10; i++ {
		for _, h := range hostile {
			_, err := NewReader(bytes.NewReader(h), int64(len(h)), nil)
			require.Error(t, err)
			p := tempFile(t, h)
			_, err = Open(p, nil)
			require.Error(t, err)
		}
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))
	// A reader that claims far more bytes than it has.
	h := hostile[0]
	_, err := NewReader(bytes.NewReader(h), 1<<50, nil)
	require.Error(t, err)
}

func TestUpstreamFiles(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "testdata", "abf")
	matches, _ := filepath.Glob(filepath.Join(dir, "*.abf"))
	if len(matches) == 0 {
		t.Skipf("no upstream ABF files in %s", dir)
	}
	for _, p := range matches {
		f, err := Open(p, nil)
		require.NoError(t, err, p)
		for _, r := range f.Records() {
			_, err := f.ReadBytes(r.Key)
			require.NoError(t, err, "%s: %s", p, r.Key)
		}
		f.Close()
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
