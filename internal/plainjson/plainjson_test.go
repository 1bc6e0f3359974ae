package plainjson

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarshal(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"dtype kept as written", map[string]any{"dtype": "<f8", "order": "C"}, `{"dtype":"<f8","order":"C"}`},
		{"ampersand and greater-than", []string{"a&b", "x>y"}, `["a&b","x>y"]`},
		{"no trailing newline", 1.5, `1.5`},
		{"control characters still escaped", "a\nb\"", `"a\nb\""`},
		{"nil", nil, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Marshal(tc.v)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			var back, want any
			require.NoError(t, json.Unmarshal(got, &back))
			std, err := json.Marshal(tc.v)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(std, &want))
			assert.Equal(t, want, back, "the same value as json.Marshal's text")
		})
	}
}

func TestMarshalError(t *testing.T) {
	_, err := Marshal(math.NaN())
	var uve *json.UnsupportedValueError
	require.ErrorAs(t, err, &uve, "what json.Marshal refuses, Marshal refuses")
}
