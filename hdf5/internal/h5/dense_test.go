package h5

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

const denseOracleScript = `
import h5py, json, sys
f = h5py.File(sys.argv[1], 'r')
out = []
def visit(name, obj):
    out.append({'name': name, 'addr': h5py.h5o.get_info(obj.id).addr,
                'links': sorted(obj.keys()) if isinstance(obj, h5py.Group) else [],
                'attrs': sorted(obj.attrs.keys())})
visit('/', f)
f.visititems(visit)
json.dump(out, sys.stdout)
`

type denseObject struct {
	Name  string   `json:"name"`
	Addr  uint64   `json:"addr"`
	Links []string `json:"links"`
	Attrs []string `json:"attrs"`
}

// linkName is the name in a link message (type 6) as a fractal heap stores it.
func linkName(t *testing.T, b []byte) string {
	flags := b[1]
	p := 2
	if flags&8 != 0 {
		p++
	}
	if flags&4 != 0 {
		p += 8
	}
	if flags&0x10 != 0 {
		p++
	}
	w := 1 << (flags & 3)
	var n int
	for i := w - 1; i >= 0; i-- {
		n = n<<8 | int(b[p+i])
	}
	p += w
	return string(b[p : p+n])
}

// attributeName is the name in an attribute message of version 3.
func attributeName(t *testing.T, b []byte) string {
	if b[0] != 3 {
		t.Fatalf("attribute message version %d", b[0])
	}
	n := int(binary.LittleEndian.Uint16(b[2:]))
	name := b[9 : 9+n]
	for len(name) > 0 && name[len(name)-1] == 0 {
		name = name[:len(name)-1]
	}
	return string(name)
}

// Dense links and attributes of newstyle_numbers.h5: the name-index v2 B-tree's
// records point at fractal heap objects holding every link and attribute h5py lists.
func TestDenseStorageReference(t *testing.T) {
	const name = "newstyle_numbers.h5"
	testFile(t, name)
	path, _ := absTestdata(name)
	checkDenseStorage(t, path)
}

// A group of 3000 links with long names (700 KB of heap objects, beyond what the root
// indirect block's direct rows hold) and an object of 401 attributes, one of 400 KB (a
// huge heap object): fractal heaps with child indirect blocks and huge objects, v2
// B-trees with internal nodes, which the reference files are too small for.
func TestDenseStorageLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "large.h5")
	oracle.Run(t, []string{"h5py", "numpy"}, `
import h5py, sys, numpy as np
with h5py.File(sys.argv[1], 'w', libver='latest') as f:
    g = f.create_group('many')
    for i in range(3000):
        g['link_%05d_' % i + 'x' * 200] = h5py.SoftLink('/target/%d' % i)
    d = f.create_dataset('d', data=[1, 2, 3])
    for i in range(400):
        d.attrs['attribute_number_%04d' % i] = 'value %d' % i
    d.attrs['huge_attribute'] = np.arange(50000, dtype='<f8')  # beyond a managed object: huge
`, path)
	checkDenseStorage(t, path)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(file, []byte("FHIB")) < 2 || !bytes.Contains(file, []byte("BTIN")) {
		t.Errorf("the generated file has %d indirect heap blocks and %d internal B-tree nodes, want ≥ 2 and ≥ 1",
			bytes.Count(file, []byte("FHIB")), bytes.Count(file, []byte("BTIN")))
	}
}

// Dense storage in a file with 4-byte offsets and lengths.
func TestDenseStorageFourByteSizes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "small.h5")
	oracle.Run(t, []string{"h5py"}, `
import h5py, sys
p = h5py.h5p.create(h5py.h5p.FILE_CREATE)
p.set_sizes(4, 4)
a = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
a.set_libver_bounds(h5py.h5f.LIBVER_LATEST, h5py.h5f.LIBVER_LATEST)
with h5py.File(h5py.h5f.create(sys.argv[1].encode(), h5py.h5f.ACC_TRUNC, fcpl=p, fapl=a)) as f:
    g = f.create_group('g')
    for i in range(40):
        g.create_group('member_%02d' % i)
    for i in range(20):
        g.attrs['attr_%02d' % i] = i
`, path)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if o, l := fileSizes(file); o != 4 || l != 4 {
		t.Fatalf("offsets of %d bytes, lengths of %d", o, l)
	}
	if !bytes.Contains(file, []byte("FRHP")) {
		t.Fatal("no fractal heap in the generated file")
	}
	checkDenseStorage(t, path)
}

// addrAt reads a little-endian address of size bytes at p, all ones as undefined.
func addrAt(b []byte, p, size int) uint64 {
	d := &decoder{b: b[p : p+size], offsetSize: size}
	return d.addr("address")
}

func checkDenseStorage(t *testing.T, path string) {
	name := filepath.Base(path)
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []denseObject
	if err := jsonUnmarshal(oracle.Run(t, []string{"h5py"}, denseOracleScript, path), &objs); err != nil {
		t.Fatal(err)
	}
	r := fileReader(file)
	var sawLinks, sawAttrs bool
	for _, o := range objs {
		for _, m := range scanHeader(t, file, o.Addr, r.OffsetSize, r.LengthSize) {
			var heapAddr, btreeAddr uint64
			var want []string
			var wantType uint8
			var idOf func(rec []byte) []byte
			var nameOf func(*testing.T, []byte) string
			switch m.Type {
			case 2: // link info: version, flags, [max creation index], heap, name B-tree
				p := 2
				if m.Body[1]&1 != 0 {
					p += 8
				}
				heapAddr, btreeAddr = addrAt(m.Body, p, r.OffsetSize), addrAt(m.Body, p+r.OffsetSize, r.OffsetSize)
				want, wantType, nameOf = o.Links, 5, linkName
				idOf = func(rec []byte) []byte { return rec[4:] } // hash, then the heap ID
				sawLinks = sawLinks || !IsUndefined(heapAddr, r.OffsetSize)
			case 21: // attribute info: version, flags, [max creation index u16], heap, name B-tree
				p := 2
				if m.Body[1]&1 != 0 {
					p += 2
				}
				heapAddr, btreeAddr = addrAt(m.Body, p, r.OffsetSize), addrAt(m.Body, p+r.OffsetSize, r.OffsetSize)
				want, wantType, nameOf = o.Attrs, 8, attributeName
				idOf = func(rec []byte) []byte { return rec[:8] } // heap ID, flags, order, hash
				sawAttrs = true
			default:
				continue
			}
			if IsUndefined(heapAddr, r.OffsetSize) {
				continue // compact storage
			}
			heap, err := r.FractalHeap(heapAddr)
			if err != nil {
				t.Fatalf("%s %s: %v", name, o.Name, err)
			}
			var got []string
			var prevHash uint32
			err = r.BTree2(btreeAddr, func(typ uint8, rec []byte) error {
				if typ != wantType {
					t.Errorf("%s: record type %d, want %d", o.Name, typ, wantType)
				}
				hash := binary.LittleEndian.Uint32(rec)
				if typ == 8 {
					hash = binary.LittleEndian.Uint32(rec[len(rec)-4:])
				}
				if hash < prevHash {
					t.Errorf("%s: records not in hash order", o.Name)
				}
				prevHash = hash
				id := idOf(rec)
				if len(id) != heap.IDLen() {
					t.Errorf("%s: heap ID of %d bytes, the heap says %d", o.Name, len(id), heap.IDLen())
				}
				obj, err := heap.Object(id)
				if err != nil {
					return err
				}
				got = append(got, nameOf(t, obj))
				return nil
			})
			if err != nil {
				t.Fatalf("%s %s: %v", name, o.Name, err)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: dense storage holds %q, h5py lists %q", name, o.Name, got, want)
			}
		}
	}
	if !sawLinks || !sawAttrs {
		t.Errorf("%s: dense links found %v, dense attributes found %v", name, sawLinks, sawAttrs)
	}
}
