package abf

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteOpenRefusesDamage: a corrupted length mid-file looks like a torn
// append, so a writing open cuts nothing unless asked: without Repair it
// fails, naming what a repair would cut, and the file keeps every byte;
// with Repair it cuts exactly that and Damage says so.
func TestWriteOpenRefusesDamage(t *testing.T) {
	tv1 := unhex(tv1Hex)
	tv2 := unhex(tv2Hex)
	corruptKeyLen := append([]byte{}, tv1...)
	corruptKeyLen[65] = 0x10 // record "b"'s key length: 4 becomes 16, and its type's length is read from its key
	// tv2 (Format A) with its second record's dimensions cut: a repair
	// cuts it and rewrites the count from 2 to 1.
	tv2Repaired := append(append(append([]byte{}, tv2[:14]...), 1, 0, 0, 0, 0, 0, 0, 0), tv2[22:96]...)
	cases := []struct {
		name     string
		file     []byte
		errAt    int64  // offset of the refusal
		errMsg   string // its message
		repaired []byte // the file after a repair
		cutAt    int64  // Damage's offset after a repair
	}{
		{"corrupted key length", corruptKeyLen, 85,
			`record "b,\x00\x00": type truncated (2097077087180423168 characters, 27 bytes left); a writing open refuses the damaged file: a repair (Options.Repair) would cut its last 48 bytes, from offset 64 (the record there and everything after it), and keep the 1 record before them`,
			tv1[:64], 64},
		{"torn tail", tv1[:100], 93,
			`record "b": dimension 1 truncated (8 bytes needed, 7 left); a writing open refuses the damaged file: a repair (Options.Repair) would cut its last 36 bytes, from offset 64 (the record there and everything after it), and keep the 1 record before them`,
			tv1[:64], 64},
		{"Format A, torn tail", tv2[:130], 129,
			`record "b": dimension 1 truncated (8 bytes needed, 1 left); a writing open refuses the damaged file: a repair (Options.Repair) would cut its last 34 bytes, from offset 96 (the record there and everything after it), and keep the 1 record before them, rewriting the record count from 2 to 1`,
			tv2Repaired, 96},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []string{"r+", "a"} {
				p := tempFile(t, c.file)
				_, err := openMode(p, mode, nil)
				fe := requireFormatErr(t, err, c.errAt, mmapfile.ErrNeedsRepair)
				assert.Equal(t, c.errMsg, fe.Msg, mode)
				got, _ := os.ReadFile(p)
				require.Equal(t, c.file, got, "%s: a refused open changed the file", mode)

				f, err := openMode(p, mode, &Options{Repair: true})
				require.NoError(t, err, mode)
				requireFormatErr(t, f.Damage(), c.cutAt, nil)
				require.NoError(t, f.Close())
				got, _ = os.ReadFile(p)
				assert.Equal(t, c.repaired, got, mode)
			}
		})
	}
}

// TestWriteOpenKeepsUncountedBytes: Format A's bytes after the counted
// records are not damage (upstream ignores them): a writing open keeps
// them and an edit changes only its element; Repair cuts them.
func TestWriteOpenKeepsUncountedBytes(t *testing.T) {
	a := newAB().headerA(1).str("x").str("Array").str("Float64").i64(1).i64(1).padTo(8).f64s(1).raw([]byte{1, 2, 3, 4, 5})
	p := tempFile(t, a.b)
	f, err := openMode(p, "r+", nil)
	require.NoError(t, err)
	require.NoError(t, f.Damage())
	require.NoError(t, Set(f, "x", []int64{0}, 2.0))
	require.NoError(t, f.Close())
	want := append([]byte{}, a.b...)
	binary.LittleEndian.PutUint64(want[80:], math.Float64bits(2))
	got, _ := os.ReadFile(p)
	require.Equal(t, want, got)

	f, err = openMode(p, "r+", &Options{Repair: true})
	require.NoError(t, err)
	fe := requireFormatErr(t, f.Damage(), 88, nil)
	assert.Equal(t, "cut 5 bytes after the last complete record (a record after the counted ones, written but not counted)", fe.Msg)
	require.NoError(t, f.Close())
	got, _ = os.ReadFile(p)
	assert.Equal(t, want[:88], got)
}

// TestRepairNeedsWritingMode: Repair is refused where nothing can be cut.
func TestRepairNeedsWritingMode(t *testing.T) {
	p := tempFile(t, unhex(tv1Hex))
	_, err := Open(p, &Options{Repair: true})
	requireFormatErr(t, err, -1, mmapfile.ErrNotWritable)
}

// TestWriteOpenRefusesOvercount: a Format A count larger than the records
// there: nothing to cut, the count to rewrite.
func TestWriteOpenRefusesOvercount(t *testing.T) {
	a := newAB().headerA(2).str("x").str("Array").str("Float64").i64(1).i64(1).padTo(8).f64s(1)
	p := tempFile(t, a.b)
	_, err := openMode(p, "r+", nil)
	fe := requireFormatErr(t, err, 88, mmapfile.ErrNeedsRepair)
	assert.Equal(t, "key length truncated (8 bytes needed, 0 left); a writing open refuses the damaged file: a repair (Options.Repair) would keep the 1 record there are, rewriting the record count from 2 to 1", fe.Msg)
	got, _ := os.ReadFile(p)
	require.Equal(t, a.b, got)
	f, err := openMode(p, "r+", &Options{Repair: true})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, _ = os.ReadFile(p)
	want := append([]byte{}, a.b...)
	want[14] = 1
	assert.Equal(t, want, got)
}

// TestRepairNeverWipes: a file of which not one record parses, and not as
// a torn first append does, may be no ABF file at all: a writing open
// refuses it, with or without Repair, and cuts nothing. Neither the start
// of another kind of file (a binary file that starts with a zero byte) nor
// a first record's header cut short (an append writes a header whole) nor
// a first record whose value holds the next whole record where it could
// end (a corrupted dimension) is a torn append. A first record torn in
// its value is cut.
func TestRepairNeverWipes(t *testing.T) {
	tv1 := unhex(tv1Hex)
	for _, size := range []int{48, 52, 63} {
		torn := tempFile(t, tv1[:size])
		f, err := openMode(torn, "a", &Options{Repair: true})
		require.NoError(t, err, "cut at %d", size)
		require.NoError(t, f.Close())
		got, _ := os.ReadFile(torn)
		require.Empty(t, got, "cut at %d", size)
	}
	bigDim := append([]byte{}, tv1...)
	bigDim[0x22] = 0x40 // record "x" of 64 elements: its payload would hold record "b"
	cases := []struct {
		file  []byte
		errAt int64
		msg   string
	}{
		{[]byte{0x00, 0xbe, 0x00, 0xbc, 0x00, 0xb8, 0, 0, 0, 0x38, 0, 0x3c, 0, 0x3e, 0, 0x40}, 1,
			"key length 790286303422 is not a multiple of 4; not one record parses, so this may not be an ABF file: a writing open refuses it, and no repair cuts it"},
		{tv1[:20], 18,
			`record "x": type truncated (16 characters, 2 bytes left); the first record's header is cut short, which no interrupted append leaves; not one record parses, so this may not be an ABF file: a writing open refuses it, and no repair cuts it`},
		{bigDim, 48,
			`record "x": payload truncated (512 bytes needed, 64 left); a whole record parses at offset 64, inside the value the first record's header claims, which a corrupted length makes and an interrupted append does not; not one record parses, so this may not be an ABF file: a writing open refuses it, and no repair cuts it`},
	}
	for _, c := range cases {
		p := tempFile(t, c.file)
		for _, o := range []*Options{nil, {Repair: true}} {
			_, err := openMode(p, "r+", o)
			fe := requireFormatErr(t, err, c.errAt, nil)
			assert.NotErrorIs(t, err, mmapfile.ErrNeedsRepair)
			assert.Equal(t, c.msg, fe.Msg)
			got, _ := os.ReadFile(p)
			require.Equal(t, c.file, got)
		}
	}
}
