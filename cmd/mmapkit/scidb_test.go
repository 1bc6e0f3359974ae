package main

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flatArray is scidb.md §7's 35-byte file of '(int8, int16 null, string null, string)'.
const flatArray = "01000000ff0600000048656c6c6f00020000005700feff02010700000000010000000"

const flatFormat = "(int8, int16 null, string null, string)"

func writeHex(t *testing.T, path, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(h)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return b
}

func TestSciDBLsCatConvert(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flat.scidb")
	orig := writeHex(t, path, flatArray+"0")
	require.Len(t, orig, 35)

	d := lsJSON(t, "--scidb-format", flatFormat, "--scidb-names", "A,B,C,D", path)
	assert.Equal(t, "scidb", d.Format)
	assert.Nil(t, d.Version, "SciDB files have no version")
	require.Len(t, d.Records, 4)
	checkRec(t, d.Records[0], "A", "int8", []float64{2}, "row", nil, 2)
	checkRec(t, d.Records[1], "B", "int16", []float64{2}, "row", nil, 4) // a null cell keeps its value's bytes
	checkRec(t, d.Records[2], "C", "string", []float64{2}, "row", nil, 5)
	checkRec(t, d.Records[3], "D", "string", []float64{2}, "row", nil, 1)
	assert.Equal(t, true, d.Records[1]["nullable"])
	assert.NotContains(t, d.Records[0], "nullable")

	csv := "a0,a1,a2,a3\n1,,Hello,W\n-2,258,,\"\"\n"
	assert.Equal(t, csv, mustMk(t, "cat", "--scidb-format", flatFormat, path))
	assert.Equal(t, "C\nHello\n\n", mustMk(t, "cat", "--scidb-format", flatFormat, "--scidb-names", "A,B,C,D", "--name", "C", path))

	// SciDB -> SciDB keeps every byte; SciDB -> CSV -> SciDB keeps the
	// values (CSV nulls have reason 0: the reason 7 of cell 1 becomes 0).
	mustMk(t, "convert", "--scidb-format", flatFormat, path, filepath.Join(dir, "same.scidb"))
	same, err := os.ReadFile(filepath.Join(dir, "same.scidb"))
	require.NoError(t, err)
	assert.Equal(t, orig, same)
	mustMk(t, "convert", "--scidb-format", flatFormat, path, filepath.Join(dir, "flat.csv"))
	got, err := os.ReadFile(filepath.Join(dir, "flat.csv"))
	require.NoError(t, err)
	assert.Equal(t, csv, string(got))
	mustMk(t, "convert", "--out-scidb-format", flatFormat, filepath.Join(dir, "flat.csv"), filepath.Join(dir, "back.scidb"))
	back, err := os.ReadFile(filepath.Join(dir, "back.scidb"))
	require.NoError(t, err)
	want := append([]byte(nil), orig...)
	want[25] = 0 // reason 7 -> 0
	assert.Equal(t, want, back)

	// Strings have no array equivalent: an error naming the column.
	r := mk(t, "convert", "--scidb-format", flatFormat, path, filepath.Join(dir, "flat.abf"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `record "a2" (string[2]): the target format cannot hold this record`)
	assert.NoFileExists(t, filepath.Join(dir, "flat.abf"))

	// Usage errors: missing or malformed format string.
	r = mk(t, "ls", path)
	assert.Equal(t, 2, r.code)
	r = mk(t, "ls", "--scidb-format", "(int64,)", path)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "position 8")
	// Bad data: exit 1 with the cell.
	r = mk(t, "cat", "--scidb-format", "(int64, string)", path)
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "mmapkit: "+path+": "), r.stderr)
}

func TestSciDBNumericRoundTripsAndSet(t *testing.T) {
	dir := t.TempDir()
	// '(int64, double null)': (1, 0.5), (2, null reason 3), (-3, 1e300).
	path := filepath.Join(dir, "num.scidb")
	h := "0100000000000000" + "ff" + "000000000000e03f" +
		"0200000000000000" + "03" + "0000000000000000" +
		"fdffffffffffffff" + "ff" + "9c7500883ce4377e"
	orig := writeHex(t, path, h)
	format := "(int64, double null)"
	csv := "id,v\n1,0.5\n2,\n-3,1e+300\n"
	assert.Equal(t, csv, mustMk(t, "cat", "--scidb-format", format, "--scidb-names", "id,v", path))

	// SciDB -> ABF: one array per attribute plus v.reason; ABF -> Futhark ->
	// SciDB gives the same bytes back.
	abfPath := filepath.Join(dir, "num.abf")
	mustMk(t, "convert", "--scidb-format", format, "--scidb-names", "id,v", path, abfPath)
	d := lsJSON(t, abfPath)
	require.Len(t, d.Records, 3)
	assert.Equal(t, "v.reason", d.Records[2]["name"])
	assert.Equal(t, "[1i64, 2i64, -3i64]\n", mustMk(t, "cat", "--name", "id", abfPath))
	assert.Equal(t, "[-1i8, 3i8, -1i8]\n", mustMk(t, "cat", "--name", "v.reason", abfPath))
	fut := filepath.Join(dir, "num.in")
	mustMk(t, "convert", "--names", "id,v,v.reason", abfPath, fut)
	mustMk(t, "convert", "--names", "id,v,v.reason", fut, filepath.Join(dir, "fut.abf"))
	out := filepath.Join(dir, "back.scidb")
	mustMk(t, "convert", "--out-scidb-format", format, filepath.Join(dir, "fut.abf"), out)
	back, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, orig, back)
	// Without --out-scidb-format the format is derived from the columns.
	mustMk(t, "convert", "--to", "scidb", abfPath, filepath.Join(dir, "derived.bin"))
	derived, err := os.ReadFile(filepath.Join(dir, "derived.bin"))
	require.NoError(t, err)
	assert.Equal(t, orig, derived)

	// A null into a non-nullable entry is an error naming the column.
	r := mk(t, "convert", "--out-scidb-format", "(int64, double)", abfPath, filepath.Join(dir, "bad.scidb"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `attribute 1 (v: double): null value for an entry without null`)
	assert.NoFileExists(t, filepath.Join(dir, "bad.scidb"))

	// set: one value (and its prefix) changes in place.
	mustMk(t, "set", "--scidb-format", format, "--scidb-names", "id,v", path, "v", "[1]", "2.5")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want := append([]byte(nil), orig...)
	copy(want[17+8:], []byte{0xff, 0, 0, 0, 0, 0, 0, 0x04, 0x40})
	assert.Equal(t, want, got)
	assert.Equal(t, "id,v\n1,0.5\n2,2.5\n-3,1e+300\n", mustMk(t, "cat", "--scidb-format", format, "--scidb-names", "id,v", path))
}

func TestSciDBOpaqueRefused(t *testing.T) {
	path := filepath.Join(testdata(t, "scidb"), "intensity_data.opaque")
	r := mk(t, "cat", "--scidb-format", "(int64 null)", path)
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "mmapkit: "+path+": "), r.stderr)
	assert.Contains(t, r.stderr, "opaque")
	assert.Empty(t, r.stdout)
}

// TestSciDBNamesGivenTwice: --scidb-names with a name twice lists, prints
// and converts nothing (it made two records called "a" and a CSV header
// "a,a").
func TestSciDBNamesGivenTwice(t *testing.T) {
	dir := t.TempDir()
	csvPath := writeFile(t, filepath.Join(dir, "t.csv"), "x,y\n1,2.5\n3,4\n")
	path := filepath.Join(dir, "f.scidb")
	mustMk(t, "convert", "--out-scidb-format", "(int64, double)", csvPath, path)
	for _, args := range [][]string{
		{"ls", "--scidb-format", "(int64, double)", "--scidb-names", "a,a", path},
		{"cat", "--scidb-format", "(int64, double)", "--scidb-names", "a,a", path},
		{"convert", "--scidb-format", "(int64, double)", "--scidb-names", "a,a", path, filepath.Join(dir, "o.csv")},
	} {
		r := mk(t, args...)
		assert.Equal(t, 1, r.code, "%v: %s", args, r.stdout)
		assert.Contains(t, r.stderr, `"a" is given twice`, args)
		assert.Empty(t, r.stdout, args)
	}
	assert.NoFileExists(t, filepath.Join(dir, "o.csv"))
}

// TestConvertCSVByOutSciDBFormat: with --out-scidb-format, a CSV column is
// parsed as the entry's type, not as the type inferred from its text
// ("007" inferred i64 failed for a string entry, 2^63 inferred f64 for
// uint64, an i64 column with nulls for "string null").
func TestConvertCSVByOutSciDBFormat(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ csv, format, cat string }{
		{"a\n007\n12\n", "(string)", "a0\n007\n12\n"},
		{"u\n1\n9223372036854775808\n", "(uint64)", "a0\n1\n9223372036854775808\n"},
		{"u\n1\n9223372036854775808\n18446744073709551615\n", "(uint64)", "a0\n1\n9223372036854775808\n18446744073709551615\n"},
		{"d\n1\n-3\n", "(double)", "a0\n1\n-3\n"},
		{"s\n1\n\n7\n", "(string null)", "a0\n1\n\n7\n"},
		{"s,b\n1,true\n,false\n", "(string null, string)", "a0,a1\n1,true\n,false\n"},
		{"f\n1.50\n", "(string)", "a0\n1.50\n"},
	} {
		in := writeFile(t, filepath.Join(dir, "in.csv"), c.csv)
		out := filepath.Join(dir, "out.scidb")
		mustMk(t, "convert", "--out-scidb-format", c.format, in, out)
		assert.Equal(t, c.cat, mustMk(t, "cat", "--scidb-format", c.format, out), "%q as %s", c.csv, c.format)
	}
	// Through --name (a selection of the table's columns).
	in := writeFile(t, filepath.Join(dir, "two.csv"), "x,z\n1.5,007\n2,010\n")
	out := filepath.Join(dir, "z.scidb")
	mustMk(t, "convert", "--name", "z", "--out-scidb-format", "(string)", in, out)
	assert.Equal(t, "a0\n007\n010\n", mustMk(t, "cat", "--scidb-format", "(string)", out))
	// Text that the entry's type cannot take is an error naming the column.
	in = writeFile(t, filepath.Join(dir, "bad.csv"), "u\n1\n-2\n")
	r := mk(t, "convert", "--out-scidb-format", "(uint64)", in, filepath.Join(dir, "bad.scidb"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `"u"`)
	assert.NoFileExists(t, filepath.Join(dir, "bad.scidb"))
}
