package hdf5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
)

// This file is the writer: the small subset of HDF5 that h5py, h5dump
// and netCDF read — a version 2 superblock, version 2 object headers,
// compact new-style groups with creation order tracked, and datasets whose
// data follows all the metadata, each aligned to dataAlign bytes so that
// every dataset written maps as a typed slice.

// dataAlign is where each dataset's data starts: a multiple of it, enough
// for any element type and for vector loads.
const dataAlign = 64

// undefinedAddress marks an address as absent.
const undefinedAddress = ^uint64(0)

// maxCompactLinks is the most links a compact group's group info message
// can declare (its "maximum compact" field has 16 bits).
const maxCompactLinks = 65535

// Write creates path holding the records of src as an HDF5 file: one
// dataset per record (table columns as 1-D datasets), groups made from
// "/" in the records' names; contiguous, or chunked as o's parameters
// chunks and compress ask; with netCDF-4's dimension scales where path
// ends in .nc. It replaces an existing file only once the new one is
// complete, keeping its permission bits.
func Write(path string, src format.Source, o *format.Options) error {
	table := tableGroup(src)
	src, err := format.ArraysWithText(src)
	if err != nil {
		return err
	}
	nc := strings.EqualFold(filepath.Ext(path), ".nc")
	root, err := planTree(src, nc, table)
	if err != nil {
		return fmt.Errorf("hdf5: %s: %w", path, err)
	}
	var ao atomicfile.Options
	if o != nil {
		ao.Perm = o.Perm
	}
	parsed, err := format.ParsedParams[*writeOptions](o, "hdf5", true)
	if err != nil {
		return fmt.Errorf("hdf5: %s: %w", path, err)
	}
	w := *parsed // the options are shared; what the writer adds is its own
	wo := &w
	if nc {
		wo.nc = &ncState{}
		if err := addDimensions(root, wo.nc); err != nil {
			return fmt.Errorf("hdf5: %s: %w", path, err)
		}
	}
	return atomicfile.WriteFile(path, &ao, func(f *os.File) error {
		return writeTree(f, src, root, wo)
	})
}

// wnode is a group or a dataset of the file being written.
type wnode struct {
	name     string
	children []*wnode // a group's links, in creation order
	byName   map[string]*wnode
	rec      int // the dataset's record; -1 for a group
	header   []byte
	addr     int64
	typ      []byte // encoded datatype
	shape    []int64
	big      bool
	text     bool // strings: fixed-size, or variable-length (vlen)
	vlen     bool
	data     int64 // address of the contiguous data, -1 for none
	nbytes   int64
	fullPath string
	elemSize int

	// Chunked storage: the chunk shape (nil: contiguous), deflate's level
	// (-1: no filters), the B-tree's address and its root's, and the
	// chunks written.
	chunks    []int64
	level     int
	nchunks   int64
	btree     int64
	btreeRoot int64
	entries   []h5.ChunkEntry

	// netCDF-4: the dimension a scale stands for (rec -2), or a
	// variable's dimensions and their global heap objects.
	dim       *dimension
	dims      []*dimension
	heapIndex []int
	srcDims   []string // the source's dimension names
	attrs     [][]byte // the source's attributes, as attribute messages
}

func (n *wnode) isGroup() bool { return n.rec == -1 }

// datasetPath is where record name r goes: "/" for the root's links, the
// leading "/" not doubled; the empty name and the root itself are "/0".
func datasetPath(name string) ([]string, error) {
	name = strings.TrimPrefix(name, "/")
	if name == "" {
		return []string{"0"}, nil
	}
	parts := strings.Split(name, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, fmt.Errorf("%w: the name %q has a part %q, which HDF5 cannot link", format.ErrNotRepresentable, name, p)
		}
	}
	return parts, nil
}

// tableGroup is the group a table's columns go to where their names make
// none: the source file's name without its extension ("table" for
// table.csv, and where the source names no file); "" where src is no
// table or its columns' names already make groups (HDF5's own tables).
func tableGroup(src format.Source) string {
	first := format.RecordAt(src, 0)
	if !format.IsTable(src) || first.Kind != format.KindColumn || (format.NumRecords(src) == 1 && first.Name == "0") {
		return "" // no table, or a .npy's own 1-D array
	}
	if format.EachRecord(src, func(_ int, r *format.Record) error {
		if strings.Contains(strings.TrimPrefix(r.Name, "/"), "/") {
			return errNested
		}
		return nil
	}) != nil {
		return ""
	}
	if n, ok := src.(interface{ Name() string }); ok {
		base := filepath.Base(n.Name())
		if g := strings.TrimSuffix(base, filepath.Ext(base)); validLinkName(g) {
			return g
		}
	}
	return "table"
}

// errNested stops tableGroup's walk at a column whose name makes a group.
var errNested = errors.New("a column in a group")

// planTree makes the tree of groups and datasets the records of src name,
// under the group table where that is not "". For netCDF-4 (nc), bool is
// written as u8 and complex is refused.
func planTree(src format.Source, nc bool, table string) (*wnode, error) {
	root := &wnode{rec: -1, byName: map[string]*wnode{}, fullPath: "/"}
	err := format.EachRecord(src, func(i int, r *format.Record) error {
		typ, err := encodeType(r, nc)
		if err != nil {
			return err
		}
		parts, err := datasetPath(r.Name)
		if err != nil {
			return err
		}
		if table != "" {
			parts = append([]string{table}, parts...)
		}
		g := root
		for k, p := range parts {
			c := g.byName[p]
			last := k == len(parts)-1
			switch {
			case c != nil && (last || !c.isGroup()):
				return fmt.Errorf("%w: %s: %s is already a %s", format.ErrNotRepresentable, format.Describe(r), c.fullPath, map[bool]string{true: "group", false: "dataset"}[c.isGroup()])
			case c != nil:
				g = c
				continue
			}
			c = &wnode{name: p, rec: -1, data: -1, level: -1, fullPath: strings.TrimSuffix(g.fullPath, "/") + "/" + p}
			if last {
				c.rec, c.typ, c.shape, c.big = i, typ, r.Shape, r.BigEndian
				if tt, ok := format.TextTypeOf(r); ok {
					c.text, c.vlen = true, tt.Kind != 'S' || nc
				}
				c.srcDims, _ = r.Extra["dims"].([]string)
				if fa := r.Facts; fa != nil {
					if c.srcDims == nil {
						c.srcDims = fa.DimensionNames
					}
					c.attrs = userAttributes(fa.Attributes)
				}
			} else {
				c.byName = map[string]*wnode{}
			}
			if len(g.children) == maxCompactLinks {
				return fmt.Errorf("%w: %s: the group %s would have more than %d links", format.ErrNotRepresentable, format.Describe(r), g.fullPath, maxCompactLinks)
			}
			g.children = append(g.children, c)
			g.byName[p] = c
			g = c
		}
		return nil
	})
	return root, err
}

// walk calls fn with n and everything under it, parents first.
func (n *wnode) walk(fn func(*wnode) error) error {
	if err := fn(n); err != nil {
		return err
	}
	for _, c := range n.children {
		if err := c.walk(fn); err != nil {
			return err
		}
	}
	return nil
}

// writeTree writes the file: the data of each dataset after the
// metadata (contiguous data at aligned addresses, chunks one after the
// other), then the object headers, chunk B-trees and the superblock.
func writeTree(f *os.File, src format.Source, root *wnode, wo *writeOptions) error {
	// Object headers and B-trees have sizes that do not depend on the
	// addresses they hold, so a first pass places them all.
	at := int64(superblockSize)
	var nodes []*wnode
	err := root.walk(func(n *wnode) error {
		nodes = append(nodes, n)
		if !n.isGroup() && n.rec != scaleOnly {
			if err := n.plan(format.RecordAt(src, n.rec), wo); err != nil {
				return err
			}
		}
		n.header = n.encodeHeader(wo.nc)
		n.addr = at
		at += int64(len(n.header))
		return nil
	})
	if err != nil {
		return err
	}
	if wo.nc != nil {
		wo.nc.gcol = at
		at += gcolSize(len(wo.nc.objects))
	}
	for _, n := range nodes {
		if n.chunks != nil {
			n.btree = at
			at += h5.ChunkBTreeSize(n.nchunks, len(n.shape))
			n.btreeRoot = at - h5.ChunkNodeSize(len(n.shape))
		}
	}
	eof := at
	w := atomicfile.WritebackAt(f, f)
	for _, n := range nodes {
		if n.isGroup() || n.nbytes == 0 || n.rec == scaleOnly {
			continue
		}
		bo := binary.ByteOrder(binary.LittleEndian)
		if n.big {
			bo = binary.BigEndian
		}
		if n.chunks != nil {
			if eof, err = n.writeChunks(w, src, bo, eof); err != nil {
				return err
			}
			continue
		}
		start, err := layout.AlignUp(eof, dataAlign)
		if err != nil {
			return err
		}
		end, ok := layout.Add(start, n.nbytes)
		if !ok {
			return fmt.Errorf("dataset %s: %d bytes after %d overflow a file offset", n.fullPath, n.nbytes, start)
		}
		n.data, eof = start, end
		if n.text {
			if eof, err = n.writeText(w, src, eof); err != nil {
				return err
			}
			continue
		}
		if wo.holes {
			continue
		}
		off := n.data
		err = format.Stream(src, n.rec, layout.RowMajor, bo, func(chunk []byte) error {
			_, err := w.WriteAt(chunk, off)
			off += int64(len(chunk))
			return err
		})
		if err != nil {
			return err
		}
	}
	meta := appendSuperblock(make([]byte, 0, at), uint64(eof), uint64(root.addr))
	for _, n := range nodes {
		meta = append(meta, n.encodeHeader(wo.nc)...)
	}
	if wo.nc != nil {
		meta = wo.nc.appendGCOL(meta)
	}
	for _, n := range nodes {
		if n.chunks != nil {
			meta, _ = h5.AppendChunkBTree(meta, uint64(n.btree), n.entries, n.chunks, n.elemSize)
		}
	}
	if _, err := f.WriteAt(meta, 0); err != nil {
		return err
	}
	// A file whose last dataset is empty ends with its metadata.
	return f.Truncate(eof)
}

// superblockSize is the size of a version 2 superblock with 8-byte
// offsets and lengths.
const superblockSize = 48

func appendSuperblock(b []byte, eof, root uint64) []byte {
	start := len(b)
	b = append(b, signature...)
	b = append(b, 2, 8, 8, 0) // version, sizes of offsets and lengths, flags
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint64(b, undefinedAddress) // no extension
	b = binary.LittleEndian.AppendUint64(b, eof)
	b = binary.LittleEndian.AppendUint64(b, root)
	return binary.LittleEndian.AppendUint32(b, h5.Checksum(b[start:]))
}

// headerWriter gathers the messages of a version 2 object header.
type headerWriter struct{ body []byte }

func (h *headerWriter) add(typ byte, data []byte) {
	h.body = append(h.body, typ)
	h.body = binary.LittleEndian.AppendUint16(h.body, uint16(len(data)))
	h.body = append(h.body, 0)
	h.body = append(h.body, data...)
}

// bytes is the object header: flags 2 (a 4-byte size of chunk 0), no
// times, no attribute phase change values; then its checksum.
func (h *headerWriter) bytes() []byte {
	b := append([]byte("OHDR"), 2, 2)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(h.body)))
	b = append(b, h.body...)
	return binary.LittleEndian.AppendUint32(b, h5.Checksum(b))
}

// encodeHeader is the node's object header; st, for netCDF-4 output,
// gives the dimension scales' attributes.
func (n *wnode) encodeHeader(st *ncState) []byte {
	var h headerWriter
	le := binary.LittleEndian
	if n.isGroup() {
		// Link info: creation order tracked (not indexed), no dense
		// storage.
		li := []byte{0, 1}
		li = le.AppendUint64(li, uint64(len(n.children)))
		li = le.AppendUint64(li, undefinedAddress)
		li = le.AppendUint64(li, undefinedAddress)
		h.add(msgLinkInfo, li)
		// Group info: link phase change values stored, the maximum
		// compact raised to the link count so that the links stay in
		// the header.
		gi := []byte{0, 1}
		gi = le.AppendUint16(gi, uint16(max(8, len(n.children))))
		gi = le.AppendUint16(gi, 6)
		h.add(msgGroupInfo, gi)
		for k, c := range n.children {
			h.add(msgLink, appendLink(nil, k, c.name, uint64(c.addr)))
		}
		return h.bytes()
	}
	h.add(msgDataspace, appendDataspace(nil, n.shape))
	h.add(msgDatatype, n.typ)
	// Fill value v3: space allocated late, fill value written if set,
	// the library's default fill value (zeros).
	if n.chunks != nil {
		// Space allocated incrementally, as libhdf5 does for chunks.
		h.add(msgFill, []byte{3, 3 | 2<<2})
		if n.level >= 0 {
			h.add(msgPipeline, appendShuffleDeflate(nil, n.elemSize, n.level))
		}
		lay := []byte{3, 2, byte(len(n.shape) + 1)}
		lay = le.AppendUint64(lay, uint64(n.btreeRoot))
		for _, c := range n.chunks {
			lay = le.AppendUint32(lay, uint32(c))
		}
		h.add(msgLayout, le.AppendUint32(lay, uint32(n.elemSize)))
		return n.withAttributes(&h, st)
	}
	h.add(msgFill, []byte{3, 2 | 2<<2})
	lay := []byte{3, 1}
	addr := undefinedAddress
	if n.data >= 0 {
		addr = uint64(n.data)
	}
	lay = le.AppendUint64(lay, addr)
	lay = le.AppendUint64(lay, uint64(n.nbytes))
	h.add(msgLayout, lay)
	return n.withAttributes(&h, st)
}

// withAttributes adds the source's attributes and the netCDF attributes
// of the dataset, if any, and returns the header.
func (n *wnode) withAttributes(h *headerWriter, st *ncState) []byte {
	for _, a := range n.attrs {
		h.add(msgAttribute, a)
	}
	if st != nil {
		for _, a := range n.ncAttributes(st) {
			h.add(msgAttribute, a)
		}
	}
	return h.bytes()
}

// appendLink appends a version 1 link message: a hard link with its
// creation order, the name in UTF-8.
func appendLink(b []byte, order int, name string, addr uint64) []byte {
	flags := byte(1<<2 | 1<<4) // creation order and charset present
	if len(name) > 255 {
		flags |= 1 // a 2-byte name length
	}
	b = append(b, 1, flags)
	b = binary.LittleEndian.AppendUint64(b, uint64(order))
	b = append(b, 1) // UTF-8
	if len(name) > 255 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(name)))
	} else {
		b = append(b, byte(len(name)))
	}
	b = append(b, name...)
	return binary.LittleEndian.AppendUint64(b, addr)
}

// appendDataspace appends a version 2 dataspace: scalar for rank 0, else
// simple, without maximum dimensions (fixed size).
func appendDataspace(b []byte, shape []int64) []byte {
	kind := byte(1)
	if len(shape) == 0 {
		kind = 0
	}
	b = append(b, 2, byte(len(shape)), 0, kind)
	for _, d := range shape {
		b = binary.LittleEndian.AppendUint64(b, uint64(d))
	}
	return b
}

// floatParams are an IEEE format's field positions: sign bit, exponent
// location and size, mantissa size, bias.
type floatParams struct{ sign, expLoc, expSize, mantSize byte }

var floats = map[layout.Type]floatParams{
	layout.F16: {15, 10, 5, 10},
	layout.F32: {31, 23, 8, 23},
	layout.F64: {63, 52, 11, 52},
}

// encodeType is the datatype message for a record's elements: version 1
// fixed-point and floating-point types in the record's byte order, bool
// as h5py's enum and complex as h5py's compound of r and i (version 3).
func encodeType(r *format.Record, nc bool) ([]byte, error) {
	order := byte(0)
	if r.BigEndian && r.Type.Size() > 1 {
		order = 1
	}
	switch t := r.Type; t {
	case layout.I8, layout.I16, layout.I32, layout.I64, layout.U8, layout.U16, layout.U32, layout.U64:
		signed := t == layout.I8 || t == layout.I16 || t == layout.I32 || t == layout.I64
		return appendFixed(nil, t.Size(), order, signed), nil
	case layout.F16, layout.F32, layout.F64:
		return appendFloat(nil, t, order), nil
	case layout.Bool:
		if nc {
			return appendFixed(nil, 1, 0, false), nil // netCDF has no bool
		}
		b := []byte{0x18, 2, 0, 0}
		b = binary.LittleEndian.AppendUint32(b, 1)
		b = appendFixed(b, 1, 0, true)
		b = append(b, "FALSE\x00\x00\x00TRUE\x00\x00\x00\x00"...)
		return append(b, 0, 1), nil
	case layout.Invalid:
		tt, ok := format.TextTypeOf(r)
		switch {
		case !ok:
		case tt.Kind == 'S' && !nc:
			return fixedText(tt.Size, r.Extra["charset"] == "utf-8"), nil
		default:
			return vlenText, nil
		}
	case layout.C64, layout.C128:
		if nc {
			return nil, format.Unrepresentable(r, "netCDF-4 has no complex type")
		}
		part := layout.F32
		if t == layout.C128 {
			part = layout.F64
		}
		b := []byte{0x36, 2, 0, 0}
		b = binary.LittleEndian.AppendUint32(b, uint32(t.Size()))
		b = append(b, 'r', 0, 0)
		b = appendFloat(b, part, order)
		b = append(b, 'i', 0, byte(part.Size()))
		return appendFloat(b, part, order), nil
	}
	if r.Kind != format.KindArray && r.Kind != format.KindColumn {
		return nil, format.Unrepresentable(r, "only arrays of numbers, bools, complex numbers and text are written to HDF5")
	}
	return nil, format.Unrepresentable(r, "h5py and libhdf5 have no type for "+r.TypeString())
}

func appendFixed(b []byte, size int, order byte, signed bool) []byte {
	bits := order
	if signed {
		bits |= 1 << 3
	}
	b = append(b, 0x10, bits, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	b = binary.LittleEndian.AppendUint16(b, 0)
	return binary.LittleEndian.AppendUint16(b, uint16(size*8))
}

func appendFloat(b []byte, t layout.Type, order byte) []byte {
	p := floats[t]
	// Mantissa normalisation 2: the most significant bit is implied.
	b = append(b, 0x11, order|2<<4, p.sign, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(t.Size()))
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(t.Size()*8))
	b = append(b, p.expLoc, p.expSize, 0, p.mantSize)
	return binary.LittleEndian.AppendUint32(b, 1<<(p.expSize-1)-1)
}
