package zarr

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// A store's fill value, dimension names and attributes reach a writer as
// the record's typed Facts, and a conversion keeps them; what Extra holds
// is for listings, which writers never read.
func TestWriteKeepsFacts(t *testing.T) {
	dir := t.TempDir()
	src := (&memSource{}).add("a", layout.F64, []int64{2, 3}, layout.RowMajor, false, ramp(layout.F64, 6, 0))
	src.Records()[0].Facts = &format.Facts{
		FillValue:      json.RawMessage(`-1.5`),
		DimensionNames: []string{"y", "x"},
		Attributes:     map[string]any{"units": "m"},
	}
	// A listing's fact of the same name is not a writer's.
	src.Records()[0].Extra = map[string]any{"fill_value": json.RawMessage(`7`), "dimension_names": []string{"p", "q"}}
	p := filepath.Join(dir, "x.zarr")
	require.NoError(t, format.Write(p, src, nil))

	b, err := os.ReadFile(filepath.Join(p, "a", "zarr.json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, -1.5, doc["fill_value"])
	assert.Equal(t, []any{"y", "x"}, doc["dimension_names"])
	// The names are also xarray's attribute, as the writer always keeps them.
	assert.Equal(t, map[string]any{"units": "m", "_ARRAY_DIMENSIONS": []any{"y", "x"}}, doc["attributes"])

	// Read back, the facts are the record's; converted again, they stay.
	f, err := format.Open(p, nil)
	require.NoError(t, err)
	defer f.Close()
	r := f.Records()[0]
	require.NotNil(t, r.Facts)
	assert.JSONEq(t, `-1.5`, string(r.Facts.FillValue))
	assert.Equal(t, []string{"y", "x"}, r.Facts.DimensionNames)
	assert.Equal(t, map[string]any{"units": "m", "_ARRAY_DIMENSIONS": []any{"y", "x"}}, r.Facts.Attributes)
	q := filepath.Join(dir, "y.zarr")
	require.NoError(t, format.Write(q, f, &format.Options{Params: map[string]string{"zarr-version": "2"}}))
	s, err := Open(q, nil)
	require.NoError(t, err)
	defer s.Close()
	a, err := s.Array("a")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"units": "m", "_ARRAY_DIMENSIONS": []any{"y", "x"}}, a.Attributes())
	assert.Equal(t, []string{"y", "x"}, a.DimensionNames())
	b, err = os.ReadFile(filepath.Join(q, "a", ".zarray"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, -1.5, doc["fill_value"])
}
