package conformance

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/csvtable"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/hdf5"
	"github.com/mmapkit/mmapkit/internal/memsource"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/npy"
	"github.com/mmapkit/mmapkit/scidb"
	"github.com/mmapkit/mmapkit/zarr"
)

// memSource is a format.Source of arrays and columns held in memory, in
// row-major order and little-endian bytes.
type memSource struct{ memsource.Source }

// add appends a record of kind k holding values (a slice of a layout
// element type), of the given shape (its length if none).
func (m *memSource) add(k format.Kind, name string, values any, shape ...int64) *memSource {
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, values); err != nil {
		panic(err)
	}
	t := layout.Invalid
	switch values.(type) {
	case []float64:
		t = layout.F64
	case []float32:
		t = layout.F32
	case []int64:
		t = layout.I64
	case []int32:
		t = layout.I32
	case []bool:
		t = layout.Bool
	case []uint8:
		t = layout.U8
	}
	if shape == nil {
		shape = []int64{int64(reflect.ValueOf(values).Len())}
	}
	m.Add(format.Record{Kind: k, Array: layout.Array{Name: name, Type: t, Shape: shape, Offset: -1, Size: int64(buf.Len())}}, buf.Bytes())
	return m
}

func arrays() *memSource { return &memSource{} }
func (m *memSource) array(name string, values any, shape ...int64) *memSource {
	return m.add(format.KindArray, name, values, shape...)
}
func (m *memSource) column(name string, values any) *memSource {
	return m.add(format.KindColumn, name, values)
}

// formatError unwraps err into the package's *E (its FormatError) and
// returns the fields every format's FormatError has.
func formatError[E any, P interface {
	*E
	error
}](err error) (file string, off int64, ok bool) {
	var e P
	if !errors.As(err, &e) {
		return "", 0, false
	}
	v := reflect.ValueOf(e).Elem()
	return v.FieldByName("File").String(), v.FieldByName("Offset").Int(), true
}

// subject is one format package under test, with what each condition
// needs of it. A nil function: the format has no such thing (the row is
// skipped, saying why).
type subject struct {
	format string            // the registered name
	file   string            // the name of the file written
	params map[string]string // reading parameters
	src    *memSource        // what the file holds (record 0 is read)
	// golden, for formats this project does not write, is a reference
	// file copied in place of writing src.
	golden string

	// errType is the package's *FormatError type, for the shape row.
	errType reflect.Type
	// asFormatError is formatError of the package's FormatError.
	asFormatError func(error) (string, int64, bool)
	// cut is where a truncated file ends and the offset the error names:
	// it gets the records of the whole file.
	cut func(recs []format.Record) (size, off int64)
	// wrongType calls the package's typed View and Read (and ReadAt) with
	// a Go type that is not record 0's.
	wrongType func(path string) []error
	// noAlias returns a file of the format whose record cannot be viewed,
	// the package's View of it, the sentinel and the copying call the
	// error must name.
	noAlias func(t *testing.T, dir string) (path string, view func() error, sentinel error, copyCall string)
	// lenient returns a file that a strict open or read refuses and a
	// lenient one accepts, and the sentinel of the refusal.
	lenient func(t *testing.T, s *subject, dir string) (path string, sentinel error)
	// salvage: the file cut as in cut opens with Salvage, keeping what is
	// before the damage (the records before it; a NumPy array's whole
	// rows; a CSV file's rows).
	salvage bool
}

func (s *subject) options(o *format.Options) *format.Options {
	if o == nil {
		o = &format.Options{}
	}
	o.Params = s.params
	return o
}

// write writes s.src to dir/s.file with format.Write (or copies the
// subject's reference file there).
func (s *subject) write(t *testing.T, dir string, src format.Source) string {
	t.Helper()
	p := filepath.Join(dir, s.file)
	if s.golden != "" {
		b, err := os.ReadFile(s.golden)
		if errors.Is(err, os.ErrNotExist) {
			t.Skipf("%s: the reference file %s is absent (shared beside the project)", s.format, s.golden)
		}
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	require.NoError(t, format.Write(p, src, &format.Options{Format: s.format}))
	return p
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// subjects are the format packages under test.
func subjects() []*subject {
	return []*subject{
		{
			format: "abf", file: "x.abf",
			src:           arrays().array("a", []float64{1, 2, 3}).array("b", []bool{true, false, true}),
			errType:       reflect.TypeFor[abf.FormatError](),
			asFormatError: formatError[abf.FormatError],
			cut: func(recs []format.Record) (int64, int64) {
				// Cut inside the last payload: the error is at that
				// payload, which runs past the end.
				return recs[1].Offset + 1, recs[1].Offset
			},
			wrongType: func(path string) []error {
				f, err := abf.Open(path, nil)
				if err != nil {
					return []error{err}
				}
				defer f.Close()
				_, e1 := abf.View[int32](f, "a")
				_, e2 := abf.Read[int32](f, "a")
				return []error{e1, e2, abf.ReadAt(f, "a", 0, make([]float32, 1))}
			},
			noAlias: func(t *testing.T, dir string) (string, func() error, error, string) {
				p := copyFile(t, "../../abf/testdata/bigendian-c.abf", dir)
				return p, func() error {
					f, err := abf.Open(p, nil)
					require.NoError(t, err)
					defer f.Close()
					_, err = abf.View[float64](f, "x")
					return err
				}, mmapfile.ErrByteOrder, "Read"
			},
			lenient: boolByte2,
			salvage: true,
		},
		{
			format: "futhark", file: "x.in",
			src:           arrays().array("0", []float32{1, 2, 3}).array("1", []int64{4, 5}),
			errType:       reflect.TypeFor[futhark.FormatError](),
			asFormatError: formatError[futhark.FormatError],
			cut: func(recs []format.Record) (int64, int64) {
				// A binary value the file ends inside: the error is at
				// its payload, which runs past the end.
				return recs[1].Offset + 1, recs[1].Offset
			},
			wrongType: func(path string) []error {
				f, err := futhark.Open(path, nil)
				if err != nil {
					return []error{err}
				}
				defer f.Close()
				_, e1 := futhark.View[float64](f, 0)
				_, e2 := futhark.Read[float64](f, 0)
				return []error{e1, e2, futhark.ReadAt(f, 0, 0, make([]int32, 1))}
			},
			noAlias: func(t *testing.T, dir string) (string, func() error, error, string) {
				// f32 [3]: the payload starts at byte 15 of the file.
				p := (&subject{format: "futhark", file: "m.in"}).write(t, dir, arrays().array("0", []float32{1, 2, 3}))
				return p, func() error {
					f, err := futhark.Open(p, nil)
					require.NoError(t, err)
					defer f.Close()
					_, err = futhark.View[float32](f, 0)
					return err
				}, mmapfile.ErrMisaligned, "Read"
			},
			lenient: func(t *testing.T, _ *subject, dir string) (string, error) {
				// The spelling of NaN that Futhark programs printed
				// before 2018.
				p := filepath.Join(dir, "l.in")
				require.NoError(t, os.WriteFile(p, []byte("[1f32, nanf32]\n"), 0o644))
				return p, layout.ErrSyntax
			},
			salvage: true,
		},
		{
			format: "daphne", file: "x.dbdf",
			src:           arrays().array("matrix", []float64{1, 2, 3, 4, 5, 6}, 2, 3),
			errType:       reflect.TypeFor[daphne.FormatError](),
			asFormatError: formatError[daphne.FormatError],
			cut: func(recs []format.Record) (int64, int64) {
				// Values cut short: the error is at the first value.
				return recs[0].Offset + 1, recs[0].Offset
			},
			wrongType: func(path string) []error {
				f, err := daphne.Open(path, nil)
				if err != nil {
					return []error{err}
				}
				defer f.Close()
				_, e1 := daphne.View[int32](f, "matrix")
				_, e2 := daphne.Read[int32](f, "matrix")
				return []error{e1, e2, daphne.ReadAt(f, "matrix", 0, make([]float32, 1)),
					daphne.Set(f, "matrix", []int64{0, 0}, int32(1)), daphne.CopyDenseRange(f, make([]float32, 1), 0, 1, 0, 1)}
			},
			noAlias: func(t *testing.T, dir string) (string, func() error, error, string) {
				// DAPHNE's values start at byte 45.
				p := (&subject{format: "daphne", file: "m.dbdf"}).write(t, dir, arrays().array("matrix", []float64{1, 2}, 1, 2))
				return p, func() error {
					f, err := daphne.Open(p, nil)
					require.NoError(t, err)
					defer f.Close()
					_, err = daphne.View[float64](f, "matrix")
					return err
				}, mmapfile.ErrMisaligned, "Read"
			},
			lenient: func(t *testing.T, _ *subject, dir string) (string, error) {
				// A version byte other than 1, which DAPHNE's reader
				// does not check.
				p := (&subject{format: "daphne", file: "l.dbdf"}).write(t, dir, arrays().array("matrix", []float64{1, 2}, 1, 2))
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				b[0] = 9
				require.NoError(t, os.WriteFile(p, b, 0o644))
				return p, nil
			},
		},
		{
			format: "scidb", file: "x.scidb",
			params:        map[string]string{"scidb-format": "(double, bool)"},
			src:           arrays().column("a", []float64{1, 2, 3}).column("b", []bool{true, false, true}),
			errType:       reflect.TypeFor[scidb.FormatError](),
			asFormatError: formatError[scidb.FormatError],
			cut: func(recs []format.Record) (int64, int64) {
				// Cells of 9 bytes; the third cut inside its double:
				// the error is at the start of the failing read.
				return 2*9 + 3, 2 * 9
			},
			wrongType: func(path string) []error {
				f, err := scidb.Open(path, scidbOptions("(double, bool)"))
				if err != nil {
					return []error{err}
				}
				defer f.Close()
				_, e1 := scidb.ColumnOf[int32](f, 0)
				e2 := scidb.Set(f, 0, []int64{0}, int32(1))
				_, e4 := scidb.Read[int32](f, 0)
				e5 := scidb.ReadAt(f, 0, 0, make([]int32, 1))
				// A file of one attribute, which View can alias.
				one := path + ".1"
				if err := os.WriteFile(one, le64(math.Float64bits(1)), 0o644); err != nil {
					return []error{err}
				}
				g, err := scidb.Open(one, scidbOptions("(double)"))
				if err != nil {
					return []error{e1, e2, e4, e5, err}
				}
				defer g.Close()
				_, e3 := scidb.View[int32](g, 0)
				return []error{e1, e2, e3, e4, e5}
			},
			noAlias: func(t *testing.T, dir string) (string, func() error, error, string) {
				// Attribute 0 of two is strided through the cells.
				p := (&subject{format: "scidb", file: "m.scidb", params: map[string]string{"scidb-format": "(double, bool)"}}).
					write(t, dir, arrays().column("a", []float64{1, 2}).column("b", []bool{true, false}))
				return p, func() error {
					f, err := scidb.Open(p, scidbOptions("(double, bool)"))
					require.NoError(t, err)
					defer f.Close()
					_, err = scidb.View[float64](f, 0)
					return err
				}, errors.ErrUnsupported, "Read"
			},
			lenient: func(t *testing.T, _ *subject, dir string) (string, error) {
				p := filepath.Join(dir, "l.scidb")
				require.NoError(t, os.WriteFile(p, append(le64(math.Float64bits(1)), 2), 0o644))
				return p, mmapfile.ErrInvalidBool
			},
			salvage: true,
		},
		{
			format: "npy", file: "x.npy",
			src:           arrays().array("0", []float64{1, 2, 3, 4, 5, 6}, 3, 2),
			errType:       reflect.TypeFor[npy.FormatError](),
			asFormatError: formatError[npy.FormatError],
			cut: func(recs []format.Record) (int64, int64) {
				// Data cut short: the error is where the file ends.
				return recs[0].Offset + 1, recs[0].Offset + 1
			},
			wrongType: func(path string) []error {
				f, err := npy.Open(path, nil)
				if err != nil {
					return []error{err}
				}
				defer f.Close()
				_, e1 := npy.View[int32](f, "0")
				_, e2 := npy.Read[int32](f, "0")
				return []error{e1, e2, npy.ReadAt(f, "0", 0, make([]float32, 1))}
			},
			noAlias: func(t *testing.T, dir string) (string, func() error, error, string) {
				p := copyFile(t, "../../npy/testdata/be-f8.npy", dir)
				return p, func() error {
					f, err := npy.Open(p, nil)
					require.NoError(t, err)
					defer f.Close()
					_, err = npy.View[float64](f, "0")
					return err
				}, mmapfile.ErrByteOrder, "Read"
			},
			lenient: boolByte2,
			salvage: true,
		},
		{
			format: "zarr", file: "x.zarr",
			src:           arrays().array("a", []float64{1, 2, 3, 4, 5, 6}, 3, 2),
			errType:       reflect.TypeFor[zarr.FormatError](),
			asFormatError: formatError[zarr.FormatError],
			cut: func(recs []format.Record) (int64, int64) {
				// The store's one chunk (48 bytes) cut short: the error
				// is where the chunk file ends.
				return 20, 20
			},
			wrongType: func(path string) []error {
				s, err := zarr.Open(path, nil)
				if err != nil {
					return []error{err}
				}
				defer s.Close()
				a, err := s.Array("a")
				if err != nil {
					return []error{err}
				}
				_, e1 := zarr.View[int32](a)
				_, e2 := zarr.Read[int32](a)
				_, e3 := zarr.ViewChunk[int32](a, 0, 0)
				_, e4 := zarr.ReadRegion[int32](a, []int64{0, 0}, []int64{1, 1})
				return []error{e1, e2, e3, e4, zarr.ReadAt(a, 0, make([]int32, 1)), zarr.Set(a, []int64{0, 0}, int32(1))}
			},
			noAlias: func(t *testing.T, dir string) (string, func() error, error, string) {
				src := arrays().array("a", []float64{1, 2})
				src.Records()[0].BigEndian = true
				p := (&subject{format: "zarr", file: "m.zarr"}).write(t, dir, src)
				return p, func() error {
					s, err := zarr.Open(p, nil)
					require.NoError(t, err)
					defer s.Close()
					a, err := s.Array("a")
					require.NoError(t, err)
					_, err = zarr.View[float64](a)
					return err
				}, mmapfile.ErrByteOrder, "Read"
			},
			lenient: boolByte2,
			salvage: true,
		},
		{
			format: "csv", file: "x.csv",
			src:           arrays().column("a", []float64{1.5, 2.5, 3.5}).column("b", []int64{4, 5, 6}),
			errType:       reflect.TypeFor[csvtable.FormatError](),
			asFormatError: formatError[csvtable.FormatError],
			cut: func(recs []format.Record) (int64, int64) {
				// "a,b\n1.5,4\n2.5,5\n3.5,6\n" cut inside its last row:
				// the error is at the start of that row.
				return 18, 16
			},
			salvage: true,
		},
		hdf5Subject(),
	}
}

// hdf5Reference is where the HDF5 reference files are.
const hdf5Reference = "../../../shared/testdata/hdf5/"

// hdf5Subject is the HDF5 reader, on reference files written by h5py (this
// project does not write HDF5 yet).
func hdf5Subject() *subject {
	return &subject{
		format: "hdf5", file: "x.h5", golden: hdf5Reference + "tree_new.h5",
		errType:       reflect.TypeFor[hdf5.FormatError](),
		asFormatError: formatError[hdf5.FormatError],
		cut: func(recs []format.Record) (int64, int64) {
			// Inside /again's data: shorter than the end-of-file
			// address, which the error names as where the file ends.
			return recs[0].Offset + 2, recs[0].Offset + 2
		},
		wrongType: func(path string) []error {
			f, err := hdf5.Open(path, nil)
			if err != nil {
				return []error{err}
			}
			defer f.Close()
			_, e1 := hdf5.View[int32](f, "/again")
			_, e2 := hdf5.Read[int32](f, "/again")
			return []error{e1, e2, hdf5.ReadAt(f, "/again", 0, make([]float32, 1))}
		},
		noAlias: func(t *testing.T, dir string) (string, func() error, error, string) {
			p := (&subject{format: "hdf5", file: "be.h5", golden: hdf5Reference + "oldstyle_numbers.h5"}).write(t, dir, nil)
			return p, func() error {
				f, err := hdf5.Open(p, nil)
				require.NoError(t, err)
				defer f.Close()
				_, err = hdf5.View[int64](f, "/num/be_i8")
				return err
			}, mmapfile.ErrByteOrder, "Read"
		},
		lenient: func(t *testing.T, _ *subject, dir string) (string, error) {
			// h5py's bool (an enumeration of one byte) holding 2.
			p := (&subject{format: "hdf5", file: "b.h5", golden: hdf5Reference + "tree_old.h5"}).write(t, dir, nil)
			f, err := format.Open(p, nil)
			require.NoError(t, err)
			i, err := format.Find(f, "/x_tail")
			require.NoError(t, err)
			at := f.Records()[i].Offset
			require.NoError(t, f.Close())
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.Equal(t, byte(1), b[at], "the true byte")
			b[at] = 2
			require.NoError(t, os.WriteFile(p, b, 0o644))
			return p, mmapfile.ErrInvalidBool
		},
	}
}

func scidbOptions(spec string) *scidb.Options {
	f, err := scidb.ParseFormat(spec)
	if err != nil {
		panic(err)
	}
	return &scidb.Options{Format: f}
}

func copyFile(t *testing.T, from, dir string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	p := filepath.Join(dir, filepath.Base(from))
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// boolByte2 is the lenient case of the formats whose bool arrays NumPy,
// Julia and SciDB's load() read: a bool byte 2, which they read as true.
func boolByte2(t *testing.T, s *subject, dir string) (string, error) {
	src := arrays().array("b", []bool{true, false, true})
	if s.format == "npy" {
		src.Records()[0].Name = "0"
	}
	p := s.write(t, dir, src)
	f, err := format.Open(p, s.options(nil))
	require.NoError(t, err)
	at, file := f.Records()[0].Offset+1, p
	require.NoError(t, f.Close())
	if s.format == "zarr" {
		at, file = 1, filepath.Join(p, "b", "c", "0")
	}
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, byte(0), b[at], "the false byte")
	b[at] = 2
	require.NoError(t, os.WriteFile(file, b, 0o644))
	return p, mmapfile.ErrInvalidBool
}

// forEach runs fn for every subject, in a subtest named after its format,
// with a directory holding its file.
func forEach(t *testing.T, fn func(t *testing.T, s *subject, path string)) {
	for _, s := range subjects() {
		t.Run(s.format, func(t *testing.T) {
			dir := t.TempDir()
			fn(t, s, s.write(t, dir, s.src))
		})
	}
}

// Every format registers under its name and each of its packages has a
// FormatError{File, Offset, Msg, Err} whose message reads
// "<pkg>: <file>: offset N: <msg>: <cause>" and which unwraps to Err.
func TestFormatErrorShape(t *testing.T) {
	names := map[string]bool{}
	for _, f := range format.Formats() {
		names[f.Name] = true
	}
	for _, s := range subjects() {
		t.Run(s.format, func(t *testing.T) {
			assert.True(t, names[s.format], "registered")
			typ := s.errType
			for name, ft := range map[string]reflect.Type{"File": reflect.TypeFor[string](), "Offset": reflect.TypeFor[int64](),
				"Msg": reflect.TypeFor[string](), "Err": reflect.TypeFor[error]()} {
				f, ok := typ.FieldByName(name)
				if assert.True(t, ok, "%s has no field %s", typ, name) {
					assert.Equal(t, ft, f.Type, "%s.%s", typ, name)
				}
			}
			e := reflect.New(typ)
			e.Elem().FieldByName("File").SetString("f.bin")
			e.Elem().FieldByName("Offset").SetInt(12)
			e.Elem().FieldByName("Msg").SetString("bad")
			e.Elem().FieldByName("Err").Set(reflect.ValueOf(mmapfile.ErrTruncated))
			pkg := typ.PkgPath()[strings.LastIndex(typ.PkgPath(), "/")+1:]
			e.Elem().FieldByName("Pkg").SetString(pkg)       // the package's constructors set it
			for _, col := range []string{"Attr", "Column"} { // scidb's "no cell" markers
				if f := e.Elem().FieldByName(col); f.IsValid() {
					f.SetInt(-1)
				}
			}
			err := e.Interface().(error)
			assert.Equal(t, pkg+": f.bin: offset 12: bad: file is truncated: unexpected EOF", err.Error(), "the cause is shown")
			assert.ErrorIs(t, err, mmapfile.ErrTruncated)
		})
	}
}

// (a), (b) A truncated file is mmapfile.ErrTruncated, which is
// io.ErrUnexpectedEOF, in the package's own FormatError naming the file
// and the exact offset.
func TestTruncated(t *testing.T) {
	forEach(t, func(t *testing.T, s *subject, path string) {
		f, err := format.Open(path, s.options(nil))
		require.NoError(t, err)
		recs := f.Records()
		require.NoError(t, f.Close())
		size, off := s.cut(recs)
		cut, named := truncate(t, s, path, size)
		err = openAndRead(path, s.options(nil))
		require.Error(t, err, "%s cut to %d bytes", s.format, size)
		assert.ErrorIs(t, err, mmapfile.ErrTruncated)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		file, got, ok := s.asFormatError(err)
		require.True(t, ok, "not a %s: %v", s.errType, err)
		assert.Equal(t, named, file, "the file named")
		assert.Equal(t, off, got, "the offset: %v", err)
		assert.Contains(t, err.Error(), named)
		assert.Contains(t, filepath.ToSlash(err.Error()), strings.TrimPrefix(filepath.ToSlash(cut), filepath.ToSlash(named)+"/"))
	})
}

// openAndRead opens the file and reads every record of a layout type: a
// truncated chunk of a store is found when it is read.
func openAndRead(path string, o *format.Options) error {
	f, err := format.Open(path, o)
	if err != nil {
		return err
	}
	defer f.Close()
	for i, r := range f.Records() {
		if r.Type.Valid() {
			if _, err := format.ReadAll(f, i, layout.RowMajor, binary.LittleEndian); err != nil {
				return err
			}
		}
	}
	return nil
}

// truncate cuts the file (for a Zarr store, its chunk file) to size and
// returns the path of the file cut and the name its errors give in File
// (a Zarr store's errors name the store, and the chunk by its key).
func truncate(t *testing.T, s *subject, path string, size int64) (cut, named string) {
	t.Helper()
	cut = path
	if s.format == "zarr" {
		cut = filepath.Join(path, "a", "c", "0", "0")
	}
	require.NoError(t, os.Truncate(cut, size))
	return cut, path
}

// (c) A Go type that is not the record's, on the package's typed View,
// Read and their kin, is mmapfile.ErrTypeMismatch naming the file.
func TestWrongGoType(t *testing.T) {
	forEach(t, func(t *testing.T, s *subject, path string) {
		if s.wrongType == nil {
			t.Skipf("%s has no typed View or Read", s.format)
		}
		for i, err := range s.wrongType(path) {
			require.ErrorIs(t, err, mmapfile.ErrTypeMismatch, "call %d", i)
			file, _, ok := s.asFormatError(err)
			require.True(t, ok, "call %d: not a %s: %v", i, s.errType, err)
			assert.True(t, strings.HasPrefix(file, path), "call %d names %s", i, file)
			assert.Contains(t, err.Error(), file, "call %d", i)
		}
	})
}

// (d) A view that cannot alias the file's bytes (misaligned, or not in the
// host's byte order) fails with ErrMisaligned or ErrByteOrder, in a
// message that names the copying call to use instead.
func TestViewCannotAlias(t *testing.T) {
	for _, s := range subjects() {
		t.Run(s.format, func(t *testing.T) {
			if s.noAlias == nil {
				t.Skipf("%s cannot make a payload that a view cannot alias", s.format)
			}
			path, view, sentinel, call := s.noAlias(t, t.TempDir())
			err := view()
			require.ErrorIs(t, err, sentinel)
			file, _, ok := s.asFormatError(err)
			require.True(t, ok, "not a %s: %v", s.errType, err)
			assert.Equal(t, path, file)
			assert.Regexp(t, `(use|copy it with|copy with) (\w+\.)?`+call+`\b`, err.Error(), "names the copying call")
		})
	}
}

// (e) ReadArray of elements outside the record is ErrOutOfRange.
func TestReadArrayOutOfRange(t *testing.T) {
	forEach(t, func(t *testing.T, s *subject, path string) {
		f, err := format.Open(path, s.options(nil))
		require.NoError(t, err)
		defer f.Close()
		r := f.Records()[0]
		n, err := layout.Count(r.Shape)
		require.NoError(t, err)
		size := int64(r.Type.Size())
		for _, first := range []int64{n, -1, 1} {
			err := f.ReadArray(0, make([]byte, size*n), first, layout.RowMajor, binary.LittleEndian)
			require.ErrorIs(t, err, mmapfile.ErrOutOfRange, "first %d", first)
			assert.Contains(t, err.Error(), path, "first %d", first)
		}
		require.NoError(t, f.ReadArray(0, make([]byte, size*n), 0, layout.RowMajor, binary.LittleEndian))
	})
}

// (f) SetText on a file opened read-only is ErrNotWritable.
func TestSetTextReadOnly(t *testing.T) {
	forEach(t, func(t *testing.T, s *subject, path string) {
		f, err := format.Open(path, s.options(nil))
		require.NoError(t, err)
		defer f.Close()
		st, ok := f.(format.Setter)
		if !ok {
			t.Skipf("%s files cannot be changed in place", s.format)
		}
		err = st.SetText(0, make([]int64, len(f.Records()[0].Shape)), "1")
		require.ErrorIs(t, err, mmapfile.ErrNotWritable)
		assert.Contains(t, err.Error(), path)
	})
}

// (g) Close twice is ErrClosed, naming the file.
func TestCloseTwice(t *testing.T) {
	forEach(t, func(t *testing.T, s *subject, path string) {
		for _, mode := range []mmapfile.Mode{mmapfile.ReadOnly, mmapfile.ReadWrite} {
			f, err := format.OpenFile(path, mode, s.options(nil))
			if mode == mmapfile.ReadWrite && errors.Is(err, errors.ErrUnsupported) {
				continue
			}
			require.NoError(t, err, "mode %v", mode)
			size := f.Records()[0].Type.Size()
			require.NoError(t, f.Close())
			err = f.Close()
			require.ErrorIs(t, err, mmapfile.ErrClosed, "mode %v", mode)
			assert.Contains(t, err.Error(), path)
			_, _, ok := s.asFormatError(err)
			assert.True(t, ok, "not a %s: %v", s.errType, err)
			err = f.ReadArray(0, make([]byte, size), 0, layout.RowMajor, binary.LittleEndian)
			require.ErrorIs(t, err, mmapfile.ErrClosed, "ReadArray after Close")
		}
	})
}

// (h) A second read-write open while one is held is ErrLocked.
func TestSecondWriterLocked(t *testing.T) {
	forEach(t, func(t *testing.T, s *subject, path string) {
		w, err := format.OpenFile(path, mmapfile.ReadWrite, s.options(nil))
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skipf("%s files are not opened read-write: %v", s.format, err)
		}
		require.NoError(t, err)
		defer w.Close()
		_, err = format.OpenFile(path, mmapfile.ReadWrite, s.options(nil))
		require.ErrorIs(t, err, mmapfile.ErrLocked)
		assert.Contains(t, err.Error(), path)
	})
}

// (i) Lenient accepts what the upstream tool accepts and a strict open
// refuses, in every format that has it.
func TestLenient(t *testing.T) {
	for _, s := range subjects() {
		t.Run(s.format, func(t *testing.T) {
			if s.lenient == nil {
				t.Skipf("%s has no lenient reading", s.format)
			}
			path, sentinel := s.lenient(t, s, t.TempDir())
			err := openAndRead(path, s.options(nil))
			require.Error(t, err, "strict")
			if sentinel != nil {
				require.ErrorIs(t, err, sentinel, "strict")
			}
			file, _, ok := s.asFormatError(err)
			require.True(t, ok, "not a %s: %v", s.errType, err)
			assert.Equal(t, path, file)
			require.NoError(t, openAndRead(path, s.options(&format.Options{Lenient: true})), "lenient")
		})
	}
}

// (i) Salvage keeps the records before damage, and Damage reports it: the
// error a strict open gives. Formats without Salvage refuse it, an error
// wrapping errors.ErrUnsupported that names the file, never ignoring it;
// Damage of a sound file is nil.
func TestSalvage(t *testing.T) {
	forEach(t, func(t *testing.T, s *subject, path string) {
		f, err := format.Open(path, s.options(nil))
		require.NoError(t, err)
		recs := f.Records()
		if d, ok := f.(format.Damaged); ok {
			assert.NoError(t, d.Damage(), "a sound file")
		}
		require.NoError(t, f.Close())
		size, off := s.cut(recs)
		_, named := truncate(t, s, path, size)
		strict := openAndRead(path, s.options(nil))
		require.ErrorIs(t, strict, mmapfile.ErrTruncated)
		f, err = format.Open(path, s.options(&format.Options{Salvage: true}))
		if !s.salvage {
			require.ErrorIs(t, err, errors.ErrUnsupported, "%s has no Salvage: it is refused", s.format)
			assert.Contains(t, err.Error(), path)
			return
		}
		require.NoError(t, err)
		defer f.Close()
		d, ok := f.(format.Damaged)
		require.True(t, ok, "a salvaged file reports its damage")
		derr := d.Damage()
		require.ErrorIs(t, derr, mmapfile.ErrTruncated)
		file, got, ok := s.asFormatError(derr)
		require.True(t, ok, "not a %s: %v", s.errType, derr)
		assert.Equal(t, named, file)
		assert.Equal(t, off, got, "the offset: %v", derr)
		_, err = format.ReadAll(f, 0, layout.RowMajor, binary.LittleEndian)
		require.NoError(t, err, "the record kept")
	})
}

// fillValues are what TestCreateAndFill writes through each view.
var fillValues = []float64{1.5, -2, 3}

// creators make, in each format whose payloads can be aligned, a new file
// of one f64 [3] array through the package's own create call, fill it
// through a writable view and close it, returning its path.
func creators() map[string]func(t *testing.T, dir string) string {
	fill := func(t *testing.T, v []float64, err error) {
		t.Helper()
		require.NoError(t, err, "the writable view")
		require.Len(t, v, len(fillValues))
		copy(v, fillValues)
	}
	return map[string]func(t *testing.T, dir string) string{
		"abf": func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "c.abf")
			f, err := abf.OpenFile(p, mmapfile.ReadWrite, &abf.Options{Mode: "w+"})
			require.NoError(t, err)
			v, err := abf.Create[float64](f, "a", []int64{3})
			fill(t, v, err)
			require.NoError(t, f.Close())
			return p
		},
		"futhark": func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "c.in")
			f, err := futhark.Create(p, layout.F64, []int64{3}, nil)
			require.NoError(t, err)
			v, err := futhark.View[float64](f, 0)
			fill(t, v, err)
			require.NoError(t, f.Close())
			return p
		},
		"scidb": func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "c.scidb")
			f, err := scidb.Create(p, 3, scidbOptions("(double)"))
			require.NoError(t, err)
			v, err := scidb.View[float64](f, 0)
			fill(t, v, err)
			require.NoError(t, f.Close())
			return p
		},
		"npy": func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "c.npy")
			dt, err := npy.DTypeOf(layout.F64)
			require.NoError(t, err)
			f, err := npy.Create(p, npy.Header{DType: dt, Shape: []int64{3}}, nil)
			require.NoError(t, err)
			v, err := npy.View[float64](f, "0")
			fill(t, v, err)
			require.NoError(t, f.Close())
			return p
		},
		"zarr": func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "c.zarr")
			s, err := zarr.Create(p, []zarr.ArraySpec{{Name: "a", Type: layout.F64, Shape: []int64{3}}}, nil)
			require.NoError(t, err)
			v, err := zarr.View[float64](s.Arrays()[0])
			fill(t, v, err)
			require.NoError(t, s.Close())
			return p
		},
	}
}

// Creating an array on disk and filling it through a writable view
// (numpy's open_memmap(mode="w+")) works in every format whose payloads
// can be aligned, and what was written through the view is in the file.
func TestCreateAndFill(t *testing.T) {
	if layout.HostOrder() != binary.LittleEndian {
		t.Skip("big-endian host: the files written here are little-endian, which views cannot alias")
	}
	makers := creators()
	for _, s := range subjects() {
		t.Run(s.format, func(t *testing.T) {
			create, ok := makers[s.format]
			if !ok {
				switch s.format {
				case "daphne":
					t.Skip("DAPHNE puts values at byte 45, aligned only for 1-byte types: no array to fill through a view")
				case "csv":
					t.Skip("CSV is text: no array to fill through a view")
				case "hdf5":
					t.Skip("this project does not create HDF5 files yet (no writer)")
				}
				t.Fatalf("%s has no create-and-fill", s.format)
			}
			p := create(t, t.TempDir())
			o := s.options(nil)
			if s.format == "scidb" {
				o.Params = map[string]string{"scidb-format": "(double)"}
			}
			f, err := format.Open(p, o)
			require.NoError(t, err)
			defer f.Close()
			got, err := format.ReadAll(f, 0, layout.RowMajor, binary.LittleEndian)
			require.NoError(t, err)
			var want bytes.Buffer
			require.NoError(t, binary.Write(&want, binary.LittleEndian, fillValues))
			assert.Equal(t, want.Bytes(), got)
		})
	}
}

// The typed calls read the same in every package: View[T](f, which),
// Read[T](f, which), ReadAt[T](f, which, start int64, dst []T) and
// Set[T](f, which, idx []int64, v T), where which names the record as the
// format does (a key, a name, an index) and f is the open file — or, for a
// Zarr store, the *Array, which names itself.
func TestTypedCalls(t *testing.T) {
	type T = float64
	for _, c := range []struct {
		format              string
		view, read, at, set any
		file, which         reflect.Type // which: nil for none
	}{
		{"abf", abf.View[T], abf.Read[T], abf.ReadAt[T], abf.Set[T], reflect.TypeFor[*abf.File](), reflect.TypeFor[string]()},
		{"futhark", futhark.View[T], futhark.Read[T], futhark.ReadAt[T], futhark.Set[T], reflect.TypeFor[*futhark.File](), reflect.TypeFor[int]()},
		{"daphne", daphne.View[T], daphne.Read[T], daphne.ReadAt[T], daphne.Set[T], reflect.TypeFor[*daphne.File](), reflect.TypeFor[string]()},
		{"scidb", scidb.View[T], scidb.Read[T], scidb.ReadAt[T], scidb.Set[T], reflect.TypeFor[*scidb.File](), reflect.TypeFor[int]()},
		{"npy", npy.View[T], npy.Read[T], npy.ReadAt[T], npy.Set[T], reflect.TypeFor[*npy.File](), reflect.TypeFor[string]()},
		{"zarr", zarr.View[T], zarr.Read[T], zarr.ReadAt[T], zarr.Set[T], reflect.TypeFor[*zarr.Array](), nil},
		{"hdf5", hdf5.View[T], hdf5.Read[T], hdf5.ReadAt[T], hdf5.Set[T], reflect.TypeFor[*hdf5.File](), reflect.TypeFor[string]()},
	} {
		t.Run(c.format, func(t *testing.T) {
			in := func(more ...reflect.Type) []reflect.Type {
				ts := []reflect.Type{c.file}
				if c.which != nil {
					ts = append(ts, c.which)
				}
				return append(ts, more...)
			}
			slice, errType := reflect.TypeFor[[]T](), reflect.TypeFor[error]()
			for _, f := range []struct {
				name    string
				fn      any
				in, out []reflect.Type
			}{
				{"View", c.view, in(), []reflect.Type{slice, errType}},
				{"Read", c.read, in(), []reflect.Type{slice, errType}},
				{"ReadAt", c.at, in(reflect.TypeFor[int64](), slice), []reflect.Type{errType}},
				{"Set", c.set, in(reflect.TypeFor[[]int64](), reflect.TypeFor[T]()), []reflect.Type{errType}},
			} {
				ft := reflect.TypeOf(f.fn)
				var got, gotOut []reflect.Type
				for i := range ft.NumIn() {
					got = append(got, ft.In(i))
				}
				for i := range ft.NumOut() {
					gotOut = append(gotOut, ft.Out(i))
				}
				assert.Equal(t, f.in, got, "%s.%s parameters", c.format, f.name)
				assert.Equal(t, f.out, gotOut, "%s.%s results", c.format, f.name)
			}
		})
	}
}

// Every package has the same constructors: Open(path, *Options) and
// OpenFile(path, mmapfile.Mode, *Options) of one File type, and
// NewReader(r io.ReaderAt, size int64, *Options) for bytes not on disk (a
// Zarr store, a directory, from an fs.FS); Options embed
// mmapfile.Options, with Lenient and Salvage where the format has them.
func TestConstructors(t *testing.T) {
	ptrOf := func(v any) reflect.Type { return reflect.TypeOf(v) }
	for _, c := range []struct {
		format                 string
		open, openFile, reader any
		source                 reflect.Type // NewReader's first parameter
		lenient, salvage       bool
	}{
		{"abf", abf.Open, abf.OpenFile, abf.NewReader, reflect.TypeFor[io.ReaderAt](), true, true},
		{"futhark", futhark.Open, futhark.OpenFile, futhark.NewReader, reflect.TypeFor[io.ReaderAt](), true, true},
		{"daphne", daphne.Open, daphne.OpenFile, daphne.NewReader, reflect.TypeFor[io.ReaderAt](), true, false},
		{"scidb", scidb.Open, scidb.OpenFile, scidb.NewReader, reflect.TypeFor[io.ReaderAt](), true, true},
		{"npy", npy.Open, npy.OpenFile, npy.NewReader, reflect.TypeFor[io.ReaderAt](), true, true},
		{"zarr", zarr.Open, zarr.OpenFile, zarr.NewReader, reflect.TypeFor[fs.FS](), true, true},
		{"csv", csvtable.Open, csvtable.OpenFile, csvtable.NewReader, reflect.TypeFor[io.ReaderAt](), false, true},
		{"hdf5", hdf5.Open, hdf5.OpenFile, hdf5.NewReader, reflect.TypeFor[io.ReaderAt](), true, false},
	} {
		t.Run(c.format, func(t *testing.T) {
			open, openFile, reader := ptrOf(c.open), ptrOf(c.openFile), ptrOf(c.reader)
			require.Equal(t, 2, open.NumIn(), "Open(path, *Options)")
			opts, file := open.In(1), open.Out(0)
			errType := reflect.TypeFor[error]()
			assert.Equal(t, reflect.TypeFor[string](), open.In(0))
			assert.Equal(t, []reflect.Type{file, errType}, []reflect.Type{open.Out(0), open.Out(1)})
			assert.Equal(t, []reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[mmapfile.Mode](), opts},
				[]reflect.Type{openFile.In(0), openFile.In(1), openFile.In(2)}, "OpenFile(path, mode, *Options)")
			assert.Equal(t, []reflect.Type{file, errType}, []reflect.Type{openFile.Out(0), openFile.Out(1)})
			if c.source == reflect.TypeFor[io.ReaderAt]() {
				assert.Equal(t, []reflect.Type{c.source, reflect.TypeFor[int64](), opts},
					[]reflect.Type{reader.In(0), reader.In(1), reader.In(2)}, "NewReader(r, size, *Options)")
			} else {
				assert.Equal(t, []reflect.Type{c.source, opts}, []reflect.Type{reader.In(0), reader.In(1)})
			}
			assert.Equal(t, []reflect.Type{file, errType}, []reflect.Type{reader.Out(0), reader.Out(1)})
			require.Equal(t, reflect.Pointer, opts.Kind(), "Options are a pointer")
			emb, ok := opts.Elem().FieldByName("Options")
			require.True(t, ok && emb.Anonymous, "Options embed mmapfile.Options")
			assert.Equal(t, reflect.TypeFor[mmapfile.Options](), emb.Type)
			for name, want := range map[string]bool{"Lenient": c.lenient, "Salvage": c.salvage} {
				f, ok := opts.Elem().FieldByName(name)
				assert.Equal(t, want, ok, "Options.%s", name)
				if ok {
					assert.Equal(t, reflect.TypeFor[bool](), f.Type, "Options.%s", name)
				}
			}
			_, ok = file.MethodByName("Close")
			assert.True(t, ok, "File.Close")
			_, ok = file.MethodByName("Damage")
			assert.Equal(t, c.salvage, ok, "File.Damage exists where Salvage does")
		})
	}
}
