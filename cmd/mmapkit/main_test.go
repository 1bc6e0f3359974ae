package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mmapkit/mmapkit/internal/shareddata"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mkBin is the mmapkit binary built once for all tests.
var mkBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mmapkit-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mkBin = filepath.Join(dir, "mmapkit")
	out, err := exec.Command("go", "build", "-o", mkBin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary gave.
type result struct {
	stdout, stderr string
	code           int
}

// mk runs the binary with args and returns its output and exit status.
func mk(t testing.TB, args ...string) result {
	t.Helper()
	cmd := exec.Command(mkBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "running mmapkit: %v", err)
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// mustMk runs the binary and requires exit status 0.
func mustMk(t testing.TB, args ...string) string {
	t.Helper()
	r := mk(t, args...)
	require.Equal(t, 0, r.code, "mmapkit %s: stderr: %s", strings.Join(args, " "), r.stderr)
	return r.stdout
}

// testdata returns ../../shared/testdata/<format>, skipping when absent.
func testdata(t testing.TB, format string) string {
	t.Helper()
	return shareddata.Path(t, format)
}

func writeFile(t testing.TB, path, content string) string {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func TestHelpExitsZeroWithExample(t *testing.T) {
	top := mustMk(t, "--help")
	for _, c := range []string{"", "ls", "cat", "convert", "set", "repair", "demo", "dataset", "bench"} {
		args := []string{"--help"}
		if c != "" {
			if !strings.Contains(top, "\n  "+c+" ") {
				t.Logf("command %s is not in this build", c)
				continue
			}
			args = []string{c, "--help"}
		}
		r := mk(t, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		if c != "dataset" {
			assert.Contains(t, r.stdout, "Examples:", "%v", args)
			assert.Contains(t, r.stdout, "mmapkit "+c, "%v", args)
		}
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	csv := writeFile(t, filepath.Join(t.TempDir(), "t.csv"), "a\n1\n")
	for _, args := range [][]string{
		{},
		{"nosuchcommand"},
		{"ls"},
		{"ls", "--bogus", csv},
		{"cat", "--format", "xml", csv},
		{"ls", "--format", "abf", "--scidb-format", "(int64)", csv},
		{"ls", "--format", "scidb", csv},
		{"demo", "extra"},
		{"convert", "--text", csv, filepath.Join(filepath.Dir(csv), "o.csv")},
		{"convert", "--abf-bits", csv, filepath.Join(filepath.Dir(csv), "o.in")},
		{"convert", "--text", "--aligned", csv, filepath.Join(filepath.Dir(csv), "o.in")},
		{"convert", "--aligned=3", csv, filepath.Join(filepath.Dir(csv), "o.in")},
		{"convert", "--abf-version", "B", csv, filepath.Join(filepath.Dir(csv), "o.abf")},
		{"convert", "--to", "xml", csv, filepath.Join(filepath.Dir(csv), "o.abf")},
		{"set", csv, "a", "[x]", "1"},
		{"repair"},
		{"repair", csv, csv},
		{"demo", "--size", "12"},
	} {
		r := mk(t, args...)
		assert.Equal(t, 2, r.code, "%v: stdout %q stderr %q", args, r.stdout, r.stderr)
		assert.True(t, strings.HasPrefix(r.stderr, "mmapkit: "), "%v: %q", args, r.stderr)
		assert.Empty(t, r.stdout, "%v", args)
		assert.NotContains(t, r.stderr, "mmapkit: mmapkit", "%v", args)
	}
	assert.NoFileExists(t, filepath.Join(filepath.Dir(csv), "o.in"))
}

func TestErrorsNameTheFileOnce(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.csv")
	r := mk(t, "cat", missing)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "mmapkit: "+missing+": no such file or directory\n", r.stderr)

	odd := writeFile(t, filepath.Join(dir, "odd.bin"), "\x01\x02junk")
	r = mk(t, "ls", odd)
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "mmapkit: "+odd+": cannot tell the format"), r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, odd))
}

// The registry tells the formats apart by their first bytes when the name
// does not say.
func TestDetectFromBytes(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct {
		head, want string
	}{
		{"", ""}, // an empty file: no bytes tell a format (an empty ABF file is one by its name)
		{"\x06\x00\x00\x00\x00\x00\x00\x00LITTLE\x02", "abf"},
		{"\x00\x00\x00\x00\x00\x00\x00\x06BIG   ", "abf"},
		{"\x00\x04\x00\x00\x00", "abf"},
		{"\xff\x00", "abf"},
		{"b\x02\x01 i32", "futhark"},
		{"  \n-- comment\nb\x02\x00", "futhark"},
		{"[1, 2]", "futhark"},
		{"-- only a comment", "futhark"},
		{"empty([0]i32)", "futhark"},
		{"true", "futhark"},
		{"f32.nan", "futhark"},
		{"42i32", "futhark"},
		{"\x01\x01\x02", ""},
		{"hello", ""},
	} {
		p := writeFile(t, filepath.Join(dir, fmt.Sprintf("f%d.bin", i)), c.head)
		got, err := format.Detect(p, nil)
		if c.want == "" {
			assert.ErrorIs(t, err, format.ErrUnknownFormat, "%q", c.head)
			continue
		}
		require.NoError(t, err, "%q", c.head)
		assert.Equal(t, c.want, got.Name, "%q", c.head)
	}
}

func TestCSVInputLsCat(t *testing.T) {
	dir := t.TempDir()
	csv := writeFile(t, filepath.Join(dir, "t.csv"), "id,x,label,ok\n1,0.5,\"a,b\",true\n-2,,,false\n3,1e300,\"say \"\"hi\"\"\",true\n")
	out := mustMk(t, "ls", "--json", csv)
	var doc struct {
		File    string           `json:"file"`
		Format  string           `json:"format"`
		Version *string          `json:"version"`
		Records []map[string]any `json:"records"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, csv, doc.File)
	assert.Equal(t, "csv", doc.Format)
	assert.Nil(t, doc.Version)
	require.Len(t, doc.Records, 4)
	wantTypes := []string{"i64", "f64", "string", "bool"}
	for i, name := range []string{"id", "x", "label", "ok"} {
		rec := doc.Records[i]
		assert.Equal(t, name, rec["name"])
		assert.Equal(t, wantTypes[i], rec["type"])
		assert.Equal(t, []any{3.0}, rec["shape"])
		assert.Equal(t, "row", rec["order"])
		assert.Contains(t, rec, "offset")
		assert.Nil(t, rec["offset"])
	}
	assert.Equal(t, true, doc.Records[1]["nullable"])

	assert.Equal(t, "id,x,label,ok\n1,0.5,\"a,b\",true\n-2,,,false\n3,1e+300,\"say \"\"hi\"\"\",true\n", mustMk(t, "cat", csv))
	assert.Equal(t, "label\n\"a,b\"\n\n\"say \"\"hi\"\"\"\n", mustMk(t, "cat", "--name", "label", csv))
	r := mk(t, "cat", "--name", "nope", csv)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "mmapkit: "+csv+": no such record \"nope\"; the file has \"id\", \"x\", \"label\" and \"ok\"\n", r.stderr)

	table := mustMk(t, "ls", csv)
	assert.Equal(t, csv+": csv, 4 record(s)\n"+
		"NAME   TYPE         SHAPE  ORDER  OFFSET  BYTES\n"+
		"id     i64          [3]    row    -       -\n"+
		"x      f64 null     [3]    row    -       -\n"+
		"label  string null  [3]    row    -       -\n"+
		"ok     bool         [3]    row    -       -\n", table)
}

// A CSV file with a header and no rows converts (its columns are f64).
func TestCSVWithoutRows(t *testing.T) {
	dir := t.TempDir()
	csv := writeFile(t, filepath.Join(dir, "h.csv"), "x,y\n")
	mustMk(t, "convert", csv, filepath.Join(dir, "h.abf"))
	assert.Equal(t, "-- x\nempty([0]f64)\n-- y\nempty([0]f64)\n", mustMk(t, "cat", filepath.Join(dir, "h.abf")))
	mustMk(t, "convert", filepath.Join(dir, "h.abf"), filepath.Join(dir, "back.csv"))
	b, err := os.ReadFile(filepath.Join(dir, "back.csv"))
	require.NoError(t, err)
	assert.Equal(t, "x,y\n", string(b))
}

func TestDemoSmall(t *testing.T) {
	out := mustMk(t, "demo", "--size", "1MiB", "--dir", t.TempDir())
	assert.Contains(t, out, "filled 131072 f64 (1 MiB)")
	assert.Contains(t, out, "GB/s")
	assert.Contains(t, out, "from 21845 to -1 in place")
	assert.Contains(t, out, "elements 43689..43691 = [21844.5 -1 21845.5]")
	assert.Contains(t, out, `key "x", Array{Float64,2} of 1024×128 (1.0 MiB file)`)
	assert.Contains(t, out, "(payload at offset 56, aligned: zero copy)")
	assert.Contains(t, out, "reopened: x[2:4, 2] = [512.5 -1 513.5]")
	for _, via := range []string{"demo.in", "demo.dbdf", "demo.npy", "demo.zarr"} {
		assert.Contains(t, out, "mmapkit convert demo.abf "+via)
	}
	assert.Equal(t, 4, strings.Count(out, "byte-identical to demo.abf: every value and the edit survived the round trip"),
		"every round trip (through Futhark, DAPHNE, NumPy and Zarr) gives the ABF file back")
	assert.Contains(t, out, "done in")
}

func TestConvertCSVAndFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, filepath.Join(dir, "in.csv"), "a,b\n1,x\n2,\n")
	out := filepath.Join(dir, "out.csv")
	mustMk(t, "convert", "--names", "n,s", in, out)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "n,s\n1,x\n2,\n", string(got))

	r := mk(t, "convert", "--names", "only-one", in, filepath.Join(dir, "bad.csv"))
	assert.Equal(t, 2, r.code, r.stderr)
	r = mk(t, "convert", in, filepath.Join(dir, "out.unknown"))
	assert.Equal(t, 2, r.code, r.stderr)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"in.csv", "out.csv"}, names)
}

func TestParseIndex(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int64
		ok   bool
	}{{"[2,3]", []int64{2, 3}, true}, {"2, 3", []int64{2, 3}, true}, {"[]", []int64{}, true}, {"7", []int64{7}, true},
		{"[-1]", nil, false}, {"[1", nil, false}, {"[a]", nil, false}} {
		got, err := parseIndex(c.in)
		if !c.ok {
			assert.Error(t, err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
}

// TestConvertScalarToTables: a scalar converts to no table format, and the
// message says so (DAPHNE said "DAPHNE frames need columns of one
// length", CSV "a table's columns are 1-D").
func TestConvertScalarToTables(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, filepath.Join(dir, "s.in"), "3.5f64\n")
	for ext, want := range map[string]string{
		".dbdf": `record "0" (f64): the target format cannot hold this record: a scalar (a 0-d array) cannot be a DAPHNE matrix`,
		".csv":  `record "0" (f64): the target format cannot hold this record: a scalar (a 0-d array) cannot be a table column`,
	} {
		out := filepath.Join(dir, "o"+ext)
		r := mk(t, "convert", in, out)
		assert.Equal(t, 1, r.code, ext)
		assert.Contains(t, r.stderr, want, ext)
		assert.NoFileExists(t, out)
	}
}
