package h5

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// gcol builds a global heap collection of size bytes holding objects 1..n.
func gcol(size int, objs ...string) []byte {
	b := []byte("GCOL\x01\x00\x00\x00")
	b = binary.LittleEndian.AppendUint64(b, uint64(size))
	for i, o := range objs {
		b = binary.LittleEndian.AppendUint16(b, uint16(i+1))
		b = binary.LittleEndian.AppendUint16(b, 1)
		b = append(b, 0, 0, 0, 0)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(o)))
		b = append(b, o...)
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
	}
	if len(b)+16 <= size { // object 0: the free space
		b = append(b, make([]byte, 8)...)
		b = binary.LittleEndian.AppendUint64(b, uint64(size-len(b)-8))
	}
	return append(b, make([]byte, size-len(b))...)
}

func TestGlobalHeapBytes(t *testing.T) {
	file := placeAt(make([]byte, 64), 64, gcol(128, "hello", "", "a longer object!"))
	r := memReader(file, 0)
	for i, want := range []string{"hello", "", "a longer object!"} {
		got, err := r.GlobalHeapObject(64, uint32(i+1))
		if err != nil || string(got) != want {
			t.Errorf("object %d = %q, %v; want %q", i+1, got, err, want)
		}
	}
	for _, tc := range []struct {
		name  string
		patch func([]byte)
		index uint32
		err   string
	}{
		{"missing object", func([]byte) {}, 4, "offset 64: global heap collection has no object 4"},
		{"free space is not an object", func([]byte) {}, 0, "has no object 0"},
		{"index above 16 bits", func([]byte) {}, 1 << 16, "exceeds 65535"},
		{"collection beyond the file", func(f []byte) { f[64+8] = 200 }, 1, "offset 72: global heap collection size 200 does not fit"},
		{"collection smaller than its header", func(f []byte) { f[64+8] = 3 }, 1, "size 3 does not fit"},
		{"object overruns", func(f []byte) { f[64+16+8] = 200 }, 1, "offset 80: global heap object 1 of 200 bytes overruns"},
		{"version 2", func(f []byte) { f[64+4] = 2 }, 1, "global heap version 2"},
		{"bad signature", func(f []byte) { f[64] = 'g' }, 1, `expected signature "GCOL"`},
		{"duplicate index", func(f []byte) { f[64+16+24] = 1 }, 1, "object 1 appears twice"},
	} {
		f := append([]byte(nil), file...)
		tc.patch(f)
		if _, err := memReader(f, 0).GlobalHeapObject(64, tc.index); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

const vlenOracleScript = `
import h5py, json, sys
f = h5py.File(sys.argv[1], 'r')
out = {}
for name in ('vlen', 'vlen_ascii'):
    ds = f[name]
    out[name] = {'offset': ds.id.get_offset(), 'values': [v.decode('utf-8') for v in ds[()]]}
json.dump(out, sys.stdout)
`

// The variable-length strings of text.h5 are global heap objects holding h5py's values.
func TestGlobalHeapReference(t *testing.T) {
	file := testFile(t, "text.h5")
	path, _ := absTestdata("text.h5")
	var sets map[string]struct {
		Offset int64    `json:"offset"`
		Values []string `json:"values"`
	}
	if err := jsonUnmarshal(oracle.Run(t, []string{"h5py"}, vlenOracleScript, path), &sets); err != nil {
		t.Fatal(err)
	}
	r := fileReader(file)
	checked := 0
	for name, s := range sets {
		for i, want := range s.Values {
			elem := file[s.Offset+16*int64(i):]
			n := binary.LittleEndian.Uint32(elem)
			if n == 0 {
				continue
			}
			got, err := r.GlobalHeapObject(binary.LittleEndian.Uint64(elem[4:]), binary.LittleEndian.Uint32(elem[12:]))
			if err != nil || string(got) != want || len(got) != int(n) {
				t.Errorf("%s[%d] = %q, %v; h5py reads %q", name, i, got, err, want)
			}
			checked++
		}
	}
	if checked < 6 {
		t.Errorf("only %d strings checked", checked)
	}
}

// With 4-byte lengths the library pads the collection header and each object header to
// 16 bytes (length, then 4 bytes of padding).
func TestGlobalHeapFourByteLengths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "small.h5")
	oracle.Run(t, []string{"h5py"}, `
import h5py, sys
p = h5py.h5p.create(h5py.h5p.FILE_CREATE)
p.set_sizes(4, 4)
with h5py.File(h5py.h5f.create(sys.argv[1].encode(), h5py.h5f.ACC_TRUNC, fcpl=p)) as f:
    f.attrs['a'] = 'text'
    f.attrs['b'] = 'more text'
`, path)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(file, []byte("GCOL"))
	if at < 0 {
		t.Fatal("no global heap collection")
	}
	r := fileReader(file)
	if r.OffsetSize != 4 || r.LengthSize != 4 {
		t.Fatalf("offsets of %d bytes, lengths of %d", r.OffsetSize, r.LengthSize)
	}
	h, err := r.ReadGlobalHeap(uint64(at))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := uint32(1); i <= 2; i++ {
		b, err := h.Object(i)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	sort.Strings(got)
	if got[0] != "more text" || got[1] != "text" {
		t.Errorf("objects %q, want the two attribute values", got)
	}
}
