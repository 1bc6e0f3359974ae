package futhark

import (
	"errors"
	"io"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Options configure opening, reading and writing. A nil *Options means the
// defaults: exactly what futhark-data 1.1.3.0 accepts, and output
// byte-identical to it.
type Options struct {
	// Options are the mapping's options (advice, populate, lock, wait;
	// Create and Truncate for OpenFile in ReadWrite mode) and Perm, the
	// permission bits of files that WriteFile and Create make.
	mmapfile.Options
	// Lenient also accepts the spellings of non-finite floats that
	// compiled Futhark programs printed before 2018, which futhark-data
	// rejects: nanf32, -nanf32, inff32, -inff32 (and f64).
	Lenient bool
	// StrictIntegers makes integer literals out of their type's range an
	// error instead of wrapping around as futhark-data does.
	StrictIntegers bool
	// Salvage keeps the values before malformed input instead of failing:
	// Damage reports what was wrong. futhark-data rejects the whole input,
	// as the default does. A writing open with Salvage (and not Repair)
	// cuts nothing: appends fail while the damaged bytes are there.
	Salvage bool
	// Repair lets a writing open (OpenFile with ReadWrite) cut what
	// follows the last good value of malformed input: a torn tail (a last
	// value that the file ends inside), or anything else that does not
	// parse. Without it such an open fails with an error wrapping
	// mmapfile.ErrNeedsRepair that says what a repair would cut.
	Repair bool
	// Align pads binary values written by an Encoder, WriteFile, Append
	// and the format's writer with spaces before their 'b', so that each
	// payload starts at a multiple of the alignment: AlignElement, or a
	// power of two up to 4096 (Align64 is the usual one). Zero: no padding.
	Align int
}

func (o *Options) get() Options {
	if o == nil {
		return Options{}
	}
	return *o
}

// lineTracker computes line and column of increasing offsets in one pass.
type lineTracker struct {
	d         []byte
	off, line int
	lineStart int
}

func (t *lineTracker) at(off int) (int, int) {
	if off < t.off {
		t.off, t.line, t.lineStart = 0, 1, 0
	}
	if t.line == 0 {
		t.line = 1
	}
	for i := t.off; i < off && i < len(t.d); i++ {
		if t.d[i] == '\n' {
			t.line++
			t.lineStart = i + 1
		}
	}
	t.off = off
	return t.line, off - t.lineStart + 1
}

// keepDecoded bounds the text payloads that indexing keeps per input:
// parsing a text value to validate it costs as much as decoding it, so the
// decoded bytes are kept for the first reads, up to this many in all.
var keepDecoded = 64 << 20 // a variable for tests

// entry is one value of the index, 32 bytes: the index of a file of a
// million scalars is 32 MB, whatever else the values hold.
type entry struct {
	start int64 // 'b' or the first byte of the text
	end   int64 // after the payload, or after the text's last token
	// aux is the position of the value's dims in the index's dims chunks
	// (rank of them); a text value's dims are followed by the arena offset
	// of its payload decoded while indexing, or -1.
	aux  int64
	typ  layout.Type
	rank uint8
	bin  bool
}

// data returns the payload offset: after the header of a binary value,
// the text's first byte for a text value.
func (e *entry) data() int64 {
	if e.bin {
		return e.start + 7 + 8*int64(e.rank)
	}
	return e.start
}

const (
	blockShift = 12
	blockSize  = 1 << blockShift // entries and dims per chunk
)

// index is the list of values of an input: entries in chunks (a growing
// index copies nothing but its first small chunk), the values' dims in
// chunks, and an arena of text payloads decoded while indexing.
type index struct {
	blocks [][]entry
	n      int
	dims   [][]int64
	kept   []byte
}

func (x *index) at(i int) *entry { return &x.blocks[i>>blockShift][i&(blockSize-1)] }

// shape returns the dims of e, aliasing the index: callers must not change
// them.
func (x *index) shape(e *entry) []int64 {
	if e.rank == 0 {
		return []int64{}
	}
	c := x.dims[e.aux>>blockShift]
	o := e.aux & (blockSize - 1)
	return c[o : o+int64(e.rank) : o+int64(e.rank)]
}

// keptOf returns the payload of text value e decoded while indexing, or
// nil.
func (x *index) keptOf(e *entry) []byte {
	if e.bin {
		return nil
	}
	k := x.dims[e.aux>>blockShift][e.aux&(blockSize-1)+int64(e.rank)]
	if k < 0 {
		return nil
	}
	n, _ := layout.ByteSize(e.typ, x.shape(e))
	return x.kept[k : k+n : k+n]
}

// putDims stores shape followed by extra and returns its position.
func (x *index) putDims(shape []int64, extra ...int64) int64 {
	need := len(shape) + len(extra)
	if need == 0 {
		return 0
	}
	k := len(x.dims) - 1
	if k < 0 || len(x.dims[k])+need > blockSize {
		c := blockSize
		if k < 0 {
			c = 64 // small inputs stay small
		}
		x.dims = append(x.dims, make([]int64, 0, c))
		k++
	}
	pos := int64(k)<<blockShift + int64(len(x.dims[k]))
	x.dims[k] = append(append(x.dims[k], shape...), extra...)
	return pos
}

func (x *index) add(e entry) {
	k := x.n >> blockShift
	if k == len(x.blocks) {
		c := blockSize
		if k == 0 {
			c = 16
		}
		x.blocks = append(x.blocks, make([]entry, 0, c))
	}
	x.blocks[k] = append(x.blocks[k][:x.n&(blockSize-1)], e)
	x.n++
}

func (x *index) addBinary(start, end int64, t layout.Type, shape []int64) {
	x.add(entry{start: start, end: end, aux: x.putDims(shape), typ: t, rank: uint8(len(shape)), bin: true})
}

// addText adds a text value; kept is the arena offset of its decoded
// payload, or -1.
func (x *index) addText(start, end int64, t layout.Type, shape []int64, kept int64) {
	x.add(entry{start: start, end: end, aux: x.putDims(shape, kept), typ: t, rank: uint8(len(shape))})
}

// mark is a state of the index to roll back to.
type mark struct {
	n, chunks, last, kept int
}

func (x *index) mark() mark {
	m := mark{n: x.n, chunks: len(x.dims), kept: len(x.kept)}
	if m.chunks > 0 {
		m.last = len(x.dims[m.chunks-1])
	}
	return m
}

func (x *index) reset(m mark) {
	x.n, x.kept = m.n, x.kept[:m.kept]
	x.dims = x.dims[:m.chunks]
	if m.chunks > 0 {
		x.dims[m.chunks-1] = x.dims[m.chunks-1][:m.last]
	}
	if k := x.n >> blockShift; k < len(x.blocks) {
		x.blocks = x.blocks[:k+1]
		x.blocks[k] = x.blocks[k][:x.n&(blockSize-1)]
	}
}

// scanBytes indexes the values of d from offset from on, validating
// everything and decoding no binary payload; text payloads are decoded
// while validating and kept in the arena while it stays within
// keepDecoded. It returns a *FormatError with offsets into d; the values
// before the error stay in the index.
func (x *index) scanBytes(d []byte, from int, o Options) error {
	lt := lineTracker{d: d}
	p := &textParser{d: d, flags: scanFlags(o)}
	win := -1 // cached window end: valid for every start < win
	i := dropSpaces(d, from)
	for i < len(d) {
		if d[i] == 'b' {
			h, _, err := parseBinHeader(d[i:], int64(i))
			if err != nil {
				return err
			}
			data := int64(i + h.hlen)
			end, ok := layout.Add(data, h.size)
			if !ok || end > int64(len(d)) {
				return errAt("", data, mmapfile.ErrTruncated, "binary payload of "+TypeString(h.typ, h.shape)+" extends past the end of the input")
			}
			x.addBinary(int64(i), end, h.typ, h.shape)
			i = dropSpaces(d, int(end))
			continue
		}
		if win <= i {
			win = windowEnd(d, i)
		}
		budget := keepDecoded - cap(x.kept)
		p.end, p.i, p.errMsg = win, i, ""
		p.emit, p.out = budget > 0, x.kept
		p.keep = keepDecoded
		if !p.parse() {
			return textError(&lt, p)
		}
		kept := int64(-1)
		if p.emit {
			kept = int64(len(x.kept))
			x.kept = p.out
		}
		x.addText(int64(i), int64(p.tokEnd), p.typ, p.dims[:p.rank], kept)
		i = p.i
	}
	return nil
}

func textError(lt *lineTracker, p *textParser) error {
	line, col := lt.at(p.errOff)
	return &FormatError{FileError: format.FileError{Pkg: "futhark", Offset: int64(p.errOff), Line: line, Col: col, Msg: p.errMsg, Err: p.errSen}}
}

// readWhole is the size up to which NewReader reads its input in one go
// while indexing.
var readWhole int64 = 64 << 20 // a variable for tests

// scanReader indexes the size bytes of r with a Decoder, seeking over
// binary payloads; text payloads are kept as scanBytes keeps them.
func (x *index) scanReader(r io.ReaderAt, size int64, o Options) error {
	d := NewDecoderOptions(io.NewSectionReader(r, 0, size), &o)
	d.indexing = true
	// Inputs of moderate size are read whole, so that a long text value is
	// parsed once, not again as the buffer grows.
	d.fillHint = int(min(size+1, readWhole)) // +1: see the end of the input at once
	for {
		d.keep = keepDecoded - cap(x.kept)
		h, err := d.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Binary {
			data := d.Offset()
			end, ok := layout.Add(data, h.PayloadSize())
			if !ok || end > size {
				return errAt("", data, mmapfile.ErrTruncated, "binary payload of "+TypeString(h.Type, h.Shape)+" extends past the end of the input")
			}
			x.addBinary(h.Offset, end, h.Type, h.Shape)
			if err := d.skipTo(end); err != nil {
				return err
			}
			continue
		}
		kept := int64(-1)
		if d.text != nil && len(x.kept)+len(d.text) <= keepDecoded {
			if len(x.kept)+len(d.text) > cap(x.kept) {
				grown := make([]byte, len(x.kept), min(keepDecoded, max(2*cap(x.kept), len(x.kept)+len(d.text))))
				copy(grown, x.kept)
				x.kept = grown
			}
			kept = int64(len(x.kept))
			x.kept = append(x.kept, d.text...)
		}
		x.addText(h.Offset, d.textEnd, h.Type, h.Shape, kept)
		d.inValue, d.text = false, nil
	}
}

// lineCols computes the line and column of each offset in offs (which
// increase) by counting newlines in the bytes that r reads before them.
func lineCols(r io.ReaderAt, offs []int64) ([][2]int, error) {
	out := make([][2]int, len(offs))
	buf := make([]byte, 64<<10)
	var pos int64
	line, lineStart := 1, int64(0)
	for k, target := range offs {
		for pos < target {
			n := int(min(int64(len(buf)), target-pos))
			m, err := r.ReadAt(buf[:n], pos)
			for j, c := range buf[:m] {
				if c == '\n' {
					line++
					lineStart = pos + int64(j) + 1
				}
			}
			pos += int64(m)
			if m < n {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return nil, err
			}
		}
		out[k] = [2]int{line, int(target-lineStart) + 1}
	}
	return out, nil
}

// decodeText decodes the text value at d[start:] into its payload.
// end is the value's End from the index: the window need not reach further
// than the few bytes of lookahead past it.
func decodeText(d []byte, start, end int, o Options, sizeHint int64) (Value, error) {
	p := &textParser{d: d, flags: scanFlags(o), emit: true}
	lim := len(d)
	if end >= 0 && end+16 < lim {
		lim = end + 16
	}
	p.end, p.i = windowEnd(d[:lim], start), start
	if sizeHint > 0 {
		p.out = make([]byte, 0, sizeHint)
	}
	if !p.parse() {
		lt := lineTracker{d: d}
		return Value{}, textError(&lt, p)
	}
	return Value{Type: p.typ, Shape: append([]int64{}, p.dims[:p.rank]...), Data: p.out}, nil
}
