package h5

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mmapkit/mmapkit/internal/oracle"
)

// oracleDataset is what h5py reports about one dataset of a reference file.
type oracleDataset struct {
	Name      string        `json:"name"`
	Addr      uint64        `json:"addr"` // object header address
	Shape     []uint64      `json:"shape"`
	MaxShape  []int64       `json:"maxshape"` // -1 = unlimited
	ItemSize  int           `json:"itemsize"`
	Chunks    []uint64      `json:"chunks"`
	ChunkList []oracleChunk `json:"chunklist"`
	Data      string        `json:"data"` // hex of ds[()] in the file's byte order
	Fill      string        `json:"fill"` // hex of the fill value
	Error     string        `json:"error"`
}

type oracleChunk struct {
	Offset []uint64 `json:"offset"`
	Mask   uint32   `json:"mask"`
	Addr   int64    `json:"addr"`
	Size   uint64   `json:"size"`
}

const oracleScript = `
import h5py, json, sys, numpy as np
f = h5py.File(sys.argv[1], 'r')
out = []
def visit(name, obj):
    if not isinstance(obj, h5py.Dataset):
        return
    d = {'name': name, 'addr': h5py.h5o.get_info(obj.id).addr, 'shape': list(obj.shape),
         'maxshape': [(-1 if m is None else m) for m in (obj.maxshape or ())],
         'itemsize': obj.dtype.itemsize, 'chunks': list(obj.chunks) if obj.chunks else None}
    if obj.chunks:
        cl = []
        for i in range(obj.id.get_num_chunks()):
            ci = obj.id.get_chunk_info(i)
            cl.append({'offset': list(ci.chunk_offset), 'mask': ci.filter_mask, 'addr': ci.byte_offset, 'size': ci.size})
        d['chunklist'] = cl
        try:
            d['data'] = obj[()].tobytes().hex()
        except Exception as e:
            d['error'] = str(e)
        d['fill'] = np.array(obj.fillvalue, dtype=obj.dtype).tobytes().hex()
    out.append(d)
f.visititems(visit)
json.dump(out, sys.stdout)
`

var (
	oracleMu    sync.Mutex
	oracleCache = map[string][]oracleDataset{}
)

// h5pyDatasets returns what h5py finds in reference file name (skipping the test
// without h5py or without the file).
func h5pyDatasets(t testing.TB, name string) []oracleDataset {
	t.Helper()
	testFile(t, name)
	oracleMu.Lock()
	defer oracleMu.Unlock()
	if ds, ok := oracleCache[name]; ok {
		return ds
	}
	p, err := filepath.Abs(filepath.Join(testdataDir, name))
	if err != nil {
		t.Fatal(err)
	}
	ds := h5pyDatasetsAt(t, p)
	oracleCache[name] = ds
	return ds
}

// h5pyDatasetsAt runs the oracle on the file at path.
func h5pyDatasetsAt(t testing.TB, path string) []oracleDataset {
	out := oracle.Run(t, []string{"h5py", "numpy"}, oracleScript, path)
	var ds []oracleDataset
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("h5py output for %s: %v", path, err)
	}
	return ds
}

func (d *oracleDataset) data(t testing.TB) []byte {
	b, err := hex.DecodeString(d.Data)
	if err != nil {
		t.Fatalf("%s: data hex: %v", d.Name, err)
	}
	return b
}

// headerMessage is one object header message found by scanHeader.
type headerMessage struct {
	Type uint16
	Body []byte
	At   int64 // absolute offset of Body
}

// scanHeader is a test-only reader of object headers (v1 and v2, following
// continuations), so that these tests can find a dataset's layout, pipeline and
// dataspace messages without package hdf5. file starts at the superblock (base 0).
func scanHeader(t testing.TB, file []byte, addr uint64, offsetSize, lengthSize int) []headerMessage {
	t.Helper()
	type block struct {
		start, end int
		v2         bool
	}
	var msgs []headerMessage
	var blocks []block
	get := func(at, n int) []byte {
		if at < 0 || n < 0 || at+n > len(file) {
			t.Fatalf("object header at %d: read [%d,+%d) outside the file", addr, at, n)
		}
		return file[at : at+n]
	}
	le := func(b []byte) uint64 {
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	a := int(addr)
	var orderTracked bool
	if string(get(a, 4)) == "OHDR" {
		flags := get(a+5, 1)[0]
		orderTracked = flags&4 != 0
		p := a + 6
		if flags&0x20 != 0 {
			p += 16
		}
		if flags&0x10 != 0 {
			p += 4
		}
		w := 1 << (flags & 3)
		size := int(le(get(p, w)))
		p += w
		blocks = append(blocks, block{p, p + size - 4, true})
	} else {
		if v := get(a, 1)[0]; v != 1 {
			t.Fatalf("object header at %d: version %d", addr, v)
		}
		size := int(binary.LittleEndian.Uint32(get(a+8, 4)))
		blocks = append(blocks, block{a + 16, a + 16 + size, false})
	}
	for len(blocks) > 0 {
		b := blocks[0]
		blocks = blocks[1:]
		p := b.start
		for {
			var typ uint16
			var size int
			if b.v2 {
				hdr := 4
				if orderTracked {
					hdr += 2
				}
				if p+hdr > b.end {
					break
				}
				typ = uint16(get(p, 1)[0])
				size = int(binary.LittleEndian.Uint16(get(p+1, 2)))
				p += hdr
			} else {
				if p+8 > b.end {
					break
				}
				typ = binary.LittleEndian.Uint16(get(p, 2))
				size = int(binary.LittleEndian.Uint16(get(p+2, 2)))
				p += 8
			}
			body := get(p, size)
			msgs = append(msgs, headerMessage{typ, body, int64(p)})
			p += size
			if typ == 0x10 {
				at := int(le(body[:offsetSize]))
				n := int(le(body[offsetSize : offsetSize+lengthSize]))
				if b.v2 {
					if string(get(at, 4)) != "OCHK" {
						t.Fatalf("continuation at %d is not OCHK", at)
					}
					blocks = append(blocks, block{at + 4, at + n - 4, true})
				} else {
					blocks = append(blocks, block{at, at + n, false})
				}
			}
		}
	}
	return msgs
}

// datasetMessages returns the dataspace dims and max dims, the layout message and the
// pipeline message (nil when absent) of the dataset whose header is at addr.
type datasetMessages struct {
	Dims, MaxDims []uint64
	Layout        headerMessage
	Pipeline      *headerMessage
	// OffsetSize and LengthSize are the file's (from its superblock).
	OffsetSize, LengthSize int
}

// parseLayout parses the dataset's layout message.
func (dm datasetMessages) parseLayout() (*Layout, error) {
	return ParseLayout(dm.Layout.Body, dm.Layout.At, len(dm.Dims), dm.OffsetSize, dm.LengthSize)
}

// fileSizes returns the sizes of offsets and lengths of a file whose superblock is at 0
// (8 where the bytes there say something else than 2, 4 or 8).
func fileSizes(file []byte) (offsetSize, lengthSize int) {
	valid := func(b byte) int {
		if b == 2 || b == 4 || b == 8 {
			return int(b)
		}
		return 8
	}
	switch {
	case len(file) > 14 && file[8] <= 1:
		return valid(file[13]), valid(file[14])
	case len(file) > 10:
		return valid(file[9]), valid(file[10])
	}
	return 8, 8
}

func findDatasetMessages(t testing.TB, file []byte, addr uint64) datasetMessages {
	t.Helper()
	var dm datasetMessages
	dm.OffsetSize, dm.LengthSize = fileSizes(file)
	found := false
	for _, m := range scanHeader(t, file, addr, dm.OffsetSize, dm.LengthSize) {
		switch m.Type {
		case 1:
			dm.Dims, dm.MaxDims = parseDataspaceForTest(t, m.Body, dm.LengthSize)
		case 8:
			dm.Layout, found = m, true
		case 11:
			m := m
			dm.Pipeline = &m
		}
	}
	if !found {
		t.Fatalf("object header at %d has no layout message", addr)
	}
	return dm
}

func parseDataspaceForTest(t testing.TB, b []byte, lengthSize int) (dims, maxDims []uint64) {
	rank, flags := int(b[1]), b[2]
	p := 8
	if b[0] == 2 {
		p = 4
	}
	read := func() uint64 {
		d := &decoder{b: b[p : p+lengthSize]}
		v := d.uint(lengthSize, "dim")
		if v == 1<<(8*uint(lengthSize))-1 || lengthSize == 8 && v == ^uint64(0) {
			v = Unlimited
		}
		p += lengthSize
		return v
	}
	for i := 0; i < rank; i++ {
		dims = append(dims, read())
	}
	if flags&1 != 0 {
		for i := 0; i < rank; i++ {
			maxDims = append(maxDims, read())
		}
	} else {
		maxDims = dims
	}
	return dims, maxDims
}

// fileReader is a Reader over a whole file whose superblock is at 0, with its sizes of
// offsets and lengths.
func fileReader(file []byte) *Reader {
	o, l := fileSizes(file)
	return &Reader{R: bytes.NewReader(file), Base: 0, End: int64(len(file)), OffsetSize: o, LengthSize: l}
}

func (c oracleChunk) String() string {
	return fmt.Sprintf("{%v mask %#x at %d, %d bytes}", c.Offset, c.Mask, c.Addr, c.Size)
}

func absTestdata(name string) (string, error) { return filepath.Abs(filepath.Join(testdataDir, name)) }

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
