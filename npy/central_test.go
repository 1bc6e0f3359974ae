package npy

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// TestCentralDirectoryAsZipfileReadsIt: an archive's members are the
// entries in the central directory's declared bytes, which end where the
// directory end record starts, as Python's zipfile (and so np.load) reads
// them, whatever count the end record gives: a directory of 0 bytes holds
// no members; one that zipfile would read elsewhere, or whose entries do
// not fill it, is an error.
func TestCentralDirectoryAsZipfileReadsIt(t *testing.T) {
	f8 := npyBytes(1, header("'<f8'", "(1,)"), make([]byte, 8))
	members := []rawMember{stored("a.npy", f8), stored("b.npy", f8), stored("c.npy", f8)}
	intact := zipBytes(members, nil)
	end := len(intact) - endLen
	cdSize := int(binary.LittleEndian.Uint32(intact[end+12:]))
	entry := centralLen + len("a.npy")
	withEnd := func(size, count int) []byte {
		b := append([]byte{}, intact...)
		binary.LittleEndian.PutUint32(b[end+12:], uint32(size))
		binary.LittleEndian.PutUint16(b[end+8:], uint16(count))
		binary.LittleEndian.PutUint16(b[end+10:], uint16(count))
		return b
	}
	cases := []struct {
		name    string
		file    []byte
		want    []string // nil: an error
		errText string
	}{
		{"intact", intact, []string{"a", "b", "c"}, ""},
		{"a directory of 0 bytes, 3 entries counted", withEnd(0, 3), []string{}, ""},
		{"a directory of 0 bytes, 0 entries counted", withEnd(0, 0), []string{}, ""},
		{"a directory of the last two entries", withEnd(2*entry, 3), nil, "the directory end says the central directory is the"},
		{"a directory 10 bytes larger than its entries", withEnd(cdSize+10, 3), nil, "no ZIP central directory that archive/zip reads"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".npz")
			require.NoError(t, os.WriteFile(path, c.file, 0o644))
			f, err := Open(path, nil)
			if c.want == nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrZip)
				assert.Contains(t, err.Error(), c.errText)
			} else {
				require.NoError(t, err)
				got := []string{}
				for _, a := range f.Arrays() {
					got = append(got, a.Name)
				}
				assert.Equal(t, c.want, got)
				require.NoError(t, f.Close())
			}
			py := oracle.Find("numpy")
			if py == "" {
				return
			}
			out, err := oracle.Output(py, `
import sys, numpy as np
with np.load(sys.argv[1]) as z:
    print(",".join(z.files))
    for k in z.files:
        z[k]
`, path)
			if c.want == nil {
				assert.Error(t, err, "NumPy reads %q", out)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, strings.Join(c.want, ","), strings.TrimSpace(out), "the members NumPy lists")
		})
	}
}
