package npy

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mmapkit/mmapkit/internal/oracle"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// npyBytes builds a .npy file by hand: magic, version, the header text as
// given (plus a newline), then data.
func npyBytes(major byte, text string, data []byte) []byte {
	b := []byte(magic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(text)+1))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(text)+1))
	}
	b = append(append(b, text...), '\n')
	return append(b, data...)
}

// textAt is the file offset of the first occurrence of sub in the header
// text of a version-major file built by npyBytes.
func textAt(major byte, text, sub string) int64 {
	pre := int64(12)
	if major == 1 {
		pre = 10
	}
	i := strings.Index(text, sub)
	if i < 0 {
		panic("no " + sub + " in " + text)
	}
	return pre + int64(i)
}

func header(descr, shape string) string {
	return "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape + ", }"
}

// zipEntry describes one member of a hand-built archive.
type rawMember struct {
	name   string
	data   []byte // what is stored (compressed if method 8)
	usize  int64  // declared uncompressed size (-1: len(data))
	method uint16
	crc    uint32 // declared CRC (0: computed over data)
	local  int64  // -1: next in sequence
	lsize  int64  // local header's compressed size (-1: as central)
	csize  int64  // declared compressed size (-1: len(data))
}

// zipBytes builds an archive by hand; members may lie.
func zipBytes(members []rawMember, prefix []byte) []byte {
	le := binary.LittleEndian
	b := append([]byte{}, prefix...)
	var locals []int64
	for _, m := range members {
		if m.local >= 0 {
			locals = append(locals, m.local)
			continue
		}
		locals = append(locals, int64(len(b)))
		h := make([]byte, localLen)
		le.PutUint32(h, sigLocal)
		le.PutUint16(h[4:], 20)
		le.PutUint16(h[8:], m.method)
		le.PutUint32(h[14:], m.declCRC())
		cs := m.declCsize()
		if m.lsize >= 0 {
			cs = m.lsize
		}
		le.PutUint32(h[18:], uint32(cs))
		le.PutUint32(h[22:], uint32(m.declUsize()))
		le.PutUint16(h[26:], uint16(len(m.name)))
		b = append(append(append(b, h...), m.name...), m.data...)
	}
	cd := len(b)
	for i, m := range members {
		h := make([]byte, centralLen)
		le.PutUint32(h, sigCentral)
		le.PutUint16(h[4:], 20)
		le.PutUint16(h[6:], 20)
		le.PutUint16(h[10:], m.method)
		le.PutUint32(h[16:], m.declCRC())
		le.PutUint32(h[20:], uint32(m.declCsize()))
		le.PutUint32(h[24:], uint32(m.declUsize()))
		le.PutUint16(h[28:], uint16(len(m.name)))
		le.PutUint32(h[42:], uint32(locals[i]))
		b = append(append(b, h...), m.name...)
	}
	e := make([]byte, endLen)
	le.PutUint32(e, sigEnd)
	le.PutUint16(e[8:], uint16(len(members)))
	le.PutUint16(e[10:], uint16(len(members)))
	le.PutUint32(e[12:], uint32(len(b)-cd))
	le.PutUint32(e[16:], uint32(cd))
	return append(b, e...)
}

func (m rawMember) declUsize() int64 {
	if m.usize >= 0 {
		return m.usize
	}
	return int64(len(m.data))
}

func (m rawMember) declCRC() uint32 {
	if m.crc != 0 {
		return m.crc
	}
	if m.method == 8 {
		r := flate.NewReader(bytes.NewReader(m.data))
		var buf bytes.Buffer
		buf.ReadFrom(r)
		return crc32.ChecksumIEEE(buf.Bytes())
	}
	return crc32.ChecksumIEEE(m.data)
}

func stored(name string, data []byte) rawMember {
	return rawMember{name: name, data: data, usize: -1, local: -1, lsize: -1, csize: -1}
}

func deflated(name string, plain []byte) rawMember {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, 6)
	w.Write(plain)
	w.Close()
	return rawMember{name: name, data: buf.Bytes(), usize: int64(len(plain)), method: 8, local: -1, lsize: -1, csize: -1}
}

func (m rawMember) declCsize() int64 {
	if m.csize >= 0 {
		return m.csize
	}
	return int64(len(m.data))
}

// overlapZip is an archive whose member a.npy holds, inside its data, the
// whole local header and data of b.npy, which the directory lists too:
// the two members overlap.
func overlapZip() []byte {
	inner := zipBytes([]rawMember{stored("b.npy", f8x4)}, nil)
	innerLocal := inner[:localLen+len("b.npy")+len(f8x4)]
	a := npyBytes(1, header("'|u1'", "("+strconv.Itoa(len(innerLocal))+",)"), innerLocal)
	b := stored("b.npy", f8x4)
	b.local = overlapAt()
	return zipBytes([]rawMember{stored("a.npy", a), b}, nil)
}

// overlapAt is where b.npy's local header lies in overlapZip.
func overlapAt() int64 {
	innerLen := localLen + len("b.npy") + len(f8x4)
	a := npyBytes(1, header("'|u1'", "("+strconv.Itoa(innerLen)+",)"), nil)
	return int64(localLen + len("a.npy") + len(a))
}

// readAll reads every element of array name (any dtype, as stored).
func readAll(f *File, name string, a Array) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, a.Size)
	return buf, f.read(&t, 0, buf)
}

var f8x4 = npyBytes(1, header("'<f8'", "(4,)"), make([]byte, 32))

// TestHostileInputs opens files whose headers lie in every way this
// package knows of, and checks the error: the sentinel, a *FormatError
// naming the file, and the exact offset of the lie.
func TestHostileInputs(t *testing.T) {
	deep := "{'descr': " + strings.Repeat("[", 100000) + ", 'fortran_order': False, 'shape': (1,), }"
	// The key is one a header has, so that the nesting (not the key) is
	// what stops the parse.
	deepDict := strings.Repeat("{'descr': ", 100000)
	cases := []struct {
		name string
		file []byte
		read string // "" open; else the array to Read after a successful open
		want error
		off  int64
	}{
		{"bad magic", append([]byte("\x93NUMPZ\x01\x00"), f8x4[8:]...), "", ErrMagic, 5},
		{"not npy at all", []byte("hello, world"), "", ErrMagic, 0},
		{"version 4.0", append(append([]byte(magic), 4, 0), f8x4[8:]...), "", errors.ErrUnsupported, 6},
		{"version 1.1", append(append([]byte(magic), 1, 1), f8x4[8:]...), "", ErrHeader, 6},
		{"header length past the file", append([]byte(magic+"\x01\x00\xff\xff"), "{'descr'"...), "", mmapfile.ErrTruncated, 18},
		{"v2 header length 4 GiB", append([]byte(magic+"\x02\x00\xff\xff\xff\xff"), "{}"...), "", mmapfile.ErrTruncated, 14},
		{"shape that overflows", npyBytes(1, header("'<f8'", "(4294967296, 4294967296)"), nil), "", layout.ErrOverflow, textAt(1, header("'<f8'", "(4294967296, 4294967296)"), "(4294967296")},
		{"bytes that overflow", npyBytes(1, header("'<f8'", "(1152921504606846976, 16)"), nil), "", layout.ErrOverflow, textAt(1, header("'<f8'", "(1152921504606846976, 16)"), "(1152")},
		{"dimension beyond int64", npyBytes(1, header("'<f8'", "(99999999999999999999,)"), nil), "", layout.ErrOverflow, textAt(1, header("'<f8'", "(99999999999999999999,)"), "9999")},
		{"negative dimension", npyBytes(1, header("'<f8'", "(3, -1)"), nil), "", layout.ErrNegative, textAt(1, header("'<f8'", "(3, -1)"), "-1")},
		{"100,000-deep list", npyBytes(2, deep, nil), "", ErrHeader, textAt(2, deep, "[") + 199},
		{"100,000-deep dicts", npyBytes(2, deepDict, nil), "", ErrHeader, 12 + 200*int64(len("{'descr': "))},
		{"unterminated string", npyBytes(1, "{'descr': '''<f8, 'shape': (4,)}", nil), "", ErrHeader, textAt(1, "{'descr': '''<f8", "'''")},
		{"unterminated string at the end", npyBytes(1, "{'descr': \"<f8", nil), "", ErrHeader, textAt(1, "{'descr': \"<f8", "\"")},
		{"descr 'O'", npyBytes(1, header("'|O'", "(2,)"), make([]byte, 16)), "", ErrObject, textAt(1, header("'|O'", "(2,)"), "'|O'")},
		{"a field of type object", npyBytes(1, header("[('a', '<f8'), ('b', 'O')]", "(2,)"), nil), "", ErrObject, textAt(1, header("[('a', '<f8'), ('b', 'O')]", "(2,)"), "'O'")},
		{"long double", npyBytes(1, header("'<f16'", "(2,)"), make([]byte, 32)), "", errors.ErrUnsupported, textAt(1, header("'<f16'", "(2,)"), "'<f16'")},
		{"descr not understood", npyBytes(1, header("'<q9'", "(2,)"), nil), "", ErrHeader, textAt(1, header("'<q9'", "(2,)"), "'<q9'")},
		{"missing key", npyBytes(1, "{'descr': '<f8', 'shape': (4,)}", make([]byte, 32)), "", ErrHeader, 10},
		{"unexpected key", npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), 'x': 1}", make([]byte, 32)), "", ErrHeader, 10},
		{"shape as a list", npyBytes(1, header("'<f8'", "[4]"), make([]byte, 32)), "", ErrHeader, textAt(1, header("'<f8'", "[4]"), "[4]")},
		{"shape as an int", npyBytes(1, header("'<f8'", "(4)"), make([]byte, 32)), "", ErrHeader, textAt(1, header("'<f8'", "(4)"), "4")},
		{"bool dimension", npyBytes(1, header("'<f8'", "(True,)"), make([]byte, 32)), "", ErrHeader, textAt(1, header("'<f8'", "(True,)"), "True")},
		{"fortran_order 1", npyBytes(1, "{'descr': '<f8', 'fortran_order': 1, 'shape': (4,)}", make([]byte, 32)), "", ErrHeader, textAt(1, "{'descr': '<f8', 'fortran_order': 1, 'shape': (4,)}", "1,")},
		{"leading zeros", npyBytes(1, header("'<f8'", "(04,)"), make([]byte, 32)), "", ErrHeader, textAt(1, header("'<f8'", "(04,)"), "04")},
		{"lower-case long suffix", npyBytes(1, header("'<f8'", "(4l,)"), make([]byte, 32)), "", ErrHeader, textAt(1, header("'<f8'", "(4l,)"), "4l")},
		{"long suffix in 3.0", npyBytes(3, header("'<f8'", "(4L,)"), make([]byte, 32)), "", ErrHeader, textAt(3, header("'<f8'", "(4L,)"), "4L")},
		{"NUL in the header", npyBytes(1, header("'<f8'", "(4,)")+"\x00", make([]byte, 32)), "", ErrHeader, 10 + int64(len(header("'<f8'", "(4,)")))},
		{"invalid UTF-8 in 3.0", npyBytes(3, header("[('\xff', '<f8')]", "(1,)"), make([]byte, 8)), "", ErrHeader, textAt(3, header("[('\xff', '<f8')]", "(1,)"), "\xff")},
		{"field size overflow", npyBytes(1, header("[('a', '<f8', (2147483648,))]", "(1,)"), nil), "", layout.ErrOverflow, textAt(1, header("[('a', '<f8', (2147483648,))]", "(1,)"), "2147483648")},
		{"duplicate field", npyBytes(1, header("[('a', '<f8'), ('a', '<i4')]", "(1,)"), make([]byte, 12)), "", ErrHeader, textAt(1, header("[('a', '<f8'), ('a', '<i4')]", "(1,)"), "'a', '<i4'")},
		{"data cut short", f8x4[:len(f8x4)-3], "", mmapfile.ErrTruncated, int64(len(f8x4) - 3)},
		{"bool bytes not 0 or 1", npyBytes(1, header("'|b1'", "(3,)"), []byte{0, 1, 2}), "0", mmapfile.ErrInvalidBool, int64(len(npyBytes(1, header("'|b1'", "(3,)"), nil))) + 2},
		{"bool bytes in a stored member", zipBytes([]rawMember{stored("b.npy", npyBytes(1, header("'|b1'", "(3,)"), []byte{1, 7, 0}))}, nil), "b", mmapfile.ErrInvalidBool, int64(localLen+5+len(npyBytes(1, header("'|b1'", "(3,)"), nil))) + 1},

		{"zip whose local size lies", zipBytes([]rawMember{{name: "x.npy", data: f8x4, usize: -1, local: -1, lsize: 16, csize: -1}}, nil), "", ErrZip, 18},
		{"member data past the directory", zipBytes([]rawMember{{name: "x.npy", data: f8x4, usize: 4096, local: -1, lsize: -1, csize: 4096}}, nil), "", ErrZip, localLen + 5},
		{"stored member whose sizes differ", zipBytes([]rawMember{{name: "x.npy", data: f8x4, usize: 4096, local: -1, lsize: -1, csize: -1}}, nil), "", ErrZip, int64(localLen+5+len(f8x4)) + 20},
		{"member npy cut short", zipBytes([]rawMember{stored("x.npy", f8x4[:len(f8x4)-8])}, nil), "", mmapfile.ErrTruncated, int64(localLen+len("x.npy")+len(f8x4)) - 8},
		{"overlapping members", overlapZip(), "", ErrZip, overlapAt()},
		{"deflated member inflates past its size", zipBytes([]rawMember{func() rawMember { m := deflated("x.npy", f8x4); m.usize = int64(len(f8x4) - 8); return m }()}, nil), "", mmapfile.ErrTruncated, localLen + int64(len("x.npy"))},
		{"deflated member inflates past its size (read)", zipBytes([]rawMember{func() rawMember {
			m := deflated("x.npy", append(append([]byte{}, f8x4...), 1, 2, 3))
			m.usize = int64(len(f8x4))
			return m
		}()}, nil), "x", ErrZip, localLen + int64(len("x.npy"))},
		{"deflated member with a bad CRC", zipBytes([]rawMember{func() rawMember { m := deflated("x.npy", f8x4); m.crc = 12345; return m }()}, nil), "x", ErrCRC, localLen + int64(len("x.npy"))},
		{"deflated member shorter than declared", zipBytes([]rawMember{func() rawMember { m := deflated("x.npy", f8x4); m.usize += 100; return m }()}, nil), "x", mmapfile.ErrTruncated, localLen + int64(len("x.npy"))},
		{"zip with a cut directory", zipBytes([]rawMember{stored("x.npy", f8x4)}, nil)[:len(zipBytes([]rawMember{stored("x.npy", f8x4)}, nil))-5], "", ErrZip, int64(len(zipBytes([]rawMember{stored("x.npy", f8x4)}, nil)) - 5)},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			require.NoError(t, os.WriteFile(path, c.file, 0o644))
			f, err := Open(path, nil)
			if c.read != "" {
				require.NoError(t, err)
				defer f.Close()
				a, ok := f.Lookup(c.read)
				require.True(t, ok)
				_, err = readAll(f, c.read, a)
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, path, fe.File)
			assert.Contains(t, err.Error(), path)
			assert.Equal(t, c.off, fe.Offset, "%v", err)
			// The same bytes through NewReader fail the same way.
			r, err := NewReader(bytes.NewReader(c.file), int64(len(c.file)), nil)
			if c.read != "" {
				require.NoError(t, err)
				a, _ := r.Lookup(c.read)
				_, err = readAll(r, c.read, a)
			}
			assert.ErrorIs(t, err, c.want)
		})
	}
}

// TestHeaderSpellings: headers NumPy reads that np.save never writes.
func TestHeaderSpellings(t *testing.T) {
	for _, c := range []struct {
		descr, shape string
		want         string
		data         int
	}{
		{"'i4,f8'", "(1,)", "[('f0', '<i4'), ('f1', '<f8')]", 12},
		{"'>i2, u1,'", "(1,)", "[('f0', '>i2'), ('f1', '|u1')]", 3},
		{"[('a', '<f8', [2])]", "(1,)", "[('a', '<f8', (2,))]", 16},
		{"[['b', '?'], ('', '|V3'), ('c', 'int32', ())]", "(1,)", "[('b', '|b1'), ('', '|V3'), ('c', '<i4')]", 8},
		{"'datetime64[10ms]'", "(1,)", "<M8[10ms]", 8},
		{"'M8[generic]'", "(1,)", "<M8", 8},
		{"'a7'", "(1,)", "|S7", 7},
		{"r'<f8'", "(1,)", "<f8", 8},
		{"'\\x3cf' '8'", "(0x1,)", "<f8", 8},
		{"'<c16' # a comment\n", "(+1,)", "<c16", 16},
		// A literal followed by another, on the same line or the next,
		// past a comment: the two are one string.
		{"'<f' '8'", "(1,)", "<f8", 8},
		{"'<f'\t\"8\"", "(1,)", "<f8", 8},
		{"[('a' 'b', '<f' # c\n '8')]", "(1,)", "[('ab', '<f8')]", 8},
		{"[(\"a\\\"\", '<f8')]", "(1,)", "[('a\"', '<f8')]", 8},
	} {
		text := header(c.descr, c.shape)
		f, err := NewReader(bytes.NewReader(npyBytes(1, text, make([]byte, c.data))), int64(len(npyBytes(1, text, nil))+c.data), nil)
		require.NoError(t, err, c.descr)
		a, _ := f.Lookup("0")
		assert.Equal(t, c.want, a.DType.String(), c.descr)
		if py := oracle.Find("numpy"); py != "" {
			// NumPy reads the same descr as the same dtype.
			out, err := oracle.Output(py, `
import sys, ast, numpy as np
d = np.lib.format.descr_to_dtype(ast.literal_eval(sys.argv[1]))
print(repr(d.descr) if d.names else d.str)`, c.descr)
			require.NoError(t, err)
			assert.Equal(t, c.want+"\n", out, c.descr)
		}
	}
}
