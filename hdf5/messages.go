package hdf5

import (
	"errors"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// parseFill parses a fill value message (type 5, versions 1 to 3) or the
// old one (type 4): the fill value's bytes, or nil where none is defined
// (zeros).
func parseFill(m *meta, msg *message) ([]byte, error) {
	c := m.cursor(msg.body, msg.at, "fill value message")
	if msg.typ == msgFillOld {
		n := c.u32()
		v := c.take(int(min(n, uint32(len(msg.body)))))
		if c.err == nil && int(n) != len(v) {
			c.fail(mmapfile.ErrTruncated, "a fill value of %d bytes", n)
		}
		return nonEmpty(v), c.err
	}
	switch version := c.u8(); version {
	case 1, 2:
		c.skip(2) // allocation and write times
		defined := c.u8()
		if version == 2 && defined == 0 || c.err != nil {
			return nil, c.err
		}
		if len(c.rest()) == 0 {
			return nil, nil
		}
		return fillBytes(c)
	case 3:
		flags := c.u8()
		if flags&0x20 == 0 {
			return nil, c.err
		}
		return fillBytes(c)
	default:
		if c.err != nil {
			return nil, c.err
		}
		return nil, m.errf(msg.at, errors.ErrUnsupported, "fill value message version %d", version)
	}
}

func fillBytes(c *cursor) ([]byte, error) {
	n := c.u32()
	if c.err == nil && uint64(n) > uint64(len(c.rest())) {
		c.fail(mmapfile.ErrTruncated, "a fill value of %d bytes", n)
	}
	v := c.take(int(n))
	return nonEmpty(v), c.err
}

func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// Link types.
const (
	linkHard     = 0
	linkSoft     = 1
	linkExternal = 64
)

// link is one link of a group.
type link struct {
	name   string
	typ    int
	addr   uint64 // hard
	target string // soft: the path; external: the object's path
	file   string // external: the file
	order  int64  // creation order, -1 if not tracked
	at     int64
}

// parseLink parses a link message (in an object header or a fractal
// heap object).
func parseLink(m *meta, body []byte, at int64) (link, error) {
	c := m.cursor(body, at, "link message")
	l := link{order: -1, at: at}
	if v := c.u8(); v != 1 && c.err == nil {
		return l, m.errf(at, errors.ErrUnsupported, "link message version %d", v)
	}
	flags := c.u8()
	if flags&0x08 != 0 {
		l.typ = int(c.u8())
	}
	if flags&0x04 != 0 {
		l.order = int64(c.uint(8))
	}
	if flags&0x10 != 0 {
		c.skip(1) // the name's character set: ASCII and UTF-8 alike are bytes
	}
	n := c.uint(1 << (flags & 3))
	if c.err == nil && n > uint64(len(c.rest())) {
		c.fail(mmapfile.ErrTruncated, "a link name of %d bytes", n)
	}
	l.name = string(c.take(int(n)))
	switch l.typ {
	case linkHard:
		l.addr = c.addr()
	case linkSoft:
		k := int(c.u16())
		l.target = string(c.take(k))
	case linkExternal:
		k := int(c.u16())
		v := m.cursor(c.take(k), c.here()-int64(k), "external link")
		v.u8() // version and flags
		l.file = v.cstring()
		l.target = v.cstring()
		if v.err != nil {
			return l, v.err
		}
	default:
		// User-defined links are listed, never followed.
	}
	if c.err != nil {
		return l, c.err
	}
	if l.name == "" {
		return l, m.errf(at, nil, "link message: an empty link name")
	}
	return l, nil
}

// denseIndex is what a link info or attribute info message says of a
// group's links or an object's attributes kept in a fractal heap: the
// heap and the v2 B-tree indexing them by name (both undefined when they
// are few enough for the object header).
type denseIndex struct {
	heap, nameIndex uint64
}

// parseDenseIndex parses a link info message (ordered: the largest
// creation index, 8 bytes, is stored when flag bit 0 is set) or an
// attribute info message (2 bytes).
func parseDenseIndex(m *meta, msg *message, orderBytes int) (denseIndex, error) {
	c := m.cursor(msg.body, msg.at, "link or attribute info message")
	c.u8() // version 0
	flags := c.u8()
	if flags&1 != 0 {
		c.skip(orderBytes)
	}
	di := denseIndex{heap: c.addr(), nameIndex: c.addr()}
	return di, c.err
}

// attribute is a parsed attribute message; its value is decoded when
// asked for.
type attribute struct {
	name  string
	typ   *dtype
	space *dataspace
	data  []byte
	at    int64 // absolute offset of data
}

// parseAttribute parses an attribute message body (versions 1 to 3).
func parseAttribute(m *meta, body []byte, at int64, shared func(msg *message) (*dtype, error)) (*attribute, error) {
	c := m.cursor(body, at, "attribute message")
	version := c.u8()
	flags := c.u8()
	nameLen, typeLen, spaceLen := int(c.u16()), int(c.u16()), int(c.u16())
	if version == 3 {
		c.skip(1) // character set of the name
	}
	if c.err != nil {
		return nil, c.err
	}
	if version < 1 || version > 3 {
		return nil, m.errf(at, errors.ErrUnsupported, "attribute message version %d", version)
	}
	pad := func(n int) int {
		if version == 1 {
			return (n + 7) &^ 7
		}
		return n
	}
	a := &attribute{}
	name := c.take(pad(nameLen))
	if c.err != nil {
		return nil, c.err
	}
	if nameLen > 0 && nameLen <= len(name) {
		name = name[:nameLen]
		if name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
	}
	a.name = string(name)
	typeAt := c.here()
	tb := c.take(pad(typeLen))
	spaceAt := c.here()
	sb := c.take(pad(spaceLen))
	if c.err != nil {
		return nil, c.err
	}
	var err error
	if flags&1 != 0 {
		a.typ, err = shared(&message{typ: msgDatatype, flags: flagShared, body: tb, at: typeAt})
	} else {
		a.typ, err = parseDatatype(m, tb, typeAt)
	}
	if flags&2 == 0 && err == nil {
		a.space, err = parseDataspace(m, sb, spaceAt)
	}
	if errors.Is(err, errors.ErrUnsupported) || flags&2 != 0 {
		// A type or dataspace this package does not read (a shared
		// dataspace, a datatype class of a later HDF5): the attribute is
		// listed without a value.
		return &attribute{name: a.name}, nil
	}
	if err != nil {
		return nil, err
	}
	a.at = c.here()
	a.data = c.rest()
	return a, nil
}

// symbolTable is a symbol table message: an old-style group's B-tree and
// local heap.
type symbolTable struct {
	btree, heap uint64
}

func parseSymbolTable(m *meta, msg *message) (symbolTable, error) {
	c := m.cursor(msg.body, msg.at, "symbol table message")
	st := symbolTable{btree: c.addr(), heap: c.addr()}
	return st, c.err
}

// localHeap is an old-style group's heap of link names.
type localHeap struct {
	data []byte
	at   int64
}

// readLocalHeap reads the local heap ("HEAP") at addr and its data
// segment.
func readLocalHeap(m *meta, addr uint64) (*localHeap, error) {
	n := uint64(8 + 2*m.sl + m.so)
	b, at, err := m.read(addr, n, "local heap")
	if err != nil {
		return nil, err
	}
	if string(b[:4]) != "HEAP" {
		return nil, m.errf(at, nil, "local heap: no HEAP signature")
	}
	c := m.cursor(b, at, "local heap")
	c.skip(8)
	size := c.length()
	c.length() // free list
	dataAddr := c.addr()
	if c.err != nil {
		return nil, c.err
	}
	data, dat, err := m.read(dataAddr, size, "local heap data")
	if err != nil {
		return nil, err
	}
	return &localHeap{data: data, at: dat}, nil
}

// str returns the NUL-terminated string at offset off of the heap.
func (h *localHeap) str(m *meta, off uint64) (string, error) {
	if off >= uint64(len(h.data)) {
		return "", m.errf(h.at, mmapfile.ErrOutOfRange, "local heap: a name at offset %d of a %d-byte heap", off, len(h.data))
	}
	c := m.cursor(h.data[off:], h.at+int64(off), "local heap name")
	s := c.cstring()
	return s, c.err
}

// externalFile names the first file of an external data files message,
// for the error that refuses it.
func externalFile(m *meta, msg *message) string {
	c := m.cursor(msg.body, msg.at, "external data files message")
	c.skip(4)
	c.u16()
	used := c.u16()
	heap := c.addr()
	nameOff := c.length()
	if c.err != nil || used == 0 {
		return "?"
	}
	h, err := readLocalHeap(m, heap)
	if err != nil {
		return "?"
	}
	s, err := h.str(m, nameOff)
	if err != nil {
		return "?"
	}
	return s
}

// sharedAddr parses a shared message's body: the address of the object
// header that holds the message (a committed datatype).
func sharedAddr(m *meta, msg *message) (uint64, error) {
	c := m.cursor(msg.body, msg.at, "shared message")
	version := c.u8()
	typ := c.u8()
	switch version {
	case 1:
		c.skip(6)
	case 2:
	case 3:
		if typ != 2 {
			if c.err == nil {
				return 0, m.errf(msg.at, errors.ErrUnsupported, "a message shared through the shared message heap")
			}
		}
	default:
		if c.err == nil {
			return 0, m.errf(msg.at, errors.ErrUnsupported, "shared message version %d", version)
		}
	}
	a := c.addr()
	return a, c.err
}
