package futhark

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeAll converts a stream with the Decoder, reading payloads through
// Read in small chunks.
func decodeAll(t testing.TB, r io.Reader) (txt, bin []byte, err error) {
	d := NewDecoder(r)
	var tb, bb bytes.Buffer
	te, be := NewEncoder(&tb), NewEncoder(&bb)
	for {
		h, err := d.Next()
		if err == io.EOF {
			return tb.Bytes(), bb.Bytes(), nil
		}
		if err != nil {
			return nil, nil, err
		}
		require.NoError(t, be.BeginBinary(h.Type, h.Shape))
		require.NoError(t, te.BeginText(h.Type, h.Shape))
		size := h.Type.Size()
		chunk := make([]byte, 7*size)
		var pending []byte
		for {
			n, rerr := d.Read(chunk)
			pending = append(pending, chunk[:n]...)
			k := len(pending) / size * size
			if k > 0 {
				require.NoError(t, be.WriteElems(pending[:k]))
				require.NoError(t, te.WriteElems(pending[:k]))
				pending = append(pending[:0], pending[k:]...)
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				return nil, nil, rerr
			}
		}
	}
}

func TestDecoderMatchesReader(t *testing.T) {
	dir := testdata(t)
	var inputs [][]byte
	for _, p := range realFiles(t) {
		if !strings.HasSuffix(p, ".gz") {
			inputs = append(inputs, readFile(t, p))
		}
	}
	inputs = append(inputs, readFile(t, filepath.Join(dir, "generated", "all-types.input.txt")))
	lines := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dir, "generated", "reader-cases.jsonl")))), "\n")
	for _, line := range lines {
		var c readerCase
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		if c.Text == nil {
			continue
		}
		if c.In != nil {
			inputs = append(inputs, []byte(*c.In))
		} else {
			b, _ := hex.DecodeString(*c.InHex)
			inputs = append(inputs, b)
		}
	}
	for _, in := range inputs {
		wantT, wantB, _, err := convert(t, in, nil)
		require.NoError(t, err)
		for _, r := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in))} {
			gotT, gotB, err := decodeAll(t, r)
			require.NoError(t, err, "%q", in)
			assert.Equal(t, string(wantT), string(gotT))
			assert.Equal(t, wantB, gotB)
		}
	}
}

func TestDecoderValueAndErrors(t *testing.T) {
	in := []byte("1i32 [2, 3]\n-- c\nb\x02\x00 i32\x07\x00\x00\x00\n  [1,")
	d := NewDecoder(bytes.NewReader(in))
	v, err := d.Value()
	require.NoError(t, err)
	assert.Equal(t, "i32", v.String())
	v, err = d.Value()
	require.NoError(t, err)
	assert.Equal(t, []byte{2, 0, 0, 0, 3, 0, 0, 0}, v.Data)
	v, err = d.Value()
	require.NoError(t, err)
	assert.Equal(t, []byte{7, 0, 0, 0}, v.Data)
	_, err = d.Value()
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.True(t, errors.Is(err, mmapfile.ErrTruncated))
	assert.Equal(t, int64(len(in)), fe.Offset)
	assert.Equal(t, 4, fe.Line)
	assert.Equal(t, 6, fe.Col)

	// A huge declared payload fails at the real end of input without a
	// huge allocation.
	huge := []byte("b\x02\x01 f64\xff\xff\xff\xff\xff\xff\xff\x0f")
	d = NewDecoder(bytes.NewReader(huge))
	_, err = d.Value()
	require.ErrorIs(t, err, mmapfile.ErrTruncated)
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(len(huge)), fe.Offset)
}

// zeroReader yields n zero bytes.
type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), z.n)
	clear(p[:k])
	z.n -= k
	return int(k), nil
}

func TestDecoderLargeValueBoundedMemory(t *testing.T) {
	const n = 64 << 20 // 64 MiB of f32 zeros, passed through in chunks
	head := []byte("b\x02\x01 f32\x00\x00\x00\x01\x00\x00\x00\x00")
	r := io.MultiReader(bytes.NewReader(head), &zeroReader{n: n}, strings.NewReader("\n7i8"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := NewDecoder(r)
	h, err := d.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(n), h.PayloadSize())
	var enc bytes.Buffer
	e := NewEncoder(&countingWriter{})
	require.NoError(t, e.BeginBinary(h.Type, h.Shape))
	buf := make([]byte, 1<<20)
	total := 0
	for {
		k, err := d.Read(buf)
		total += k
		require.NoError(t, e.WriteElems(buf[:k]))
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	v, err := d.Value()
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	assert.Equal(t, n, total)
	assert.Equal(t, "i8", v.String())
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "a 64 MiB value streams in bounded memory")
	_ = enc
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func TestSniff(t *testing.T) {
	for in, want := range map[string]bool{
		"b\x02\x01 f32\x05": true, "b\x02\x01 x32": false, "b\x01": false, "-- c\n  [1, 2,": true, "1i32": true,
		"[[1,2],[3]]": false, "": false, " \n\t": false, "-- only": true, "  -- a\n-- b": true, "\x89PNG\r\n": false, "name,value\n1,2": false,
		"empty([0]i32)": true, "1,2\n3,4": false, "1 2": true, "[1] b\x02": true, "7\n": true,
	} {
		assert.Equal(t, want, Sniff([]byte(in)), "%q", in)
	}
}

func TestDecoderLineAfterBinary(t *testing.T) {
	in := "1\n" + "b\x02\x01  u8\x03\x00\x00\x00\x00\x00\x00\x00\n\n\n" + "\n  2 x"
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
		d := NewDecoder(r)
		var err error
		for err == nil {
			_, err = d.Value()
		}
		var fe *FormatError
		require.ErrorAs(t, err, &fe)
		f, ferr := newReader([]byte(in), nil)
		require.Nil(t, f)
		var fe2 *FormatError
		require.ErrorAs(t, ferr, &fe2)
		assert.Equal(t, *fe2, *fe, "decoder and index agree on the error location")
		assert.Equal(t, 6, fe.Line)
	}
}
