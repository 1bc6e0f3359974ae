package hdf5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/mmapkit/mmapkit/format"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// reference reads one of the reference files, or skips.
func reference(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, name))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("the HDF5 reference files are not at %s (they are shared beside the project)", testdata)
	}
	require.NoError(t, err)
	return b
}

// parsed opens b as a file, for finding what to damage in it.
func parsed(t *testing.T, b []byte) *File {
	t.Helper()
	f, err := NewReader(bytes.NewReader(b), int64(len(b)), nil)
	require.NoError(t, err)
	return f
}

// messageOf returns the first message of type typ in the header of the
// object at path.
func messageOf(t *testing.T, f *File, path string, typ uint16) message {
	t.Helper()
	addr := f.root()
	if path != "/" {
		d := f.byPath[path]
		require.NotNil(t, d, path)
		addr = d.addr
	}
	oh, err := readObjectHeader(f.m, addr)
	require.NoError(t, err)
	m := oh.find(typ)
	require.NotNil(t, m, "message %d of %s", typ, path)
	return *m
}

func (f *File) root() uint64 { return f.sb.root }

// openAll opens b and reads every record and text, resolving every name
// and link: what a hostile file must fail at without a panic.
func openAll(b []byte, name string) error {
	f, err := NewReader(bytes.NewReader(b), int64(len(b)), nil)
	if err != nil {
		return err
	}
	src := f
	for i, r := range src.Records() {
		var err error
		switch {
		case r.Type.Valid():
			n, _ := layout.Count(r.Shape)
			if n*int64(r.Type.Size()) > 1<<20 {
				continue
			}
			err = src.ReadArray(i, make([]byte, n*int64(r.Type.Size())), 0, layout.RowMajor, binary.LittleEndian)
		case isText(src.refs[i].typ()):
			err = src.ReadText(i, func([]string) error { return nil })
		}
		if err != nil {
			return err
		}
	}
	for _, l := range f.links {
		if _, err := f.resolve(l.Name); err != nil && !errors.Is(err, format.ErrNoRecord) && !errors.Is(err, ErrExternalLink) {
			return err
		}
	}
	if name != "" {
		_, err := f.resolve(name)
		return err
	}
	return nil
}

// Crafted files: each a reference file with bytes changed, the error it
// must give (a sentinel) and the offset that error names.
func TestHostile(t *testing.T) {
	put64 := func(b []byte, at int64, v uint64) { binary.LittleEndian.PutUint64(b[at:], v) }
	for _, c := range []struct {
		name, file string
		resolve    string // a name to resolve after the walk
		damage     func(t *testing.T, b []byte, f *File) (at int64)
		want       error
	}{
		{"size of offsets 3", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			b[13] = 3
			return 13
		}, errors.ErrUnsupported},
		{"not HDF5", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			b[1] = 'X'
			return 0
		}, ErrSignature},
		{"netCDF-3", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			copy(b, "CDF\x01")
			return 0
		}, errors.ErrUnsupported},
		{"superblock 3 checksum", "tree_new.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			b[11] ^= 1 // consistency flags
			return 44
		}, ErrChecksum},
		{"object header checksum", "tree_new.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			oh, err := readObjectHeader(f.m, f.root())
			require.NoError(t, err)
			b[oh.msgs[0].at] ^= 0x40
			// The first block ends in its checksum.
			size := uint64(b[oh.at+6+16])
			return oh.at + 6 + 16 + 1 + int64(size)
		}, ErrChecksum},
		{"root header past the end", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			put64(b, 64, 1<<40)
			return 1 << 40
		}, mmapfile.ErrTruncated},
		{"unknown message that must be understood", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			m := messageOf(t, f, "/payload", msgFill)
			binary.LittleEndian.PutUint16(b[m.at-8:], 200)
			b[m.at-4] = flagFailIfUnknownAll
			return m.at
		}, errors.ErrUnsupported},
		{"dataspace of rank 33", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			m := messageOf(t, f, "/payload", msgDataspace)
			b[m.at+1] = 33
			return m.at + 1
		}, errors.ErrUnsupported},
		{"dataspace of 10^18 elements", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			m := messageOf(t, f, "/payload", msgDataspace)
			put64(b, m.at+8, 1e18)
			// Contiguous data of 4 bytes cannot hold them.
			return f.byPath["/payload"].at
		}, mmapfile.ErrTruncated},
		{"dataspace overflowing int64", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			m := messageOf(t, f, "/payload", msgDataspace)
			put64(b, m.at+8, 1<<62)
			return m.at
		}, layout.ErrOverflow},
		{"message past its block", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			m := messageOf(t, f, "/payload", msgDataspace)
			binary.LittleEndian.PutUint16(b[m.at-6:], 0xfff0)
			return m.at
		}, mmapfile.ErrTruncated},
		{"group B-tree undefined", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			m := messageOf(t, f, "/", msgSymbolTable)
			put64(b, m.at, math.MaxUint64)
			return -1
		}, nil},
		{"group B-tree claiming 65535 entries", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			m := messageOf(t, f, "/", msgSymbolTable)
			st, err := parseSymbolTable(f.m, &m)
			require.NoError(t, err)
			at, err := f.m.abs(st.btree, 8, "")
			require.NoError(t, err)
			binary.LittleEndian.PutUint16(b[at+6:], 0xffff) // entries used
			return at + 6
		}, nil},
		{"name past the local heap", "linked_target.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			m := messageOf(t, f, "/", msgSymbolTable)
			st, err := parseSymbolTable(f.m, &m)
			require.NoError(t, err)
			nodes, err := f.m.r.GroupBTree(st.btree)
			require.NoError(t, err)
			at, err := f.m.abs(nodes[0], 8, "")
			require.NoError(t, err)
			put64(b, at+8, 1<<20) // the first entry's name offset
			h, err := readLocalHeap(f.m, st.heap)
			require.NoError(t, err)
			return h.at
		}, mmapfile.ErrOutOfRange},
		{"dense link heap past the end", "newstyle_numbers.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			at, reseal := denseLinkInfo(t, f, "crowd")
			put64(b, at, 1<<40)
			reseal(b)
			return 1 << 40
		}, mmapfile.ErrTruncated},
		{"dense link name index past the end", "newstyle_numbers.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			at, reseal := denseLinkInfo(t, f, "crowd")
			put64(b, at+8, 1<<40)
			reseal(b)
			return 1 << 40
		}, mmapfile.ErrTruncated},
		{"dense link name index at the heap", "newstyle_numbers.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			at, reseal := denseLinkInfo(t, f, "crowd")
			copy(b[at+8:at+16], b[at:at+8])
			reseal(b)
			heap := binary.LittleEndian.Uint64(b[at:])
			return int64(heap)
		}, nil},
		{"dense link heap ID past its block", "newstyle_numbers.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			at, _ := denseLinkInfo(t, f, "crowd")
			heap := int64(binary.LittleEndian.Uint64(b[at:]))
			// The first record of the name index's root leaf: a hash,
			// then the heap ID (flags, a heap offset, a length).
			btree := int64(binary.LittleEndian.Uint64(b[at+8:]))
			root := int64(binary.LittleEndian.Uint64(b[btree+16:]))
			require.Equal(t, "BTLF", string(b[root:root+4]))
			b[root+6+4+1+2] = 0xff // the high byte of a 3-byte length
			recSize := int64(binary.LittleEndian.Uint16(b[btree+10:]))
			end := root + 6 + int64(binary.LittleEndian.Uint16(b[btree+24:]))*recSize
			binary.LittleEndian.PutUint32(b[end:], h5.Checksum(b[root:end]))
			return heap
		}, nil},
		{"continuation cycle", "tree_old.h5", "", func(t *testing.T, b []byte, f *File) int64 {
			// The root group's continuation message points back at its
			// header's first block.
			cont := findRaw(t, f, f.root(), msgContinuation)
			put64(b, cont, f.root()+16)
			return cont
		}, ErrCycle},
		{"soft link cycle", "tree_old.h5", "/shortcut", func(t *testing.T, b []byte, f *File) int64 {
			i := bytes.Index(b, []byte("/p/q/leaf\x00"))
			require.Positive(t, i)
			copy(b[i:], "/shortcut")
			for _, l := range f.groupAt["/"] {
				if l.name == "shortcut" {
					return l.at
				}
			}
			t.Fatal("no /shortcut")
			return 0
		}, ErrCycle},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := reference(t, c.file)
			f := parsed(t, b)
			at := c.damage(t, b, f)
			err := openAll(b, c.resolve)
			require.Error(t, err)
			if c.want != nil {
				assert.ErrorIs(t, err, c.want)
			}
			var fe *FormatError
			require.ErrorAs(t, err, &fe, "%v", err)
			if at >= 0 {
				assert.Equal(t, at, fe.Offset, "%v", err)
			}
		})
	}
}

// denseLinkInfo returns the absolute offset of the heap address in the
// link info message of the dense group named name under the root, and a
// function that reseals the header's checksum after a change.
func denseLinkInfo(t *testing.T, f *File, name string) (int64, func([]byte)) {
	t.Helper()
	for _, l := range f.groupAt["/"] {
		if l.name != name {
			continue
		}
		oh, err := readObjectHeader(f.m, l.addr)
		require.NoError(t, err)
		m := oh.find(msgLinkInfo)
		require.NotNil(t, m)
		require.Zero(t, m.body[1]&1, "creation order tracked")
		return m.at + 2, func(b []byte) { resealHeader(b, oh) }
	}
	t.Fatalf("no group %s", name)
	return 0, nil
}

// findRaw returns the absolute offset of the body of the first message of
// type typ in the version 1 object header at addr, continuation blocks
// not followed.
func findRaw(t *testing.T, f *File, addr uint64, typ uint16) int64 {
	t.Helper()
	msgs, err := readV1Block(f.m, block{addr: addr + 16, size: uint64(blockSize(t, f, addr))})
	require.NoError(t, err)
	for _, m := range msgs {
		if m.typ == typ {
			return m.at
		}
	}
	t.Fatalf("no message %d", typ)
	return 0
}

func blockSize(t *testing.T, f *File, addr uint64) uint32 {
	b, err := f.m.r.ReadAt(addr, 16)
	require.NoError(t, err)
	return binary.LittleEndian.Uint32(b[8:])
}

// A file cut at every byte fails with ErrTruncated (or, before its
// signature is whole, ErrSignature), naming the offset it ends at, and
// never panics.
func TestTruncatedEverywhere(t *testing.T) {
	for _, name := range []string{"tree_new.h5", "linked_target.h5", "newstyle_numbers.h5"} {
		b := reference(t, name)
		for n := 0; n < len(b); n++ {
			err := openAll(b[:n], "")
			require.Error(t, err, "%s cut to %d bytes", name, n)
			if n < 8 {
				require.ErrorIs(t, err, ErrSignature, "%s cut to %d", name, n)
				continue
			}
			require.ErrorIs(t, err, mmapfile.ErrTruncated, "%s cut to %d: %v", name, n, err)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.LessOrEqual(t, fe.Offset, int64(n), "%s cut to %d: %v", name, n, err)
		}
	}
}

// An unknown message marked "fail if unknown and open for writing" is
// skipped by a reader and refused by a read-write open, as the HDF5
// library does.
func TestUnknownMessageForWriting(t *testing.T) {
	b := reference(t, "linked_target.h5")
	m := messageOf(t, parsed(t, b), "/payload", msgFill)
	binary.LittleEndian.PutUint16(b[m.at-8:], 200)
	b[m.at-4] = flagFailIfUnknownRW
	p := filepath.Join(t.TempDir(), "u.h5")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	f, err := Open(p, nil)
	require.NoError(t, err)
	v, err := Read[int16](f, "/payload")
	require.NoError(t, err)
	assert.Equal(t, []int16{-7, -8}, v)
	require.NoError(t, f.Close())
	_, err = OpenFile(p, mmapfile.ReadWrite, nil)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, m.at, fe.Offset)
}

// An attribute of shape [2^40, 0] holds nothing: no list of 2^40 empty
// lists is made.
func TestNestEmpty(t *testing.T) {
	assert.Equal(t, []any{}, nest([]any{}, []int64{1 << 40, 0}))
	assert.Equal(t, []any{[]any{1}, []any{2}}, nest([]any{1, 2}, []int64{2, 1}))
}

// An attribute of a datatype class this package does not know is listed
// without a value; the file still opens.
func TestAttributeOfUnknownClass(t *testing.T) {
	b := reference(t, "tree_old.h5")
	f := parsed(t, b)
	m := messageOf(t, f, "/alias", msgAttribute)
	// Version 1: name size at +2, then the name padded to 8; the datatype
	// follows, its first byte class and version.
	nameLen := int64(binary.LittleEndian.Uint16(b[m.at+2:]))
	typeAt := m.at + 8 + (nameLen+7)/8*8
	b[typeAt] = b[typeAt]&0xf0 | 12
	g, err := NewReader(bytes.NewReader(b), int64(len(b)), nil)
	require.NoError(t, err)
	ds, err := g.Lookup("/alias")
	require.NoError(t, err)
	assert.Contains(t, ds.Attributes, "k00")
	assert.Nil(t, ds.Attributes["k00"])
	assert.Equal(t, int64(12), ds.Attributes["k24"])
}

// A dataset of a datatype class this package does not know is listed,
// of type "unknown", and refused when read.
func TestDatasetOfUnknownClass(t *testing.T) {
	b := reference(t, "linked_target.h5")
	m := messageOf(t, parsed(t, b), "/payload", msgDatatype)
	b[m.at] = b[m.at]&0xf0 | 12
	f, err := NewReader(bytes.NewReader(b), int64(len(b)), nil)
	require.NoError(t, err)
	src := f
	r := src.Records()[0]
	assert.Equal(t, "unknown", r.TypeString())
	assert.Equal(t, int64(4), r.Size)
	err = src.ReadArray(0, make([]byte, 4), 0, layout.RowMajor, binary.LittleEndian)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Contains(t, err.Error(), "datatype class 12")
}
