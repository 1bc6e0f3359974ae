package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// magic starts every .npy file.
const magic = "\x93NUMPY"

// MaxRank is the most dimensions an array may have, as in NumPy 2
// (NPY_MAXDIMS; NumPy 1.x stops at 32). A header whose shape has more is
// refused before its entries are read, and writers refuse such arrays.
const MaxRank = 64

// NumPyMaxHeader is the longest header text (the dict, its padding and
// newline, in characters) that np.load reads by default (NumPy >= 1.24's
// max_header_size): a longer one it refuses unless given allow_pickle=True
// or a larger max_header_size. Writers refuse to write longer headers
// unless Options.LargeHeaders says so.
const NumPyMaxHeader = 10000

// checkHeaderLen refuses an encoded header (Encode's bytes) whose text is
// longer than NumPyMaxHeader characters, unless large.
func checkHeaderLen(hdr []byte, large bool) error {
	if large {
		return nil
	}
	text := hdr[10:]
	if hdr[6] != 1 {
		text = hdr[12:]
	}
	n := len(text)
	if hdr[6] == 3 {
		n = utf8.RuneCount(text)
	}
	if n > NumPyMaxHeader {
		return fmt.Errorf("a header of %d characters, which np.load refuses by default (NumPy reads at most %d without allow_pickle=True or a larger max_header_size); the npy-large-headers option (Options.LargeHeaders) writes it anyway", n, NumPyMaxHeader)
	}
	return nil
}

// Header is what a .npy header says about its array.
type Header struct {
	DType DType
	// Shape is the array's shape; empty for a 0-d array (a scalar).
	Shape []int64
	// FortranOrder: the data are stored in column-major (Fortran)
	// order, the first index varying fastest; else in C order.
	FortranOrder bool
}

// Order returns the storage order as layout names it.
func (h *Header) Order() layout.Order {
	if h.FortranOrder {
		return layout.ColMajor
	}
	return layout.RowMajor
}

// Count returns the number of elements, checked for overflow.
func (h *Header) Count() (int64, error) { return layout.Count(h.Shape) }

// DataSize returns the size of the data in bytes, checked for overflow.
func (h *Header) DataSize() (int64, error) {
	n, err := layout.Count(h.Shape)
	if err != nil {
		return 0, err
	}
	b, ok := layout.Mul(n, int64(h.DType.ItemSize))
	if !ok {
		return 0, fmt.Errorf("shape %s of %d-byte items: data size %w", shapeRepr(h.Shape), h.DType.ItemSize, layout.ErrOverflow)
	}
	return b, nil
}

// npyHeader is a parsed header and where its parts lie, relative to the
// start of the .npy bytes.
type npyHeader struct {
	Header
	major, minor byte
	textOff      int64 // the header text: 10 (1.0) or 12 (2.0, 3.0)
	textLen      int64 // HEADER_LEN
	count        int64
	dataSize     int64
	// The span of the shape tuple in the header text, which an append
	// rewrites.
	shapePos, shapeEnd int
	// fields are a structured dtype's fields; DType.Fields is nil.
	fields *fieldTable
}

// full returns the Header with its dtype's fields.
func (h *npyHeader) full() Header {
	out := h.Header
	if h.fields != nil {
		out.DType.Fields = h.fields.fields()
	}
	return out
}

func (h *npyHeader) dataOff() int64 { return h.textOff + h.textLen }

func (h *npyHeader) version() string {
	if h.minor == 0 && h.major >= 1 && h.major <= 3 {
		return [...]string{"1.0", "2.0", "3.0"}[h.major-1] // without an allocation per member
	}
	return fmt.Sprintf("%d.%d", h.major, h.minor)
}

// readHeader reads and checks the .npy header at offset base of ra, whose
// .npy bytes end at limit (the file's size, or a member's end). Errors
// name absolute offsets; a header cut short is mmapfile.ErrTruncated at
// limit.
func readHeader(file string, ra io.ReaderAt, base, limit int64) (*npyHeader, error) {
	avail := limit - base
	short := func(what string, need int64) error {
		return errAt(file, limit, mmapfile.ErrTruncated, "%s needs %d bytes from offset %d; the .npy data ends at %d", what, need, base, limit)
	}
	var pre [12]byte
	n := min(avail, 12)
	if err := readFull(ra, pre[:n], base); err != nil {
		return nil, mapErr(file, base, err, "reading the .npy header")
	}
	for i := 0; i < len(magic) && int64(i) < n; i++ {
		if pre[i] != magic[i] {
			return nil, errAt(file, base+int64(i), ErrMagic, "byte 0x%02x", pre[i])
		}
	}
	if n < 8 {
		return nil, short("the magic and version", 8)
	}
	h := &npyHeader{major: pre[6], minor: pre[7]}
	switch {
	case h.major == 1 && h.minor == 0:
		h.textOff = 10
	case (h.major == 2 || h.major == 3) && h.minor == 0:
		h.textOff = 12
	default:
		return nil, errAt(file, base+6, fmt.Errorf("%w: %w", ErrHeader, errors.ErrUnsupported), "format version %d.%d (NumPy writes 1.0, 2.0 and 3.0)", h.major, h.minor)
	}
	if n < h.textOff {
		return nil, short("the header length", h.textOff)
	}
	if h.major == 1 {
		h.textLen = int64(binary.LittleEndian.Uint16(pre[8:]))
	} else {
		h.textLen = int64(binary.LittleEndian.Uint32(pre[8:]))
	}
	if h.textLen > avail-h.textOff {
		return nil, errAt(file, limit, mmapfile.ErrTruncated, "the header length at offset %d says %d bytes; only %d follow", base+8, h.textLen, avail-h.textOff)
	}
	// A deflated member may declare more than its stream holds: read it
	// in pieces, so that memory follows the bytes that are really there.
	// Other readers hold the bytes that limit says.
	piece := h.textLen
	if _, inflated := ra.(*inflater); inflated {
		piece = 1 << 20
	}
	text := make([]byte, 0, min(h.textLen, piece))
	for int64(len(text)) < h.textLen {
		k := min(h.textLen-int64(len(text)), piece)
		at := len(text)
		text = slices.Grow(text, int(k))[:at+int(k)]
		if err := readFull(ra, text[at:], base+h.textOff+int64(at)); err != nil {
			return nil, mapErr(file, base+h.textOff, err, "reading the .npy header")
		}
	}
	textBase := base + h.textOff
	if err := h.parse(file, text, textBase); err != nil {
		return nil, err
	}
	return h, nil
}

// readFull reads len(p) bytes at off.
func readFull(ra io.ReaderAt, p []byte, off int64) error {
	n, err := ra.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = mmapfile.ErrTruncated
	}
	return err
}

// parse reads the header text (at absolute offset textBase) into h.
func (h *npyHeader) parse(file string, text []byte, textBase int64) error {
	bad := func(pos int, err error, format string, args ...any) error {
		return errAt(file, textBase+int64(pos), err, format, args...)
	}
	var derr error
	err := parseLiteral(text, h.major < 3, h.major < 3, func(v pyValue, scans []*fieldScan) {
		derr = h.dict(text, v, scans, bad)
	})
	var se *syntaxError
	if errors.As(err, &se) {
		return bad(se.pos, ErrHeader, "%s", se.msg)
	}
	if err != nil {
		return bad(0, ErrHeader, "%v", err)
	}
	return derr
}

// headerKey is the index of a header's key in dict's values, or -1.
func headerKey(k string) int {
	switch k {
	case "descr":
		return 0
	case "fortran_order":
		return 1
	case "shape":
		return 2
	}
	return -1
}

// dict reads the header's literal v, whose descr lists were read by
// scans, into h.
func (h *npyHeader) dict(text []byte, v pyValue, scans []*fieldScan, bad func(pos int, err error, format string, args ...any) error) error {
	if v.kind != pyDict {
		return bad(v.pos, ErrHeader, "the header is a %s, not a dict", v.kind)
	}
	for i := 0; i < len(v.items); i += 2 {
		if k := v.items[i]; k.kind != pyStr {
			return bad(k.pos, ErrHeader, "a header key is a %s; the keys are 'descr', 'fortran_order' and 'shape'", k.kind)
		}
	}
	var vals [3]pyValue // descr, fortran_order, shape
	var have [3]bool
	for i := 0; i < len(v.items); i += 2 {
		k := v.items[i].s
		j := headerKey(k)
		if j < 0 {
			return bad(v.pos, ErrHeader, "unexpected key %s; the keys are 'descr', 'fortran_order' and 'shape'", pyRepr(k))
		}
		vals[j], have[j] = v.items[i+1], true // a repeated key: the last wins, as in Python
	}
	for j, k := range []string{"descr", "fortran_order", "shape"} {
		if !have[j] {
			return bad(v.pos, ErrHeader, "the header has no %s key", pyRepr(k))
		}
	}
	var err error
	fo := vals[1]
	if fo.kind != pyBool {
		return bad(fo.pos, ErrHeader, "fortran_order is a %s, not True or False", fo.kind)
	}
	h.FortranOrder = fo.b
	sv := vals[2]
	if sv.kind != pyTuple {
		return bad(sv.pos, ErrHeader, "shape is a %s, not a tuple of ints", sv.kind)
	}
	h.shapePos, h.shapeEnd = sv.pos, sv.end
	h.Shape = make([]int64, len(sv.items))
	for i, d := range sv.items {
		switch {
		case d.kind != pyInt:
			return bad(d.pos, ErrHeader, "shape entry %d is a %s, not an int", i, d.kind)
		case d.overflow && strings.HasPrefix(strings.TrimSpace(string(text[d.pos:d.end])), "-"):
			return bad(d.pos, layout.ErrNegative, "shape entry %d is negative", i)
		case d.overflow:
			return bad(d.pos, layout.ErrOverflow, "shape entry %d does not fit in 64 bits", i)
		case d.i < 0:
			return bad(d.pos, layout.ErrNegative, "shape entry %d is %d", i, d.i)
		}
		h.Shape[i] = d.i
	}
	dv := vals[0]
	if dv.kind == pyList && dv.i > 0 {
		h.DType, h.fields, err = scans[dv.i-1].finish(dv)
	} else if h.DType, err = parseDescr(dv); err == nil && h.DType.Structured() {
		h.DType, h.fields = tableOf(h.DType)
	}
	if err != nil {
		pos := dv.pos
		var de *descrError
		if errors.As(err, &de) {
			pos, err = de.pos, de.err
		}
		if errors.Is(err, ErrHeader) || errors.Is(err, errors.ErrUnsupported) || errors.Is(err, layout.ErrOverflow) {
			return bad(pos, err, "descr")
		}
		return bad(pos, fmt.Errorf("%w: %w", ErrHeader, err), "descr")
	}
	if h.count, err = layout.Count(h.Shape); err != nil {
		return bad(sv.pos, err, "shape %s", shapeRepr(h.Shape))
	}
	if h.dataSize, err = h.DataSize(); err != nil {
		return bad(sv.pos, err, "shape %s", shapeRepr(h.Shape))
	}
	return nil
}

// growthAxisDigits is NumPy's GROWTH_AXIS_MAX_DIGITS: the header keeps
// room for a growth-axis length of this many digits.
const growthAxisDigits = 21

// appendDictText appends to dst the header's dict as np.save writes it
// (UTF-8), with the spaces that leave room for the growth axis to
// lengthen; descr appends the dtype's descr.
func (h *Header) appendDictText(dst []byte, descr func([]byte) []byte) []byte {
	fo := "False"
	if h.FortranOrder {
		fo = "True"
	}
	dst = append(dst, "{'descr': "...)
	dst = descr(dst)
	dst = append(dst, ", 'fortran_order': "...)
	dst = append(dst, fo...)
	dst = append(dst, ", 'shape': "...)
	dst = append(dst, shapeRepr(h.Shape)...)
	dst = append(dst, ", }"...)
	if len(h.Shape) > 0 {
		axis := 0
		if h.FortranOrder {
			axis = len(h.Shape) - 1
		}
		var digits [24]byte
		for range max(0, growthAxisDigits-len(strconv.AppendInt(digits[:0], h.Shape[axis], 10))) {
			dst = append(dst, ' ')
		}
	}
	return dst
}

// check verifies a header given to a writer.
func (h *Header) check() error {
	if err := h.DType.check(); err != nil {
		return err
	}
	if len(h.Shape) > MaxRank {
		return fmt.Errorf("%d dimensions; NumPy arrays have at most %d", len(h.Shape), MaxRank)
	}
	_, err := h.DataSize()
	return err
}

// Encode returns the header as np.save writes it for this array: magic,
// version, length, the dict, spaces and a newline, so that the data that
// follow start at a multiple of 64. The version is the oldest that can
// hold the header: 1.0, else 2.0 (a header longer than 65535 bytes), else
// 3.0 (field names that latin-1 cannot encode).
func (h *Header) Encode() ([]byte, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	return h.encode(h.DType.appendDescr, 128), nil
}

// encoded is the header np.save writes for the array h describes (see
// canonical), its fields written from their table: a header that parsed
// needs no check, and a hundred thousand fields need no Field each.
func (h *npyHeader) encoded() []byte {
	c := canonical(h.Header)
	if h.fields == nil {
		return c.encode(c.DType.appendDescr, 128)
	}
	// Room for the text as long as it was: np.save's text is written
	// without growing the buffer.
	return c.encode(func(b []byte) []byte { return appendFieldsDescr(b, h.fields.len(), h.fields.field, h.DType.ItemSize) }, int(h.textLen)+128)
}

// encode is Encode of a header known to be valid, its descr appended by
// descr, into a buffer of room bytes to start with.
func (h *Header) encode(descr func([]byte) []byte, room int) []byte {
	// The text is built where a version 2.0 header puts it, in the
	// buffer that is returned: a header of ASCII text (nearly all) takes
	// that one allocation.
	const pre2 = 12
	b := h.appendDictText(make([]byte, pre2, pre2+room), descr)
	text := b[pre2:]
	ascii := true
	for _, c := range text {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if !ascii {
		return encodeDictText(string(text))
	}
	if w, ok := wrapHeaderIn(b, 1); ok {
		return w
	}
	w, _ := wrapHeaderIn(b, 2)
	return w
}

// encodeDictText is Encode for a dict text that is not ASCII: latin-1 in
// version 1.0 or 2.0 where every character is one, else UTF-8 in 3.0.
func encodeDictText(text string) []byte {
	latin1 := true
	for _, r := range text {
		if r > 0xff {
			latin1 = false
			break
		}
	}
	if latin1 {
		enc := make([]byte, 0, len(text))
		for _, r := range text {
			enc = append(enc, byte(r))
		}
		if b, ok := wrapHeader(enc, 1); ok {
			return b
		}
		b, _ := wrapHeader(enc, 2)
		return b
	}
	b, _ := wrapHeader([]byte(text), 3)
	return b
}

// wrapHeaderIn is wrapHeader for a text that b holds from offset 12 on:
// it puts the magic, version and length before it (moving it for a
// version 1.0 header's shorter prefix) and pads it in place.
func wrapHeaderIn(b []byte, major byte) ([]byte, bool) {
	text := b[12:]
	pre := int64(12)
	if major == 1 {
		pre = 10
	}
	hlen := int64(len(text)) + 1
	pad := 64 - (pre+hlen)%64
	total := hlen + pad
	if major == 1 && total > 0xffff {
		return nil, false
	}
	if major == 1 {
		b = b[:10+copy(b[10:], text)]
		binary.LittleEndian.PutUint16(b[8:], uint16(total))
	} else {
		binary.LittleEndian.PutUint32(b[8:], uint32(total))
	}
	copy(b, magic)
	b[6], b[7] = major, 0
	for range pad {
		b = append(b, ' ')
	}
	return append(b, '\n'), true
}

// wrapHeader is the header of the given version around the dict text:
// magic, version, length, the text, then spaces and a newline up to a
// multiple of 64 bytes; false if a 1.0 header cannot say its length.
func wrapHeader(text []byte, major byte) ([]byte, bool) {
	return wrapHeaderIn(append(make([]byte, 12, 12+len(text)+64), text...), major)
}

// regrow returns the header text with the shape tuple replaced by shape's
// repr and the padding adjusted so that the text keeps its length: what
// an append writes over the old header. ErrNoRoom if it does not fit.
func (h *npyHeader) regrow(text []byte, shape []int64) ([]byte, error) {
	body := make([]byte, 0, len(text))
	body = append(body, text[:h.shapePos]...)
	body = append(body, shapeRepr(shape)...)
	body = append(body, text[h.shapeEnd:]...)
	nl := len(text) > 0 && text[len(text)-1] == '\n'
	body = bytes.TrimRight(body, " \n")
	room := len(text)
	if nl {
		room--
	}
	if len(body) > room {
		return nil, fmt.Errorf("shape %s needs %d bytes of header, the header has %d: %w", shapeRepr(shape), len(body)+1, len(text), ErrNoRoom)
	}
	out := append(body, bytes.Repeat([]byte{' '}, room-len(body))...)
	if nl {
		out = append(out, '\n')
	}
	return out, nil
}
