package zarr

import (
	"encoding/json"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
)

// v3Array is an array's zarr.json: f8 of shape [3] in chunks [2], the
// fill value fill, extra members (attributes, dimension_names) after the
// codecs.
func v3Array(fill, codec, extra string) string {
	return `{
  "zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "float64",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": ` + fill + `,
  "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}` + codec + `]` + extra + `
}`
}

// variedGroups are groups whose arrays share documents (that differ in
// their attributes, or not at all) and have documents of their own, in
// nested groups: key → document, and each array's attributes and
// dimension names as a lone store of its documents gives them.
var variedGroups = map[string]map[string]string{
	"v2": {
		".zgroup":             `{"zarr_format": 2}`,
		"a/.zarray":           string(zarray("[3]", "[2]", "")),
		"a/.zattrs":           `{"_ARRAY_DIMENSIONS": ["x"], "units": "m"}`,
		"b/.zarray":           string(zarray("[3]", "[2]", "")),
		"b/.zattrs":           `{"_ARRAY_DIMENSIONS": ["y"], "k": 1}`,
		"c/.zarray":           string(zarray("[3]", "[2]", "")),
		"d/.zarray":           string(zarray("[3]", "[2]", "")),
		"d/.zattrs":           `{}`,
		"e/.zarray":           string(zarray("[3]", "[2]", "")),
		"e/.zattrs":           `null`,
		"f/.zarray":           `{"zarr_format": 2, "shape": [2, 2], "chunks": [1, 2], "dtype": "<i4", "compressor": {"id": "zlib", "level": 3}, "fill_value": 7, "order": "F", "filters": null}`,
		"f/.zattrs":           `{"_ARRAY_DIMENSIONS": ["p", "q"]}`,
		"g/.zarray":           `{"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": ">f4", "compressor": null, "fill_value": "NaN", "order": "C", "filters": null}`,
		"sub/.zgroup":         `{"zarr_format": 2}`,
		"sub/.zattrs":         `{"group": "attributes"}`,
		"sub/h/.zarray":       string(zarray("[3]", "[2]", "")),
		"sub/h/.zattrs":       `{"_ARRAY_DIMENSIONS": ["z"], "nested": {"a": [1, "}"], "b": null}}`,
		"sub/deep/.zgroup":    `{"zarr_format": 2}`,
		"sub/deep/i/.zarray":  string(zarray("[3]", "[2]", "")),
		"sub/deep/i/.zattrs":  `{"_ARRAY_DIMENSIONS": ["u", "v"]}`,
		"sub/deep/j/.zarray":  string(zarray("[3]", "[2]", "")),
		"sub/deep/j/.zattrs":  "{\n  \"_ARRAY_DIMENSIONS\": [\"x\"],\n  \"units\": \"m\"\n}\n",
		"notagroup/x/.zarray": string(zarray("[3]", "[2]", "")),
	},
	"v3": {
		"zarr.json":            `{"zarr_format": 3, "node_type": "group", "attributes": {"root": true}}`,
		"a/zarr.json":          v3Array("0.0", "", `, "attributes": {"units": "m"}, "dimension_names": ["x"]`),
		"b/zarr.json":          v3Array("0.0", "", `, "attributes": {"units": "s", "_ARRAY_DIMENSIONS": ["t"]}, "dimension_names": ["x"]`),
		"c/zarr.json":          v3Array("0.0", "", `, "attributes": {"_ARRAY_DIMENSIONS": ["r"]}`),
		"d/zarr.json":          v3Array("0.0", "", `, "attributes": {"_ARRAY_DIMENSIONS": ["s"]}`),
		"e/zarr.json":          v3Array("0.0", "", `, "attributes": null`),
		"f/zarr.json":          v3Array("0.0", "", ``),
		"g/zarr.json":          v3Array("0.0", "", `, "attributes": {}`),
		"h/zarr.json":          v3Array(`"NaN"`, `, {"name": "zstd", "configuration": {"level": 3, "checksum": false}}`, `, "attributes": {"_ARRAY_DIMENSIONS": ["r"]}`),
		"sub/zarr.json":        `{"zarr_format": 3, "node_type": "group"}`,
		"sub/i/zarr.json":      v3Array("0.0", "", `, "attributes": {"q\"}": "]", "n": [1, 2, {"deep": "x, }"}]}`),
		"sub/j/zarr.json":      v3Array("0.0", "", `, "dimension_names": [null], "attributes": {"_ARRAY_DIMENSIONS": ["r"]}`),
		"sub/deep/zarr.json":   `{"zarr_format": 3, "node_type": "group", "attributes": {}}`,
		"sub/deep/k/zarr.json": v3Array("0.0", "", `, "attributes": {"a": 1}, "dimension_names": ["w"], "extension": {"must_understand": false}`),
		"sub/deep/l/zarr.json": v3Array("0.0", "", `, "attributes": {"a": 2}, "dimension_names": ["w"], "extension": {"must_understand": false}`),
	},
}

// writeGroup writes a store of the documents docs.
func writeGroup(t *testing.T, dir string, docs map[string]string) {
	t.Helper()
	for key, doc := range docs {
		writeFile(t, dir, key, []byte(doc))
	}
}

// TestRecordIsRecords: each array's Record equals its entry of Records,
// and describes the array as a store of that array alone describes it,
// in groups whose arrays share documents (which are parsed once) or
// differ in their attributes only — v2 and v3, nested groups, and the
// consolidated stores Write makes of them.
func TestRecordIsRecords(t *testing.T) {
	for version, docs := range variedGroups {
		t.Run(version, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "g.zarr")
			writeGroup(t, dir, docs)
			s, err := Open(dir, nil)
			require.NoError(t, err)
			defer s.Close()
			recs := s.Records()
			var names []string
			for i := range recs {
				names = append(names, recs[i].Name)
				assert.Equal(t, recs[i], format.RecordAt(s, i), recs[i].Name)
				assert.Equal(t, recs[i], s.Record(i), recs[i].Name)
				a, err := s.Array(recs[i].Name)
				require.NoError(t, err)
				if attrs := a.Attributes(); len(attrs) > 0 {
					assert.Equal(t, recs[i].Facts.Attributes, attrs, recs[i].Name)
				} else {
					assert.Nil(t, recs[i].Facts.Attributes, recs[i].Name) // records leave out {}
				}
				assert.Equal(t, recs[i].Facts.DimensionNames, a.DimensionNames(), recs[i].Name)

				// The same array as a store of its own documents.
				p := strings.TrimPrefix(recs[i].Name, "/")
				alone := filepath.Join(t.TempDir(), "a.zarr")
				for key, doc := range docs {
					if dir, name := path.Split(key); dir == p+"/" {
						writeFile(t, alone, name, []byte(doc))
					}
				}
				one, err := Open(alone, nil)
				require.NoError(t, err)
				want := one.Records()[0]
				one.Close()
				want.Name = recs[i].Name
				assert.Equal(t, want, recs[i])
			}
			want := map[string][]string{
				"v2": {"/a", "/b", "/c", "/d", "/e", "/f", "/g", "/sub/deep/i", "/sub/deep/j", "/sub/h"},
				"v3": {"/a", "/b", "/c", "/d", "/e", "/f", "/g", "/h", "/sub/deep/k", "/sub/deep/l", "/sub/i", "/sub/j"},
			}[version]
			require.Equal(t, want, names)
			assert.Equal(t, s.NumRecords(), len(recs))
			byName := func(name string) format.Record { return recs[indexOf(names, name)] }
			if version == "v2" {
				assert.Equal(t, map[string]any{"_ARRAY_DIMENSIONS": []any{"y"}, "k": 1.0}, byName("/b").Facts.Attributes)
				assert.Equal(t, []string{"y"}, byName("/b").Facts.DimensionNames)
				assert.Nil(t, byName("/c").Facts.Attributes)
				d, _ := s.Array("d")
				assert.Equal(t, map[string]any{}, d.Attributes())
				e, _ := s.Array("/e")
				assert.Nil(t, e.Attributes())
				assert.Nil(t, byName("/sub/deep/i").Facts.DimensionNames) // two names for rank 1
				assert.Equal(t, []string{"p", "q"}, byName("/f").Facts.DimensionNames)
				assert.Equal(t, `"NaN"`, string(byName("/g").Facts.FillValue))
				assert.Equal(t, "chunks [2], raw", byName("/sub/deep/j").Extra["storage"])
			} else {
				assert.Equal(t, []string{"x"}, byName("/b").Facts.DimensionNames) // dimension_names come first
				assert.Equal(t, []string{"r"}, byName("/c").Facts.DimensionNames)
				assert.Equal(t, []string{"s"}, byName("/d").Facts.DimensionNames)
				assert.Nil(t, byName("/e").Facts.Attributes)
				assert.Nil(t, byName("/f").Facts.Attributes)
				g, _ := s.Array("g")
				assert.Equal(t, map[string]any{}, g.Attributes())
				assert.Equal(t, map[string]any{"q\"}": "]", "n": []any{1.0, 2.0, map[string]any{"deep": "x, }"}}}, byName("/sub/i").Facts.Attributes)
				assert.Equal(t, []string{""}, byName("/sub/j").Facts.DimensionNames)
				assert.Equal(t, map[string]any{"a": 2.0}, byName("/sub/deep/l").Facts.Attributes)
			}

			// The consolidated stores Write makes, both versions.
			for _, v := range []int{2, 3} {
				out := filepath.Join(t.TempDir(), "w.zarr")
				require.NoError(t, Write(out, s, &Options{Version: v}))
				w, err := Open(out, nil)
				require.NoError(t, err)
				wrecs := w.Records()
				require.Len(t, wrecs, len(recs))
				for i := range wrecs {
					assert.Equal(t, wrecs[i], w.Record(i), wrecs[i].Name)
					assert.Equal(t, recs[i].Name, wrecs[i].Name)
					for k, x := range recs[i].Facts.Attributes {
						if k != "_ARRAY_DIMENSIONS" {
							assert.Equal(t, x, wrecs[i].Facts.Attributes[k], "%s %s", wrecs[i].Name, k)
						}
					}
				}
				w.Close()
			}
		})
	}
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// TestAlikeDocumentsFailAlike: a document that equals one before it but
// for attributes that cannot be read fails as it fails alone, naming its
// key.
func TestAlikeDocumentsFailAlike(t *testing.T) {
	for name, attrs := range map[string]string{
		"attributes not an object": `[1]`,
		"a number past float64":    `{"big": 1e400}`,
		"a string":                 `"x"`,
	} {
		t.Run(name, func(t *testing.T) {
			bad := v3Array("0.0", "", `, "attributes": `+attrs)
			alone := filepath.Join(t.TempDir(), "alone.zarr")
			writeGroup(t, alone, map[string]string{"zarr.json": `{"zarr_format": 3, "node_type": "group"}`, "b/zarr.json": bad})
			_, want := Open(alone, nil)
			require.Error(t, want)
			group := filepath.Join(t.TempDir(), "g.zarr")
			writeGroup(t, group, map[string]string{"zarr.json": `{"zarr_format": 3, "node_type": "group"}`, "b/zarr.json": bad,
				"a/zarr.json": v3Array("0.0", "", `, "attributes": {"fine": 1}`)})
			_, err := Open(group, nil)
			require.Error(t, err)
			assert.Equal(t, strings.ReplaceAll(want.Error(), alone, group), err.Error())
			assert.Contains(t, err.Error(), "b/zarr.json")
		})
	}
	// Version 2: .zattrs apart from alike .zarray documents.
	group := filepath.Join(t.TempDir(), "g2.zarr")
	writeGroup(t, group, map[string]string{".zgroup": `{"zarr_format": 2}`, "a/.zarray": string(zarray("[3]", "[2]", "")),
		"b/.zarray": string(zarray("[3]", "[2]", "")), "b/.zattrs": `{"big": 1e400}`})
	_, err := Open(group, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "b/.zattrs")
}

// TestAttributesValue finds the member "attributes" of JSON objects, and
// gives up where encoding/json could read another member as it.
func TestAttributesValue(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want string // the value found; "-" none; "!" gives up
	}{
		{`{"attributes": {"a": [1, "}"]}, "b": 2}`, `{"a": [1, "}"]}`},
		{` { "x" : "attributes" , "attributes" :null}`, `null`},
		{`{"attributes":1.5e3}`, `1.5e3`},
		{`{"a\"ttributes": 1, "attributes": "s\\\"}"}`, "!"},
		{`{"x": {"attributes": 1}}`, "-"},
		{`{}`, "-"},
		{`{"attributes": 1, "attributes": 2}`, "!"},
		{`{"Attributes": 1}`, "!"},
		{`{"ATTRIBUTES": 1, "attributes": 2}`, "!"},
		{`{"\u0061ttributes": 1}`, "!"},
		{`[1]`, "!"},
		{`"attributes"`, "!"},
	} {
		start, end, ok := attributesValue([]byte(c.doc))
		got := "!"
		switch {
		case ok && start < 0:
			got = "-"
		case ok:
			got = c.doc[start:end]
		}
		assert.Equal(t, c.want, got, c.doc)
	}
}

// FuzzAttributesValue: on any valid JSON document attributesValue finds
// what encoding/json decodes as the member "attributes", or gives up.
func FuzzAttributesValue(f *testing.F) {
	for _, docs := range variedGroups {
		for _, doc := range docs {
			f.Add([]byte(doc))
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) {
			return
		}
		start, end, ok := attributesValue(doc)
		var whole struct {
			Attributes any `json:"attributes"`
		}
		if !ok || json.Unmarshal(doc, &whole) != nil {
			return
		}
		var value any
		if start >= 0 {
			if err := json.Unmarshal(doc[start:end], &value); err != nil {
				t.Fatalf("%q: [%d, %d) is not a value: %v", doc, start, end, err)
			}
		}
		assert.Equal(t, whole.Attributes, value, "%q", doc)
	})
}
