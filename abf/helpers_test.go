package abf

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/require"
)

// builder assembles file bytes field by field, as the spec's layouts do.
type builder struct {
	b     []byte
	order binary.AppendByteOrder
	mult  int64 // string prefix multiplier: 4 for C, 1 for A/B
}

func newC() *builder { return &builder{order: binary.LittleEndian, mult: 4} }
func newAB() *builder {
	return &builder{order: binary.LittleEndian, mult: 1}
}

func (w *builder) u8(v byte) *builder { w.b = append(w.b, v); return w }
func (w *builder) i64(v int64) *builder {
	w.b = w.order.AppendUint64(w.b, uint64(v))
	return w
}
func (w *builder) str(s string) *builder {
	return w.i64(w.mult * int64(utf8.RuneCountInString(s))).raw([]byte(s))
}
func (w *builder) raw(p []byte) *builder { w.b = append(w.b, p...); return w }
func (w *builder) padTo(a int) *builder {
	for len(w.b)%a != 0 {
		w.b = append(w.b, 0)
	}
	return w
}
func (w *builder) f64s(v ...float64) *builder {
	for _, x := range v {
		w.b = w.order.AppendUint64(w.b, math.Float64bits(x))
	}
	return w
}

// headerA appends Format A's 22-byte header.
func (w *builder) headerA(count int64) *builder {
	w.i64(6)
	if w.order == binary.BigEndian {
		w.raw([]byte("BIG   "))
	} else {
		w.raw([]byte("LITTLE"))
	}
	return w.i64(count)
}

func unhex(s string) []byte {
	var out []byte
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "|"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		for _, f := range fields[1:] {
			b, err := hex.DecodeString(f)
			if err != nil {
				panic(err)
			}
			out = append(out, b...)
		}
	}
	return out
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// tempFile writes data to a new file and returns its path.
func tempFile(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.abf")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

// build writes a file in mode "w" with the given format and returns it.
func build(t testing.TB, format Format, fill func(f *File)) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.abf")
	f, err := openMode(p, "w", &Options{Format: format})
	require.NoError(t, err)
	fill(f)
	require.NoError(t, f.Close())
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func openBytes(t testing.TB, data []byte, mode string) (*File, string) {
	t.Helper()
	p := tempFile(t, data)
	f, err := openMode(p, mode, nil)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f, p
}

// requireFormatErr asserts a *FormatError at the given offset.
func requireFormatErr(t testing.TB, err error, off int64, sentinel error) *FormatError {
	t.Helper()
	require.Error(t, err)
	var fe *FormatError
	require.True(t, errors.As(err, &fe), "not a *FormatError: %v", err)
	require.Equal(t, off, fe.Offset, "offset of %v", err)
	if sentinel != nil {
		require.ErrorIs(t, err, sentinel)
	}
	return fe
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// openMode opens path in one of Julia's modes.
func openMode(path, mode string, o *Options) (*File, error) {
	var opt Options
	if o != nil {
		opt = *o
	}
	opt.Mode = mode
	m := mmapfile.ReadWrite
	if mode == "r" {
		m = mmapfile.ReadOnly
	}
	return OpenFile(path, m, &opt)
}
