package daphne

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetaGoldenRoundTrip(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(golden(t, ""), "*.meta"))
	require.NoError(t, err)
	require.Len(t, paths, 9)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		m, err := ParseMeta(b)
		require.NoError(t, err, p)
		out, err := m.Bytes()
		require.NoError(t, err)
		assert.Equal(t, string(b), string(out), p)
	}
}

func TestMetaParse(t *testing.T) {
	m, err := ParseMeta([]byte(`
	{
	  "valueType" : "f64", "numRows": 2,
	  "extra": [1, 2.5e3, {"x": null}, true, false, "\u00e9\ud83d\ude00"],
	  "numCols" : 3, "numRows": 4,
	  "hdfs": {"isHDFS": true, "HDFSFilename": "/x"}
	}  `))
	require.NoError(t, err)
	assert.Equal(t, &Meta{NumRows: 4, NumCols: 3, ValueType: "f64", NumNonZeros: -1, HDFS: &HDFS{IsHDFS: true, Filename: "/x"}}, m)
	b, err := m.Bytes()
	require.NoError(t, err)
	assert.Equal(t, `{"hdfs":{"HDFSFilename":"/x","isHDFS":true},"numCols":3,"numRows":4,"valueType":"f64"}`, string(b))

	// Escapes as nlohmann writes them: not encoding/json's (<, >, &, U+2028 raw).
	m = &Meta{NumRows: 1, NumCols: 1, NumNonZeros: -1, Schema: []SchemaColumn{{Label: "a\"b\\c\b\f\n\r\t\x01\x1f\x7f<>&\u2028é", ValueType: "si8"}}}
	b, err = m.Bytes()
	require.NoError(t, err)
	assert.Equal(t, `{"numCols":1,"numRows":1,"schema":[{"label":"a\"b\\c\b\f\n\r\t\u0001\u001f`+"\x7f<>&\u2028é"+`","valueType":"si8"}]}`, string(b))
	back, err := ParseMeta(b)
	require.NoError(t, err)
	assert.Equal(t, m, back)

	m.Schema[0].Label = "\xff"
	_, err = m.Bytes()
	assert.Error(t, err, "nlohmann refuses to dump invalid UTF-8")
}

// \u escapes take hex digits of either case, as JSON says.
func TestMetaUnicodeEscapes(t *testing.T) {
	m, err := ParseMeta([]byte(`{"numRows":1,"numCols":1,"schema":[{"label":"\u00C9\u00e9\u004A","valueType":"f64"}]}`))
	require.NoError(t, err)
	require.Len(t, m.Schema, 1)
	assert.Equal(t, "ÉéJ", m.Schema[0].Label)
}

func TestMetaErrors(t *testing.T) {
	tests := []struct {
		in  string
		off int64
		is  error
	}{
		{`2,3,1,f64`, 0, errors.ErrUnsupported},
		{``, 0, ErrMeta},
		{`[]`, 0, ErrMeta},
		{`{"numCols":3}`, 0, ErrMeta},
		{`{"numRows":3}`, 0, ErrMeta},
		{`{"numRows":-1,"numCols":3}`, 11, ErrMeta},
		{`{"numRows":1.5,"numCols":3}`, 11, ErrMeta},
		{`{"numRows":"1","numCols":3}`, 11, ErrMeta},
		{`{"numRows":01,"numCols":3}`, 11, ErrMeta},
		{`{"numRows":1,"numCols":3,"numNonZeros":-2}`, 39, ErrMeta},
		{`{"numRows":1,"numCols":3,"valueType":7}`, 37, ErrMeta},
		{`{"numRows":1,"numCols":3,"schema":[{"label":"a"}]}`, 35, ErrMeta},
		{`{"numRows":1,"numCols":3,"schema":{}}`, 34, ErrMeta},
		{`{"numRows":1,"numCols":3} x`, 26, ErrMeta},
		{`{"numRows":1,"numCols":3`, 24, ErrMeta},
		{`{"numRows":1,"numCols":3,"l":"` + "\xff" + `"}`, 30, ErrMeta},
		{`{"numRows":1,"numCols":3,"l":"\ud800"}`, 36, ErrMeta},
		{`{"numRows":1,"numCols":3,"l":"\x"}`, 31, ErrMeta},
		{`{"numRows":1,"numCols":3,"l":"\u00g9"}`, 32, ErrMeta},
		{`{"numRows":1,"numCols":3,"l":"\u00"}`, 32, ErrMeta},
		{`{"numRows":1,"numCols":3,"l":tru}`, 29, ErrMeta},
		{strings.Repeat("[", 200), 129, ErrMeta},
	}
	for _, tc := range tests {
		_, err := ParseMeta([]byte(tc.in))
		var fe *FormatError
		require.ErrorAs(t, err, &fe, tc.in)
		assert.Equal(t, tc.off, fe.Offset, "%q: %v", tc.in, err)
		assert.ErrorIs(t, err, tc.is, tc.in)
	}
}

func TestMetaAgainstFile(t *testing.T) {
	dense := unhex(t, hexDense2x3)
	frame := unhex(t, hexFrame)
	tests := []struct {
		name, meta string
		data       []byte
		key        string // "" means the meta is accepted
		labels     []string
	}{
		{"good", `{"numCols":3,"numRows":2,"valueType":"f64"}`, dense, "", nil},
		{"rows", `{"numCols":3,"numRows":3,"valueType":"f64"}`, dense, "numRows", nil},
		{"cols", `{"numCols":2,"numRows":2,"valueType":"f64"}`, dense, "numCols", nil},
		{"vt", `{"numCols":3,"numRows":2,"valueType":"f32"}`, dense, "valueType", nil},
		{"no vt", `{"numCols":3,"numRows":2}`, dense, "valueType", nil},
		{"schema on matrix", `{"numCols":3,"numRows":2,"schema":[],"valueType":"f64"}`, dense, "schema", nil},
		{"nnz", `{"numCols":3,"numNonZeros":3,"numRows":3,"valueType":"f64"}`, unhex(t, hexCSR3x3), "numNonZeros", nil},
		{"frame", `{"numCols":2,"numRows":2,"schema":[{"label":"x","valueType":"si64"},{"label":"y","valueType":"f64"}]}`, frame, "", []string{"x", "y"}},
		{"frame fallback vt", `{"numCols":2,"numRows":2,"schema":[{"label":"x","valueType":""},{"label":"y","valueType":"f64"}],"valueType":"si64"}`, frame, "", []string{"x", "y"}},
		{"frame unknown vt", `{"numCols":2,"numRows":2,"schema":[{"label":"x","valueType":""},{"label":"y","valueType":"f64"}]}`, frame, "schema", nil},
		{"frame wrong vt", `{"numCols":2,"numRows":2,"schema":[{"label":"x","valueType":"f64"},{"label":"y","valueType":"f64"}]}`, frame, "schema", nil},
		{"frame dup labels", `{"numCols":2,"numRows":2,"schema":[{"label":"x","valueType":"si64"},{"label":"x","valueType":"f64"}]}`, frame, "schema", nil},
		{"frame short schema", `{"numCols":2,"numRows":2,"schema":[{"label":"x","valueType":"si64"}]}`, frame, "schema", nil},
		{"frame no schema", `{"numCols":2,"numRows":2,"valueType":"f64"}`, frame, "schema", nil},
		{"malformed", `{"numCols":2,`, dense, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.dbdf")
			require.NoError(t, os.WriteFile(path, tc.data, 0o644))
			require.NoError(t, os.WriteFile(path+".meta", []byte(tc.meta), 0o644))
			f, err := Open(path, nil)
			if tc.key == "" && tc.name != "malformed" {
				require.NoError(t, err)
				if tc.labels != nil {
					assert.Equal(t, tc.labels, f.Labels())
				}
				require.NoError(t, f.Close())
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrMeta)
			assert.Contains(t, err.Error(), path+".meta")
			if tc.key != "" {
				assert.Contains(t, err.Error(), `key "`+tc.key+`"`)
			}
			f, err = Open(path, &Options{Lenient: true})
			require.NoError(t, err)
			defer f.Close()
			assert.Nil(t, f.Header().Meta)
			assert.NotEmpty(t, f.Header().Relaxed)
			if f.Kind() == KindFrame {
				assert.Equal(t, []string{"col_0", "col_1"}, f.Labels())
			}
		})
	}
}
