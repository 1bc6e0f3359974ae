package abf

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/layout"
)

// A file of many small records must open in memory proportional to its
// records and smaller than the file: opening any file allocates less than
// its size plus 1 MiB. The smallest record ABF has takes 30 bytes plus its
// key; the table keeps one in about 12 bytes plus its key. Records are
// varint-encoded one after another in chunks that never move (growing the
// table copies nothing), every fourth record's position is noted, and the
// key index is a table of 32-bit record numbers, built once the records
// are known. Public Records are built on demand.
//
// A record's encoding: uvarint start, uvarint data−start, uvarint dataLen,
// one byte kind | flags<<4, one byte elem, one byte pad, uvarint ndims and
// the dims as uvarints, uvarint key length and the key, and, if flagTyped,
// uvarint length and the type string as stored.

// entry is one record, decoded.
type entry struct {
	i       int         // record number
	start   int64       // offset of the record's first byte
	data    int64       // payload offset (aligned for arrays)
	dataLen int64       // payload bytes (String: UTF-8 bytes)
	kind    Kind        // what the record holds
	elem    layout.Type // element type of an array
	pad     uint8       // payload offset minus the end of the header
	flags   uint8       // flagBigEndian, flagUnpadded, flagTyped
	ndims   int         // number of dimensions (1 for a String: its characters)
	dimsEnc []byte      // the dims, uvarints; aliases the table
	key     []byte      // aliases the table
	typ     []byte      // the type string where it is not the canonical spelling, else nil
	chunk   int         // the chunk that holds the record
	flagsAt int         // position of the kind|flags byte in the chunk
}

const (
	flagBigEndian = 1 << iota // the record's integers and payload are big-endian
	flagUnpadded              // an empty array whose padding upstream never wrote
	flagTyped                 // the type string is stored: not the canonical spelling
)

func (e *entry) bigEndian() bool { return e.flags&flagBigEndian != 0 }
func (e *entry) unpadded() bool  { return e.flags&flagUnpadded != 0 }

// hdrEnd is the end of the header: where the padding, if any, starts.
func (e *entry) hdrEnd() int64 { return e.data - int64(e.pad) }

// end is the offset just past the record: the next record starts there.
func (e *entry) end() int64 {
	if e.unpadded() {
		return e.hdrEnd()
	}
	return e.data + e.dataLen
}

// dims appends e's dims to dst[:0].
func (e *entry) dims(dst []int64) []int64 {
	dst = dst[:0]
	b := e.dimsEnc
	for range e.ndims {
		v, n := binary.Uvarint(b)
		dst = append(dst, int64(v))
		b = b[n:]
	}
	return dst
}

// dimsSlice returns e's dims in a new slice, non-nil.
func (e *entry) dimsSlice() []int64 {
	if e.ndims == 0 {
		return []int64{}
	}
	return e.dims(make([]int64, 0, e.ndims))
}

// count is the number of elements of an array or BitArray, prod(dims),
// checked when the record was parsed or written.
func (e *entry) count() int64 {
	n, b := int64(1), e.dimsEnc
	for range e.ndims {
		v, k := binary.Uvarint(b)
		n *= int64(v) // no overflow: checked, or a dimension is 0
		b = b[k:]
	}
	return n
}

// typeString is the record's type string: as stored in Format C, else the
// canonical Format C spelling.
func (e *entry) typeString() string {
	if e.typ != nil {
		return string(e.typ)
	}
	return canonicalType(e.kind, e.elem, e.ndims)
}

// record describes e with copies the caller owns; key is its key.
func (e *entry) record(key string) Entry {
	var dims []int64
	switch e.kind {
	case KindArray, KindBitArray, KindString:
		dims = e.dimsSlice()
	}
	return Entry{Array: layout.Array{Name: key, Type: e.elem, Shape: dims, Order: layout.ColMajor,
		BigEndian: e.bigEndian(), Offset: e.data, Size: e.dataLen},
		Kind: e.kind, TypeString: e.typeString(), Start: e.start, End: e.end(), Unpadded: e.unpadded()}
}

const (
	chunkSize   = 64 << 10 // bytes of encoded records per chunk
	anchorEvery = 4        // records per noted position
	anchorBlock = 4096     // noted positions per block
)

// table holds a file's records.
type table struct {
	chunks  [][]byte
	anchors [][]uint64 // position (chunk<<32 | offset) of records 0, 4, 8, …, in blocks
	n       int
	index   keyIndex
}

func (t *table) len() int { return t.n }

func (t *table) anchor(i int) uint64 {
	a := i / anchorEvery
	return t.anchors[a/anchorBlock][a%anchorBlock]
}

// at decodes record i.
func (t *table) at(i int) entry {
	var e entry
	t.decode(i, &e)
	return e
}

// decode decodes record i into e.
func (t *table) decode(i int, e *entry) {
	pos := t.anchor(i)
	c, off := int(pos>>32), int(uint32(pos))
	for range i % anchorEvery {
		if off = skipEntry(t.chunks[c], off); off == len(t.chunks[c]) {
			c, off = c+1, 0
		}
	}
	decodeEntry(t.chunks[c], off, e)
	e.i, e.chunk = i, c
}

// skipEntry returns where the record at c[off:] ends.
func skipEntry(c []byte, off int) int {
	for range 3 { // start, data−start, dataLen
		for c[off] >= 0x80 {
			off++
		}
		off++
	}
	flags := c[off] >> 4
	off += 3
	nd, n := binary.Uvarint(c[off:])
	off += n
	for range nd {
		for c[off] >= 0x80 {
			off++
		}
		off++
	}
	kl, n := binary.Uvarint(c[off:])
	off += n + int(kl)
	if flags&flagTyped != 0 {
		tl, n := binary.Uvarint(c[off:])
		off += n + int(tl)
	}
	return off
}

func (t *table) last() entry { return t.at(t.n - 1) }

// each calls fn with records [0, n) in order, each with its key as a
// substring of one string that holds every key.
func (t *table) each(n int, fn func(e *entry, key string)) {
	total := 0
	t.walk(n, func(e *entry) { total += len(e.key) })
	var sb strings.Builder
	sb.Grow(total)
	t.walk(n, func(e *entry) { sb.Write(e.key) })
	keys, at := sb.String(), 0
	t.walk(n, func(e *entry) {
		fn(e, keys[at:at+len(e.key)])
		at += len(e.key)
	})
}

// walk calls fn with records [0, n) in order.
func (t *table) walk(n int, fn func(e *entry)) {
	var e entry
	c, off := 0, 0
	for i := range n {
		if off == len(t.chunks[c]) {
			c, off = c+1, 0
		}
		off = decodeEntry(t.chunks[c], off, &e)
		e.i, e.chunk = i, c
		fn(&e)
	}
}

// decodeEntry decodes the record at c[off:] into e and returns where the
// next one starts.
func decodeEntry(c []byte, off int, e *entry) int {
	v, n := binary.Uvarint(c[off:])
	e.start, off = int64(v), off+n
	v, n = binary.Uvarint(c[off:])
	e.data, off = e.start+int64(v), off+n
	v, n = binary.Uvarint(c[off:])
	e.dataLen, off = int64(v), off+n
	e.flagsAt = off
	e.kind, e.flags = Kind(c[off]&15), c[off]>>4
	e.elem, e.pad = layout.Type(c[off+1]), c[off+2]
	off += 3
	v, n = binary.Uvarint(c[off:])
	e.ndims, off = int(v), off+n
	d := off
	for range e.ndims {
		for c[off] >= 0x80 {
			off++
		}
		off++
	}
	e.dimsEnc = c[d:off]
	v, n = binary.Uvarint(c[off:])
	off += n
	e.key, off = c[off:off+int(v):off+int(v)], off+int(v)
	e.typ = nil
	if e.flags&flagTyped != 0 {
		v, n = binary.Uvarint(c[off:])
		off += n
		e.typ, off = c[off:off+int(v):off+int(v)], off+int(v)
	}
	return off
}

// setFlag sets a flag of record e, decoded by at, in the table.
func (t *table) setFlag(e *entry, flag uint8) {
	t.chunks[e.chunk][e.flagsAt] |= flag << 4
	e.flags |= flag
}

// add appends a record: e's start, data, dataLen, kind, elem, pad and
// flags, and the given key, dims and type string ("" for the canonical
// spelling). The key index is not updated (see index).
func (t *table) add(e *entry, key []byte, dims []int64, typ string) {
	var buf [3*binary.MaxVarintLen64 + 3]byte
	b := binary.AppendUvarint(buf[:0], uint64(e.start))
	b = binary.AppendUvarint(b, uint64(e.data-e.start))
	b = binary.AppendUvarint(b, uint64(e.dataLen))
	flags := e.flags &^ flagTyped
	if typ != "" {
		flags |= flagTyped
	}
	b = append(b, byte(e.kind)|flags<<4, byte(e.elem), e.pad)
	size := len(b) + 2*binary.MaxVarintLen64 + len(key) + len(dims)*binary.MaxVarintLen64 + len(typ)
	c := len(t.chunks) - 1
	if c < 0 || len(t.chunks[c])+size > cap(t.chunks[c]) {
		t.chunks = append(t.chunks, make([]byte, 0, max(chunkSize, size)))
		c++
	}
	ch := t.chunks[c]
	if t.n%anchorEvery == 0 {
		a := t.n / anchorEvery
		if a%anchorBlock == 0 {
			t.anchors = append(t.anchors, make([]uint64, 0, anchorBlock))
		}
		t.anchors[a/anchorBlock] = append(t.anchors[a/anchorBlock], uint64(c)<<32|uint64(len(ch)))
	}
	ch = append(ch, b...)
	ch = binary.AppendUvarint(ch, uint64(len(dims)))
	for _, d := range dims {
		ch = binary.AppendUvarint(ch, uint64(d))
	}
	ch = binary.AppendUvarint(ch, uint64(len(key)))
	ch = append(ch, key...)
	if typ != "" {
		ch = binary.AppendUvarint(ch, uint64(len(typ)))
		ch = append(ch, typ...)
	}
	t.chunks[c] = ch
	t.n++
}

// truncate drops the records from i on, which the index must not hold.
func (t *table) truncate(i int) {
	if i >= t.n {
		return
	}
	e := t.at(i)
	t.chunks[e.chunk] = t.chunks[e.chunk][:e.flagsAt-recordLead(&e)]
	t.chunks = t.chunks[:e.chunk+1]
	a := (i + anchorEvery - 1) / anchorEvery // anchors kept
	t.anchors = t.anchors[:(a+anchorBlock-1)/anchorBlock]
	if a%anchorBlock != 0 {
		t.anchors[len(t.anchors)-1] = t.anchors[len(t.anchors)-1][:a%anchorBlock]
	}
	t.n = i
}

// recordLead is the size of the three uvarints before a record's flags.
func recordLead(e *entry) int {
	var b [3 * binary.MaxVarintLen64]byte
	return len(binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(b[:0],
		uint64(e.start)), uint64(e.data-e.start)), uint64(e.dataLen)))
}

// canAdd reports whether the table can take one more record: record
// numbers are 32-bit.
func (t *table) canAdd() bool { return t.n < math.MaxUint32-1 && len(t.chunks) < math.MaxUint32 }

// keyIndex finds records by key: open addressing over record numbers + 1
// (0 is an empty slot), at most three quarters full.
type keyIndex struct {
	seed  maphash.Seed
	slots []uint32
	n     int
}

// index builds the key index of records [t.index.n, t.n) and returns the
// first record whose key an earlier record has, and that record, or -1.
// The records from a duplicate on stay out of the index.
func (t *table) indexNew() (dup, of int) {
	x := &t.index
	if x.slots == nil {
		x.seed = maphash.MakeSeed()
	}
	if need := slotsFor(t.n); need > len(x.slots) {
		old := x.slots
		x.slots = make([]uint32, need)
		for _, s := range old {
			if s != 0 {
				e := t.at(int(s - 1))
				x.put(maphash.Bytes(x.seed, e.key), int(s-1))
			}
		}
	}
	for ; x.n < t.n; x.n++ {
		e := t.at(x.n)
		if j := t.findBytes(e.key); j >= 0 {
			return x.n, j
		}
		x.put(maphash.Bytes(x.seed, e.key), x.n)
	}
	return -1, -1
}

// indexLast adds the last record to the index, whose key no other has.
func (t *table) indexLast() {
	x := &t.index
	if x.n != t.n-1 || slotsFor(t.n) > len(x.slots) {
		t.indexNew()
		return
	}
	var e entry
	t.decode(x.n, &e)
	x.put(maphash.Bytes(x.seed, e.key), x.n)
	x.n++
}

// slotsFor is the index size for n records: a power of two, at most three
// quarters full.
func slotsFor(n int) int {
	s := 16
	for 3*s < 4*n {
		s *= 2
	}
	return s
}

func (x *keyIndex) put(h uint64, i int) {
	mask := uint64(len(x.slots) - 1)
	for s := h & mask; ; s = (s + 1) & mask {
		if x.slots[s] == 0 {
			x.slots[s] = uint32(i + 1)
			return
		}
	}
}

// find returns the record with the given key, or -1.
func (t *table) find(key string) int {
	var e entry
	if !t.lookup(key, &e) {
		return -1
	}
	return e.i
}

// lookup decodes the record with the given key into e, if there is one.
func (t *table) lookup(key string, e *entry) bool {
	x := &t.index
	if len(x.slots) == 0 {
		return false
	}
	mask := uint64(len(x.slots) - 1)
	for s := maphash.String(x.seed, key) & mask; x.slots[s] != 0; s = (s + 1) & mask {
		if t.decode(int(x.slots[s]-1), e); string(e.key) == key {
			return true
		}
	}
	return false
}

func (t *table) findBytes(key []byte) int {
	x := &t.index
	if len(x.slots) == 0 {
		return -1
	}
	mask := uint64(len(x.slots) - 1)
	for s := maphash.Bytes(x.seed, key) & mask; x.slots[s] != 0; s = (s + 1) & mask {
		i := int(x.slots[s] - 1)
		var e entry
		if t.decode(i, &e); bytes.Equal(e.key, key) {
			return i
		}
	}
	return -1
}

// canonicalNames caches canonicalType for arrays and BitArrays of up to
// eight dimensions, so that listing a million records formats none.
var canonicalNames sync.Map // uint32(kind<<24 | elem<<16 | ndims) → string

// canonicalType is the Format C type string of a record.
func canonicalType(kind Kind, elem layout.Type, ndims int) string {
	switch kind {
	case KindString:
		return "String"
	case KindDataType:
		return "DataType"
	case KindSerialized:
		return "AbfSerializer"
	}
	cache := ndims <= 8
	k := uint32(kind)<<24 | uint32(elem)<<16 | uint32(ndims)
	if cache {
		if s, ok := canonicalNames.Load(k); ok {
			return s.(string)
		}
	}
	var s string
	if kind == KindArray {
		s = "Array{" + juliaNames[elem] + "," + strconv.Itoa(ndims) + "}"
	} else {
		s = "BitArray{" + strconv.Itoa(ndims) + "}"
	}
	if cache {
		canonicalNames.Store(k, s)
	}
	return s
}
