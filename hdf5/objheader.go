package hdf5

import (
	"errors"

	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Header message types.
const (
	msgNil          = 0
	msgDataspace    = 1
	msgLinkInfo     = 2
	msgDatatype     = 3
	msgFillOld      = 4
	msgFill         = 5
	msgLink         = 6
	msgExternal     = 7
	msgLayout       = 8
	msgGroupInfo    = 10
	msgPipeline     = 11
	msgAttribute    = 12
	msgSharedTable  = 15
	msgContinuation = 16
	msgSymbolTable  = 17
	msgAttrInfo     = 21
	msgLastKnown    = 24 // the highest type the format defines
)

// Message flags.
const (
	flagShared           = 0x02
	flagFailIfUnknownRW  = 0x08
	flagFailIfUnknownAll = 0x80
)

// message is one header message: its body aliases the block it was read
// from.
type message struct {
	typ   uint16
	flags uint8
	body  []byte
	at    int64 // absolute offset of the body
}

// objectHeader is an object's header: its messages, continuation blocks
// followed.
type objectHeader struct {
	addr    uint64
	at      int64 // absolute offset
	version int
	msgs    []message
}

// find returns the first message of type typ, or nil.
func (oh *objectHeader) find(typ uint16) *message {
	for i := range oh.msgs {
		if oh.msgs[i].typ == typ {
			return &oh.msgs[i]
		}
	}
	return nil
}

// block is a continuation block still to read.
type block struct {
	addr, size uint64
	from       int64 // where the continuation message pointing at it is
}

// readObjectHeader reads the object header at relative address addr and
// every continuation block it chains to (each once: a block seen twice is
// a cycle; the blocks together cannot be larger than the file).
func readObjectHeader(m *meta, addr uint64) (*objectHeader, error) {
	at, err := m.abs(addr, 16, "object header")
	if err != nil {
		return nil, err
	}
	var pre [16]byte
	if err := m.readAt(pre[:], at, "object header"); err != nil {
		return nil, err
	}
	oh := &objectHeader{addr: addr, at: at}
	var first block
	var v2flags uint8
	c := m.cursor(pre[:], at, "object header")
	switch {
	case string(pre[:4]) == "OHDR":
		c.skip(4)
		if v := c.u8(); v != 2 {
			return nil, m.errf(at+4, errors.ErrUnsupported, "object header version %d", v)
		}
		oh.version = 2
		v2flags = c.u8()
		n := 6
		if v2flags&0x20 != 0 {
			n += 16
		}
		if v2flags&0x10 != 0 {
			n += 4
		}
		w := 1 << (v2flags & 3)
		full, _, err := m.read(addr, uint64(n+w), "object header")
		if err != nil {
			return nil, err
		}
		size := m.cursor(full[n:], at+int64(n), "object header").uint(w)
		// The first block is the whole header, prefix and checksum
		// included (chunk 0's size counts its messages only), so that the
		// checksum covers it; messages start after the prefix.
		first = block{addr: addr, size: uint64(n+w) + size + 4, from: at}
		if size > uint64(m.r.End) {
			return nil, m.errf(at+int64(n), mmapfile.ErrTruncated, "object header: a block of %d bytes is larger than the file", size)
		}
		blk, err := readV2Block(m, first, n+w, v2flags)
		if err != nil {
			return nil, err
		}
		return oh, oh.follow(m, blk, v2flags, first)
	case pre[0] == 1:
		oh.version = 1
		c.skip(2)
		c.u16() // message count: the blocks say it again
		c.u32() // reference count
		size := c.u32()
		first = block{addr: addr + 16, size: uint64(size), from: at}
		blk, err := readV1Block(m, first)
		if err != nil {
			return nil, err
		}
		return oh, oh.follow(m, blk, 0, first)
	}
	return nil, m.errf(at, errors.ErrUnsupported, "object header version %d (or not an object header)", pre[0])
}

// follow collects the messages of the first block and of every block the
// continuation messages chain to.
func (oh *objectHeader) follow(m *meta, msgs []message, v2flags uint8, first block) error {
	seen := map[uint64]bool{first.addr: true}
	total := first.size
	for {
		var next []block
		for _, msg := range msgs {
			if msg.typ != msgContinuation {
				oh.msgs = append(oh.msgs, msg)
				continue
			}
			c := m.cursor(msg.body, msg.at, "continuation message")
			b := block{addr: c.addr(), size: c.length(), from: msg.at}
			if c.err != nil {
				return c.err
			}
			next = append(next, b)
		}
		if len(next) == 0 {
			return nil
		}
		msgs = msgs[:0:0]
		for _, b := range next {
			if seen[b.addr] {
				return m.errf(b.from, ErrCycle, "object header at address %d: its continuation blocks come back to address %d", oh.addr, b.addr)
			}
			seen[b.addr] = true
			total += b.size
			if total > uint64(m.r.End) || b.size > uint64(m.r.End) {
				return m.errf(b.from, mmapfile.ErrTruncated, "object header at address %d: continuation blocks of more bytes than the file holds", oh.addr)
			}
			var more []message
			var err error
			if oh.version == 1 {
				more, err = readV1Block(m, b)
			} else {
				more, err = readV2Block(m, b, -1, v2flags)
			}
			if err != nil {
				return err
			}
			msgs = append(msgs, more...)
		}
	}
}

// readV1Block parses the messages of a version 1 header block: each a
// type, size, flags and 3 reserved bytes, the body 8-byte aligned.
func readV1Block(m *meta, b block) ([]message, error) {
	buf, at, err := m.read(b.addr, b.size, "object header block")
	if err != nil {
		return nil, err
	}
	c := m.cursor(buf, at, "object header block")
	var out []message
	for len(buf)-c.pos >= 8 {
		typ := c.u16()
		size := int(c.u16())
		flags := c.u8()
		c.skip(3)
		bodyAt := c.here()
		body := c.take(size)
		if c.err != nil {
			return nil, c.err
		}
		if err := checkKnown(m, typ, flags, bodyAt); err != nil {
			return nil, err
		}
		out = append(out, message{typ: typ, flags: flags, body: body, at: bodyAt})
		c.align8(0)
		if c.err != nil {
			// Padding cut by the block's end: nothing more to read.
			break
		}
	}
	return out, nil
}

// readV2Block parses a version 2 block: the header's first (start is
// where its messages begin) or an "OCHK" continuation block (start -1);
// either ends in a lookup3 checksum of all its bytes before it.
func readV2Block(m *meta, b block, start int, flags uint8) ([]message, error) {
	buf, at, err := m.read(b.addr, b.size, "object header block")
	if err != nil {
		return nil, err
	}
	if start < 0 {
		if len(buf) < 8 || string(buf[:4]) != "OCHK" {
			return nil, m.errf(at, errors.ErrUnsupported, "object header continuation block without its OCHK signature")
		}
		start = 4
	}
	if len(buf) < start+4 {
		return nil, m.errf(at, mmapfile.ErrTruncated, "object header block of %d bytes", len(buf))
	}
	end := len(buf) - 4
	if got, want := h5.Checksum(buf[:end]), le.Uint32(buf[end:]); got != want {
		return nil, m.errf(at+int64(end), ErrChecksum, "object header block: checksum %08x, computed %08x", want, got)
	}
	hdr := 4
	if flags&0x04 != 0 {
		hdr = 6
	}
	c := m.cursor(buf[:end], at, "object header block")
	c.pos = start
	var out []message
	for end-c.pos >= hdr {
		typ := uint16(c.u8())
		size := int(c.u16())
		mflags := c.u8()
		if flags&0x04 != 0 {
			c.skip(2)
		}
		bodyAt := c.here()
		body := c.take(size)
		if c.err != nil {
			return nil, c.err
		}
		if err := checkKnown(m, typ, mflags, bodyAt); err != nil {
			return nil, err
		}
		out = append(out, message{typ: typ, flags: mflags, body: body, at: bodyAt})
	}
	return out, nil
}

// checkKnown refuses a message of a type this package does not know when
// its flags say a reader must not go on without it: always (bit 7), or
// when the file is open for writing (bit 3), as the HDF5 library does.
func checkKnown(m *meta, typ uint16, flags uint8, at int64) error {
	if typ <= msgLastKnown {
		return nil
	}
	if flags&flagFailIfUnknownAll != 0 || (m.writable && flags&flagFailIfUnknownRW != 0) {
		return m.errf(at, errors.ErrUnsupported, "header message of unknown type %d, which its flags say must be understood", typ)
	}
	return nil
}
