package conformance

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/hdf5"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/npy"
	"github.com/mmapkit/mmapkit/scidb"
	"github.com/mmapkit/mmapkit/zarr"
)

// viewCase is a file of some format whose record 0 can be viewed, the
// package's *File type, and its typed View of record 0 on the file
// format.Open returned.
type viewCase struct {
	name, file string
	params     map[string]string // reading parameters
	write      map[string]string // writing parameters
	src        *memSource
	fileType   reflect.Type
	// view calls the package's typed View of record 0 on f, the file
	// format.Open returned (its concrete type); the slice's first
	// element's address, and the values as float64.
	view func(f format.File) (addr any, values []float64, err error)
	// engine calls format.View on record 0, as view does.
	engine func(f format.File) (addr any, values []float64, err error)
}

// views returns the address of v[0] and v as float64s.
func views[T ~float64 | ~uint8](v []T, err error) (any, []float64, error) {
	if err != nil || len(v) == 0 {
		return nil, nil, err
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return &v[0], out, nil
}

func viewCases() []viewCase {
	f64 := func(f format.File) (any, []float64, error) { return views(format.View[float64](f, 0)) }
	return []viewCase{
		{name: "npy", file: "x.npy", src: arrays().array("0", []float64{1, 2, 3, 4, 5, 6}, 3, 2),
			fileType: reflect.TypeFor[*npy.File](), engine: f64,
			view: func(f format.File) (any, []float64, error) { return views(npy.View[float64](f.(*npy.File), "0")) }},
		{name: "npz stored member", file: "x.npz", src: arrays().array("a", []float64{1, 2, 3}).array("b", []float64{4, 5}),
			fileType: reflect.TypeFor[*npy.File](), engine: f64,
			view: func(f format.File) (any, []float64, error) { return views(npy.View[float64](f.(*npy.File), "a")) }},
		{name: "abf", file: "x.abf", src: arrays().array("a", []float64{1, 2, 3, 4}, 2, 2),
			fileType: reflect.TypeFor[*abf.File](), engine: f64,
			view: func(f format.File) (any, []float64, error) { return views(abf.View[float64](f.(*abf.File), "a")) }},
		{name: "futhark", file: "x.in", write: map[string]string{"aligned": "elem"}, src: arrays().array("0", []float64{1, 2, 3}),
			fileType: reflect.TypeFor[*futhark.File](), engine: f64,
			view: func(f format.File) (any, []float64, error) { return views(futhark.View[float64](f.(*futhark.File), 0)) }},
		// DAPHNE's values start at byte 45: only its one-byte types can
		// be viewed.
		{name: "daphne dense", file: "x.dbdf", src: arrays().array("matrix", []uint8{1, 2, 3, 4, 5, 6}, 2, 3),
			fileType: reflect.TypeFor[*daphne.File](),
			engine:   func(f format.File) (any, []float64, error) { return views(format.View[uint8](f, 0)) },
			view: func(f format.File) (any, []float64, error) {
				return views(daphne.View[uint8](f.(*daphne.File), "matrix"))
			}},
		{name: "scidb single fixed attribute", file: "x.scidb", params: map[string]string{"scidb-format": "(double)"},
			write: map[string]string{"scidb-format": "(double)"}, src: arrays().column("a", []float64{1, 2, 3}),
			fileType: reflect.TypeFor[*scidb.File](), engine: f64,
			view: func(f format.File) (any, []float64, error) { return views(scidb.View[float64](f.(*scidb.File), 0)) }},
		{name: "zarr single chunk", file: "x.zarr", src: arrays().array("a", []float64{1, 2, 3, 4, 5, 6}, 3, 2),
			fileType: reflect.TypeFor[*zarr.Store](), engine: f64,
			view: func(f format.File) (any, []float64, error) {
				a, err := f.(*zarr.Store).Array("a")
				if err != nil {
					return nil, nil, err
				}
				return views(zarr.View[float64](a))
			}},
		{name: "hdf5 contiguous", file: "x.h5", src: arrays().array("/a", []float64{1, 2, 3, 4, 5, 6}, 3, 2),
			fileType: reflect.TypeFor[*hdf5.File](), engine: f64,
			view: func(f format.File) (any, []float64, error) { return views(hdf5.View[float64](f.(*hdf5.File), "/a")) }},
	}
}

// writeCase writes c's file into dir and opens it with format.Open.
func (c *viewCase) open(t *testing.T, dir string) (string, format.File) {
	t.Helper()
	path := filepath.Join(dir, c.file)
	require.NoError(t, format.Write(path, c.src, &format.Options{Params: c.write}))
	f, err := format.Open(path, &format.Options{Params: c.params})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return path, f
}

// format.View on a file that format.Open returned is the package's typed
// View: the same slice of the same mapping, not a copy nor a second
// mapping.
func TestFormatViewIsTheTypedView(t *testing.T) {
	for _, c := range viewCases() {
		t.Run(c.name, func(t *testing.T) {
			_, f := c.open(t, t.TempDir())
			require.Equal(t, c.fileType, reflect.TypeOf(f), "format.Open returns the package's own file")
			addr, got, err := c.engine(f)
			require.NoError(t, err)
			// The values in storage order, as the copy gives them.
			want := make([]float64, len(got))
			for i := range want {
				want[i] = float64(i + 1)
			}
			if c.fileType == reflect.TypeFor[*abf.File]() {
				want = []float64{1, 3, 2, 4} // column-major
			}
			assert.Equal(t, want, got)
			typedAddr, typed, err := c.view(f)
			require.NoError(t, err)
			assert.Equal(t, got, typed)
			assert.Same(t, typedAddr, addr, "format.View and the typed View alias the same bytes")
		})
	}
}

// format.Open returns each package's own file type, so that a program
// that detected a format can reach the package's API with a type
// assertion, as with image.Decode's *image.RGBA.
func TestOpenReturnsThePackageFile(t *testing.T) {
	for _, c := range viewCases() {
		t.Run(c.name, func(t *testing.T) {
			_, f := c.open(t, t.TempDir())
			assert.Equal(t, c.fileType, reflect.TypeOf(f))
		})
	}
}

// format.View of a record whose bytes cannot be aliased fails in the
// package's error naming the copying call, with the sentinel of why; the
// copy (format.Read) works.
func TestFormatViewCannotAlias(t *testing.T) {
	for _, s := range subjects() {
		t.Run(s.format, func(t *testing.T) {
			if s.noAlias == nil {
				t.Skipf("%s cannot make a payload that a view cannot alias", s.format)
			}
			path, _, sentinel, call := s.noAlias(t, t.TempDir())
			f, err := format.Open(path, s.options(nil))
			require.NoError(t, err)
			defer f.Close()
			// The record the package's View was asked for.
			i := 0
			if name := map[string]string{"abf": "x", "zarr": "a", "hdf5": "/num/be_i8"}[s.format]; name != "" {
				i, err = format.Find(f, name)
				require.NoError(t, err)
			}
			switch format.RecordAt(f, i).Type {
			case layout.F32:
				_, err = format.View[float32](f, i)
			case layout.I64:
				_, err = format.View[int64](f, i)
			default:
				_, err = format.View[float64](f, i)
			}
			if sentinel == mmapfile.ErrMisaligned || sentinel == mmapfile.ErrByteOrder {
				require.ErrorIs(t, err, sentinel)
			} else {
				require.ErrorIs(t, err, errors.ErrUnsupported)
			}
			file, _, ok := s.asFormatError(err)
			require.True(t, ok, "not a %s: %v", s.errType, err)
			assert.Equal(t, path, file)
			assert.Regexp(t, `(use|copy it with|copy with) (\w+\.)?`+call+`\b`, err.Error(), "names the copying call")
			if format.RecordAt(f, i).Type == layout.F64 {
				v, err := format.Read[float64](f, i)
				require.NoError(t, err, "the copying call works")
				assert.NotEmpty(t, v)
			}
		})
	}
}
