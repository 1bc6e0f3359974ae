package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseCSV(t testing.TB, in string) ([][]csvField, error) {
	var out [][]csvField
	err := readCSVFrom(strings.NewReader(in), func(line int, rec []csvField) error {
		out = append(out, append([]csvField(nil), rec...))
		return nil
	})
	return out, err
}

func TestReadCSV(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [][]csvField
		err  string
	}{
		{"a,b\n1,2\n", [][]csvField{{{text: "a"}, {text: "b"}}, {{text: "1"}, {text: "2"}}}, ""},
		{"a,b\r\n1,\r\n", [][]csvField{{{text: "a"}, {text: "b"}}, {{text: "1"}, {null: true}}}, ""},
		{"a\n\"\"\n", [][]csvField{{{text: "a"}}, {{text: ""}}}, ""},
		{"a\n\"x\"\"y\"\n", [][]csvField{{{text: "a"}}, {{text: `x"y`}}}, ""},
		{"a\n\"two\nlines\",", [][]csvField{{{text: "a"}}, {{text: "two\nlines"}, {null: true}}}, "2 fields"},
		{"a\n\"open", nil, "not closed"},
		{"a\n\"q\"x\n", nil, "text after a quoted field"},
		{"a,b\n1\n", nil, "1 fields, the header has 2"},
		{"", nil, ""},
		{"a", [][]csvField{{{text: "a"}}}, ""},
	} {
		got, err := parseCSV(t, c.in)
		if c.err != "" {
			require.Error(t, err, "%q", c.in)
			assert.Contains(t, err.Error(), c.err, "%q", c.in)
			continue
		}
		require.NoError(t, err, "%q", c.in)
		assert.Equal(t, c.want, got, "%q", c.in)
	}
}

// FuzzReadCSV: the reader never panics, and what it reads, written by the
// CSV writer, reads back identically (null and empty string kept apart).
func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a\n\"\"\n\n", "x,y\r\n\"q\"\"\",\r\n", "a\n\"multi\nline\"\n", "id,x\n1,0.5\n-2,\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		recs, err := parseCSV(t, in)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w := newCSVWriter(&buf)
		for _, rec := range recs {
			cells := make([]cell, len(rec))
			for i, fl := range rec {
				cells[i] = cell{null: fl.null, text: fl.text}
			}
			require.NoError(t, w.writeRow(cells))
		}
		require.NoError(t, w.flush())
		again, err := parseCSV(t, buf.String())
		require.NoError(t, err, "re-reading %q", buf.String())
		assert.Equal(t, recs, again, "%q -> %q", in, buf.String())
	})
}
