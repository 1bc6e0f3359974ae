package conformance

import (
	"errors"
	"github.com/mmapkit/mmapkit/hdf5"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/abf"
	"github.com/mmapkit/mmapkit/csvtable"
	"github.com/mmapkit/mmapkit/daphne"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/futhark"
	"github.com/mmapkit/mmapkit/npy"
	"github.com/mmapkit/mmapkit/scidb"
	"github.com/mmapkit/mmapkit/zarr"
)

// typed is what each format package offers of its own: its Open, and a
// lookup of a record that the file does not have through its typed API
// (the View of a name or index; a store's Array; CSV, which has no typed
// view, the lookup its File answers).
type typed struct {
	pkg     string // the package's name, which starts its errors
	open    func(path string) (io.Closer, error)
	missing func(path string) error
}

func typedAPIs() map[string]typed {
	return map[string]typed{
		"abf": {"abf", func(p string) (io.Closer, error) { return abf.Open(p, nil) }, func(p string) error {
			f, err := abf.Open(p, nil)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = abf.View[float64](f, "nope")
			return err
		}},
		"futhark": {"futhark", func(p string) (io.Closer, error) { return futhark.Open(p, nil) }, func(p string) error {
			f, err := futhark.Open(p, nil)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = futhark.View[float32](f, 99)
			return err
		}},
		"daphne": {"daphne", func(p string) (io.Closer, error) { return daphne.Open(p, nil) }, func(p string) error {
			f, err := daphne.Open(p, nil)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = daphne.View[float64](f, "nope")
			return err
		}},
		"scidb": {"scidb", func(p string) (io.Closer, error) { return scidb.Open(p, scidbOptions("(double, bool)")) }, func(p string) error {
			f, err := scidb.Open(p, scidbOptions("(double, bool)"))
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = scidb.View[float64](f, 99)
			return err
		}},
		"hdf5": {"hdf5", func(p string) (io.Closer, error) { return hdf5.Open(p, nil) }, func(p string) error {
			f, err := hdf5.Open(p, nil)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = hdf5.View[float64](f, "nope")
			return err
		}},
		"npy": {"npy", func(p string) (io.Closer, error) { return npy.Open(p, nil) }, func(p string) error {
			f, err := npy.Open(p, nil)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = npy.View[float64](f, "nope")
			return err
		}},
		"zarr": {"zarr", func(p string) (io.Closer, error) { return zarr.Open(p, nil) }, func(p string) error {
			s, err := zarr.Open(p, nil)
			if err != nil {
				return err
			}
			defer s.Close()
			_, err = s.Array("nope")
			return err
		}},
		"csv": {"csvtable", func(p string) (io.Closer, error) { return csvtable.Open(p, nil) }, func(p string) error {
			f, err := csvtable.Open(p, nil)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = format.Find(f, "nope")
			return err
		}},
	}
}

// A record the file does not have is format.ErrNoRecord, through the
// package's typed API and through the registry, and the error names the
// file.
func TestNoRecord(t *testing.T) {
	apis := typedAPIs()
	forEach(t, func(t *testing.T, s *subject, path string) {
		api, ok := apis[s.format]
		require.True(t, ok, "no typed API for %s", s.format)
		err := api.missing(path)
		require.ErrorIs(t, err, format.ErrNoRecord, "typed API")
		assert.Contains(t, err.Error(), path, "typed API")

		f, err := format.Open(path, s.options(nil))
		require.NoError(t, err)
		defer f.Close()
		_, err = format.Find(f, "nope")
		require.ErrorIs(t, err, format.ErrNoRecord, "registry")
		assert.Contains(t, err.Error(), path, "registry")
	})
}

// Close twice reads the same in every format but for the package that
// starts it, names the file and wraps mmapfile.ErrClosed (TestCloseTwice).
func TestCloseTwiceReadsAlike(t *testing.T) {
	apis := typedAPIs()
	var first, firstFormat string
	forEach(t, func(t *testing.T, s *subject, path string) {
		f, err := format.Open(path, s.options(nil))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		err = f.Close()
		require.Error(t, err)
		pkg := apis[s.format].pkg + ": "
		require.True(t, strings.HasPrefix(err.Error(), pkg+path+": "), "%v", err)
		text := strings.Replace(strings.TrimPrefix(err.Error(), pkg), path, "FILE", 1)
		if first == "" {
			first, firstFormat = text, s.format
			return
		}
		assert.Equal(t, first, text, "%s and %s", firstFormat, s.format)
	})
}

// Every FormatError is the one shared error: errors.As finds a
// format.Located in it, which tells the file and offset.
func TestErrorsAreLocated(t *testing.T) {
	forEach(t, func(t *testing.T, s *subject, path string) {
		f, err := format.Open(path, s.options(nil))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		err = f.Close()
		var loc format.Located
		require.True(t, errors.As(err, &loc), "%T: %v", err, err)
		file, off := loc.Where()
		assert.Equal(t, path, file)
		assert.Equal(t, int64(-1), off)
		assert.Equal(t, "file is closed", loc.Detail())
	})
}
