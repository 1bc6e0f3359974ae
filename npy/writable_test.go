package npy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// TestCopiesOfBoolBytesNumPyReadsAsTrue: a bool array holding bytes other
// than 0 and 1 (NumPy reads them as true) is not copied as it is into a
// file that mmapkit's readers would then refuse: the conversion fails
// naming the source, the element and the byte, or with Lenient writes 1.
func TestCopiesOfBoolBytesNumPyReadsAsTrue(t *testing.T) {
	dir := t.TempDir()
	bools := npyBytes(1, header("'|b1'", "(4,)"), []byte{0, 1, 2, 0xff})
	sources := map[string][]byte{
		"b.npy":          bools,
		"stored.npz":     zipBytes([]rawMember{stored("x.npy", bools)}, nil),
		"deflated.npz":   zipBytes([]rawMember{deflated("x.npy", bools)}, nil),
		"clean.npy":      npyBytes(1, header("'|b1'", "(4,)"), []byte{0, 1, 1, 0}),
		"clean_ff.npz":   zipBytes([]rawMember{stored("x.npy", npyBytes(1, header("'|b1'", "(2,)"), []byte{1, 0}))}, nil),
		"last_byte.npy":  npyBytes(1, header("'|b1'", "(3,)"), []byte{0, 1, 0x80}),
		"first_byte.npz": zipBytes([]rawMember{stored("x.npy", npyBytes(1, header("'|b1'", "(1,)"), []byte{0xff}))}, nil),
	}
	for name, b := range sources {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	cases := []struct {
		from, to string
		lenient  bool
		wantErr  string // "" when written
		want     []bool
	}{
		{"b.npy", "o.npy", false, `"0", element 2: byte 0x02 in a bool array`, nil},
		{"b.npy", "o.npz", false, `"0", element 2: byte 0x02 in a bool array`, nil},
		{"stored.npz", "o.npz", false, `"x", element 2: byte 0x02 in a bool array`, nil},
		{"deflated.npz", "o.npz", false, `"x", element 2: byte 0x02 in a bool array`, nil},
		{"last_byte.npy", "o.npy", false, `"0", element 2: byte 0x80 in a bool array`, nil},
		{"first_byte.npz", "o.npz", false, `"x", element 0: byte 0xff in a bool array`, nil},
		{"b.npy", "o.npy", true, "", []bool{false, true, true, true}},
		{"b.npy", "o.npz", true, "", []bool{false, true, true, true}},
		{"stored.npz", "o.npz", true, "", []bool{false, true, true, true}},
		{"deflated.npz", "o.npz", true, "", []bool{false, true, true, true}},
		{"clean.npy", "o.npy", false, "", []bool{false, true, true, false}},
		{"clean_ff.npz", "o.npz", false, "", []bool{true, false}},
	}
	for _, c := range cases {
		name := c.from + " to " + c.to
		if c.lenient {
			name += ", lenient"
		}
		t.Run(name, func(t *testing.T) {
			from, to := filepath.Join(dir, c.from), filepath.Join(t.TempDir(), c.to)
			err := format.Convert(from, to, &format.Options{Lenient: c.lenient}, nil)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, mmapfile.ErrInvalidBool)
				assert.Contains(t, err.Error(), c.wantErr)
				assert.Contains(t, err.Error(), from)
				assert.NoFileExists(t, to)
				return
			}
			require.NoError(t, err)
			f, err := Open(to, nil)
			require.NoError(t, err)
			defer f.Close()
			key := "0"
			if strings.HasSuffix(c.to, ".npz") {
				key = f.Arrays()[0].Name
			}
			got, err := Read[bool](f, key)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			if py := oracle.Find("numpy"); py != "" {
				out, err := oracle.Output(py, `
import sys, numpy as np
a = np.load(sys.argv[1])
if hasattr(a, "files"):
    a = a[a.files[0]]
print(a.view(np.uint8).tolist())
`, to)
				require.NoError(t, err)
				want := make([]string, len(c.want))
				for i, v := range c.want {
					want[i] = map[bool]string{false: "0", true: "1"}[v]
				}
				assert.Equal(t, "["+strings.Join(want, ", ")+"]", strings.TrimSpace(out), "the bytes NumPy finds")
			}
		})
	}
}

// TestWritersKeepHeadersNumPyLoads: np.load refuses headers longer than
// 10000 characters by default; every writer refuses to write one, naming
// why, unless LargeHeaders asks for it. The longest header that np.save's
// padding allows under the limit is written and loads.
func TestWritersKeepHeadersNumPyLoads(t *testing.T) {
	withFields := func(textLen int) Header {
		for k := 1; k < 2000; k++ {
			d := DType{ItemSize: k}
			for i := range k {
				d.Fields = append(d.Fields, Field{Name: fmt.Sprintf("f%04d", i), Offset: i, DType: DType{Kind: 'u', ItemSize: 1}})
			}
			h := Header{DType: d, Shape: []int64{2}}
			if b, err := h.Encode(); err == nil && len(b)-10 == textLen {
				return h
			}
		}
		panic(fmt.Sprintf("no header of %d characters", textLen))
	}
	fits, long := withFields(9974), withFields(10038) // 9974 + 64: the next length np.save's padding gives
	dir := t.TempDir()
	writers := map[string]func(path string, h Header, o *Options) error{
		"Create": func(path string, h Header, o *Options) error {
			f, err := Create(path+".npy", h, o)
			if err != nil {
				return err
			}
			return f.Close()
		},
		"CreateZip": func(path string, h Header, o *Options) error {
			z, err := CreateZip(path+".npz", o)
			require.NoError(t, err)
			size, _ := h.DataSize()
			if err := z.Add("x", h, bytes.NewReader(make([]byte, size))); err != nil {
				z.Abort()
				return err
			}
			return z.Close()
		},
		"convert to npy": func(path string, h Header, o *Options) error {
			return convertFrom(t, dir, h, path+".npy", o)
		},
		"convert to npz": func(path string, h Header, o *Options) error {
			return convertFrom(t, dir, h, path+".npz", o)
		},
	}
	for name, write := range writers {
		for _, c := range []struct {
			what  string
			h     Header
			large bool
			ok    bool
		}{
			{"9974 characters", fits, false, true},
			{"10038 characters", long, false, false},
			{"10038 characters, LargeHeaders", long, true, true},
		} {
			t.Run(name+", "+c.what, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "o")
				err := write(path, c.h, &Options{LargeHeaders: c.large})
				if !c.ok {
					require.Error(t, err)
					assert.Contains(t, err.Error(), "a header of 10038 characters, which np.load refuses by default")
					assert.NoFileExists(t, path+".npy")
					assert.NoFileExists(t, path+".npz")
					return
				}
				require.NoError(t, err)
				py := oracle.Find("numpy")
				if py == "" {
					return
				}
				out, err := oracle.Output(py, `
import sys, glob, numpy as np
p = glob.glob(sys.argv[1] + ".np?")[0]
try:
    a = np.load(p)
    a = a[a.files[0]] if hasattr(a, "files") else a
    print("default", len(a.dtype.names))
except ValueError as e:
    a = np.load(p, allow_pickle=True)
    a = a[a.files[0]] if hasattr(a, "files") else a
    print("allow_pickle", len(a.dtype.names))
`, path)
				require.NoError(t, err)
				want := "default"
				if c.large {
					want = "allow_pickle"
				}
				assert.Equal(t, fmt.Sprintf("%s %d", want, len(c.h.DType.Fields)), strings.TrimSpace(out))
			})
		}
	}
}

// convertFrom writes a .npy with header h (its headers not bounded) and
// converts it to target with o's LargeHeaders.
func convertFrom(t *testing.T, dir string, h Header, target string, o *Options) error {
	src := filepath.Join(dir, fmt.Sprintf("src%d.npy", len(h.DType.Fields)))
	if _, err := os.Stat(src); err != nil {
		f, err := Create(src, h, &Options{LargeHeaders: true})
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	fo := &format.Options{}
	if o.LargeHeaders {
		fo.Params = map[string]string{"npy-large-headers": "true"}
	}
	return format.Convert(src, target, nil, fo)
}
