package futhark

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hostile input: the sentinel, the exact offset (and line and column for
// text) and the file's name, through Open and through NewReader of the
// open *os.File.
func TestHostileCases(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		in        string
		err       error
		off       int64
		line, col int
	}{
		{"b\x03\x00 i32", ErrVersion, 1, 0, 0},
		{"b\x02\x00 I32\x01\x00\x00\x00", ErrUnknownType, 3, 0, 0},
		{"b\x02\x80 i32", ErrRank, 2, 0, 0},
		{"b\x02\x01 i32\xff\xff\xff\xff\xff\xff\xff\xff", ErrDims, 7, 0, 0},
		{"b\x02\x02 i32\x00\x00\x00\x00\x00\x00\x00\x40\x04\x00\x00\x00\x00\x00\x00\x00", ErrDims, 7, 0, 0},
		{"b\x02\x01 i32\x00\x00\x00\x00\x00\x00\x00\x10", mmapfile.ErrTruncated, 15, 0, 0},
		{"b\x02", mmapfile.ErrTruncated, 2, 0, 0},
		{"b\x02\x01 i32\x01\x00", mmapfile.ErrTruncated, 9, 0, 0},
		{"7i8 b\x02\x01 i32\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00", mmapfile.ErrTruncated, 19, 0, 0},
		{"[1, 2", mmapfile.ErrTruncated, 5, 1, 6},
		{"[[1,2],[3]]", ErrIrregular, 7, 1, 8},
		{"1 x", layout.ErrSyntax, 2, 1, 3},
		{strings.Repeat("[", 128) + "1" + strings.Repeat("]", 128), ErrRank, 127, 1, 128},
		{"empty([3]i32)", layout.ErrSyntax, 0, 1, 1},
		{"b\x02\x00 i32\x01\x00\x00\x00\x00", layout.ErrSyntax, 11, 1, 12},
		{"[1, 2.0]", layout.ErrSyntax, 5, 1, 6},
		{"\"a\x85\"", layout.ErrSyntax, 2, 1, 3},
		{"1\n  [1,\n 2 x]", layout.ErrSyntax, 11, 3, 4},
		{"b\x02\x01  u8\x03\x00\x00\x00\x00\x00\x00\x00\n\n\n" + "\n  2 x", layout.ErrSyntax, 23, 5, 5},
	} {
		p := filepath.Join(dir, "h.in")
		require.NoError(t, os.WriteFile(p, []byte(c.in), 0o644))
		osf, err := os.Open(p)
		require.NoError(t, err)
		fi, err := osf.Stat()
		require.NoError(t, err)
		_, err1 := Open(p, nil)
		_, err2 := NewReader(osf, fi.Size(), nil)
		osf.Close()
		for k, err := range []error{err1, err2} {
			require.ErrorIs(t, err, c.err, "%q (%d)", c.in, k)
			var fe *FormatError
			require.ErrorAs(t, err, &fe, "%q", c.in)
			assert.Equal(t, p, fe.File, "%q (%d)", c.in, k)
			assert.Equal(t, c.off, fe.Offset, "%q (%d)", c.in, k)
			assert.Equal(t, c.line, fe.Line, "%q (%d)", c.in, k)
			assert.Equal(t, c.col, fe.Col, "%q (%d)", c.in, k)
			assert.True(t, strings.HasPrefix(err.Error(), "futhark: "+p+": offset "), err.Error())
		}
	}
}

// The shared conventions: typed calls refuse other Go types, copies fill
// their destination or fail, every error names the file and wraps the
// shared sentinels.
func TestConventions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.in")
	require.NoError(t, WriteFile(p, nil, func(e *Encoder) error {
		if err := e.EncodeBinary(mustValue(t, []int64{3}, []float32{1, 2, 3})); err != nil {
			return err
		}
		return e.EncodeText(mustValue(t, []int64{2}, []int64{4, 5}))
	}))
	f, err := Open(p, nil)
	require.NoError(t, err)
	check := func(err, sentinel error, what string) {
		t.Helper()
		require.ErrorIs(t, err, sentinel, what)
		var fe *FormatError
		require.ErrorAs(t, err, &fe, what)
		assert.Equal(t, p, fe.File, what)
		assert.Contains(t, err.Error(), p, what)
	}
	_, err = View[float64](f, 0)
	check(err, mmapfile.ErrTypeMismatch, "View of f32 as float64")
	_, err = Read[int32](f, 1)
	check(err, mmapfile.ErrTypeMismatch, "Read of i64 as int32")
	check(ReadAt(f, 0, 0, make([]layout.Float16, 1)), mmapfile.ErrTypeMismatch, "ReadAt of f32 as Float16")
	_, err = View[float32](f, 0)
	check(err, mmapfile.ErrMisaligned, "View at offset 15")
	assert.ErrorContains(t, err, "offset 15")
	assert.ErrorContains(t, err, "Read", "the error names the copying call")
	_, err = View[int64](f, 1)
	check(err, ErrTextValue, "View of text")
	check(ReadAt(f, 0, 1, make([]float32, 3)), mmapfile.ErrOutOfRange, "ReadAt past the end")
	check(ReadAt(f, 0, -1, make([]float32, 1)), mmapfile.ErrOutOfRange, "ReadAt before the start")
	_, err = f.Value(2)
	check(err, mmapfile.ErrOutOfRange, "no value 2")
	check(f.SetElement(0, 0, []byte{0, 0, 0, 0}), mmapfile.ErrNotWritable, "SetElement of a read-only file")
	xs := make([]float32, 2)
	require.NoError(t, ReadAt(f, 0, 1, xs))
	assert.Equal(t, []float32{2, 3}, xs)
	require.NoError(t, f.Close())
	check(f.Close(), mmapfile.ErrClosed, "Close twice")
	_, err = Read[float32](f, 0)
	check(err, mmapfile.ErrClosed, "Read after Close")
	check(f.Sync(), mmapfile.ErrClosed, "Sync after Close")

	_, err = Open(filepath.Join(t.TempDir(), "missing.in"), nil)
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = NewReader(strings.NewReader("1"), -1, nil)
	assert.ErrorIs(t, err, mmapfile.ErrOutOfRange)
	_, err = NewValue([]int64{1}, []layout.Int128{{}})
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

// NewReader over a reader that cannot hold the whole input in one read
// indexes by seeking over binary payloads: it reads headers and text, not
// payloads.
func TestNewReaderSeeksOverPayloads(t *testing.T) {
	old := readWhole
	defer func() { readWhole = old }()
	readWhole = 1
	const n = 1 << 20
	var head, tail strings.Builder
	head.WriteString("-- a comment\n[1, 2]\n")
	e := NewEncoder(&tail)
	require.NoError(t, e.BeginBinary(layout.F64, []int64{n}))
	require.NoError(t, e.Flush())
	in := []byte(head.String() + tail.String())
	in = append(in, make([]byte, 8*n)...)
	in[len(in)-1] = 0x40 // the last element is 2.0
	in = append(in, "\n\"ab\" 3u8"...)
	r := &countingReaderAt{b: in}
	f, err := NewReader(r, int64(len(in)), nil)
	require.NoError(t, err)
	assert.Less(t, r.n, int64(1<<20), "the 8 MiB payload is not read while indexing")
	require.Equal(t, 4, f.NumRecords())
	last := make([]float64, 1)
	require.NoError(t, ReadAt(f, 1, n-1, last))
	assert.Equal(t, []float64{2}, last)
	s, err := Read[uint8](f, 2)
	require.NoError(t, err)
	assert.Equal(t, "ab", string(s))
	txt, _, _, err := encodeFile(t, f)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(txt), "2.0f64]\n[97u8, 98u8]\n3u8\n"))
	es := f.Entries()
	assert.Equal(t, []int{2, 1}, []int{es[0].Line, es[0].Col})
	// Errors after a payload count its lines, as Open's do.
	bad := append(append([]byte(nil), in...), " x"...)
	_, err = NewReader(&countingReaderAt{b: bad}, int64(len(bad)), nil)
	_, want := memFile(bad, nil)
	var fe, we *FormatError
	require.ErrorAs(t, err, &fe)
	require.ErrorAs(t, want, &we)
	assert.Equal(t, *we, *fe)
}

type countingReaderAt struct {
	b []byte
	n int64
}

func (r *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.b)) {
		return 0, io.EOF
	}
	k := copy(p, r.b[off:])
	r.n += int64(k)
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}
