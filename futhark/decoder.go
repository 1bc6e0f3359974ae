package futhark

import (
	"bytes"
	"errors"
	"io"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Header describes the value a Decoder is positioned at.
type Header struct {
	Binary bool
	Type   layout.Type
	Shape  []int64
	Offset int64 // stream offset of the value's first byte
}

// Len returns the element count.
func (h Header) Len() int64 { n, _ := layout.Count(h.Shape); return n }

// PayloadSize returns the payload size in bytes.
func (h Header) PayloadSize() int64 { n, _ := layout.ByteSize(h.Type, h.Shape); return n }

// Decoder reads Futhark values one by one from a stream, binary and text
// mixed, accepting what futhark-data accepts. Binary payloads are passed
// through in chunks by Read, so a value larger than memory can be copied
// or converted; a text value is parsed whole into memory when Next
// reaches it. Unlike futhark-data, which rejects a whole input with any
// error in it, a Decoder returns the values before the error first.
type Decoder struct {
	r    io.Reader
	opts Options
	buf  []byte
	pos  int
	base int64 // stream offset of buf[0]
	eof  bool
	rerr error
	line int // line and column of buf[0]
	col  int

	afterText bool
	inValue   bool
	cur       Header
	left      int64 // binary payload bytes still unread
	text      []byte
	textPos   int
	textEnd   int64 // stream offset after the last token of the text value
	err       error // sticky format error

	// For File's index of an io.ReaderAt: skipTo seeks over payloads, and
	// text values are decoded only while they fit in keep bytes.
	indexing bool
	keep     int
	fillHint int // read at least this much at a time
}

// NewDecoder returns a Decoder reading r with default options.
func NewDecoder(r io.Reader) *Decoder { return NewDecoderOptions(r, nil) }

// NewDecoderOptions returns a Decoder reading r with options o (Lenient,
// StrictIntegers; the others are for files).
func NewDecoderOptions(r io.Reader, o *Options) *Decoder {
	return &Decoder{r: r, opts: o.get(), line: 1, col: 1}
}

// Offset returns the stream offset of the next unread byte.
func (d *Decoder) Offset() int64 { return d.base + int64(d.pos) }

// advance updates line and column over consumed bytes.
func (d *Decoder) advance(b []byte) {
	if nl := bytes.Count(b, []byte{'\n'}); nl > 0 {
		d.line += nl
		d.col = len(b) - bytes.LastIndexByte(b, '\n')
	} else {
		d.col += len(b)
	}
}

// fill reads more input, at least doubling what is buffered past pos
// (so re-parses of a long text value cost O(n log n) in all).
func (d *Decoder) fill() {
	if d.eof {
		return
	}
	if d.pos > 0 {
		d.advance(d.buf[:d.pos])
		d.base += int64(d.pos)
		n := copy(d.buf, d.buf[d.pos:])
		d.buf = d.buf[:n]
		d.pos = 0
	}
	want := max(len(d.buf), 64<<10, d.fillHint)
	if cap(d.buf)-len(d.buf) < want {
		nb := make([]byte, len(d.buf), len(d.buf)+want)
		copy(nb, d.buf)
		d.buf = nb
	}
	got := 0
	for got < want && !d.eof {
		n, err := d.r.Read(d.buf[len(d.buf):cap(d.buf)])
		d.buf = d.buf[:len(d.buf)+n]
		got += n
		if err != nil {
			d.eof = true
			if err != io.EOF {
				d.rerr = err
			}
		}
	}
}

func (d *Decoder) errAt(off int64, sen error, msg string) error {
	return errAt("", off, sen, msg)
}

// Next advances to the next value and returns its header, skipping what
// is left of the current one. At the end of the input it returns io.EOF.
func (d *Decoder) Next() (Header, error) {
	if d.err != nil {
		return Header{}, d.err
	}
	if d.inValue {
		if err := d.skipRest(); err != nil {
			return Header{}, err
		}
	}
	if !d.afterText {
		if err := d.dropSpaces(); err != nil {
			return Header{}, err
		}
	}
	for d.pos >= len(d.buf) && !d.eof {
		d.fill()
	}
	if d.pos >= len(d.buf) {
		if d.rerr != nil {
			return Header{}, d.rerr
		}
		return Header{}, io.EOF
	}
	start := d.Offset()
	if d.buf[d.pos] == 'b' {
		var h binHeader
		for {
			var need int
			var err error
			h, need, err = parseBinHeader(d.buf[d.pos:], start)
			if err == nil {
				break
			}
			if errors.Is(err, mmapfile.ErrTruncated) && !d.eof && need > len(d.buf)-d.pos {
				d.fill()
				continue
			}
			return Header{}, d.fail(err)
		}
		d.pos += h.hlen
		d.cur = Header{Binary: true, Type: h.typ, Shape: h.shape, Offset: start}
		d.left = h.size
		d.inValue, d.afterText = true, false
		return d.cur, nil
	}
	for {
		win := windowEnd(d.buf, d.pos)
		p := &textParser{d: d.buf, end: win, i: d.pos, emit: true, flags: scanFlags(d.opts)}
		if d.indexing {
			p.emit, p.keep = d.keep > 0, max(d.keep, 1)
		}
		ok := p.parse()
		near := p.i
		if !ok {
			near = p.errOff
		}
		if win == len(d.buf) && !d.eof && near+16 >= len(d.buf) {
			d.fill()
			continue
		}
		if !ok {
			lt := lineTracker{d: d.buf}
			line, col := lt.at(p.errOff)
			if line == 1 {
				col += d.col - 1
			}
			line += d.line - 1
			return Header{}, d.fail(&FormatError{FileError: format.FileError{Pkg: "futhark", Offset: d.base + int64(p.errOff), Line: line, Col: col, Msg: p.errMsg, Err: p.errSen}})
		}
		d.cur = Header{Type: p.typ, Shape: append([]int64{}, p.dims[:p.rank]...), Offset: start}
		d.text, d.textPos = p.out, 0
		if !p.emit {
			d.text = nil
		}
		d.textEnd = d.base + int64(p.tokEnd)
		d.pos = p.i
		d.inValue, d.afterText = true, true
		return d.cur, nil
	}
}

// skipTo moves to stream offset off, past the payload of the current
// binary value, seeking where the reader can.
func (d *Decoder) skipTo(off int64) error {
	d.inValue, d.left = false, 0
	if off <= d.base+int64(len(d.buf)) {
		d.pos = int(off - d.base)
		return nil
	}
	if s, ok := d.r.(io.Seeker); ok {
		if _, err := s.Seek(off, io.SeekStart); err != nil {
			return d.fail(err)
		}
		d.base, d.buf, d.pos, d.eof = off, d.buf[:0], 0, false
		return nil
	}
	d.inValue, d.left = true, off-d.base-int64(d.pos)
	return d.skipRest()
}

func (d *Decoder) fail(err error) error {
	if d.rerr != nil {
		err = d.rerr
	}
	d.err = err
	return err
}

// dropSpaces skips whitespace and "--" comments between values.
func (d *Decoder) dropSpaces() error {
	for {
		for d.pos < len(d.buf) && isSpace[d.buf[d.pos]] {
			d.pos++
		}
		if d.pos >= len(d.buf) || d.pos+1 >= len(d.buf) && d.buf[d.pos] == '-' {
			if d.eof {
				return nil
			}
			d.fill()
			continue
		}
		if d.buf[d.pos] != '-' || d.buf[d.pos+1] != '-' {
			return nil
		}
		for {
			k := bytes.IndexByte(d.buf[d.pos:], '\n')
			if k >= 0 {
				d.pos += k + 1
				break
			}
			d.pos = len(d.buf)
			if d.eof {
				return nil
			}
			d.fill()
		}
	}
}

func (d *Decoder) skipRest() error {
	var tmp [32 << 10]byte
	for d.inValue {
		if _, err := d.Read(tmp[:]); err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}

// Read reads payload bytes of the current value (little-endian elements,
// as in the binary format), returning io.EOF after the last one.
func (d *Decoder) Read(p []byte) (int, error) {
	if !d.inValue {
		if d.err != nil {
			return 0, d.err
		}
		return 0, io.EOF
	}
	if !d.cur.Binary {
		n := copy(p, d.text[d.textPos:])
		d.textPos += n
		if d.textPos == len(d.text) {
			d.inValue = false
			d.text = nil
			if n == 0 {
				return 0, io.EOF
			}
		}
		return n, nil
	}
	if d.left == 0 {
		d.inValue = false
		return 0, io.EOF
	}
	if int64(len(p)) > d.left {
		p = p[:d.left]
	}
	n := 0
	if d.pos < len(d.buf) {
		n = copy(p, d.buf[d.pos:])
		d.pos += n
	} else if !d.eof {
		// Read straight into p, past the (consumed) buffer.
		d.advance(d.buf[:d.pos])
		d.base += int64(d.pos)
		d.buf, d.pos = d.buf[:0], 0
		var err error
		n, err = io.ReadFull(d.r, p)
		d.advance(p[:n])
		d.base += int64(n)
		if err != nil {
			d.eof = true
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				d.rerr = err
			}
		}
	}
	d.left -= int64(n)
	if n == 0 && d.left > 0 {
		return 0, d.fail(d.errAt(d.Offset(), mmapfile.ErrTruncated, "binary payload of "+TypeString(d.cur.Type, d.cur.Shape)+" cut short"))
	}
	if d.left == 0 {
		d.inValue = false
	}
	return n, nil
}

// Value reads the next value whole into memory. Memory grows with the
// bytes actually read, never with a declared size alone.
func (d *Decoder) Value() (Value, error) {
	h, err := d.Next()
	if err != nil {
		return Value{}, err
	}
	if !h.Binary {
		v := Value{Type: h.Type, Shape: h.Shape, Data: d.text}
		d.inValue, d.text = false, nil
		return v, nil
	}
	size := h.PayloadSize()
	data := make([]byte, 0, min(size, 64<<10))
	for int64(len(data)) < size {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		k := min(int64(cap(data)), size)
		n, err := d.Read(data[len(data):k])
		data = data[:len(data)+n]
		if err != nil && err != io.EOF {
			return Value{}, err
		}
	}
	d.inValue = false
	if h.Type == layout.Bool {
		layout.CheckBools(data, layout.Bool, true)
	}
	return Value{Type: h.Type, Shape: h.Shape, Data: data}, nil
}
