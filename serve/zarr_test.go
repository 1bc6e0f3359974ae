package serve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/mmapkit/mmapkit/abf"
	_ "github.com/mmapkit/mmapkit/csvtable"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/npy"
	_ "github.com/mmapkit/mmapkit/zarr"
)

// matrix is the values of x.npy: 64 rows of 6 float64.
func matrix() []float64 {
	v := make([]float64, 64*6)
	for i := range v {
		v[i] = float64(i) * 1.5
	}
	return v
}

// startArrays serves, beside start's files, x.npy (64×6 float64), its
// conversion to ABF (column-major) and to a Zarr v2 store of chunks
// 10×6, in sub/.
func startArrays(t *testing.T, o *Options) *fixture {
	t.Helper()
	fx := start(t, o)
	x := filepath.Join(fx.dir, "x.npy")
	require.NoError(t, npy.Save(x, []int64{64, 6}, layout.RowMajor, matrix()))
	require.NoError(t, format.Convert(x, filepath.Join(fx.dir, "sub", "x.abf"), nil, nil))
	require.NoError(t, format.Convert(x, filepath.Join(fx.dir, "sub", "x.zarr"), nil,
		&format.Options{Params: map[string]string{"zarr-version": "2", "chunks": "10,6"}}))
	return fx
}

func TestZarrRoute(t *testing.T) {
	fx := startArrays(t, nil)
	file, err := os.ReadFile(filepath.Join(fx.dir, "x.npy"))
	require.NoError(t, err)
	data := file[len(file)-64*6*8:]

	resp, body := fx.get(t, "/zarr/x.npy/.zgroup")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.JSONEq(t, `{"zarr_format": 2}`, string(body))

	_, body = fx.get(t, "/zarr/x.npy/0/.zarray")
	assert.JSONEq(t, `{"chunks": [64, 6], "compressor": null, "dtype": "<f8", "fill_value": null, "filters": null, "order": "C", "shape": [64, 6], "zarr_format": 2}`, string(body))

	var zm struct {
		Metadata map[string]any `json:"metadata"`
		Format   int            `json:"zarr_consolidated_format"`
	}
	_, body = fx.get(t, "/zarr/x.npy/.zmetadata")
	require.NoError(t, json.Unmarshal(body, &zm), "%s", body)
	assert.Equal(t, 1, zm.Format)
	assert.Contains(t, zm.Metadata, "0/.zarray")
	assert.Contains(t, zm.Metadata, "0/.zattrs")

	// The chunk: the array's bytes, with ranges and validators.
	resp, body = fx.get(t, "/zarr/x.npy/0/0.0")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Equal(t, data, body)
	assert.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, "3072", resp.Header.Get("Content-Length"))
	assert.Equal(t, "bytes", resp.Header.Get("Accept-Ranges"))
	tag := resp.Header.Get("ETag")
	assert.Regexp(t, `^"[0-9a-z]+-[0-9a-z]+-[0-9a-z]+-[0-9a-z]+-[0-9a-z]+"$`, tag, "the file's identity, the chunk's offset and length")
	assert.Equal(t, 1.5*7, math.Float64frombits(binary.LittleEndian.Uint64(body[7*8:])))

	resp, body = fx.get(t, "/zarr/x.npy/0/0.0", "Range", "bytes=8-15")
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, "bytes 8-15/3072", resp.Header.Get("Content-Range"))
	assert.Equal(t, data[8:16], body)
	resp, body = fx.get(t, "/zarr/x.npy/0/0.0", "Range", "bytes=-4")
	assert.Equal(t, data[len(data)-4:], body, "a suffix of the chunk, not of the file")
	resp, _ = fx.get(t, "/zarr/x.npy/0/0.0", "Range", "bytes=3072-")
	assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, resp.StatusCode)
	assert.Equal(t, "bytes */3072", resp.Header.Get("Content-Range"))
	resp, _ = fx.get(t, "/zarr/x.npy/0/0.0", "If-None-Match", tag)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	head, hbody := fx.do(t, http.MethodHead, "/zarr/x.npy/0/0.0")
	assert.Equal(t, "3072", head.Header.Get("Content-Length"))
	assert.Empty(t, hbody)

	// Column-major ABF: order F, not transposed; in a subdirectory.
	_, body = fx.get(t, "/zarr/sub/x.abf/0/.zarray")
	assert.Contains(t, string(body), `"order":"F"`)

	// A Zarr v2 store: its own chunks, each its chunk file's bytes.
	_, body = fx.get(t, "/zarr/sub/x.zarr/0/.zarray")
	assert.Contains(t, string(body), `"chunks":[10,6]`)
	chunk, err := os.ReadFile(filepath.Join(fx.dir, "sub", "x.zarr", "0", "6.0"))
	require.NoError(t, err)
	_, body = fx.get(t, "/zarr/sub/x.zarr/0/6.0")
	assert.Equal(t, chunk, body)

	for _, c := range []struct {
		path   string
		status int
		body   string
	}{
		{"/zarr/x.npy/", 404, "no listings"},
		{"/zarr/x.npy", 404, "no listings"},
		{"/zarr/x.npy/0/1.0", 404, "no such key"}, // past the grid: missing
		{"/zarr/x.npy/0/zz", 404, "neither a metadata key nor a chunk index"},
		{"/zarr/x.npy/nope/.zarray", 404, "no such key"},
		{"/zarr/a.bin/.zgroup", 404, "not a file mmapkit reads"},
		{"/zarr/nope.npy/.zgroup", 404, "no such file"},
		{"/zarr/x.npy//", 403, "refused"},
		{"/zarr/fifo/.zgroup", 404, "not a regular file"},
		{"/zarr/empty/.zgroup", 404, "no such file"},
		{"/zarr/out-file/.zgroup", 403, "outside"},
		{"/zarr/x.npy/%2e%2e/a.bin", 403, "refused"},
		{"/zarr/sub/x.zarr/0/%2e%2e/%2e%2e/x.npy", 403, "refused"},
		{"/zarr/x.npy/0%00/.zarray", 403, "refused"},
	} {
		resp, body := fx.get(t, c.path)
		assert.Equal(t, c.status, resp.StatusCode, c.path)
		assert.Contains(t, string(body), c.body, c.path)
		assert.NotContains(t, string(body), fx.dir, "%s: the server's own paths stay private", c.path)
	}
}

// A file renamed over is described anew: its chunk comes from the new
// file, with a new ETag, and the metadata say its new shape.
func TestZarrRenamedOver(t *testing.T) {
	fx := startArrays(t, nil)
	resp, before := fx.get(t, "/zarr/x.npy/0/0.0")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	tag := resp.Header.Get("ETag")

	tmp := filepath.Join(fx.dir, "new.npy")
	require.NoError(t, npy.Save(tmp, []int64{2, 3}, layout.RowMajor, []int32{1, 2, 3, 4, 5, 6}))
	require.NoError(t, os.Rename(tmp, filepath.Join(fx.dir, "x.npy")))

	resp, body := fx.get(t, "/zarr/x.npy/0/0.0")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotEqual(t, tag, resp.Header.Get("ETag"))
	assert.NotEqual(t, before, body)
	assert.Equal(t, []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0}, body)
	_, body = fx.get(t, "/zarr/x.npy/0/.zarray")
	assert.Contains(t, string(body), `"shape":[2,3]`)
	assert.Contains(t, string(body), `"dtype":"<i4"`)
}

func TestRefsRoute(t *testing.T) {
	fx := startArrays(t, nil)
	resp, body := fx.get(t, "/refs/x.npy.json")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var doc struct {
		Version int                        `json:"version"`
		Refs    map[string]json.RawMessage `json:"refs"`
	}
	require.NoError(t, json.Unmarshal(body, &doc), "%s", body)
	assert.Equal(t, 1, doc.Version)
	assert.JSONEq(t, `["`+fx.base+`/raw/x.npy", 128, 3072]`, string(doc.Refs["0/0.0"]), "the server's own /raw/ route, from the request's Host")

	_, body = fx.get(t, "/refs/sub/x.zarr.json")
	require.NoError(t, json.Unmarshal(body, &doc), "%s", body)
	assert.JSONEq(t, `["`+fx.base+`/raw/sub/x.zarr/0/6.0", 0, 480]`, string(doc.Refs["0/6.0"]), "a store's chunk files, under its /raw/ path")
	resp, raw := fx.get(t, "/raw/sub/x.zarr/0/6.0")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Len(t, raw, 480, "an edge chunk is stored whole")

	for _, c := range []struct {
		path   string
		status int
	}{
		{"/refs/x.npy", 404},
		{"/refs/.json", 404},
		{"/refs/a.bin.json", 404},
		{"/refs/sub.json", 404},
		{"/refs/x.npy/0.json", 404},
		{"/refs/%2e%2e/x.npy.json", 403},
		{"/refs/out-file.json", 403},
	} {
		resp, _ := fx.get(t, c.path)
		assert.Equal(t, c.status, resp.StatusCode, c.path)
	}
}

// With Options.URL the targets say where clients reach the server,
// whatever Host the request named.
func TestRefsRouteURL(t *testing.T) {
	fx := startArrays(t, &Options{URL: "https://example.org/data/"})
	_, body := fx.get(t, "/refs/x.npy.json")
	assert.Contains(t, string(body), `"0/0.0": ["https://example.org/data/raw/x.npy", 128, 3072]`)
}

// A SciDB parameter applies to .scidb files only: the other files are
// described as their own formats.
func TestZarrFormatParams(t *testing.T) {
	fx := startArrays(t, &Options{Format: &format.Options{Params: map[string]string{"scidb-format": "(double)"}}})
	resp, body := fx.get(t, "/zarr/x.npy/0/.zarray")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"shape":[64,6]`)
}

func TestCheckKey(t *testing.T) {
	for _, c := range []struct {
		key string
		ok  bool
	}{
		{".zgroup", true},
		{".zmetadata", true},
		{"x/.zarray", true},
		{"g/x/.zattrs", true},
		{"x/0", true},
		{"x/3.1.4", true},
		{"x/3/1/4", true},
		{"0", true},
		{"", false},
		{"x/", false},
		{"x/..", false},
		{"../x/0", false},
		{"x/0.", false},
		{"x/.1", false},
		{"x/-1", false},
		{"x/0x1", false},
		{"x/.zarray2", false},
		{"x\x00/0", false},
		{`x\0`, false},
	} {
		err := CheckKey(strings.Split(c.key, "/"))
		if c.ok {
			assert.NoError(t, err, c.key)
		} else {
			assert.ErrorIs(t, err, ErrBadPath, c.key)
		}
	}
	assert.ErrorIs(t, CheckKey(nil), ErrBadPath)
}

// FuzzZarrPath decodes /zarr/ request paths as the server does: a key it
// accepts never leads out of its store, and names a metadata key or a
// chunk index.
func FuzzZarrPath(f *testing.F) {
	for _, s := range []string{"x.npy/.zgroup", "x.npy/0/0.0", "d/x.zarr/g/a/1/2", "x.npy/%2e%2e/a", "x/0%00", "x/.zarray", "x/1.", "%2Fetc/0"} {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, p string, n int) {
		segs, err := Segments(p)
		if err != nil || n < 0 || n > len(segs) {
			return
		}
		if CheckKey(segs[n:]) != nil {
			return
		}
		key := strings.Join(segs[n:], "/")
		if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\x00") || strings.Contains(key, "\\") {
			t.Fatalf("%q: key %q", p, key)
		}
		for _, s := range segs[n:] {
			if s == ".." || s == "." {
				t.Fatalf("%q: key %q leads out", p, key)
			}
		}
		last := segs[len(segs)-1]
		if !metaNames[last] && strings.Trim(last, "0123456789.") != "" {
			t.Fatalf("%q: %q is neither metadata nor a chunk index", p, last)
		}
	})
}

// Options.Rows cuts a contiguous array as refs does: chunks of 16 rows,
// chunk 3 the file's bytes of rows 48 to 63.
func TestZarrRows(t *testing.T) {
	fx := startArrays(t, &Options{Rows: 16})
	file, err := os.ReadFile(filepath.Join(fx.dir, "x.npy"))
	require.NoError(t, err)
	_, body := fx.get(t, "/zarr/x.npy/0/.zarray")
	assert.Contains(t, string(body), `"chunks":[16,6]`)
	resp, body := fx.get(t, "/zarr/x.npy/0/3.0")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, file[128+3*16*48:], body)
	resp, _ = fx.get(t, "/zarr/x.npy/0/4.0")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// Records whose bytes are not ranges of the file (a CSV table's columns)
// are served under /zarr/ all the same, their chunks computed; /refs/,
// which holds ranges only, leaves them out.
func TestZarrComputed(t *testing.T) {
	fx := start(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "t.csv"), []byte("a,b\n1,0.5\n2,1.5\n3,2.5\n"), 0o644))
	_, body := fx.get(t, "/zarr/t.csv/a/.zarray")
	assert.JSONEq(t, `{"chunks": [3], "compressor": null, "dtype": "<i8", "fill_value": null, "filters": null, "order": "C", "shape": [3], "zarr_format": 2}`, string(body))
	_, body = fx.get(t, "/zarr/t.csv/b/.zattrs")
	assert.JSONEq(t, `{"_ARRAY_DIMENSIONS": ["dim_0"]}`, string(body))
	_, body = fx.get(t, "/zarr/t.csv/.zmetadata")
	assert.Contains(t, string(body), `"b/.zarray"`)

	resp, body := fx.get(t, "/zarr/t.csv/a/0")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Equal(t, []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}, body)
	assert.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"))
	tag := resp.Header.Get("ETag")
	assert.NotEmpty(t, tag)
	resp, body = fx.get(t, "/zarr/t.csv/b/0", "Range", "bytes=8-15")
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, 1.5, math.Float64frombits(binary.LittleEndian.Uint64(body)))
	resp, _ = fx.get(t, "/zarr/t.csv/a/0", "If-None-Match", tag)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	resp, _ = fx.get(t, "/zarr/t.csv/a/1")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	// A new version of the file: new values, a new ETag.
	require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "t.csv"), []byte("a,b\n7,0.5\n8,1.5\n9,2.5\n"), 0o644))
	resp, body = fx.get(t, "/zarr/t.csv/a/0", "If-None-Match", tag)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, byte(7), body[0])

	_, body = fx.get(t, "/refs/t.csv.json")
	assert.NotContains(t, string(body), `a/.zarray`, "a reference set holds ranges only")
	assert.Contains(t, string(body), `".zgroup"`)
}

// The Zarr and reference routes, hammered with good and hostile keys
// through a few connections, leave no goroutine or descriptor behind
// once the server stops (the descriptors chunks are sent from included).
func TestZarrAndRefsNothingLeaks(t *testing.T) {
	nothingLeaks(t, func() {
		fx := startArrays(t, &Options{MaxConns: 8})
		file, err := os.ReadFile(filepath.Join(fx.dir, "x.npy"))
		require.NoError(t, err)
		data := file[len(file)-64*6*8:]
		cases := []struct {
			path, rng string
			status    int
			body      []byte
		}{
			{"/zarr/x.npy/0/0.0", "bytes=8-15", http.StatusPartialContent, data[8:16]},
			{"/zarr/x.npy/0/0.0", "", http.StatusOK, data},
			{"/zarr/x.npy/.zmetadata", "", http.StatusOK, nil},
			{"/zarr/sub/x.zarr/0/6.0", "", http.StatusOK, nil},
			{"/zarr/sub/x.abf/0/0.0", "", http.StatusOK, nil},
			{"/refs/x.npy.json", "", http.StatusOK, nil},
			{"/refs/sub/x.zarr.json", "", http.StatusOK, nil},
			{"/zarr/x.npy/%2e%2e/a.bin", "", http.StatusForbidden, nil},
			{"/zarr/x.npy/0%00/.zarray", "", http.StatusForbidden, nil},
			{"/zarr/out-file/.zgroup", "", http.StatusForbidden, nil},
			{"/zarr/fifo/.zgroup", "", http.StatusNotFound, nil},
			{"/zarr/nope.npy/.zgroup", "", http.StatusNotFound, nil},
			{"/zarr/x.npy/0/9.9", "", http.StatusNotFound, nil},
			{"/zarr/x.npy/0/0.0", "bytes=3072-", http.StatusRequestedRangeNotSatisfiable, nil},
		}
		hammer(t, fx, 200, func(i int) error {
			c := cases[i%len(cases)]
			status, body, err := fetch(fx.base+c.path, c.rng)
			switch {
			case err != nil:
				return fmt.Errorf("%s: %w", c.path, err)
			case status != c.status:
				return fmt.Errorf("%s: status %d, want %d: %s", c.path, status, c.status, body)
			case c.body != nil && !bytes.Equal(body, c.body):
				return fmt.Errorf("%s: wrong bytes", c.path)
			}
			return nil
		})
	})
}
