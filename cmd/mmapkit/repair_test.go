package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetRefusesDamageAndRepairCuts: set on a damaged file fails and
// leaves every byte as it was (it used to cut what it took for a torn
// tail, even when it failed); repair cuts exactly what the refusal named
// and prints it; set then changes only its element.
func TestSetRefusesDamageAndRepairCuts(t *testing.T) {
	tv1, err := os.ReadFile(filepath.Join("..", "..", "abf", "testdata", "tv1-c.abf"))
	require.NoError(t, err)
	abfBad := append([]byte{}, tv1...)
	abfBad[65] = 0x10                         // record "b"'s key length: ls refuses the file
	scalar := "b\x02\x00 i32\x07\x00\x00\x00" // 7i32
	array := "b\x02\x01 f64\x03\x00\x00\x00\x00\x00\x00\x00" + strings.Repeat("\x00", 24)
	bigDim := []byte(scalar + array)
	bigDim[11+7] = 0x0b // the array's dimension: 3 becomes 11
	cases := []struct {
		name, ext string
		file      []byte
		set       []string // NAME INDEX VALUE
		refusal   string   // in set's error
		repairOut string   // what repair prints after the file name
		repaired  []byte
	}{
		{"ABF with a corrupted length byte", ".abf", abfBad, []string{"x", "[0]", "5"},
			"would cut its last 48 bytes, from offset 64",
			`offset 64: cut 48 bytes after the last complete record (offset 85: record "b,\x00\x00": type truncated (2097077087180423168 characters, 27 bytes left)): file is truncated: unexpected EOF`,
			tv1[:64]},
		{"Futhark file whose last value is 2 bytes short", ".in", []byte(scalar + array)[:11+31-2], []string{"1", "[0]", "5"},
			"would cut its last 29 bytes, from offset 11, and keep value 0",
			"offset 11: cut the last 29 bytes, which did not hold a value (offset 26: binary payload of [3]f64 extends past the end of the input); the file now ends after value 0: file is truncated: unexpected EOF",
			[]byte(scalar)},
		{"Futhark file with a corrupted dimension", ".in", bigDim, []string{"0", "[]", "5"},
			"would cut its last 39 bytes, from offset 11, and keep value 0",
			"offset 11: cut the last 39 bytes, which did not hold a value (offset 26: binary payload of [11]f64 extends past the end of the input); the file now ends after value 0: file is truncated: unexpected EOF",
			[]byte(scalar)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "d"+c.ext)
			require.NoError(t, os.WriteFile(p, c.file, 0o644))
			r := mk(t, append([]string{"set", p}, c.set...)...)
			assert.Equal(t, 1, r.code, r.stderr)
			assert.Contains(t, r.stderr, c.refusal)
			assert.Contains(t, r.stderr, "'mmapkit repair "+p+"' repairs it")
			got, _ := os.ReadFile(p)
			require.Equal(t, c.file, got, "a failed set changes nothing")

			assert.Equal(t, p+": "+c.repairOut+"\n", mustMk(t, "repair", p))
			got, _ = os.ReadFile(p)
			require.Equal(t, c.repaired, got)
			assert.Equal(t, p+": nothing to repair\n", mustMk(t, "repair", p))
		})
	}
	// After the repair set changes only its element.
	p := filepath.Join(t.TempDir(), "ok.abf")
	require.NoError(t, os.WriteFile(p, abfBad, 0o644))
	mustMk(t, "repair", p)
	mustMk(t, "set", p, "x", "[1]", "0.5")
	got, _ := os.ReadFile(p)
	want := append([]byte{}, tv1[:64]...)
	binary.LittleEndian.PutUint64(want[56:], 0x3fe0000000000000)
	assert.Equal(t, want, got)
}

// TestNPYBytesAfterTheDataKept: a .npy with 1,500 bytes after its data
// (NumPy reads it) keeps them through a failed set (which used to cut the
// file to 160 bytes) and a successful one, and repair finds nothing.
func TestNPYBytesAfterTheDataKept(t *testing.T) {
	src := filepath.Join("..", "..", "npy", "testdata", "le-f8.npy")
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	b = append(b, make([]byte, 1500)...)
	p := filepath.Join(t.TempDir(), "t.npy")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	r := mk(t, "set", p, "0", "[1000]", "5")
	assert.Equal(t, 1, r.code)
	got, _ := os.ReadFile(p)
	require.Equal(t, b, got)
	assert.Equal(t, p+": nothing to repair\n", mustMk(t, "repair", p))
	got, _ = os.ReadFile(p)
	require.Equal(t, b, got)
}

// TestNPZDamagedMembers: a failed set leaves an archive whose other
// member's local CRC-32 has a flipped bit (NumPy reads it) as it was,
// and a bit flipped in a stored member's data is an error for cat and
// convert, as for NumPy, never a value printed or a fresh CRC-32 written.
func TestNPZDamagedMembers(t *testing.T) {
	dir := t.TempDir()
	compressed, err := os.ReadFile(filepath.Join("..", "..", "npy", "testdata", "savez-compressed.npz"))
	require.NoError(t, err)
	compressed[131+14] ^= 1 // big.npy's local CRC-32
	p := filepath.Join(dir, "c.npz")
	require.NoError(t, os.WriteFile(p, compressed, 0o644))
	r := mk(t, "set", p, "x", "[0]", "5")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "deflated member, which cannot be edited in place")
	got, _ := os.ReadFile(p)
	require.Equal(t, compressed, got)
	assert.Equal(t, p+": nothing to repair\n", mustMk(t, "repair", p))
	got, _ = os.ReadFile(p)
	require.Equal(t, compressed, got, "a local CRC-32 that is not the edit mark is not repaired")

	stored, err := os.ReadFile(filepath.Join("..", "..", "npy", "testdata", "savez.npz"))
	require.NoError(t, err)
	stored[183+6] ^= 0x04 // x[0]
	q := filepath.Join(dir, "s.npz")
	require.NoError(t, os.WriteFile(q, stored, 0o644))
	r = mk(t, "cat", q)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `member "x.npy": its data's CRC-32 is`)
	assert.Equal(t, "-- x\n", r.stdout, "the record's name line, no values")
	out := filepath.Join(dir, "out.npz")
	r = mk(t, "convert", q, out)
	assert.Equal(t, 1, r.code)
	_, err = os.Stat(out)
	assert.True(t, os.IsNotExist(err))
}

// TestRepairNeedsACertainFormat: repair cuts only a file whose format its
// name says and its bytes agree with (or --format gives): a binary file of
// another kind, which detection from the bytes alone takes for ABF, is
// refused (exit 2) and left whole.
func TestRepairNeedsACertainFormat(t *testing.T) {
	b := []byte{0x00, 0xbe, 0x00, 0xbc, 0x00, 0xb8, 0, 0, 0, 0x38, 0, 0x3c, 0, 0x3e, 0, 0x40, 0, 0x41, 0, 0x42}
	dir := t.TempDir()
	for _, name := range []string{"data.bin", "group.zarr"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		r := mk(t, "repair", p)
		assert.Equal(t, 2, r.code, r.stderr)
		assert.Contains(t, r.stderr, "repair cuts what does not parse, so the format must be certain: the file's bytes look like abf, which its name does not say; give --format abf if it is")
		got, _ := os.ReadFile(p)
		require.Equal(t, b, got)
	}
	// Even as ABF, not one record parses: no repair cuts it.
	p := filepath.Join(dir, "x.abf")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	r := mk(t, "repair", p)
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Contains(t, r.stderr, "not one record parses, so this may not be an ABF file")
	got, _ := os.ReadFile(p)
	require.Equal(t, b, got)
}
