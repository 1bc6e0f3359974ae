package scidb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// typedFormat's three cells: int64 0, 10, 20; double 0, null (reason 3),
// 1.0; bool false, true, false. 18 bytes a cell.
const typedFormat = "(int64, double null, bool)"

var typedCells = hx(`
0000000000000000 ff0000000000000000 00
0a00000000000000 030000000000000000 01
1400000000000000 ff000000000000f03f 00`)

// varFormat's three cells: int32 1, 2, 3 and strings "ab", "c", "def" (11,
// 10 and 12 bytes).
const varFormat = "(int32, string)"

var varCells = hx(`
01000000 03000000 616200
02000000 02000000 6300
03000000 04000000 64656600`)

// TestTypedCalls: View, Read, ReadAt and Set name an attribute by index,
// as every format package names its records; copies are of the values,
// nulls as zeros, and only a file of one attribute can be viewed.
func TestTypedCalls(t *testing.T) {
	p := writeTemp(t, typedCells)
	m, err := OpenFile(p, mmapfile.ReadWrite, &Options{Format: mustFormat(t, typedFormat)})
	require.NoError(t, err)
	defer m.Close()

	ids, err := Read[int64](m, 0)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 10, 20}, ids)
	xs, err := Read[float64](m, 1)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0, 1}, xs, "the null reads as zero")
	bs, err := Read[bool](m, 2)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, false}, bs)
	part := make([]float64, 2)
	require.NoError(t, ReadAt(m, 1, 1, part))
	assert.Equal(t, []float64{0, 1}, part)

	require.NoError(t, Set(m, 1, []int64{1}, 2.5))
	require.NoError(t, Set(m, 0, []int64{2}, int64(-1)))
	require.NoError(t, m.Sync())
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, hx("0a00000000000000 ff0000000000000440 01"), b[18:36], "cell 1: the null became 2.5")
	assert.Equal(t, hx("ffffffffffffffff"), b[36:44], "cell 2's int64")

	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"View of a strided attribute", func() error { _, err := View[int64](m, 0); return err }(), errors.ErrUnsupported},
		{"View of the wrong type", func() error { _, err := View[int32](m, 0); return err }(), mmapfile.ErrTypeMismatch},
		{"Read of the wrong type", func() error { _, err := Read[float32](m, 1); return err }(), mmapfile.ErrTypeMismatch},
		{"Read of no attribute", func() error { _, err := Read[int64](m, 3); return err }(), mmapfile.ErrOutOfRange},
		{"ReadAt past the end", ReadAt(m, 0, 2, make([]int64, 2)), mmapfile.ErrOutOfRange},
		{"ReadAt before the start", ReadAt(m, 0, -1, make([]int64, 1)), mmapfile.ErrOutOfRange},
		{"Set with a 2-D index", Set(m, 0, []int64{0, 0}, int64(1)), mmapfile.ErrOutOfRange},
		{"Set past the end", Set(m, 0, []int64{3}, int64(1)), mmapfile.ErrOutOfRange},
		{"Set of the wrong type", Set(m, 2, []int64{0}, uint8(1)), mmapfile.ErrTypeMismatch},
	} {
		require.ErrorIs(t, c.err, c.want, c.name)
		var fe *FormatError
		require.ErrorAs(t, c.err, &fe, c.name)
		assert.Equal(t, p, fe.File, c.name)
	}
	_, err = View[int64](m, 0)
	assert.ErrorContains(t, err, "copy with Read")

	// A variable-size format: copies find the cells through the marks.
	v, err := Open(writeTemp(t, varCells), &Options{Format: mustFormat(t, varFormat)})
	require.NoError(t, err)
	defer v.Close()
	ns, err := Read[int32](v, 0)
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 3}, ns)
	last := make([]int32, 1)
	require.NoError(t, ReadAt(v, 0, 2, last))
	assert.Equal(t, []int32{3}, last)
	_, err = Read[int32](v, 1)
	assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch, "strings are read with File.Read")

	// One attribute: the values are one run, viewed in place.
	one, err := Open(writeTemp(t, hx("000000000000f83f 0000000000000440")), &Options{Format: mustFormat(t, "(double)")})
	require.NoError(t, err)
	defer one.Close()
	if layout.HostOrder() == binary.LittleEndian {
		view, err := View[float64](one, 0)
		require.NoError(t, err)
		assert.Equal(t, []float64{1.5, 2.5}, view)
	}
	cp, err := Read[float64](one, 0)
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5, 2.5}, cp)
}

// TestSalvage: Options.Salvage keeps the cells before the first damaged
// one and Damage reports the error a plain open gives; the calls that
// cannot report damage refuse it.
func TestSalvage(t *testing.T) {
	badBool := bytes.Clone(typedCells)
	badBool[18+17] = 2
	for _, c := range []struct {
		name   string
		format string
		data   []byte
		err    error // the damage
		offset int64
		cell   int64 // the damaged cell: the cells kept
		first  []int64
	}{
		{"fixed, cut inside cell 2", typedFormat, typedCells[:2*18+5], mmapfile.ErrTruncated, 36, 2, []int64{0, 10}},
		{"fixed, cut inside cell 0", typedFormat, typedCells[:3], mmapfile.ErrTruncated, 0, 0, []int64{}},
		{"fixed, bool byte 2 in cell 1", typedFormat, badBool, mmapfile.ErrInvalidBool, 35, 1, []int64{0}},
		{"variable, cut inside cell 2's string", varFormat, varCells[:30], mmapfile.ErrTruncated, 29, 2, []int64{1, 2}},
		{"variable, cut inside cell 1's int32", varFormat, varCells[:13], mmapfile.ErrTruncated, 11, 1, []int64{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeTemp(t, c.data)
			f := mustFormat(t, c.format)
			_, strict := Open(p, &Options{Format: f})
			require.ErrorIs(t, strict, c.err)
			m, err := Open(p, &Options{Format: f, Salvage: true})
			require.NoError(t, err)
			defer m.Close()
			assert.Equal(t, c.cell, m.Len())
			damage := m.Damage()
			assert.Equal(t, strict.Error(), damage.Error(), "the error a plain open gives")
			require.ErrorIs(t, damage, c.err)
			var fe *FormatError
			require.ErrorAs(t, damage, &fe)
			assert.Equal(t, p, fe.File)
			assert.Equal(t, c.offset, fe.Offset)
			assert.Equal(t, c.cell, fe.Cell)
			if c.format == typedFormat {
				got, err := Read[int64](m, 0)
				require.NoError(t, err)
				assert.Equal(t, c.first, got)
			} else {
				got, err := Read[int32](m, 0)
				require.NoError(t, err)
				want := make([]int32, len(c.first))
				for i, x := range c.first {
					want[i] = int32(x)
				}
				assert.Equal(t, want, got)
			}
		})
	}

	sound, err := Open(writeTemp(t, typedCells), &Options{Format: mustFormat(t, typedFormat), Salvage: true})
	require.NoError(t, err)
	assert.NoError(t, sound.Damage(), "a sound file")
	require.NoError(t, sound.Close())

	o := &Options{Format: mustFormat(t, typedFormat), Salvage: true}
	_, err = Decode(typedCells, o)
	assert.ErrorIs(t, err, errors.ErrUnsupported, "Decode has no Damage")
	p := writeTemp(t, typedCells)
	_, err = DecodeFile(p, o)
	assert.ErrorIs(t, err, errors.ErrUnsupported, "DecodeFile has no Damage")
	assert.ErrorContains(t, err, p)
	err = NewDecoder(bytes.NewReader(typedCells), o).Read(make(Row, 3))
	assert.ErrorIs(t, err, errors.ErrUnsupported, "a Decoder has no Damage")
}

// TestCreate: Create makes a file of zero cells to fill in place (numpy's
// open_memmap "w+"), through View for a format of one attribute and Set
// for the others; nullable entries start null.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/one.scidb"
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
	m, err := Create(p, 3, &Options{Format: mustFormat(t, "(double)")})
	require.NoError(t, err)
	if layout.HostOrder() == binary.LittleEndian {
		v, err := View[float64](m, 0)
		require.NoError(t, err)
		copy(v, []float64{1.5, 2.5, 3.5})
	} else {
		for i, x := range []float64{1.5, 2.5, 3.5} {
			require.NoError(t, Set(m, 0, []int64{int64(i)}, x))
		}
	}
	require.NoError(t, m.Close())
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, hx("000000000000f83f 0000000000000440 0000000000000c40"), b)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a replaced file keeps its permission bits")

	q := dir + "/two.scidb"
	f := mustFormat(t, "(int64, double null)")
	m, err = Create(q, 2, &Options{Format: f})
	require.NoError(t, err)
	row := make(Row, 2)
	require.NoError(t, m.Read(0, row))
	assert.True(t, row[1].Null, "a nullable entry starts null")
	require.NoError(t, Set(m, 1, []int64{1}, 0.5))
	require.NoError(t, Set(m, 0, []int64{1}, int64(-2)))
	require.NoError(t, m.Close())
	b, err = os.ReadFile(q)
	require.NoError(t, err)
	assert.Equal(t, hx("0000000000000000 000000000000000000 feffffffffffffff ff000000000000e03f"), b)

	for _, c := range []struct {
		name   string
		n      int64
		format string
		want   error
	}{
		{"a variable-size format", 1, "(int64, string)", ErrNotFixed},
		{"a negative count", -1, "(double)", mmapfile.ErrOutOfRange},
		{"too many cells", 1 << 62, "(double)", mmapfile.ErrOutOfRange},
	} {
		_, err := Create(p, c.n, &Options{Format: mustFormat(t, c.format)})
		require.ErrorIs(t, err, c.want, c.name)
		assert.ErrorContains(t, err, p, c.name)
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Len(t, got, 24, "%s: the file is as it was", c.name)
	}
	_, err = Create(p, 1, nil)
	assert.ErrorIs(t, err, ErrNoFormat)
}
