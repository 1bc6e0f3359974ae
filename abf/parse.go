package abf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// headerA is the first 14 bytes of a Format A file, little- and big-endian.
var (
	headerALE = []byte{6, 0, 0, 0, 0, 0, 0, 0, 'L', 'I', 'T', 'T', 'L', 'E'}
	headerABE = []byte{0, 0, 0, 0, 0, 0, 0, 6, 'B', 'I', 'G', ' ', ' ', ' '}
)

// headerASize is the size of Format A's file header; the count is at 14.
const (
	headerASize = 22
	countOffset = 14
)

// window is how much a reader-backed input reads at a time.
const window = 64 << 10

// input is the file being parsed: either the whole mapping, or an
// io.ReaderAt read through a small window.
type input struct {
	name    string
	lenient bool // read a string's last character cut by the end of the file as Julia does
	size    int64
	mem     []byte
	ra      io.ReaderAt
	buf     []byte
	bufOff  int64
}

// get returns the n bytes at off. The caller has checked off+n <= size and,
// for a reader-backed input, n <= window.
func (in *input) get(off int64, n int) ([]byte, error) {
	if in.mem != nil {
		return in.mem[off : off+int64(n)], nil
	}
	if off >= in.bufOff && off+int64(n) <= in.bufOff+int64(len(in.buf)) {
		return in.buf[off-in.bufOff:][:n], nil
	}
	l := min(int64(window), in.size-off)
	if in.buf == nil || int64(cap(in.buf)) < l {
		in.buf = make([]byte, l)
	}
	in.buf = in.buf[:l]
	m, err := in.ra.ReadAt(in.buf, off)
	if m < len(in.buf) {
		in.buf = in.buf[:0]
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	in.bufOff = off
	return in.buf[:n], nil
}

// parser reads records from an input. What it reads of a record goes to
// scratch buffers that every record reuses, so that parsing allocates
// nothing per record beyond what the table keeps.
type parser struct {
	in      *input
	format  Format
	order   binary.ByteOrder
	key     []byte // the key of the record being read
	haveKey bool
	text    []byte  // the type string (Format C) or container (A, B) being read
	dims    []int64 // the dims of the record being read
	types   map[string]typeInfo
	// value is where the value of the record being read begins once its
	// header is whole, else 0; step is what its value's length is a
	// multiple of.
	value, step int64
}

// typeInfo is what a Format C type string says.
type typeInfo struct {
	kind  Kind
	elem  layout.Type
	ndims int
	typ   string // the string itself where it is not the canonical spelling
	ok    bool
}

// maxTypeCache bounds the parser's cache of type strings: files have a
// handful; a crafted file may have one per record.
const maxTypeCache = 256

func (p *parser) errf(off int64, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if p.haveKey {
		msg = fmt.Sprintf("record %s: %s", quote64(string(p.key)), msg)
	}
	return errAt(p.in.name, off, err, msg)
}

func (p *parser) ioErr(off int64, err error) error {
	return p.errf(off, err, "read failed")
}

func (p *parser) int64At(off int64, what string) (int64, error) {
	return p.int64AtOf(off, what, "")
}

// int64AtOf is int64At for the field "what suffix", the name built only
// for an error: opening concatenates nothing per record.
func (p *parser) int64AtOf(off int64, what, suffix string) (int64, error) {
	if left := p.in.size - off; left < 8 {
		return 0, p.errf(off, mmapfile.ErrTruncated, "%s%s truncated (8 bytes needed, %d left)", what, suffix, max(left, 0))
	}
	b, err := p.in.get(off, 8)
	if err != nil {
		return 0, p.ioErr(off, err)
	}
	return int64(p.order.Uint64(b)), nil
}

// str reads a length-prefixed string at off: the prefix counts characters
// (×4 in Format C) and the body is decoded as Julia's read(io, Char) does.
// Its bytes replace *dst's contents; with dst nil they are only counted
// (end minus off+8).
func (p *parser) str(off int64, what string, dst *[]byte) (nchars, end int64, err error) {
	v, err := p.int64AtOf(off, what, " length")
	if err != nil {
		return 0, 0, err
	}
	if v < 0 {
		return 0, 0, p.errf(off, nil, "%s length %d is negative", what, v)
	}
	nchars = v
	if p.format == FormatC {
		if v%4 != 0 {
			return 0, 0, p.errf(off, nil, "%s length %d is not a multiple of 4", what, v)
		}
		nchars = v / 4
	}
	body := off + 8
	if left := p.in.size - body; nchars > left {
		return 0, 0, p.errf(body, mmapfile.ErrTruncated, "%s truncated (%d characters, %d bytes left)", what, nchars, left)
	}
	end, err = p.decode(body, nchars, dst)
	return nchars, end, err
}

// decode reads nchars Julia characters at off (nchars <= bytes left) into
// *dst, or only counts their bytes if dst is nil, and returns where they
// end. Julia reads a character cut short by the end of the file as one
// character; unless the input is lenient, that is a torn string here.
func (p *parser) decode(off, nchars int64, dst *[]byte) (int64, error) {
	if dst != nil {
		*dst = (*dst)[:0]
	}
	if nchars == 0 {
		return off, nil
	}
	torn := func(done int64) error {
		return p.errf(off, mmapfile.ErrTruncated, "string truncated (%d characters, %d read before end of file)", nchars, done)
	}
	if p.in.mem != nil {
		b := p.in.mem[off:]
		n, done, cut := decodeChars(b, nchars, true)
		if done < nchars {
			return 0, torn(done)
		}
		if cut && !p.in.lenient {
			return 0, torn(done - 1)
		}
		if dst != nil {
			*dst = append(*dst, b[:n]...)
		}
		return off + int64(n), nil
	}
	at, want := off, nchars
	for nchars > 0 {
		// A character takes at most 4 bytes: ask for no more than the
		// characters left can take, so that short strings come from the
		// window already read.
		n := min(int64(window), p.in.size-at, 4*min(nchars, window))
		if n == 0 {
			return 0, torn(want - nchars)
		}
		chunk, err := p.in.get(at, int(n))
		if err != nil {
			return 0, p.ioErr(at, err)
		}
		used, done, cut := decodeChars(chunk, nchars, at+n == p.in.size)
		if cut && done == nchars && !p.in.lenient {
			return 0, torn(want - 1)
		}
		if dst != nil {
			*dst = append(*dst, chunk[:used]...)
		}
		at += int64(used)
		nchars -= done
	}
	return at, nil
}

// decodeChars consumes up to nchars characters of b by Julia's rules and
// returns the bytes used and characters read, and whether the last of
// them was cut short by the end of b (only when atEOF). Unless atEOF, it
// stops while fewer than 4 bytes remain, so a character is never cut at
// b's end.
func decodeChars(b []byte, nchars int64, atEOF bool) (used int, done int64, cut bool) {
	i := 0
	for done < nchars && i < len(b) {
		if !atEOF && len(b)-i < 4 {
			break
		}
		lead := b[i]
		i++
		done++
		cut = false
		if lead < 0x80 {
			continue
		}
		more := 0
		switch {
		case lead&0xE0 == 0xC0:
			more = 1
		case lead&0xF0 == 0xE0:
			more = 2
		case lead&0xF8 == 0xF0:
			more = 3
		}
		for ; more > 0 && i < len(b) && b[i]&0xC0 == 0x80; more-- {
			i++
		}
		cut = more > 0 && i == len(b)
	}
	return i, done, cut
}

// juliaChars is Julia's length(s) for the bytes of s.
func juliaChars(s string) int64 {
	if utf8.ValidString(s) {
		return int64(utf8.RuneCountInString(s))
	}
	_, n, _ := decodeChars([]byte(s), int64(len(s)), true)
	return n
}

// quote64 quotes at most 64 characters of s for an error message.
func quote64(s string) string {
	if utf8.RuneCountInString(s) <= 64 {
		return fmt.Sprintf("%q", s)
	}
	i, n := 0, 0
	for i = range s {
		if n == 64 {
			break
		}
		n++
	}
	return fmt.Sprintf("%q…", s[:i])
}

// parseTypeC parses a Format C type string, lenient spellings included.
func parseTypeC(s string) (kind Kind, elem layout.Type, ndims int, ok bool) {
	switch s {
	case "String":
		return KindString, layout.Invalid, 0, true
	case "DataType":
		return KindDataType, layout.Invalid, 0, true
	case "BitVector":
		return KindBitArray, layout.Invalid, 1, true
	case "BitMatrix":
		return KindBitArray, layout.Invalid, 2, true
	}
	for _, pre := range []string{"AbfSerializer", "AlignedBinaryFormat.AbfSerializer", "Serialized{", "AlignedBinaryFormat.Serialized{"} {
		if strings.HasPrefix(s, pre) {
			return KindSerialized, layout.Invalid, 0, true
		}
	}
	inner, found := cutBraces(s, "Array")
	if found {
		i := strings.LastIndexByte(inner, ',')
		if i < 0 {
			return
		}
		t, known := juliaTypes[inner[:i]]
		n, nok := parseDims(inner[i+1:])
		if !known || !nok {
			return
		}
		return KindArray, t, n, true
	}
	if inner, found = cutBraces(s, "BitArray"); found {
		n, nok := parseDims(inner)
		if !nok {
			return
		}
		return KindBitArray, layout.Invalid, n, true
	}
	for name, n := range map[string]int{"Vector": 1, "Matrix": 2} {
		if inner, found = cutBraces(s, name); found {
			if t, known := juliaTypes[inner]; known {
				return KindArray, t, n, true
			}
			return
		}
	}
	return
}

// cutBraces returns what is between "name{" and a final "}".
func cutBraces(s, name string) (string, bool) {
	if len(s) < len(name)+2 || !strings.HasPrefix(s, name) || s[len(name)] != '{' || s[len(s)-1] != '}' {
		return "", false
	}
	return s[len(name)+1 : len(s)-1], true
}

// parseDims parses N as Julia's parse(Int, s) would (surrounding
// whitespace allowed), limited to decimal digits and 0 <= N <= MaxDims.
func parseDims(s string) (int, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' })
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n <= MaxDims
}

// flag reads a B/C record's byte-order flag and sets the parser's order.
func (p *parser) flag(off int64) (bool, error) {
	if off >= p.in.size {
		return false, p.errf(off, mmapfile.ErrTruncated, "byte-order flag truncated")
	}
	b, err := p.in.get(off, 1)
	if err != nil {
		return false, p.ioErr(off, err)
	}
	switch b[0] {
	case 0x00:
		p.order = binary.LittleEndian
		return false, nil
	case 0xFF:
		p.order = binary.BigEndian
		return true, nil
	}
	return false, p.errf(off, nil, "byte-order flag 0x%02x is neither 0x00 nor 0xff", b[0])
}

// record parses the record starting at start in the parser's format. Its
// key is left in p.key and its dims in p.dims; typ is its type string
// where that is not the canonical spelling.
func (p *parser) record(start int64) (e entry, typ string, err error) {
	p.haveKey = false
	p.value, p.step = 0, 1
	e.start = start
	off := start
	if p.format != FormatA {
		be, err := p.flag(off)
		if err != nil {
			return e, "", err
		}
		if be {
			e.flags |= flagBigEndian
		}
		off++
	} else if p.order == binary.BigEndian {
		e.flags |= flagBigEndian
	}
	if _, off, err = p.str(off, "key", &p.key); err != nil {
		return e, "", err
	}
	p.haveKey = true
	if p.format == FormatC {
		typeOff := off
		if _, off, err = p.str(off, "type", &p.text); err != nil {
			return e, "", err
		}
		ti := p.typeC()
		if !ti.ok {
			return e, "", p.errf(typeOff, nil, "type %s not recognized", quote64(string(p.text)))
		}
		e.kind, e.elem = ti.kind, ti.elem
		return e, ti.typ, p.body(&e, off, ti.ndims)
	}
	contOff := off
	if _, off, err = p.str(off, "container", &p.text); err != nil {
		return e, "", err
	}
	switch {
	case bytes.Equal(p.text, []byte("Array")):
		elemOff := off
		if _, off, err = p.str(off, "element type", &p.text); err != nil {
			return e, "", err
		}
		t, ok := juliaTypes[string(p.text)]
		if !ok {
			return e, "", p.errf(elemOff, nil, "element type %s not recognized", quote64(string(p.text)))
		}
		e.kind, e.elem = KindArray, t
	case bytes.Equal(p.text, []byte("BitArray")):
		e.kind = KindBitArray
	case bytes.Equal(p.text, []byte("String")):
		e.kind = KindString
		return e, "", p.body(&e, off, 0)
	default:
		return e, "", p.errf(contOff, nil, "container %s not recognized", quote64(string(p.text)))
	}
	n, err := p.int64At(off, "number of dimensions")
	if err != nil {
		return e, "", err
	}
	if n < 0 || n > MaxDims {
		return e, "", p.errf(off, nil, "number of dimensions %d is outside [0, %d]", n, MaxDims)
	}
	return e, "", p.body(&e, off+8, int(n))
}

// typeC parses the Format C type string in p.text, through a cache.
func (p *parser) typeC() typeInfo {
	if ti, ok := p.types[string(p.text)]; ok {
		return ti
	}
	s := string(p.text)
	var ti typeInfo
	ti.kind, ti.elem, ti.ndims, ti.ok = parseTypeC(s)
	if ti.ok && s != canonicalType(ti.kind, ti.elem, ti.ndims) {
		ti.typ = s
	}
	if p.types == nil {
		p.types = map[string]typeInfo{}
	}
	if len(p.types) < maxTypeCache {
		p.types[s] = ti
	}
	return ti
}

// body parses what follows the type: dims, padding and payload of arrays,
// the value of Strings, the length and bytes of serialized records.
func (p *parser) body(e *entry, off int64, ndims int) error {
	size := p.in.size
	p.dims = p.dims[:0]
	switch e.kind {
	case KindString:
		if off+8 <= size {
			p.value = off + 8
		}
		nchars, end, err := p.str(off, "string value", nil)
		if err != nil {
			return err
		}
		p.dims = append(p.dims, nchars)
		e.data, e.dataLen = off+8, end-(off+8)
		return nil
	case KindDataType, KindSerialized:
		n, err := p.int64At(off, "serialized length")
		if err != nil {
			return err
		}
		if n < 0 {
			return p.errf(off, nil, "serialized length %d is negative", n)
		}
		p.value = off + 8
		if left := size - (off + 8); n > left {
			return p.errf(off+8, mmapfile.ErrTruncated, "serialized value truncated (%d bytes needed, %d left)", n, left)
		}
		e.data, e.dataLen = off+8, n
		return nil
	}
	if left := size - off; int64(ndims)*8 > left {
		k := left / 8
		return p.errf(off+8*k, mmapfile.ErrTruncated, "dimension %d truncated (8 bytes needed, %d left)", k+1, left-8*k)
	}
	for i := range ndims {
		v, err := p.int64At(off+8*int64(i), "dimension")
		if err != nil {
			return err
		}
		if v < 0 {
			return p.errf(off+8*int64(i), nil, "dimension %d is negative (%d)", i+1, v)
		}
		p.dims = append(p.dims, v)
	}
	dims := p.dims
	count := int64(1)
	if !containsZero(dims) {
		for i, d := range dims {
			var ok bool
			if count, ok = layout.Mul(count, d); !ok {
				return p.errf(off+8*int64(i), nil, "dimensions %v: element count overflows int64 at dimension %d", dims, i+1)
			}
		}
	} else {
		count = 0
	}
	hdrEnd := off + 8*int64(ndims)
	nbytes, align, ok := payloadSize(e.kind, e.elem, count)
	if !ok {
		return p.errf(off, nil, "dimensions %v: payload size overflows int64", dims)
	}
	pos, err := layout.AlignUp(hdrEnd, align)
	if err != nil {
		return p.errf(hdrEnd, nil, "aligned payload offset overflows int64")
	}
	end, ok := layout.Add(pos, nbytes)
	if !ok {
		return p.errf(pos, nil, "payload end overflows int64 (%d bytes at %d)", nbytes, pos)
	}
	p.value, p.step = pos, max(align, 1)
	if end > size && nbytes > 0 {
		return p.errf(pos, mmapfile.ErrTruncated, "payload truncated (%d bytes needed, %d left)", nbytes, max(size-pos, 0))
	}
	e.data, e.dataLen, e.pad = pos, nbytes, uint8(pos-hdrEnd)
	return nil
}

func containsZero(dims []int64) bool {
	for _, d := range dims {
		if d == 0 {
			return true
		}
	}
	return false
}

// payloadSize returns the bytes and alignment of an array's payload of
// count elements: count·sizeof(T), or ⌈count/64⌉ words for a BitArray.
func payloadSize(kind Kind, elem layout.Type, count int64) (nbytes, align int64, ok bool) {
	if kind == KindBitArray {
		words := count / 64
		if count%64 != 0 {
			words++
		}
		nbytes, ok = layout.Mul(words, 8)
		return nbytes, 8, ok
	}
	size := int64(elem.Size())
	nbytes, ok = layout.Mul(count, size)
	return nbytes, size, ok
}

// parsed is the result of parsing a whole file.
type parsed struct {
	format   Format
	tab      table
	end      int64 // end of the last record (22 for an A file without records)
	count    int64 // Format A's record count
	damage   error // the error that ended a salvaged parse
	trailing int64
	// cutValue is where the damaged record's value begins when the damage
	// is that value cut short, its header whole (0 otherwise); cutStep is
	// what the value's length is a multiple of.
	cutValue, cutStep int64
	// notTorn says why damage that would leave no record is not what an
	// interrupted append leaves ("" when it may be).
	notTorn string
}

// seq parses records from start: count of them (Format A) or to EOF
// (count < 0). It returns what it parsed before an error, and the error.
// Duplicate keys are found once the records are read: the first record
// whose key an earlier one has ends the file there.
func (p *parser) seq(res *parsed, start, count int64) error {
	tab := &res.tab
	off := start
	var perr error
	for i := int64(0); ; i++ {
		if count >= 0 {
			if i >= count {
				break
			}
		} else if off >= p.in.size {
			break
		}
		e, typ, err := p.record(off)
		if err != nil && tab.len() > 0 {
			// Upstream never writes the padding of an empty array, so the
			// next record may start at the end of its header.
			last := tab.last()
			if (last.kind == KindArray || last.kind == KindBitArray) && last.dataLen == 0 && last.pad > 0 && !last.unpadded() {
				if e2, typ2, err2 := p.record(last.hdrEnd()); err2 == nil {
					tab.setFlag(&last, flagUnpadded)
					e, typ, err = e2, typ2, nil
				}
			}
		}
		if err == nil && !tab.canAdd() {
			err = p.errf(e.start, errors.ErrUnsupported, "more records than this package can index")
		}
		if err != nil {
			perr = err
			if errors.Is(err, mmapfile.ErrTruncated) && p.value > 0 {
				res.cutValue, res.cutStep = p.value, p.step
			}
			break
		}
		tab.add(&e, p.key, p.dims, typ)
		off = e.end()
	}
	res.end = off
	if j, of := tab.indexNew(); j >= 0 {
		e, first := tab.at(j), tab.at(of)
		tab.truncate(j)
		res.end = e.start
		return errAt(p.in.name, e.start, ErrDuplicateKey, fmt.Sprintf("record %s duplicates the key of the record at offset %d", keyOf(&e), first.start))
	}
	return perr
}

// headerWorks reports whether the first record's flag, key and type parse
// in format C or B: how a file without Format A's header is told apart.
// With partial set, in may hold only the first bytes of the file, and a
// header cut short by their end counts as working.
func headerWorks(in *input, f Format, partial bool) bool {
	p := &parser{in: in, format: f}
	cut := func(err error) bool { return partial && errors.Is(err, mmapfile.ErrTruncated) }
	if _, err := p.flag(0); err != nil {
		return cut(err)
	}
	_, off, err := p.str(1, "key", nil)
	if err != nil {
		return cut(err)
	}
	if _, _, err := p.str(off, "type", &p.text); err != nil {
		return cut(err)
	}
	if f == FormatC {
		return p.typeC().ok
	}
	typ := string(p.text)
	return typ == "Array" || typ == "BitArray" || typ == "String"
}

// parseFile detects the format and parses every record. With salvage, a
// damaged record ends the parse and is reported in damage instead.
func parseFile(in *input, salvage bool) (*parsed, error) {
	if in.size == 0 {
		return &parsed{format: FormatC}, nil
	}
	if in.size >= int64(len(headerALE)) {
		head, err := in.get(0, len(headerALE))
		if err != nil {
			return nil, errAt(in.name, 0, err, "read failed")
		}
		if bytes.Equal(head, headerALE) || bytes.Equal(head, headerABE) {
			order := binary.ByteOrder(binary.LittleEndian)
			if head[0] == 0 {
				order = binary.BigEndian
			}
			return parseA(in, order, salvage)
		}
	}
	first, err := in.get(0, 1)
	if err != nil {
		return nil, errAt(in.name, 0, err, "read failed")
	}
	if first[0] != 0x00 && first[0] != 0xFF {
		return nil, errAt(in.name, 0, nil, "not an ABF file")
	}
	okC, okB := headerWorks(in, FormatC, false), headerWorks(in, FormatB, false)
	format := FormatC
	if okB && !okC {
		format = FormatB
	}
	if okB && okC {
		// Only crafted keys get here: keep the format that parses to EOF,
		// preferring C.
		res := &parsed{format: FormatC}
		if err := (&parser{in: in, format: FormatC}).seq(res, 0, -1); err == nil {
			return res, nil
		}
		res = &parsed{format: FormatB}
		if err := (&parser{in: in, format: FormatB}).seq(res, 0, -1); err == nil {
			return res, nil
		}
	}
	res := &parsed{format: format}
	if err := (&parser{in: in, format: format}).seq(res, 0, -1); err != nil {
		if !salvage {
			return nil, err
		}
		res.damage = err
		res.trailing = in.size - res.end
	}
	return res, nil
}

// whyNotTorn says why damage that ends the first record is not what an
// interrupted append leaves, or "" if it may be: an append writes a
// record's header whole, so a header cut short is other damage, and so
// is a value that holds a whole record where it could end (a corrupted
// length, not a tear).
func whyNotTorn(in *input, res *parsed) string {
	if res.cutValue == 0 {
		return "the first record's header is cut short, which no interrupted append leaves"
	}
	for s := res.cutValue; s < in.size; s += res.cutStep {
		b, err := in.get(s, 1)
		if err != nil {
			return ""
		}
		if b[0] != 0x00 && b[0] != 0xFF {
			continue
		}
		if _, _, err := (&parser{in: in, format: res.format}).record(s); err == nil {
			return fmt.Sprintf("a whole record parses at offset %d, inside the value the first record's header claims, which a corrupted length makes and an interrupted append does not", s)
		}
	}
	return ""
}

func parseA(in *input, order binary.ByteOrder, salvage bool) (*parsed, error) {
	p := &parser{in: in, format: FormatA, order: order}
	count, err := p.int64At(countOffset, "record count")
	if err != nil {
		return nil, err
	}
	if count < 0 {
		return nil, p.errf(countOffset, nil, "record count %d is negative", count)
	}
	res := &parsed{format: FormatA, count: count}
	if err := p.seq(res, headerASize, count); err != nil {
		if !salvage {
			return nil, err
		}
		res.damage = err
	}
	res.trailing = max(in.size-res.end, 0)
	return res, nil
}
