package futhark

import (
	"bytes"
	"github.com/mmapkit/mmapkit/internal/shareddata"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// testdataDir is where fuzz seeds are taken from when it exists.
const testdataDir = "../../shared/testdata/futhark"

func testdata(t testing.TB) string {
	t.Helper()
	return shareddata.Path(t, "futhark")
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// memFile indexes in as Open indexes a mapped file, with no file.
func memFile(in []byte, o *Options) (*File, error) {
	f := &File{opts: o.get(), src: bytes.NewReader(in), size: int64(len(in)), cacheIdx: -1}
	if err := f.idx.scanBytes(in, 0, f.opts); err != nil {
		if f.opts.Salvage {
			f.damage = err
			return f, nil
		}
		return nil, err
	}
	return f, nil
}

// newReader is NewReader of bytes in memory.
func newReader(in []byte, o *Options) (*File, error) {
	return NewReader(bytes.NewReader(in), int64(len(in)), o)
}

// convert reads all values of in as Open reads them and writes them as
// text, binary and types.
func convert(t testing.TB, in []byte, o *Options) (txt, bin, types []byte, err error) {
	t.Helper()
	f, err := memFile(in, o)
	if err != nil {
		return nil, nil, nil, err
	}
	return encodeFile(t, f)
}

// encodeFile writes all values of f as text, binary and types.
func encodeFile(t testing.TB, f *File) (txt, bin, types []byte, err error) {
	var tb, bb, yb bytes.Buffer
	te, be, ye := NewEncoder(&tb), NewEncoder(&bb), NewEncoder(&yb)
	for i, e := range f.Entries() {
		v, err := f.Value(i)
		if err != nil {
			return nil, nil, nil, err
		}
		require.NoError(t, te.EncodeText(v))
		require.NoError(t, be.EncodeBinary(v))
		require.NoError(t, ye.EncodeType(e.Type, e.Shape))
	}
	return tb.Bytes(), bb.Bytes(), yb.Bytes(), nil
}

func realFiles(t testing.TB) []string {
	dir := testdata(t)
	var out []string
	filepath.Walk(filepath.Join(dir, "real"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}
