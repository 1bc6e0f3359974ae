package futhark

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reencode checks that whatever parsed re-writes and re-reads to the same
// canonical text and binary.
func reencode(t testing.TB, in []byte) {
	t.Helper()
	txt, bin, _, err := convert(t, in, nil)
	// NewReader, a Decoder over an io.ReaderAt that seeks over payloads,
	// agrees with the index of a mapped file, errors included.
	g, gerr := newReader(in, nil)
	if err == nil && gerr == nil {
		gtxt, gbin, _, gerr := encodeFile(t, g)
		if gerr != nil || !bytes.Equal(txt, gtxt) || !bytes.Equal(bin, gbin) {
			t.Fatalf("%q: NewReader reads differently: %v", in, gerr)
		}
	} else {
		var fe, ge *FormatError
		if !errors.As(err, &fe) || !errors.As(gerr, &ge) || *fe != *ge {
			t.Fatalf("%q: mapped index and NewReader disagree: %v, %v", in, err, gerr)
		}
	}
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("%q: error is not a *FormatError: %v", in, err)
		}
		if fe.Offset < 0 || fe.Offset > int64(len(in)) {
			t.Fatalf("%q: error offset %d outside the input", in, fe.Offset)
		}
		return
	}
	// Canonical text re-reads to itself, except that futhark-data's reader
	// drops the sign of -0.0f16 (printed for binary input): one more pass
	// must then be stable.
	txt2, _, _, err := convert(t, txt, nil)
	if err != nil {
		t.Fatalf("canonical text %q does not re-read: %v", txt, err)
	}
	if !bytes.Equal(txt, txt2) && !bytes.Equal(bytes.ReplaceAll(txt, []byte("-0.0f16"), []byte("0.0f16")), txt2) {
		t.Fatalf("text round trip: %q then %q", txt, txt2)
	}
	txt3, bin3, _, err := convert(t, bin, nil)
	if err != nil || !bytes.Equal(bin, bin3) || !bytes.Equal(txt, txt3) {
		t.Fatalf("binary round trip of %q failed: %v", in, err)
	}
}

func TestTruncationEveryOffset(t *testing.T) {
	dir := testdata(t)
	for _, name := range []string{"all-types.bin", "all-types.txt", "futhark/tests/scatter/data/tiny.out.bin"} {
		full := readFile(t, filepath.Join(dir, "generated", name))
		f, err := newReader(full, nil)
		require.NoError(t, err)
		// inside returns the binary value a cut at k tears, if any.
		inside := func(k int) (Entry, bool) {
			for _, e := range f.Entries() {
				if e.Binary && int64(k) > e.Start && int64(k) < e.End {
					return e, true
				}
			}
			return Entry{}, false
		}
		for k := 0; k <= len(full); k++ {
			cut := full[:k]
			_, err := newReader(cut, nil)
			if e, ok := inside(k); ok {
				// A header cut short is an error where the input ends;
				// a payload cut short, at the payload.
				want := min(int64(k), e.Data)
				var fe *FormatError
				require.ErrorAs(t, err, &fe, "%s cut at %d inside a binary value", name, k)
				require.ErrorIs(t, err, mmapfile.ErrTruncated, "%s cut at %d", name, k)
				require.Equal(t, want, fe.Offset, "%s cut at %d: %v", name, k, err)
				_, _, derr := decodeAll(t, bytes.NewReader(cut))
				require.Error(t, derr, "decoder, cut at %d", k)
			}
			reencode(t, cut)
		}
	}
}

func TestBitFlips(t *testing.T) {
	dir := testdata(t)
	for _, name := range []string{"all-types.bin", "all-types.txt"} {
		full := readFile(t, filepath.Join(dir, "generated", name))
		step := 1
		if raceEnabled || testing.Short() {
			step = 7
		}
		b := append([]byte(nil), full...)
		for i := 0; i < len(b); i += step {
			for bit := 0; bit < 8; bit++ {
				b[i] ^= 1 << bit
				reencode(t, b)
				b[i] ^= 1 << bit
			}
		}
	}
}

var hostileInputs = [][]byte{
	[]byte("b\x02\x01 i32\x00\x00\x00\x00\x00\x00\x00\x10"),                                 // 2^60 elements, 19 bytes
	[]byte("b\x02\x02 f64\xff\xff\xff\xff\xff\xff\xff\x0f\xff\xff\xff\xff\xff\xff\xff\x0f"), // product overflows
	[]byte("b\x02\x02 i32\x00\x00\x00\x00\x00\x00\x00\x40\x04\x00\x00\x00\x00\x00\x00\x00"), // [2^62][4]: ×4 overflows
	[]byte("b\x02\x7f i32\x01"),                                                                    // rank 127, dims missing
	[]byte("b\x02\x01 i64\xff\xff\xff\xff\xff\xff\xff\x7f"),                                        // max dim
	[]byte("empty([9223372036854775807][0]i32) [1,2,"),                                             // text after an empty
	append([]byte("["), bytes.Repeat([]byte("[1,"), 1000)...),                                      // deep and cut
	append(append([]byte("[\""), bytes.Repeat([]byte("\\x41"), 1000)...), []byte("\", \"A\"]")...), // irregular strings
}

func TestHostileAllocations(t *testing.T) {
	dir := t.TempDir()
	for i, in := range hostileInputs {
		p := filepath.Join(dir, "h.data")
		require.NoError(t, os.WriteFile(p, in, 0o644))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err1 := newReader(in, nil)
		f, err2 := Open(p, nil)
		d := NewDecoder(bytes.NewReader(in))
		var err3 error
		for err3 == nil {
			_, err3 = d.Value()
		}
		runtime.ReadMemStats(&after)
		if f != nil {
			f.Close()
		}
		assert.Error(t, err1, "input %d", i)
		assert.Error(t, err2, "input %d", i)
		assert.Error(t, err3, "input %d", i)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "input %d allocates < 1 MiB", i)
	}
}
