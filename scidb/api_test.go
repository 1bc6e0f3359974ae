package scidb

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConventions: options, errors and Close behave as in every format
// package: mmapfile's sentinels wrapped, the file named in every error.
func TestConventions(t *testing.T) {
	f := mustFormat(t, fixedFormat)
	p := writeTemp(t, fixedCells)

	_, err := Open(p, nil)
	assert.ErrorIs(t, err, ErrNoFormat)
	assert.ErrorContains(t, err, p)
	_, err = OpenFile(p, mmapfile.ReadWrite, &Options{Format: f, Options: mmapfile.Options{Create: true}})
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = Decode(fixedCells, &Options{})
	assert.ErrorIs(t, err, ErrNoFormat)

	w, err := OpenFile(p, mmapfile.ReadWrite, &Options{Format: f, Lenient: true})
	require.NoError(t, err)
	_, err = OpenFile(p, mmapfile.ReadWrite, &Options{Format: f, Lenient: true})
	assert.ErrorIs(t, err, mmapfile.ErrLocked, "a second writer")
	require.NoError(t, w.Close())

	// Strict by default: the third cell's prefix 0x80 is what only load()
	// accepts.
	_, err = Open(p, &Options{Format: f})
	assert.ErrorIs(t, err, ErrPrefix)
	m, err := Open(p, &Options{Format: f, Lenient: true, Options: mmapfile.Options{Advice: mmapfile.AdviceRandom}})
	require.NoError(t, err)

	for name, err := range map[string]error{
		"ColumnOf":     func() error { _, err := ColumnOf[int32](m, 1); return err }(),
		"View":         func() error { _, err := View[int16](m, 0); return err }(),
		"Read":         func() error { _, err := Read[int16](m, 0); return err }(),
		"ReadAt":       ReadAt(m, 1, 0, make([]int32, 1)),
		"Set":          Set(m, 0, []int64{0}, int16(1)),
		"DecodeInto":   func() error { _, err := m.DecodeInto(&Table{}, 0); return err }(),
		"Set datetime": Set(m, 4, []int64{0}, int64(1)),
	} {
		assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch, name)
		assert.ErrorContains(t, err, p, name)
	}
	for name, err := range map[string]error{
		"Read":     m.Read(9, make(Row, 7)),
		"ColumnOf": func() error { _, err := ColumnOf[int8](m, 7); return err }(),
		"SetValue": m.SetValue(9, 0, Int8Value(1)),
	} {
		assert.Error(t, err, name)
		assert.ErrorContains(t, err, p, name)
	}
	assert.ErrorIs(t, Set(m, 0, []int64{0}, int8(1)), mmapfile.ErrNotWritable)
	c, err := ColumnOf[int8](m, 0)
	require.NoError(t, err)

	require.NoError(t, m.Close())
	err = m.Close()
	assert.ErrorIs(t, err, mmapfile.ErrClosed)
	assert.ErrorContains(t, err, p)
	for name, err := range map[string]error{
		"ColumnOf":   func() error { _, err := ColumnOf[int8](m, 0); return err }(),
		"Read":       m.Read(0, make(Row, 7)),
		"CopyFrom":   func() error { _, err := c.CopyFrom(make([]int8, 3), 0); return err }(),
		"Nulls":      func() error { _, err := c.Nulls(0, make([]bool, 3), nil); return err }(),
		"Validate":   m.Validate(),
		"ReadArray":  m.ReadArray(0, make([]byte, 1), 0, 0, nil),
		"DecodeInto": func() error { _, err := m.DecodeInto(&Table{}, 0); return err }(),
	} {
		assert.ErrorIs(t, err, mmapfile.ErrClosed, name)
		assert.ErrorContains(t, err, p, name)
	}

	// A file error reads "scidb: FILE: offset N: cell C, attribute A (…): …".
	q := writeTemp(t, fixedCells[:40])
	_, err = Open(q, &Options{Format: f, Lenient: true})
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, mmapfile.ErrTruncated)
	assert.Equal(t, q, fe.File)
	assert.Equal(t, int64(33+7), fe.Offset)
	assert.ErrorContains(t, err, fmt.Sprintf("scidb: %s: offset 40: cell 1, attribute 4 (a4: datetimetz null): ", q))
}

// TestReadCopies: the values Read returns do not point into the mapping
// (they did, fixed-size values included, and died with it at Close).
func TestReadCopies(t *testing.T) {
	for _, tc := range []struct {
		format string
		data   []byte
	}{
		{fixedFormat, fixedCells},
		{"(int8, int16 null, string null, string)", flatArray},
	} {
		f := mustFormat(t, tc.format)
		m, err := Open(writeTemp(t, tc.data), &Options{Format: f, Lenient: true})
		require.NoError(t, err)
		mapping := m.Bytes()
		lo, hi := unsafeslice.Addr(mapping), unsafeslice.Addr(mapping)+uintptr(len(mapping))
		rows := make([]Row, m.Len())
		for i := range rows {
			rows[i] = make(Row, f.NumAttrs())
			require.NoError(t, m.Read(int64(i), rows[i]))
			for a := range rows[i] {
				b := rows[i][a].Bytes()
				if len(b) > 0 {
					addr := unsafeslice.Addr(b)
					assert.False(t, addr >= lo && addr < hi, "%s: cell %d attribute %d aliases the mapping", tc.format, i, a)
				}
			}
		}
		want := make([]string, 0)
		for i := range rows {
			for a, v := range rows[i] {
				want = append(want, v.Text(f.Attr(a)))
			}
		}
		require.NoError(t, m.Close())
		// Still readable after Close.
		var got []string
		for i := range rows {
			for a, v := range rows[i] {
				got = append(got, v.Text(f.Attr(a)))
			}
		}
		assert.Equal(t, want, got)
	}
}

// TestStridedCopyTruncated: an 8 MiB file cut to 4096 bytes by another
// process under the mapping. Copy, CopyFrom, Nulls, Read, ReadArray,
// Validate and DecodeInto return an error wrapping mmapfile.ErrFault (Copy had no error
// return and the process died of SIGBUS).
func TestStridedCopyTruncated(t *testing.T) {
	if os.Getenv("SCIDB_TRUNCATE_HELPER") != "" {
		t.Skip("helper process")
	}
	f := mustFormat(t, "(int64 null, double)")
	const cells = 8 << 20 / 17
	data := bytes.Repeat(append([]byte{0xff, 1, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 8)...), cells)
	p := writeTemp(t, data)
	m, err := Open(p, &Options{Format: f})
	require.NoError(t, err)
	defer m.Close()
	truncateElsewhere(t, p, 4096)

	ids, err := ColumnOf[int64](m, 0)
	require.NoError(t, err)
	_, err = ids.Copy(make([]int64, cells))
	assert.ErrorIs(t, err, mmapfile.ErrFault)
	assert.ErrorContains(t, err, p)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(4098), fe.Offset, "the first value past the cut: cell 241's at 17·241+1")
	_, err = ids.CopyFrom(make([]int64, 10), cells-10)
	assert.ErrorIs(t, err, mmapfile.ErrFault)
	_, err = ids.Nulls(cells-10, make([]bool, 10), nil)
	assert.ErrorIs(t, err, mmapfile.ErrFault)
	assert.ErrorIs(t, m.Read(cells-1, make(Row, 2)), mmapfile.ErrFault)
	assert.ErrorIs(t, m.ReadArray(1, make([]byte, 80), cells-10, 0, nil), mmapfile.ErrFault)
	assert.ErrorIs(t, m.Validate(), mmapfile.ErrFault)
	tab, err := NewTable(f, 200)
	require.NoError(t, err)
	_, err = m.DecodeInto(tab, 0)
	require.NoError(t, err, "the first 200 cells lie before the cut (at cell 240)")
	_, err = m.DecodeInto(tab, cells-200)
	assert.ErrorIs(t, err, mmapfile.ErrFault)
	// What lies before the cut still reads.
	n, err := ids.CopyFrom(make([]int64, 100), 0)
	require.NoError(t, err)
	assert.Equal(t, 100, n)
}

// truncateElsewhere cuts the file at p to size bytes from another process
// (this test binary, run again as a helper).
func truncateElsewhere(t *testing.T, p string, size int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTruncateHelper$")
	cmd.Env = append(os.Environ(), "SCIDB_TRUNCATE_HELPER="+p, fmt.Sprintf("SCIDB_TRUNCATE_SIZE=%d", size))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, size, fi.Size())
}

// TestTruncateHelper truncates a file when run as truncateElsewhere's
// helper process; otherwise it does nothing.
func TestTruncateHelper(t *testing.T) {
	p := os.Getenv("SCIDB_TRUNCATE_HELPER")
	if p == "" {
		return
	}
	var size int64
	_, err := fmt.Sscan(os.Getenv("SCIDB_TRUNCATE_SIZE"), &size)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(p, size))
}

// TestVariableFile: a File of a variable-size format finds any cell
// through its marks, reads and validates like a fixed-size one.
func TestVariableFile(t *testing.T) {
	f := mustFormat(t, "(int32, string null, binary)")
	var buf bytes.Buffer
	e := NewEncoder(&buf, f)
	const n = 3*markEvery + 7
	for i := range n {
		s := StringValue(fmt.Sprint("s", i))
		if i%5 == 0 {
			s = NullValue(int8(i % 128))
		}
		require.NoError(t, e.Write(Row{Int32Value(int32(i)), s, BinaryValue(bytes.Repeat([]byte{byte(i)}, i%4))}))
	}
	require.NoError(t, e.Flush())
	p := filepath.Join(t.TempDir(), "v.scidb")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
	m, err := Open(p, &Options{Format: f})
	require.NoError(t, err)
	defer m.Close()
	assert.Equal(t, int64(n), m.Len())
	assert.Equal(t, 0, m.Stride())
	require.NoError(t, m.Validate())
	row := make(Row, 3)
	for _, i := range []int{0, 1, markEvery - 1, markEvery, markEvery + 1, 2*markEvery + 5, n - 1} {
		require.NoError(t, m.Read(int64(i), row))
		assert.Equal(t, int32(i), row[0].Int32(), i)
		if i%5 == 0 {
			assert.True(t, row[1].Null)
			assert.Equal(t, int8(i%128), row[1].Reason)
		} else {
			assert.Equal(t, fmt.Sprint("s", i), row[1].String())
		}
		assert.Equal(t, bytes.Repeat([]byte{byte(i)}, i%4), append([]byte{}, row[2].Bytes()...))
	}
	_, err = m.DecodeInto(&Table{}, 0)
	assert.ErrorIs(t, err, ErrNotFixed)
	assert.ErrorIs(t, m.SetValue(0, 0, Int32Value(1)), ErrNotFixed)
	assert.Panics(t, func() { m.Cell(n) })
	assert.Len(t, m.Cell(n-1), 4+1+4+len(fmt.Sprint("s", n-1))+1+4+(n-1)%4)
}
