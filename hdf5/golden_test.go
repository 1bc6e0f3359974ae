package hdf5

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// testdata is where the reference files written by h5py and netCDF4-python
// are, beside the project.
const testdata = "../../shared/testdata/hdf5"

// goldenObject is what contents.json says a reader finds of one dataset
// (or compound field).
type goldenObject struct {
	Path         string         `json:"path"`
	Type         string         `json:"type"`
	Shape        []int64        `json:"shape"`
	DataOffset   *int64         `json:"data_offset"`
	LogicalBytes *int64         `json:"logical_bytes"`
	ChunkShape   []int64        `json:"chunk_shape"`
	FilterIDs    []int          `json:"filter_ids"`
	Values       []any          `json:"values"`
	SHA256       string         `json:"sha256"`
	Attrs        map[string]any `json:"attrs"`
	Dimensions   []string       `json:"dimensions"`
	FieldOf      string         `json:"field_of"`
	Unreadable   any            `json:"unreadable"`
}

type goldenFile struct {
	Superblock *int                      `json:"superblock"`
	Objects    []goldenObject            `json:"objects"`
	Links      []map[string]any          `json:"links"`
	GroupAttrs map[string]map[string]any `json:"group_attrs"`
	Unreadable any                       `json:"unreadable"`
}

// golden reads contents.json, or skips when the reference files are not
// beside the project.
func golden(t *testing.T) map[string]goldenFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, "contents.json"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("the HDF5 reference files are not at %s (they are shared beside the project)", testdata)
	}
	require.NoError(t, err)
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var g map[string]goldenFile
	require.NoError(t, d.Decode(&g))
	return g
}

// normal turns JSON values (json.Number included) and decoded values into
// one form for comparison: numbers as float64, except integers beyond
// float64's exact range, kept as their decimal text.
func normal(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil && (i > 1<<53 || i < -(1<<53)) {
			return string(x)
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil && u > 1<<53 {
			return string(x)
		}
		f, _ := x.Float64()
		return f
	case int64:
		if x > 1<<53 || x < -(1<<53) {
			return strconv.FormatInt(x, 10)
		}
		return float64(x)
	case uint64:
		if x > 1<<53 {
			return strconv.FormatUint(x, 10)
		}
		return float64(x)
	case float64:
		return floatValue(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normal(x[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normal(e)
		}
		return out
	}
	return v
}

// values decodes n little-endian elements of t for comparison.
func values(t layout.Type, b []byte) []any {
	size := t.Size()
	var out []any
	for i := 0; i+size <= len(b); i += size {
		e := b[i : i+size]
		switch {
		case t == layout.Bool:
			out = append(out, e[0] != 0)
		case t.IsInteger():
			out = append(out, normal(intValue(t, e, binary.LittleEndian)))
		case t.IsFloat():
			out = append(out, floatValue(layout.Float(e, binary.LittleEndian, t)))
		case t.IsComplex():
			p := t.Part()
			h := size / 2
			out = append(out, []any{floatValue(layout.Float(e[:h], binary.LittleEndian, p)), floatValue(layout.Float(e[h:], binary.LittleEndian, p))})
		}
	}
	return out
}

// Every reference file reads as contents.json says: datasets in walk
// order with their types, shapes, offsets, sizes, chunks, filters,
// attributes, netCDF dimensions and values; links; group attributes; and
// what cannot be read refused naming why.
func TestGolden(t *testing.T) {
	for name, want := range golden(t) {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(testdata, name)
			f, err := format.Open(p, nil)
			if want.Superblock == nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, errors.ErrUnsupported)
				assert.Contains(t, err.Error(), "netCDF-3")
				assert.Contains(t, err.Error(), p)
				return
			}
			require.NoError(t, err)
			defer f.Close()
			assert.Equal(t, "hdf5", f.Format())
			assert.Equal(t, fmt.Sprint(*want.Superblock), f.Version())
			recs := f.Records()
			var names []string
			for _, r := range recs {
				names = append(names, r.Name)
			}
			var wantNames []string
			for _, o := range want.Objects {
				wantNames = append(wantNames, o.Path)
			}
			require.Equal(t, wantNames, names, "records in walk order")
			for i, o := range want.Objects {
				checkRecord(t, f, i, &recs[i], &o)
			}
			info := f.(interface{ FileInfo() map[string]any }).FileInfo()
			links, err := json.Marshal(info["links"])
			require.NoError(t, err)
			wantLinks := want.Links
			if wantLinks == nil {
				wantLinks = []map[string]any{}
			}
			wl, _ := json.Marshal(wantLinks)
			assert.JSONEq(t, string(wl), string(links), "links")
			groups := map[string]any{}
			for _, g := range info["groups"].([]map[string]any) {
				groups[g["name"].(string)] = normal(g["attributes"])
			}
			for g, attrs := range want.GroupAttrs {
				require.Contains(t, groups, g, "group %s", g)
				for k, v := range attrs {
					assert.Equal(t, normal(v), groups[g].(map[string]any)[k], "group %s attribute %s", g, k)
				}
			}
		})
	}
}

func checkRecord(t *testing.T, f format.File, i int, r *format.Record, o *goldenObject) {
	t.Helper()
	what := o.Path
	assert.Equal(t, o.Type, r.TypeString(), "%s type", what)
	shape := o.Shape
	if len(shape) == 0 && o.FieldOf != "" {
		shape = []int64{1}
	}
	assert.Equal(t, fmt.Sprint(shape), fmt.Sprint(r.Shape), "%s shape", what)
	if o.DataOffset == nil {
		assert.Equal(t, int64(-1), r.Offset, "%s offset", what)
	} else {
		assert.Equal(t, *o.DataOffset, r.Offset, "%s offset", what)
	}
	if o.LogicalBytes == nil {
		assert.Equal(t, int64(-1), r.Size, "%s nbytes", what)
	} else {
		assert.Equal(t, *o.LogicalBytes, r.Size, "%s nbytes", what)
	}
	if o.ChunkShape != nil {
		assert.Equal(t, o.ChunkShape, r.Extra["chunks"], "%s chunks", what)
		var ids []int
		for _, fl := range r.Extra["filters"].([]map[string]any) {
			ids = append(ids, fl["id"].(int))
		}
		assert.Equal(t, fmt.Sprint(o.FilterIDs), fmt.Sprint(ids), "%s filters", what)
	} else {
		assert.NotContains(t, r.Extra, "chunks", what)
	}
	for k, v := range o.Attrs {
		attrs, _ := r.Extra["attributes"].(map[string]any)
		assert.Equal(t, normal(v), normal(attrs[k]), "%s attribute %s", what, k)
	}
	if o.Dimensions != nil {
		assert.Equal(t, o.Dimensions, r.Extra["dims"], "%s dims", what)
	}
	if o.Unreadable != nil {
		_, err := format.ReadAll(f, i, layout.RowMajor, binary.LittleEndian)
		require.Error(t, err, what)
		assert.ErrorIs(t, err, errors.ErrUnsupported, what)
		switch u := o.Unreadable.(type) {
		case json.Number:
			assert.Contains(t, err.Error(), "filter "+string(u), what)
		case string:
			assert.Contains(t, err.Error(), u, what)
		}
		return
	}
	var got []any
	var raw []byte
	if r.Type.Valid() {
		b, err := format.ReadAll(f, i, layout.RowMajor, binary.LittleEndian)
		require.NoError(t, err, what)
		raw = b
		got = values(r.Type, b)
	} else {
		err := f.(format.TextReader).ReadText(i, func(batch []string) error {
			for _, s := range batch {
				got = append(got, s)
			}
			return nil
		})
		require.NoError(t, err, what)
	}
	if o.SHA256 != "" {
		sum := sha256.Sum256(raw)
		assert.Equal(t, o.SHA256, hex.EncodeToString(sum[:]), "%s sha256", what)
		return
	}
	assert.Equal(t, normal(o.Values), normal(got), "%s values", what)
}
