package futhark

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func genPath(dir, real string) string {
	rel, _ := filepath.Rel(filepath.Join(dir, "real"), real)
	return filepath.Join(dir, "generated", rel)
}

func TestRealFilesCanonical(t *testing.T) {
	dir := testdata(t)
	files := realFiles(t)
	require.NotEmpty(t, files)
	for _, p := range files {
		t.Run(strings.TrimPrefix(p, dir+"/real/"), func(t *testing.T) {
			in := readFile(t, p)
			g := genPath(dir, p)
			if strings.HasSuffix(p, ".gz") {
				zr, err := gzip.NewReader(bytes.NewReader(in))
				require.NoError(t, err)
				in, err = io.ReadAll(zr)
				require.NoError(t, err)
				require.Len(t, in, 6000032)
				require.Equal(t, byte('\n'), in[len(in)-1])
				_, bin, types, err := convert(t, in, nil)
				require.NoError(t, err)
				assert.Equal(t, string(readFile(t, g+".types")), string(types))
				assert.Equal(t, in[:len(in)-1], bin, "re-encoding drops only the newline")
				return
			}
			txt, bin, types, err := convert(t, in, nil)
			require.NoError(t, err)
			assert.Equal(t, string(readFile(t, g+".txt")), string(txt))
			assert.True(t, bytes.Equal(readFile(t, g+".bin"), bin), "binary differs")
			assert.Equal(t, string(readFile(t, g+".types")), string(types))
		})
	}
}

func TestGeneratedRoundTrip(t *testing.T) {
	dir := testdata(t)
	var gens []string
	for _, p := range realFiles(t) {
		if !strings.HasSuffix(p, ".gz") {
			gens = append(gens, genPath(dir, p))
		}
	}
	gens = append(gens, filepath.Join(dir, "generated", "all-types"))
	for _, g := range gens {
		txt, bin := readFile(t, g+".txt"), readFile(t, g+".bin")
		for _, in := range [][]byte{txt, bin} {
			gotT, gotB, _, err := convert(t, in, nil)
			require.NoError(t, err, g)
			assert.Equal(t, string(txt), string(gotT), g)
			assert.True(t, bytes.Equal(bin, gotB), g)
		}
	}
}

func TestAllTypes(t *testing.T) {
	dir := testdata(t)
	g := filepath.Join(dir, "generated")
	txt, bin, types, err := convert(t, readFile(t, filepath.Join(g, "all-types.input.txt")), nil)
	require.NoError(t, err)
	assert.Equal(t, string(readFile(t, filepath.Join(g, "all-types.txt"))), string(txt))
	assert.True(t, bytes.Equal(readFile(t, filepath.Join(g, "all-types.bin")), bin))
	assert.Equal(t, string(readFile(t, filepath.Join(g, "all-types.types.txt"))), string(types))
	assert.Equal(t, 73, bytes.Count(types, []byte("\n")))
}

type readerCase struct {
	In     *string `json:"in"`
	InHex  *string `json:"in_hex"`
	Note   string  `json:"note"`
	Text   *string `json:"text"`
	BinHex *string `json:"bin_hex"`
}

func TestReaderCases(t *testing.T) {
	dir := testdata(t)
	lines := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dir, "generated", "reader-cases.jsonl")))), "\n")
	require.Len(t, lines, 86)
	for _, line := range lines {
		var c readerCase
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		var in []byte
		name := c.Note
		if c.In != nil {
			in = []byte(*c.In)
			name = *c.In
		} else {
			var err error
			in, err = hex.DecodeString(*c.InHex)
			require.NoError(t, err)
		}
		t.Run(name, func(t *testing.T) {
			txt, bin, _, err := convert(t, in, nil)
			if c.Text == nil {
				require.Error(t, err, "futhark-data rejects %q", in)
				var fe *FormatError
				require.ErrorAs(t, err, &fe)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, *c.Text, string(txt))
			assert.Equal(t, *c.BinHex, hex.EncodeToString(bin))
		})
	}
}
