package futhark

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func textOf(t *testing.T, p string) string {
	t.Helper()
	txt, _, _, err := convert(t, readFile(t, p), nil)
	require.NoError(t, err)
	return string(txt)
}

func TestAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.data")
	f, err := OpenFile(p, mmapfile.ReadWrite, &Options{Options: mmapfile.Options{Create: true}, Align: AlignElement})
	require.NoError(t, err)
	assert.Equal(t, 0, f.NumRecords())
	require.NoError(t, f.Append(mustValue(t, nil, []int32{7})))
	require.NoError(t, f.Append(mustValue(t, []int64{2}, []float64{1.5, 2.5})))
	// The §6 example: element alignment counts everything before.
	want := "\x20" + "b\x02\x00 i32" + "\x07\x00\x00\x00" + "     " + "b\x02\x01 f64\x02\x00\x00\x00\x00\x00\x00\x00" +
		"\x00\x00\x00\x00\x00\x00\xf8\x3f\x00\x00\x00\x00\x00\x00\x04\x40"
	assert.Equal(t, want, string(readFile(t, p)), "appends are written at once")
	xs, err := View[float64](f, 1)
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5, 2.5}, xs, "new values are viewable at once")
	require.NoError(t, f.AppendFunc(func(e *Encoder) error {
		if err := e.EncodeText(mustValue(t, []int64{3}, []int8{1, 2, 3})); err != nil {
			return err
		}
		// Streamed: a value written chunk by chunk.
		if err := e.BeginBinary(layout.I16, []int64{4}); err != nil {
			return err
		}
		for _, k := range []int{2, 5, 1} {
			if err := e.WriteElems([]byte{1, 0, 2, 0, 3, 0, 4, 0}[:k]); err != nil {
				return err
			}
		}
		return nil
	}))
	require.Equal(t, 4, f.NumRecords())
	got, err := Read[int16](f, 3)
	require.NoError(t, err)
	assert.Equal(t, []int16{1, 1, 2, 0x0103}, got, "chunks need not end on elements")
	assert.Len(t, f.Records(), 4, "the records follow the appends")
	require.NoError(t, f.Close())
	assert.ErrorIs(t, f.Append(mustValue(t, nil, []int32{7})), mmapfile.ErrClosed)
	assert.Equal(t, "7i32\n[1.5f64, 2.5f64]\n[1i8, 2i8, 3i8]\n[1i16, 1i16, 2i16, 259i16]\n", textOf(t, p))

	ro, err := Open(p, nil)
	require.NoError(t, err)
	defer ro.Close()
	err = ro.Append(mustValue(t, nil, []int32{7}))
	assert.ErrorIs(t, err, mmapfile.ErrNotWritable)
	assert.ErrorContains(t, err, p)
	_, err = ro.AppendArray(layout.F32, []int64{2})
	assert.ErrorIs(t, err, mmapfile.ErrNotWritable)
}

// A failed append leaves the file as it was, byte for byte, and the File
// still reads it.
func TestAppendFailureLeavesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.in")
	orig := "[1, 2] -- a comment\n" + "b\x02\x00 i32\x05\x00\x00\x00"
	require.NoError(t, os.WriteFile(p, []byte(orig), 0o644))
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	defer f.Close()
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		fn   func(e *Encoder) error
		err  error
	}{
		{"fn fails after a value", func(e *Encoder) error {
			if err := e.EncodeBinary(mustValue(t, []int64{3}, []int32{1, 2, 3})); err != nil {
				return err
			}
			return boom
		}, boom},
		{"a value left unfinished", func(e *Encoder) error {
			if err := e.BeginBinary(layout.F64, []int64{1000}); err != nil {
				return err
			}
			return e.WriteElems(make([]byte, 800))
		}, ErrState},
		{"a bad value", func(e *Encoder) error { return e.EncodeBinary(Value{Type: layout.I128, Data: make([]byte, 16)}) }, errors.ErrUnsupported},
		{"nothing", func(e *Encoder) error { return nil }, nil},
	} {
		err := f.AppendFunc(c.fn)
		if c.err == nil {
			require.NoError(t, err, c.name)
		} else {
			require.ErrorIs(t, err, c.err, c.name)
			assert.ErrorContains(t, err, p, c.name)
		}
		assert.Equal(t, orig, string(readFile(t, p)), c.name)
		assert.Equal(t, 2, f.NumRecords(), c.name)
		v, err := Read[int32](f, 1)
		require.NoError(t, err, c.name)
		assert.Equal(t, []int32{5}, v)
	}
	_, err = f.AppendArray(layout.I8, []int64{-1})
	assert.ErrorIs(t, err, ErrDims)
	assert.Equal(t, orig, string(readFile(t, p)))
}

// Appended values stay separate values: after a text value that ends the
// file, and after a comment with no newline, a newline comes first.
func TestAppendSeparator(t *testing.T) {
	for _, c := range []struct{ orig, want string }{
		{"1", "1i32\n2i32\n"},
		{"[1,2]", "[1i32, 2i32]\n2i32\n"},
		{"1 -- one", "1i32\n2i32\n"},
		{"-- only a comment", "2i32\n"},
		{"1\n", "1i32\n2i32\n"},
		{"", "2i32\n"},
		{"b\x02\x00  i8\x01", "1i8\n2i32\n"},
	} {
		p := filepath.Join(t.TempDir(), "s.in")
		require.NoError(t, os.WriteFile(p, []byte(c.orig), 0o644))
		f, err := OpenFile(p, mmapfile.ReadWrite, nil)
		require.NoError(t, err, "%q", c.orig)
		require.NoError(t, f.AppendFunc(func(e *Encoder) error { return e.EncodeText(mustValue(t, nil, []int32{2})) }))
		require.NoError(t, f.Close())
		b := readFile(t, p)
		assert.Equal(t, c.want, textOf(t, p), "%q", c.orig)
		sep := strings.HasPrefix(string(b[len(c.orig):]), "\n")
		needs := c.orig == "1" || c.orig == "[1,2]" || c.orig == "1 -- one" || c.orig == "-- only a comment"
		assert.Equal(t, needs, sep, "%q: a newline only where one is needed", c.orig)
	}
}

// A writing open refuses a value torn by a crash, and cuts it when asked
// to repair; reading opens report it.
func TestTornTailRepaired(t *testing.T) {
	good := "[1, 2]\n" + "b\x02\x01 i32\x02\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x04\x00\x00\x00"
	for _, torn := range []string{"b", "b\x02\x01 f64\x09\x00", "b\x02\x01 f64\x09\x00\x00\x00\x00\x00\x00\x00\x01\x02", "  [1, 2", "\n\"abc"} {
		p := filepath.Join(t.TempDir(), "torn.in")
		require.NoError(t, os.WriteFile(p, []byte(good+torn), 0o644))
		_, err := Open(p, nil)
		require.ErrorIs(t, err, mmapfile.ErrTruncated, "%q", torn)
		s, err := Open(p, &Options{Salvage: true})
		require.NoError(t, err)
		assert.ErrorIs(t, s.Damage(), mmapfile.ErrTruncated)
		assert.Equal(t, 2, s.NumRecords())
		require.NoError(t, s.Close())
		assert.Equal(t, good+torn, string(readFile(t, p)), "reading opens change nothing")

		_, err = OpenFile(p, mmapfile.ReadWrite, nil)
		require.ErrorIs(t, err, mmapfile.ErrNeedsRepair, "%q", torn)
		require.ErrorIs(t, err, mmapfile.ErrTruncated, "%q", torn)
		assert.Contains(t, err.Error(), fmt.Sprintf("a repair (Options.Repair) would cut its last %d bytes, from offset %d, and keep values 0 to 1", len(torn), len(good)))
		assert.Equal(t, good+torn, string(readFile(t, p)), "%q: a refused open changes nothing", torn)

		f, err := OpenFile(p, mmapfile.ReadWrite, &Options{Repair: true})
		require.NoError(t, err, "%q", torn)
		var fe *FormatError
		require.ErrorAs(t, f.Damage(), &fe)
		assert.ErrorIs(t, fe, mmapfile.ErrTruncated)
		assert.Equal(t, p, fe.File)
		assert.Equal(t, int64(len(good)), fe.Offset, "%q", torn)
		assert.Equal(t, good, string(readFile(t, p)), "%q: the torn value is cut", torn)
		require.NoError(t, f.Append(mustValue(t, nil, []int8{9})))
		require.NoError(t, f.Close())
		assert.Equal(t, "[1i32, 2i32]\n[3i32, 4i32]\n9i8\n", textOf(t, p))
	}
	// Damage that is not a torn tail is refused in the same way. A writing
	// open that salvages cuts nothing and refuses appends; one that
	// repairs cuts it.
	p := filepath.Join(t.TempDir(), "bad.in")
	require.NoError(t, os.WriteFile(p, []byte(good+" [1, x] 3"), 0o644))
	_, err := OpenFile(p, mmapfile.ReadWrite, nil)
	assert.ErrorIs(t, err, layout.ErrSyntax)
	assert.ErrorIs(t, err, mmapfile.ErrNeedsRepair)
	assert.Equal(t, good+" [1, x] 3", string(readFile(t, p)))
	f, err := OpenFile(p, mmapfile.ReadWrite, &Options{Salvage: true})
	require.NoError(t, err)
	assert.ErrorIs(t, f.Damage(), layout.ErrSyntax)
	assert.ErrorIs(t, f.Append(mustValue(t, nil, []int8{9})), mmapfile.ErrNotWritable)
	require.NoError(t, f.Close())
	assert.Equal(t, good+" [1, x] 3", string(readFile(t, p)))
	f, err = OpenFile(p, mmapfile.ReadWrite, &Options{Repair: true})
	require.NoError(t, err)
	assert.ErrorIs(t, f.Damage(), layout.ErrSyntax)
	require.NoError(t, f.Append(mustValue(t, nil, []int8{9})))
	require.NoError(t, f.Close())
	assert.Equal(t, "[1i32, 2i32]\n[3i32, 4i32]\n9i8\n", textOf(t, p))
}

// Create makes a zero-filled, aligned value to fill through a view, as
// numpy's open_memmap(mode="w+") does.
func TestCreateAndFillThroughView(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.data")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
	f, err := Create(p, layout.F32, []int64{3, 4}, nil)
	require.NoError(t, err)
	e := f.Entries()[0]
	assert.Equal(t, int64(24), e.Data, "a [3][4]f32 header is 23 bytes: one space aligns the payload")
	xs, err := View[float32](f, 0)
	require.NoError(t, err)
	require.Len(t, xs, 12)
	for i := range xs {
		assert.Zero(t, xs[i])
		xs[i] = float32(i) / 2
	}
	require.NoError(t, Set(f, 0, []int64{2, 3}, float32(-1)))
	assert.Equal(t, float32(-1), xs[11], "Set and the view share the mapping")
	require.NoError(t, f.Close())
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a replaced file keeps its mode")
	assert.Equal(t, "[[0.0f32, 0.5f32, 1.0f32, 1.5f32],\n[2.0f32, 2.5f32, 3.0f32, 3.5f32],\n[4.0f32, 4.5f32, 5.0f32, -1.0f32]]\n", textOf(t, p))
	// Readers other than mmapkit read it: the padding is a leading space.
	assert.Equal(t, " b\x02\x02 f32", string(readFile(t, p)[:8]))

	// Another value, appended and filled the same way; 64-byte alignment.
	f, err = OpenFile(p, mmapfile.ReadWrite, &Options{Align: Align64})
	require.NoError(t, err)
	i, err := f.AppendArray(layout.U16, []int64{5})
	require.NoError(t, err)
	assert.Equal(t, 1, i)
	assert.Zero(t, f.Entries()[1].Data%64)
	us, err := View[uint16](f, i)
	require.NoError(t, err)
	copy(us, []uint16{1, 2, 3, 4, 5})
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	got, err := Read[uint16](mustOpenFile(t, p), 1)
	require.NoError(t, err)
	assert.Equal(t, []uint16{1, 2, 3, 4, 5}, got)

	_, err = Create(filepath.Join(dir, "bad.data"), layout.C64, []int64{2}, nil)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.NoFileExists(t, filepath.Join(dir, "bad.data"))
	_, err = Create(filepath.Join(dir, "bad.data"), layout.I64, []int64{1 << 62, 4}, nil)
	assert.ErrorIs(t, err, ErrDims)
	assert.NoFileExists(t, filepath.Join(dir, "bad.data"))
}

func mustOpenFile(t *testing.T, p string) *File {
	f, err := Open(p, nil)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

// Set is typed: the Go type must be the value's, the index in range.
func TestSetTyped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.data")
	require.NoError(t, WriteFile(p, nil, func(e *Encoder) error {
		if err := e.EncodeBinary(mustValue(t, []int64{2, 2}, []int64{1, 2, 3, 4})); err != nil {
			return err
		}
		return e.EncodeBinary(mustValue(t, []int64{3}, []bool{true, false, true}))
	}))
	f, err := OpenFile(p, mmapfile.ReadWrite, nil)
	require.NoError(t, err)
	require.NoError(t, Set(f, 0, []int64{1, 0}, int64(-9)))
	require.NoError(t, Set(f, 1, []int64{0}, false))
	require.NoError(t, Set(f, 1, []int64{1}, uint8(1)))
	for _, err := range []error{
		Set(f, 0, []int64{0, 0}, int32(1)),
		Set(f, 1, []int64{0}, int8(1)),
	} {
		assert.ErrorIs(t, err, mmapfile.ErrTypeMismatch)
		assert.ErrorContains(t, err, p)
	}
	assert.ErrorIs(t, Set(f, 1, []int64{2}, uint8(2)), mmapfile.ErrInvalidBool)
	assert.ErrorIs(t, Set(f, 0, []int64{2, 0}, int64(1)), mmapfile.ErrOutOfRange)
	assert.ErrorIs(t, Set(f, 0, []int64{0}, int64(1)), mmapfile.ErrOutOfRange)
	assert.ErrorIs(t, Set(f, 2, nil, int64(1)), mmapfile.ErrOutOfRange)
	require.NoError(t, f.Close())
	assert.Equal(t, "[[1i64, 2i64],\n[-9i64, 4i64]]\n[false, true, true]\n", textOf(t, p))
}
