package zarr

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// An array of a type this package cannot read is listed as an array of
// that type (with its size where the store gives one), and reading it
// fails naming the type: it does not pass for a value of no bytes.
func TestUnreadableTypesAreArraysThatFail(t *testing.T) {
	v3 := func(dt string) []byte {
		return []byte(`{"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": ` + dt + `,
			"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
			"chunk_key_encoding": {"name": "default"}, "fill_value": 0,
			"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}`)
	}
	for _, c := range []struct {
		name, key string
		doc       []byte
		typ       string
		size      int64
	}{
		{"<U4", ".zarray", bytes.Replace(zarray("[3]", "[2]", ""), []byte(`"<f8"`), []byte(`"<U4"`), 1), "str4", 48},
		{"|S5", ".zarray", bytes.Replace(zarray("[3]", "[2]", ""), []byte(`"<f8"`), []byte(`"|S5"`), 1), "bytes5", 15},
		{"structured", ".zarray", bytes.Replace(zarray("[3]", "[2]", ""), []byte(`"<f8"`), []byte(`[["a", "<i4"], ["b", "<f8"]]`), 1), "structured", 0},
		{"v3 float128", "zarr.json", v3(`"float128"`), "float128", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "u.zarr")
			writeFile(t, dir, c.key, c.doc)
			s, err := Open(dir, nil)
			require.NoError(t, err)
			defer s.Close()
			r := s.Records()[0]
			assert.Equal(t, format.KindArray, r.Kind)
			assert.Equal(t, c.typ, r.TypeName)
			assert.Equal(t, c.size, r.Size)
			err = s.ReadArray(0, make([]byte, 48), 0, layout.RowMajor, leOrder)
			require.ErrorIs(t, err, ErrUnsupported)
			assert.Contains(t, err.Error(), "type "+c.typ+" cannot be read")
		})
	}
}

// A compression level its codec does not have is refused at open.
func TestCompressorLevelChecked(t *testing.T) {
	for _, c := range []struct{ comp, text string }{
		{`{"id": "gzip", "level": 1099511627776}`, "gzip level 1099511627776 is not -1 to 9"},
		{`{"id": "zlib", "level": 10}`, "zlib level 10 is not -1 to 9"},
		{`{"id": "zstd", "level": 23}`, "zstd level 23 is not -131072 to 22"},
	} {
		dir := filepath.Join(t.TempDir(), "l.zarr")
		writeFile(t, dir, ".zarray", bytes.Replace(zarray("[4]", "[2]", ""), []byte(`"compressor": null`), []byte(`"compressor": `+c.comp), 1))
		_, err := Open(dir, nil)
		require.ErrorIs(t, err, ErrInvalid, c.comp)
		assert.Contains(t, err.Error(), c.text)
	}
	for _, comp := range []string{`{"id": "gzip", "level": -1}`, `{"id": "zstd", "level": -5}`, `{"id": "zlib"}`} {
		dir := filepath.Join(t.TempDir(), "l.zarr")
		writeFile(t, dir, ".zarray", bytes.Replace(zarray("[4]", "[2]", ""), []byte(`"compressor": null`), []byte(`"compressor": `+comp), 1))
		s, err := Open(dir, nil)
		require.NoError(t, err, comp)
		s.Close()
	}
}

// After Close, Array is ErrClosed too, naming the store.
func TestArrayAfterClose(t *testing.T) {
	p, _ := writeStore(t, Options{})
	s, err := Open(p, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	a, err := s.Array("x")
	assert.Nil(t, a)
	require.True(t, errors.Is(err, mmapfile.ErrClosed), "%v", err)
	assert.True(t, strings.Contains(err.Error(), p), "%v", err)
}
