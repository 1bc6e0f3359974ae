package hdf5

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Datatype classes.
const (
	classFixed    = 0
	classFloat    = 1
	classTime     = 2
	classString   = 3
	classBitfield = 4
	classOpaque   = 5
	classCompound = 6
	classRef      = 7
	classEnum     = 8
	classVlen     = 9
	classArray    = 10
	classComplex  = 11
	classUnknown  = -1 // a class or version this package does not read
)

var classNames = [...]string{"fixed-point", "floating-point", "time", "string", "bitfield", "opaque", "compound", "reference", "enumeration", "variable-length", "array", "complex"}

// maxTypeDepth bounds the nesting of compound, array, enumeration and
// variable-length datatypes.
const maxTypeDepth = 16

// dtype is a parsed datatype message.
type dtype struct {
	class     int
	size      uint32
	bigEndian bool
	signed    bool
	elem      layout.Type // the element type where one fits, else Invalid
	// why the values cannot be read, where they cannot ("" if they can)
	unsupported string

	pad  int  // strings: 0 null-terminated, 1 null-padded, 2 space-padded
	utf8 bool // strings: UTF-8, else ASCII

	members []member // compound
	base    *dtype   // enumeration, array, variable-length, complex
	dims    []int64  // array
	isBool  bool     // an enumeration FALSE=0, TRUE=1 over one byte
	vstring bool     // a variable-length string
}

// member is a field of a compound datatype.
type member struct {
	name   string
	offset uint32
	typ    *dtype
}

// typeName is how a listing names the element type.
func (d *dtype) typeName() string {
	switch d.class {
	case classUnknown:
		return "unknown"
	case classString:
		return "bytes<" + strconv.FormatUint(uint64(d.size), 10) + ">"
	case classOpaque:
		return "void<" + strconv.FormatUint(uint64(d.size), 10) + ">"
	case classVlen:
		if d.vstring {
			return "string"
		}
		return "vlen"
	case classTime:
		return "time"
	case classBitfield:
		return "bitfield"
	case classRef:
		return "reference"
	case classArray:
		return d.base.typeName()
	case classCompound:
		if d.elem.Valid() {
			return d.elem.String()
		}
		return "compound"
	}
	if d.elem.Valid() {
		return d.elem.String()
	}
	return classNames[d.class]
}

// innermost is the element datatype of an array datatype (itself
// otherwise).
func (d *dtype) innermost() *dtype {
	for d.class == classArray {
		d = d.base
	}
	return d
}

// arrayDims are the dimensions an array datatype appends to a dataset's.
func (d *dtype) arrayDims() []int64 {
	var out []int64
	for d.class == classArray {
		out = append(out, d.dims...)
		d = d.base
	}
	return out
}

// parseDatatype parses a datatype message body.
func parseDatatype(m *meta, body []byte, at int64) (*dtype, error) {
	c := m.cursor(body, at, "datatype message")
	d := parseType(c, 0)
	if c.err != nil {
		return nil, c.err
	}
	return d, nil
}

// parseType parses one datatype at the cursor (members and bases
// recursively, at most maxTypeDepth deep).
func parseType(c *cursor, depth int) *dtype {
	if depth > maxTypeDepth {
		c.fail(errors.ErrUnsupported, "datatypes nested more than %d deep", maxTypeDepth)
		return nil
	}
	start := c.pos
	cv := c.u8()
	bits := c.uint(3)
	size := c.u32()
	if c.err != nil {
		return nil
	}
	version, class := int(cv>>4), int(cv&15)
	d := &dtype{class: class, size: size}
	if version < 1 || version > 5 {
		c.pos = start
		c.fail(errors.ErrUnsupported, "datatype version %d", version)
		return nil
	}
	if class > classComplex {
		c.pos = start
		c.fail(errors.ErrUnsupported, "datatype class %d", class)
		return nil
	}
	if size == 0 {
		c.pos = start
		c.fail(mmapfile.ErrOutOfRange, "a datatype of 0 bytes")
		return nil
	}
	switch class {
	case classFixed:
		d.bigEndian = bits&1 != 0
		d.signed = bits&8 != 0
		off, prec := c.u16(), c.u16()
		d.elem = intType(size, d.signed)
		if !d.elem.Valid() || off != 0 || uint32(prec) != 8*size {
			d.elem = layout.Invalid
			d.unsupported = fmt.Sprintf("a %d-byte integer of %d bits at bit %d", size, prec, off)
		}
	case classFloat:
		d.bigEndian = bits&1 != 0
		sign := (bits >> 8) & 0xff
		off, prec := c.u16(), c.u16()
		eloc, esize, mloc, msize := c.u8(), c.u8(), c.u8(), c.u8()
		bias := c.u32()
		ieee := map[uint32][6]uint64{2: {10, 5, 0, 10, 15, 15}, 4: {23, 8, 0, 23, 127, 31}, 8: {52, 11, 0, 52, 1023, 63}}
		want, ok := ieee[size]
		if bits&0x40 != 0 || !ok || off != 0 || uint32(prec) != 8*size || [6]uint64{uint64(eloc), uint64(esize), uint64(mloc), uint64(msize), uint64(bias), sign} != want {
			d.unsupported = fmt.Sprintf("a %d-byte float (exponent %d bits at %d, mantissa %d bits at %d, bias %d) that is not IEEE half, single or double", size, esize, eloc, msize, mloc, bias)
			break
		}
		d.elem = map[uint32]layout.Type{2: layout.F16, 4: layout.F32, 8: layout.F64}[size]
	case classTime, classBitfield:
		if class == classBitfield {
			d.bigEndian = bits&1 != 0
		}
		c.skip(4)
		d.unsupported = classNames[class] + " values"
	case classString:
		d.pad = int(bits & 15)
		d.utf8 = (bits>>4)&15 == 1
	case classOpaque:
		tag := int(bits & 0xff)
		c.skip(tag)
		c.align8(start + 8)
	case classCompound:
		parseCompound(c, d, version, int(bits&0xffff), depth)
	case classRef:
		d.unsupported = "object and region references"
	case classEnum:
		n := int(bits & 0xffff)
		d.base = parseType(c, depth+1)
		if c.err != nil {
			return nil
		}
		names := make([]string, 0, min(n, len(c.rest())))
		for i := 0; i < n && c.err == nil; i++ {
			s := c.pos
			names = append(names, c.cstring())
			if version < 3 {
				c.align8(s)
			}
		}
		values := c.take(n * int(d.base.size))
		if c.err != nil {
			return nil
		}
		d.bigEndian, d.signed = d.base.bigEndian, d.base.signed
		d.elem, d.unsupported = d.base.elem, d.base.unsupported
		if d.base.class != classFixed {
			d.elem, d.unsupported = layout.Invalid, "an enumeration over "+d.base.typeName()
		}
		if d.base.size == 1 && n == 2 && names[0] == "FALSE" && names[1] == "TRUE" && values[0] == 0 && values[1] == 1 {
			d.isBool, d.elem = true, layout.Bool
		}
	case classVlen:
		d.vstring = bits&15 == 1
		d.pad = int((bits >> 4) & 15)
		d.utf8 = (bits>>8)&15 == 1
		d.base = parseType(c, depth+1)
		if !d.vstring {
			d.unsupported = "variable-length sequences"
		}
	case classArray:
		rank := int(c.u8())
		if version < 3 {
			c.skip(3)
		}
		if rank > maxRank {
			c.fail(errors.ErrUnsupported, "an array datatype of rank %d", rank)
			return nil
		}
		for i := 0; i < rank; i++ {
			d.dims = append(d.dims, int64(c.u32()))
		}
		if version < 3 {
			c.skip(4 * rank)
		}
		d.base = parseType(c, depth+1)
		if c.err != nil {
			return nil
		}
		d.bigEndian, d.elem, d.unsupported = d.base.bigEndian, d.base.elem, d.base.unsupported
		n, err := layout.Count(d.dims)
		if sz, ok := layout.Mul(n, int64(d.base.size)); err != nil || !ok || sz != int64(size) {
			c.pos = start
			c.fail(mmapfile.ErrOutOfRange, "an array datatype of %v × %d bytes is not %d bytes", d.dims, d.base.size, size)
			return nil
		}
		if d.base.class == classArray || d.base.class == classCompound && !d.base.elem.Valid() || d.base.class == classVlen {
			d.elem, d.unsupported = layout.Invalid, "arrays of "+d.base.typeName()
		}
	case classComplex:
		d.base = parseType(c, depth+1)
		if c.err != nil {
			return nil
		}
		d.bigEndian = d.base.bigEndian
		switch {
		case d.base.elem == layout.F32 && size == 8:
			d.elem = layout.C64
		case d.base.elem == layout.F64 && size == 16:
			d.elem = layout.C128
		default:
			d.unsupported = "complex numbers of " + d.base.typeName()
		}
	}
	if c.err != nil {
		return nil
	}
	return d
}

// parseCompound parses a compound datatype's members; h5py's complex
// numbers (members r and i of one float type, at 0 and size/2) become
// c64 or c128.
func parseCompound(c *cursor, d *dtype, version, n, depth int) {
	if n > len(c.rest()) {
		c.fail(mmapfile.ErrTruncated, "%d compound members in %d bytes", n, len(c.rest()))
		return
	}
	offBytes := 4
	if version >= 3 {
		offBytes = 1
		for s := d.size; s > 0xff && offBytes < 4; s >>= 8 {
			offBytes++
		}
	}
	for i := 0; i < n; i++ {
		s := c.pos
		name := c.cstring()
		if version < 3 {
			c.align8(s)
		}
		var off uint32
		if version >= 3 {
			off = uint32(c.uint(offBytes))
		} else {
			off = c.u32()
		}
		if version == 1 {
			c.skip(1 + 3 + 4 + 4 + 16) // dimensionality, reserved, permutation, reserved, dims
		}
		mt := parseType(c, depth+1)
		if c.err != nil {
			return
		}
		if uint64(off)+uint64(mt.size) > uint64(d.size) {
			c.fail(mmapfile.ErrOutOfRange, "compound member %q at %d of %d bytes runs past the compound's %d bytes", name, off, mt.size, d.size)
			return
		}
		d.members = append(d.members, member{name: name, offset: off, typ: mt})
	}
	if len(d.members) == 2 && d.members[0].name == "r" && d.members[1].name == "i" {
		r, im := d.members[0], d.members[1]
		if r.offset == 0 && im.offset == d.size/2 && r.typ.class == classFloat && im.typ.class == classFloat &&
			r.typ.elem == im.typ.elem && r.typ.bigEndian == im.typ.bigEndian && r.typ.size*2 == d.size {
			switch r.typ.elem {
			case layout.F32:
				d.elem = layout.C64
			case layout.F64:
				d.elem = layout.C128
			}
			d.bigEndian = r.typ.bigEndian
		}
	}
}

// intType is the integer type of size bytes.
func intType(size uint32, signed bool) layout.Type {
	switch size {
	case 1:
		return map[bool]layout.Type{true: layout.I8, false: layout.U8}[signed]
	case 2:
		return map[bool]layout.Type{true: layout.I16, false: layout.U16}[signed]
	case 4:
		return map[bool]layout.Type{true: layout.I32, false: layout.U32}[signed]
	case 8:
		return map[bool]layout.Type{true: layout.I64, false: layout.U64}[signed]
	}
	return layout.Invalid
}

// maxRank bounds the rank of dataspaces and array datatypes.
const maxRank = 32

// dataspace is a parsed dataspace message.
type dataspace struct {
	dims, maxDims []uint64
	null          bool // no elements at all (H5S_NULL)
}

func parseDataspace(m *meta, body []byte, at int64) (*dataspace, error) {
	c := m.cursor(body, at, "dataspace message")
	version := c.u8()
	rank := int(c.u8())
	flags := c.u8()
	s := &dataspace{}
	switch version {
	case 1:
		c.skip(5)
	case 2:
		switch typ := c.u8(); typ {
		case 0:
			rank = 0
		case 1:
		case 2:
			s.null = true
			rank = 0
		default:
			return nil, m.errf(at+3, errors.ErrUnsupported, "dataspace type %d", typ)
		}
	default:
		if c.err == nil {
			return nil, m.errf(at, errors.ErrUnsupported, "dataspace version %d", version)
		}
	}
	if rank > maxRank {
		return nil, m.errf(at+1, errors.ErrUnsupported, "dataspace of rank %d (at most %d)", rank, maxRank)
	}
	for i := 0; i < rank; i++ {
		s.dims = append(s.dims, c.length())
	}
	if flags&1 != 0 {
		for i := 0; i < rank; i++ {
			v := c.length()
			if m.sl < 8 && v == 1<<(8*m.sl)-1 {
				v = h5.Unlimited // all ones: unlimited, whatever the width
			}
			s.maxDims = append(s.maxDims, v)
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	for i, d := range s.dims {
		if d > 1<<62 {
			return nil, m.errf(at, mmapfile.ErrOutOfRange, "dataspace dimension %d of %d elements", i, d)
		}
	}
	if s.maxDims == nil {
		s.maxDims = s.dims
	}
	return s, nil
}
