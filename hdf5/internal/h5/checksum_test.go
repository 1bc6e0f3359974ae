package h5

import (
	"os"
	"path/filepath"
	"testing"
)

// testdataDir is the shared HDF5 reference files, relative to this package.
const testdataDir = "../../../../shared/testdata/hdf5"

func testFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := readReference(name)
	if err != nil {
		t.Skipf("reference file %s is absent: %v", filepath.Join(testdataDir, name), err)
	}
	return b
}

func readReference(name string) ([]byte, error) { return os.ReadFile(filepath.Join(testdataDir, name)) }

func TestHashLittleVectors(t *testing.T) {
	// The values lookup3.c's own driver prints for hashlittle.
	for _, tc := range []struct {
		key     string
		initval uint32
		want    uint32
	}{
		{"", 0, 0xdeadbeef},
		{"", 0xdeadbeef, 0xbd5b7dde},
		{"Four score and seven years ago", 0, 0x17770551},
		{"Four score and seven years ago", 1, 0xcd628161},
	} {
		if got := hashLittle([]byte(tc.key), tc.initval); got != tc.want {
			t.Errorf("hashlittle(%q, %#x) = %#08x, want %#08x", tc.key, tc.initval, got, tc.want)
		}
	}
}

func TestChecksumSuperblockV3(t *testing.T) {
	b := testFile(t, "newstyle_numbers.h5")
	if string(b[:8]) != "\x89HDF\r\n\x1a\n" || b[8] != 3 {
		t.Fatalf("newstyle_numbers.h5 does not start with a version 3 superblock: % x", b[:9])
	}
	want := uint32(b[44]) | uint32(b[45])<<8 | uint32(b[46])<<16 | uint32(b[47])<<24
	if got := Checksum(b[:44]); got != want {
		t.Errorf("Checksum(superblock bytes 0-43) = %#08x, stored %#08x", got, want)
	}
	b[20] ^= 1
	if got := Checksum(b[:44]); got == want {
		t.Errorf("Checksum did not change when a byte of the superblock did")
	}
}

// Every length from 0 to 40 takes a different path through the tail; the sums differ.
func TestChecksumLengths(t *testing.T) {
	key := []byte("The quick brown fox jumps over the lazy dog, twice over")
	seen := map[uint32]int{}
	for n := 0; n <= 40; n++ {
		s := Checksum(key[:n])
		if m, ok := seen[s]; ok {
			t.Errorf("Checksum of %d and %d bytes are both %#08x", m, n, s)
		}
		seen[s] = n
	}
}
