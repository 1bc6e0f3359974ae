package futhark

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteOpenRefusesDamage: a writing open cuts nothing unless asked.
// A last value cut short and a corrupted dimension both make the file end
// inside a value, as a torn append does: without Repair the open fails,
// saying what a repair would cut, and the file keeps every byte; with
// Repair it is cut after the last good value.
func TestWriteOpenRefusesDamage(t *testing.T) {
	scalar := "b\x02\x00 i32\x07\x00\x00\x00"                                                  // 7i32, 11 bytes
	array := "b\x02\x02 f64\x02\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00" + // [2][3]f64
		string(make([]byte, 48))
	whole := scalar + array
	bigDim := []byte(whole)
	bigDim[11+7] = 0x0b // the array's first dimension: 2 becomes 11
	cases := []struct {
		name, file string
		msg        string
	}{
		{"last value 2 bytes short", whole[:len(whole)-2],
			"binary payload of [2][3]f64 extends past the end of the input; a writing open refuses the damaged file: a repair (Options.Repair) would cut its last 69 bytes, from offset 11, and keep value 0"},
		{"corrupted dimension", string(bigDim),
			"binary payload of [11][3]f64 extends past the end of the input; a writing open refuses the damaged file: a repair (Options.Repair) would cut its last 71 bytes, from offset 11, and keep value 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "d.in")
			require.NoError(t, os.WriteFile(p, []byte(c.file), 0o644))
			_, err := OpenFile(p, mmapfile.ReadWrite, nil)
			require.ErrorIs(t, err, mmapfile.ErrNeedsRepair)
			require.ErrorIs(t, err, mmapfile.ErrTruncated)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, c.msg, fe.Msg)
			assert.Equal(t, c.file, string(readFile(t, p)), "a refused open changes nothing")

			f, err := OpenFile(p, mmapfile.ReadWrite, &Options{Repair: true})
			require.NoError(t, err)
			require.ErrorAs(t, f.Damage(), &fe)
			assert.Equal(t, int64(11), fe.Offset)
			assert.Equal(t, 1, f.NumRecords())
			require.NoError(t, f.Close())
			assert.Equal(t, scalar, string(readFile(t, p)))
		})
	}
	_, err := Open(filepath.Join(t.TempDir(), "none.in"), &Options{Repair: true})
	assert.Error(t, err)
}

// TestRepairNeverWipes: input of which not one value parses, and not as
// a torn first append does, may be no Futhark file at all: a writing open
// refuses it, with or without Repair, and cuts nothing. A first value's
// header cut short is no torn append (an append writes a header whole),
// nor is a first value whose payload holds another whole value where it
// could end (a corrupted dimension). A first value torn in its payload is
// cut.
func TestRepairNeverWipes(t *testing.T) {
	f64s := func(dim byte, payload int) string {
		return "b\x02\x01 f64" + string([]byte{dim, 0, 0, 0, 0, 0, 0, 0}) + strings.Repeat("\x00", payload)
	}
	for _, in := range []string{f64s(2, 9), f64s(2, 0), "[1, 2,"} {
		torn := filepath.Join(t.TempDir(), "t.in")
		require.NoError(t, os.WriteFile(torn, []byte(in), 0o644))
		f, err := OpenFile(torn, mmapfile.ReadWrite, &Options{Repair: true})
		require.NoError(t, err, "%q", in)
		require.NoError(t, f.Close())
		assert.Empty(t, readFile(t, torn), "%q", in)
	}
	cases := []struct{ in, why string }{
		{"hello, world\n", ""},
		{"b\x07\x01 f64\x09\x00", ""},
		{"b\x02\x01 f64\x09\x00", "the first value's header is cut short"},
		// Two values of two f64s, the first's dimension corrupted to 100.
		{f64s(100, 16) + f64s(2, 16), "a whole value parses at offset 31, inside the payload the first value's header claims"},
		{f64s(100, 16) + "\n " + f64s(2, 16), "a whole value parses at offset 33"},
	}
	for _, c := range cases {
		p := filepath.Join(t.TempDir(), "w.in")
		require.NoError(t, os.WriteFile(p, []byte(c.in), 0o644))
		for _, o := range []*Options{nil, {Repair: true}} {
			_, err := OpenFile(p, mmapfile.ReadWrite, o)
			require.Error(t, err, "%q", c.in)
			assert.NotErrorIs(t, err, mmapfile.ErrNeedsRepair)
			assert.Contains(t, err.Error(), c.why)
			assert.Contains(t, err.Error(), "not one value parses, so this may not be a file of Futhark values: a writing open refuses it, and no repair cuts it")
			assert.Equal(t, c.in, string(readFile(t, p)))
		}
	}
	// A value where the first payload cannot end (after a part of an
	// element) is payload bytes that look like one: a tear, cut.
	misaligned := filepath.Join(t.TempDir(), "m.in")
	require.NoError(t, os.WriteFile(misaligned, []byte(f64s(100, 13)+f64s(2, 16)), 0o644))
	f, err := OpenFile(misaligned, mmapfile.ReadWrite, &Options{Repair: true})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Empty(t, readFile(t, misaligned))
}
