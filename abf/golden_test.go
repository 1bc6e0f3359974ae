package abf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
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
		if f.version() != FormatB && !strings.HasPrefix(name, "bigendian") && !strings.HasPrefix(name, "serialized") {
			assert.Equal(t, got, rewrite(t, f, f.version()), name)
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
func exercise(t testing.TB, r io.ReaderAt, size int64) (*File, error) {
	f, err := NewReader(r, size, nil)
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("error is not a *FormatError: %v", err)
		}
		return nil, err
	}
	prevEnd := int64(0)
	for _, r := range f.Entries() {
		if r.Start < prevEnd || r.Offset < r.Start || r.End < r.Offset+r.Size && !r.Unpadded {
			t.Fatalf("record %q out of order: %+v (previous end %d)", r.Name, r, prevEnd)
		}
		if r.Size > 0 && r.Offset+r.Size > size {
			t.Fatalf("record %q outside the file: %+v", r.Name, r)
		}
		prevEnd = r.End
		_, _ = f.ReadBytes(r.Name)
		switch r.Kind {
		case KindBitArray:
			_, _ = f.ReadBits(r.Name)
			_, _ = Read[bool](f, r.Name)
		case KindString:
			_, _ = f.ReadString(r.Name)
		case KindArray:
			readAny(f, r)
		}
	}
	return f, nil
}

func readAny(f *File, r Entry) {
	switch r.Type {
	case layout.I8:
		_, _ = Read[int8](f, r.Name)
	case layout.U8:
		_, _ = Read[uint8](f, r.Name)
	case layout.I16:
		_, _ = Read[int16](f, r.Name)
	case layout.U16:
		_, _ = Read[uint16](f, r.Name)
	case layout.I32:
		_, _ = Read[int32](f, r.Name)
	case layout.U32:
		_, _ = Read[uint32](f, r.Name)
	case layout.I64:
		_, _ = Read[int64](f, r.Name)
	case layout.U64:
		_, _ = Read[uint64](f, r.Name)
	case layout.F16:
		_, _ = Read[layout.Float16](f, r.Name)
	case layout.F32:
		_, _ = Read[float32](f, r.Name)
	case layout.F64:
		_, _ = ReadRowMajor[float64](f, r.Name)
	case layout.Bool:
		_, _ = Read[bool](f, r.Name)
	case layout.I128:
		_, _ = Read[layout.Int128](f, r.Name)
	case layout.U128:
		_, _ = Read[layout.Uint128](f, r.Name)
	case layout.JuliaChar:
		_, _ = Read[layout.Char](f, r.Name)
	}
}

// lePayload returns a record's payload in little-endian byte order.
func lePayload(t testing.TB, f *File, r Entry) []byte {
	b, err := f.ReadBytes(r.Name)
	require.NoError(t, err)
	if r.BigEndian {
		switch r.Kind {
		case KindArray:
			layout.SwapBytes(b, r.Type.Size())
		case KindBitArray:
			layout.SwapBytes(b, 8)
		}
	}
	return b
}

// rewritable reports whether the writer can reproduce the record.
func rewritable(t testing.TB, f *File, r Entry, format Format) bool {
	if !utf8Valid(r.Name) || r.Kind == KindDataType || r.Kind == KindSerialized {
		return false
	}
	switch r.Kind {
	case KindString:
		s, err := f.ReadString(r.Name)
		return err == nil && format == FormatC && utf8Valid(s)
	case KindBitArray:
		_, err := f.ReadBits(r.Name)
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
	for _, r := range f.Entries() {
		if !rewritable(t, f, r, format) {
			continue
		}
		payload := lePayload(t, f, r)
		rec := record{key: r.Name, kind: r.Kind, elem: r.Type, dims: r.Shape, fill: writeAll(payload)}
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
		require.NoError(t, w.write(rec), "record %q", r.Name)
	}
	require.NoError(t, w.Close())
	out, err := os.ReadFile(p)
	require.NoError(t, err)
	return out
}

// namedReader is a file's bytes with its name, as NewReader reports it.
type namedReader struct {
	*bytes.Reader
	name string
}

func (r namedReader) Name() string { return r.name }

func readerOf(name string, data []byte) namedReader { return namedReader{bytes.NewReader(data), name} }

// field is one field of a file, as the format lays it out.
type field struct {
	start, end int64
	first      bool  // a record's first field
	payload    int64 // ≥ 0: from the header's end (padding) to the payload's end, whose offset this is
	emptyPad   bool  // the padding of an empty payload
}

// fieldsOf lays out the records of f field by field, from the format's
// description alone, and checks the layout against the parsed offsets. It
// also returns the end of the first record's type (B/C detection needs it).
func fieldsOf(t *testing.T, f *File) (fields []field, typeEnd int64) {
	t.Helper()
	format := f.version()
	for i, r := range f.Entries() {
		off := r.Start
		add := func(n int64, first bool) {
			if n > 0 {
				fields = append(fields, field{start: off, end: off + n, first: first, payload: -1})
			}
			off += n
		}
		text := func(s string) { add(int64(len(s)), false) }
		str := func(s string) { add(8, false); text(s) }
		if format != FormatA {
			add(1, true)
		}
		add(8, format == FormatA)
		text(r.Name)
		switch {
		case format == FormatC:
			str(r.TypeString)
		case r.Kind == KindArray:
			str("Array")
		case r.Kind == KindBitArray:
			str("BitArray")
		default:
			str("String")
		}
		if i == 0 {
			typeEnd = off // C's type, or A and B's container
		}
		if format != FormatC && r.Kind == KindArray {
			str(juliaNames[r.Type])
		}
		switch r.Kind {
		case KindArray, KindBitArray:
			if format != FormatC {
				add(8, false) // N
			}
			for range r.Shape {
				add(8, false)
			}
			if r.Size > 0 {
				fields = append(fields, field{start: off, end: r.Offset + r.Size, payload: r.Offset})
			} else if r.Offset > off {
				fields = append(fields, field{start: off, end: r.Offset, payload: -1, emptyPad: true})
			}
			off = r.Offset + r.Size
		case KindString: // a length, then the text
			add(8, false)
			require.Equal(t, off, r.Offset, "record %q", r.Name)
			s, err := f.ReadString(r.Name)
			require.NoError(t, err)
			text(s)
		default: // serialized: a length, then the bytes
			add(8, false)
			require.Equal(t, off, r.Offset, "record %q", r.Name)
			add(r.Size, false)
		}
		require.Equal(t, r.End, off, "record %q", r.Name)
	}
	return fields, typeEnd
}

// cutAt returns where opening the file of these fields cut to size bytes
// fails, and whether with mmapfile.ErrTruncated; -1 if it opens. The
// error is at the start of the first field the cut reaches (at the
// payload's offset for a cut in a payload or its padding), except where
// the cut leaves too little to tell the format.
func cutAt(f *File, fields []field, typeEnd int64, size int64) (int64, bool) {
	format := f.version()
	switch {
	case size == 0:
		return -1, false // an empty file is an empty Format C file
	case format == FormatA && size < 14 && f.Entries()[0].BigEndian == false:
		return 0, false // no "LITTLE": not an ABF file
	case format == FormatA && size < 9:
		return 1, true // 00…06 is read as a C flag and a key length cut short
	case format == FormatA && size < 14:
		return 9, true // … whose key runs past the end
	case format == FormatA && size < 22:
		return 14, true // the record count
	case format == FormatB && size < typeEnd:
		// B is only told from C by its first container; before it, the
		// bytes are read as C, whose key length must be a multiple of 4.
		return 1, size < 9
	}
	for _, fl := range fields {
		switch {
		case fl.end <= size:
			continue
		case fl.first && fl.start >= size:
			if format == FormatA {
				return fl.start, true // Format A's count asks for more records
			}
			return -1, false // B and C end at a record boundary
		case fl.emptyPad && format != FormatA:
			return -1, false // an empty last payload may end before its padding
		case fl.emptyPad:
			continue // the next record, if counted, starts after the padding
		case fl.payload >= 0:
			return fl.payload, true
		}
		return fl.start, true
	}
	return -1, false
}

// TestTruncatedGoldenFiles cuts every golden file at every byte: each cut
// opens, or fails with a *FormatError naming the file and the offset of
// the first field the cut reaches.
func TestTruncatedGoldenFiles(t *testing.T) {
	for name, data := range goldenFiles(t) {
		f, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
		require.NoError(t, err)
		fields, typeEnd := fieldsOf(t, f)
		p := filepath.Join(t.TempDir(), name)
		for size := int64(0); size < int64(len(data)); size++ {
			want, truncated := cutAt(f, fields, typeEnd, size)
			require.NoError(t, os.WriteFile(p, data[:size], 0o644))
			for _, open := range []func() (*File, error){
				func() (*File, error) { return NewReader(readerOf(name, data[:size]), size, nil) },
				func() (*File, error) { return Open(p, nil) },
			} {
				g, err := open()
				if want < 0 {
					require.NoError(t, err, "%s cut to %d", name, size)
					for _, r := range g.Entries() {
						_, err := g.ReadBytes(r.Name)
						require.NoError(t, err, "%s cut to %d: %q", name, size, r.Name)
					}
					require.NoError(t, g.Close())
					continue
				}
				require.Error(t, err, "%s cut to %d", name, size)
				var fe *FormatError
				require.ErrorAs(t, err, &fe, "%s cut to %d", name, size)
				require.Equal(t, want, fe.Offset, "%s cut to %d: %v", name, size, err)
				require.Contains(t, []string{name, p}, fe.File, "%s cut to %d", name, size)
				require.Equal(t, truncated, errors.Is(err, mmapfile.ErrTruncated), "%s cut to %d: %v", name, size, err)
			}
		}
	}
}

// TestBitFlips flips every bit of some golden files. Each flip opens, or
// fails with a *FormatError that names the file, at an offset inside the
// file and no earlier than the record (or header field) the flip is in:
// the records before it parse as they did. A flipped byte-order flag, or
// a flip in Format A's "LITTLE" header, is an error at exactly that
// record (or at 0).
func TestBitFlips(t *testing.T) {
	g := goldenFiles(t)
	for _, name := range []string{"tv1-c.abf", "tv2-a.abf", "tv3-b.abf", "serialized-c.abf", "bigendian-c.abf", "types-c.abf", "keys-c.abf"} {
		data := g[name]
		f, err := NewReader(bytes.NewReader(data), int64(len(data)), nil)
		require.NoError(t, err)
		recs := f.Entries()
		for i := range data {
			// The record (or Format A header field) byte i is in.
			from, exact := int64(0), false
			for _, r := range recs {
				if r.Start <= int64(i) {
					from, exact = r.Start, r.Start == int64(i) && f.version() != FormatA
				}
			}
			if f.version() == FormatA && i < 22 {
				from, exact = 0, i < 14
				if i >= 14 {
					from = 14
				}
			}
			for bit := 0; bit < 8; bit++ {
				flipped := append([]byte{}, data...)
				flipped[i] ^= 1 << bit
				_, err := exercise(t, readerOf(name, flipped), int64(len(flipped)))
				if err == nil {
					require.False(t, exact, "%s: byte %d bit %d opens", name, i, bit)
					continue
				}
				var fe *FormatError
				require.ErrorAs(t, err, &fe)
				require.Equal(t, name, fe.File)
				if exact {
					require.Equal(t, from, fe.Offset, "%s: byte %d bit %d: %v", name, i, bit, err)
				}
				require.GreaterOrEqual(t, fe.Offset, from, "%s: byte %d bit %d: %v", name, i, bit, err)
				require.LessOrEqual(t, fe.Offset, int64(len(data)), "%s: byte %d bit %d: %v", name, i, bit, err)
			}
		}
	}
}

// TestHostile checks that hostile files, and requests a file cannot
// satisfy, give a *FormatError that names the file, at the right offset,
// wrapping the right sentinel: the conditions every format package shares
// (mmapfile's sentinels) and ABF's own.
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
	g := goldenFiles(t)
	tv1, be := g["tv1-c.abf"], g["bigendian-c.abf"]
	with := func(data []byte, at int, b byte) []byte {
		out := append([]byte{}, data...)
		out[at] = b
		return out
	}
	boolArr := c().str("Array{Bool,1}").i64(3).raw([]byte{1, 7, 0}).b // data at 39
	view := func(key string) func(f *File) error {
		return func(f *File) error { _, err := View[float64](f, key); return err }
	}
	for _, tc := range []struct {
		name string
		data []byte
		mode string              // "" is "r"
		op   func(f *File) error // nil: the open fails
		off  int64
		err  error
		msg  string
	}{
		// Headers that lie.
		{"huge dim", arr("Array{Float64,1}", 1<<40), "", nil, 48, mmapfile.ErrTruncated, "payload truncated"},
		{"product overflows", arr("Array{Float64,2}", 1<<32, 1<<32), "", nil, 42, nil, "overflows"},
		{"byte size overflows", arr("Array{Float64,1}", 1<<62), "", nil, 34, nil, "payload size overflows"},
		{"bits size", arr("BitArray{1}", 1<<62), "", nil, 40, mmapfile.ErrTruncated, "payload truncated"},
		{"negative dim", arr("Array{Float64,2}", 1, -1), "", nil, 42, nil, "negative"},
		{"zero dim hides overflow", c().str("Array{Float64,3}").i64(1 << 40).i64(0).i64(1 << 40).b, "", nil, -1, nil, ""},
		{"many dims", c().str("Array{Float64,1024}").i64(1).b, "", nil, 45, mmapfile.ErrTruncated, "dimension 2 truncated"},
		{"key prefix not multiple of 4", newC().u8(0).i64(5).raw([]byte("x")).b, "", nil, 1, nil, "multiple of 4"},
		{"negative key prefix", newC().u8(0).i64(-4).b, "", nil, 1, nil, "negative"},
		{"huge key prefix", newC().u8(0).i64(1 << 62).raw([]byte("xyz")).b, "", nil, 9, mmapfile.ErrTruncated, "key truncated"},
		{"type prefix not multiple of 4", c().i64(6).raw([]byte("String")).b, "", nil, 10, nil, "multiple of 4"},
		{"unknown type", c().str("Dict{Int64,Int64}").b, "", nil, 10, nil, "not recognized"},
		{"long unknown type", c().str(strings.Repeat("Q", 100)).b, "", nil, 10, nil, "…"},
		{"bad flag", append(arr("Array{Float64,1}", 1), 7), "", nil, 56, nil, "flag"},
		{"serialized negative", c().str("DataType").i64(-1).b, "", nil, 26, nil, "negative"},
		{"serialized beyond EOF", c().str("DataType").i64(100).raw([]byte{1}).b, "", nil, 34, mmapfile.ErrTruncated, "truncated"},
		{"string value beyond EOF", c().str("String").i64(400).raw([]byte("ab")).b, "", nil, 32, mmapfile.ErrTruncated, "truncated"},
		{"A negative count", newAB().headerA(-1).b, "", nil, 14, nil, "negative"},
		{"A count too large", newAB().headerA(1 << 60).b, "", nil, 22, mmapfile.ErrTruncated, "key length truncated"},
		{"A short header", newAB().i64(6).raw([]byte("LITTLE")).i64(1).b[:20], "", nil, 14, mmapfile.ErrTruncated, "record count"},
		{"A unknown container", a().str("Dict").b, "", nil, 31, nil, "container"},
		{"A unknown element", a().str("Array").str("Complex").i64(1).b, "", nil, 44, nil, "element type"},
		{"A negative N", a().str("Array").str("Float64").i64(-1).b, "", nil, 59, nil, "number of dimensions"},
		{"A huge N", a().str("BitArray").i64(1 << 40).b, "", nil, 47, nil, "number of dimensions"},
		{"neither B nor C", newAB().u8(0).str("x").i64(6).raw([]byte("Strin")).b, "", nil, 1, nil, "multiple of 4"},
		{"B unknown container", append(tv3(), newAB().u8(0).str("y").str("Tuple").b...), "", nil, 128 + 10, nil, "container"},
		{"key characters cut by EOF", newC().u8(0).i64(8).raw([]byte{0xce, 0xb1}).b, "", nil, 9, mmapfile.ErrTruncated, "read before end of file"},
		{"not ABF", []byte("hello world"), "", nil, 0, nil, "not an ABF file"},
		{"duplicate key", with(tv1, 73, 'x'), "", nil, 64, ErrDuplicateKey, `duplicates the key of the record at offset 0`},
		{"big-endian file opened for writing", be, "r+", nil, 0, mmapfile.ErrNotWritable, "big-endian files are read only"},
		{"Format B opened for writing", g["tv3-b.abf"], "a", nil, 0, mmapfile.ErrNotWritable, "Format B files are read only"},
		{"mode a+", tv1, "a+", nil, -1, nil, "not one of r, r+, w, w+, a"},
		{"locked by another writer", tv1, "r+", func(f *File) error { _, err := openMode(f.Name(), "r+", nil); return err }, -1, mmapfile.ErrLocked, "cannot open"},

		// Requests the file cannot satisfy.
		{"view as the wrong Go type", tv1, "", func(f *File) error { _, err := View[float32](f, "x"); return err }, 0, mmapfile.ErrTypeMismatch, "not an array of f32"},
		{"read as the wrong Go type", tv1, "", func(f *File) error { _, err := Read[int64](f, "x"); return err }, 0, mmapfile.ErrTypeMismatch, "not an array of i64"},
		{"view of a big-endian record", be, "", view("x"), 0, mmapfile.ErrByteOrder, "use abf.Read or abf.ReadAt"},
		{"view of a Bool byte 7", boolArr, "", func(f *File) error { _, err := View[bool](f, "x"); return err }, 40, mmapfile.ErrInvalidBool, "use abf.Read or abf.ReadAt with Options.Lenient"},
		{"read of a Bool byte 7", boolArr, "", func(f *File) error { _, err := Read[bool](f, "x"); return err }, 40, mmapfile.ErrInvalidBool, "neither 0 nor 1"},
		{"view of BitArray unused bits", with(tv1, 104, 0x0D), "", func(f *File) error { _, err := f.ViewBits("b"); return err }, 104, nil, "unused bits"},
		{"read outside the array", tv1, "", func(f *File) error { return ReadAt(f, "x", 1, make([]float64, 2)) }, 48, mmapfile.ErrOutOfRange, "outside [0, 2)"},
		{"set outside the array", tv1, "r+", func(f *File) error { return Set(f, "x", []int64{2}, 1.0) }, 48, mmapfile.ErrOutOfRange, "past the end of dimension 0"},
		{"no such key", tv1, "", view("nope"), -1, format.ErrNoRecord, `no such record "nope"`},
		{"write to a file opened r", tv1, "", func(f *File) error { return Write(f, "y", []int64{1}, []int8{1}) }, -1, mmapfile.ErrNotWritable, `mode "r" cannot write`},
		{"set in a file opened r", tv1, "", func(f *File) error { return Set(f, "x", []int64{0}, 1.0) }, -1, mmapfile.ErrNotWritable, `mode "r" cannot write`},
		{"view in mode a", tv1, "a", view("x"), -1, ErrNotReadable, `mode "a" cannot read`},
		{"a key that exists", tv1, "r+", func(f *File) error { return Write(f, "x", []int64{1}, []int8{1}) }, 0, ErrKeyExists, `record "x" already exists at offset 0`},
		{"String in Format A", g["tv2-a.abf"], "a", func(f *File) error { return f.WriteString("s", "v") }, -1, errors.ErrUnsupported, "Format A cannot hold String records"},
		{"read after Close", tv1, "", func(f *File) error { f.Close(); _, err := Read[float64](f, "x"); return err }, -1, mmapfile.ErrClosed, "file is closed"},
		{"view after Close", tv1, "r+", func(f *File) error { f.Close(); return view("x")(f) }, -1, mmapfile.ErrClosed, "file is closed"},
		{"Close twice", tv1, "", func(f *File) error { f.Close(); return f.Close() }, -1, mmapfile.ErrClosed, "file is closed"},
		{"file truncated under the mapping", tv1, "", func(f *File) error {
			if err := os.Truncate(f.Name(), 0); err != nil {
				return err
			}
			_, err := Read[float64](f, "x")
			return err
		}, 48, mmapfile.ErrFault, "the file was cut short while open: the payload [48, 64) is no longer all there; it now ends at offset 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tempFile(t, tc.data)
			mode := tc.mode
			if mode == "" {
				mode = "r"
			}
			f, err := openMode(p, mode, nil)
			if tc.op != nil {
				require.NoError(t, err)
				defer f.Close()
				err = tc.op(f)
			}
			if tc.off < 0 && tc.err == nil && tc.msg == "" {
				require.NoError(t, err)
				f.Close()
				return
			}
			fe := requireFormatErr(t, err, tc.off, tc.err)
			assert.Equal(t, p, fe.File, "the error names the file")
			assert.Contains(t, fe.Error(), tc.msg)
			assert.True(t, strings.HasPrefix(fe.Error(), "abf: "+p+": "), fe.Error())
			if tc.op != nil || mode != "r" {
				return
			}
			// The reader path gives the same error, naming the reader.
			_, err = NewReader(readerOf("hostile.abf", tc.data), int64(len(tc.data)), nil)
			fe = requireFormatErr(t, err, tc.off, tc.err)
			assert.Equal(t, "hostile.abf", fe.File)
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

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
