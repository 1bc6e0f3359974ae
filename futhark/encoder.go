package futhark

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/mmapkit/mmapkit/layout"
)

// Alignment values for Options.Align.
const (
	// AlignNone writes binary values back to back, as futhark-data does.
	AlignNone = 0
	// AlignElement pads so that each payload starts at a multiple of its
	// element size.
	AlignElement = -1
	// Align64 pads so that each payload starts at a multiple of 64 bytes.
	Align64 = 64
)

const flushAt = 64 << 10

// Encoder writes Futhark values to a stream, binary or text, byte-identical
// to futhark-data. Whole values are written by EncodeBinary, EncodeText and
// EncodeType; values too large for memory are streamed with BeginBinary or
// BeginText, then element chunks (WriteElems), then End. Output is buffered
// and flushed at the end of every value. The first error sticks.
type Encoder struct {
	w     io.Writer
	off   int64 // bytes written to w plus buffered
	align int
	buf   []byte
	err   error

	// value in progress
	mode  byte // 0 none, 'b' binary, 't' text
	typ   layout.Type
	shape []int64
	left  int64            // elements still to come
	text  layout.ArrayText // the text value in progress
	host  []byte           // elements swapped to the host's order, on big-endian hosts
	part  []byte           // bytes of an element split between chunks
}

// NewEncoder returns an Encoder writing to w, starting at offset 0, with no
// alignment.
func NewEncoder(w io.Writer) *Encoder { return NewWriter(w, 0, nil) }

// NewWriter returns an Encoder writing to w whose first byte lands at file
// offset offset (alignment counts from there), padding binary values as
// o.Align says. A nil o means no padding.
func NewWriter(w io.Writer, offset int64, o *Options) *Encoder {
	e := &Encoder{w: w, off: offset}
	if o != nil {
		e.align = o.Align
	}
	return e
}

// Offset returns the file offset of the next byte the Encoder writes.
func (e *Encoder) Offset() int64 { return e.off }

func (e *Encoder) write(b []byte) {
	e.buf = append(e.buf, b...)
	e.off += int64(len(b))
	if len(e.buf) >= flushAt {
		e.flush()
	}
}

func (e *Encoder) flush() {
	if e.err != nil || len(e.buf) == 0 {
		e.buf = e.buf[:0]
		return
	}
	n, err := e.w.Write(e.buf)
	if err == nil && n < len(e.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		e.err = err
	}
	e.buf = e.buf[:0]
}

// Flush writes any buffered bytes. Values are flushed when they end, so
// Flush is needed only mid-value.
func (e *Encoder) Flush() error {
	e.flush()
	return e.err
}

// finish flushes and reports a value left unfinished, which would leave
// the output cut inside it.
func (e *Encoder) finish() error {
	if err := e.Flush(); err != nil {
		return err
	}
	if e.mode != 0 {
		return fmt.Errorf("futhark: a %s value was begun but %d of its elements were not written: %w", TypeString(e.typ, e.shape), e.left, ErrState)
	}
	return nil
}

func checkShape(t layout.Type, shape []int64) (int64, error) {
	if !IsPrimType(t) {
		return 0, fmt.Errorf("futhark: %v is not a Futhark element type: %w", t, errors.ErrUnsupported)
	}
	if len(shape) > MaxRank {
		return 0, fmt.Errorf("futhark: rank %d above %d: %w", len(shape), MaxRank, ErrRank)
	}
	n, err := layout.Count(shape)
	if err != nil {
		return 0, fmt.Errorf("futhark: shape %v: %w", shape, ErrDims)
	}
	if _, ok := layout.Mul(n, int64(t.Size())); !ok {
		return 0, fmt.Errorf("futhark: shape %v: %w", shape, ErrDims)
	}
	return n, nil
}

// pad returns the spaces needed before a binary value whose 'b' would be
// at e.off so that its payload is aligned: layout's placement of the
// payload after its header, with the padding put before the header, where
// Futhark's syntax allows it.
func (e *Encoder) pad(t layout.Type, rank int) int64 {
	var p layout.Policy
	elem := int64(1)
	switch {
	case e.align == AlignElement:
		p, elem = layout.ElementPolicy, int64(t.Align())
	case e.align > 1:
		p = layout.FixedPolicy(int64(e.align))
	default:
		return 0
	}
	pl, err := p.Place(e.off, layout.Slot{Header: int64(7 + 8*rank), ElemAlign: elem})
	if err != nil {
		return 0 // an offset past 2⁶³: the write fails anyway
	}
	return pl.Padding
}

var spaces = []byte("                                                                ")

// BeginBinary starts a binary value of type t and the given shape: the
// header is written (after alignment padding) and the payload follows via
// WriteElems.
func (e *Encoder) BeginBinary(t layout.Type, shape []int64) error {
	if e.err != nil {
		return e.err
	}
	if e.mode != 0 {
		return ErrState
	}
	n, err := checkShape(t, shape)
	if err != nil {
		return err
	}
	if e.align != AlignNone && e.align != AlignElement && (e.align < 1 || e.align > 4096 || e.align&(e.align-1) != 0) {
		return fmt.Errorf("futhark: alignment %d is not a power of two up to 4096", e.align)
	}
	for pad := e.pad(t, len(shape)); pad > 0; {
		k := min(pad, int64(len(spaces)))
		e.write(spaces[:k])
		pad -= k
	}
	var hb [7 + 8*MaxRank]byte
	e.write(appendBinHeader(hb[:0], t, shape))
	e.mode, e.typ, e.left = 'b', t, n
	e.shape = append(e.shape[:0], shape...)
	return e.endIfDone()
}

// BeginText starts a text value; the elements follow via WriteElems. An
// empty array is written at once.
func (e *Encoder) BeginText(t layout.Type, shape []int64) error {
	if e.err != nil {
		return e.err
	}
	if e.mode != 0 {
		return ErrState
	}
	n, err := checkShape(t, shape)
	if err != nil {
		return err
	}
	if err := e.text.Reset(t, shape); err != nil {
		return err
	}
	e.mode, e.typ, e.left = 't', t, n
	e.shape = append(e.shape[:0], shape...)
	if n == 0 {
		e.write(e.text.End(nil))
	}
	return e.endIfDone()
}

func (e *Encoder) endIfDone() error {
	if e.left > 0 {
		return e.err
	}
	if e.mode == 't' {
		if e.text.Len() > 0 {
			e.appendBuf(e.text.End)
		}
		e.write([]byte{'\n'})
	}
	e.mode = 0
	e.flush()
	return e.err
}

// WriteElems writes the next payload bytes of the value begun: its
// elements little-endian, as in the binary format (f16 bits, bool 0/1).
// Chunks need not end on element boundaries; all chunks together must
// not exceed the value's payload size. The value ends, and the output is
// flushed, when its last byte has been written.
func (e *Encoder) WriteElems(le []byte) error {
	if e.err != nil || len(le) == 0 {
		return e.err
	}
	size := e.typ.Size()
	if e.mode == 0 || int64(len(e.part)+len(le)) > e.left*int64(size) {
		return ErrState
	}
	if len(e.part) > 0 {
		k := min(size-len(e.part), len(le))
		e.part = append(e.part, le[:k]...)
		le = le[k:]
		if len(e.part) < size {
			return e.err
		}
		var one [8]byte
		copy(one[:], e.part)
		e.part = e.part[:0]
		if err := e.elems(one[:size]); err != nil {
			return err
		}
	}
	n := len(le) / size * size
	if n > 0 {
		if err := e.elems(le[:n]); err != nil {
			return err
		}
	}
	e.part = append(e.part, le[n:]...)
	return e.err
}

// Write is WriteElems as an io.Writer, so that a Decoder's payload can be
// copied with io.Copy.
func (e *Encoder) Write(p []byte) (int, error) {
	if err := e.WriteElems(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// elems writes whole elements.
func (e *Encoder) elems(le []byte) error {
	size := e.typ.Size()
	if e.mode == 'b' {
		e.left -= int64(len(le) / size)
		if e.typ == layout.Bool {
			for len(le) > 0 {
				var tmp [4096]byte
				k := copy(tmp[:], le)
				layout.CheckBools(tmp[:k], layout.Bool, true)
				e.write(tmp[:k])
				le = le[k:]
			}
		} else if len(le) >= flushAt {
			e.flush()
			if e.err == nil {
				n, err := e.w.Write(le)
				if err == nil && n < len(le) {
					err = io.ErrShortWrite
				}
				e.err = err
				e.off += int64(len(le))
			}
		} else {
			e.write(le)
		}
		return e.endIfDone()
	}
	e.printText(le)
	return e.endIfDone()
}

// printText prints elements (little-endian) with their separators and
// brackets, a bounded number at a time so that the buffer is flushed as
// it grows.
func (e *Encoder) printText(le []byte) {
	size := e.typ.Size()
	swap := size > 1 && !layout.IsHostOrder(binary.LittleEndian)
	for len(le) > 0 {
		k := min(len(le), 4096*size)
		elems := le[:k]
		if swap {
			e.host = append(e.host[:0], elems...)
			layout.SwapOrder(e.host, e.typ, binary.LittleEndian, layout.HostOrder())
			elems = e.host
		}
		e.appendBuf(func(b []byte) []byte { return e.text.Append(b, elems) })
		e.left -= int64(k / size)
		le = le[k:]
		if len(e.buf) >= flushAt {
			e.flush()
		}
	}
}

// appendBuf appends to the buffer what fn appends, counting it as written.
func (e *Encoder) appendBuf(fn func([]byte) []byte) {
	n := len(e.buf)
	e.buf = fn(e.buf)
	e.off += int64(len(e.buf) - n)
}

// EncodeBinary writes v in binary.
func (e *Encoder) EncodeBinary(v Value) error {
	if err := v.check(); err != nil {
		return err
	}
	if err := e.BeginBinary(v.Type, v.Shape); err != nil {
		return err
	}
	if len(v.Data) == 0 {
		return e.err
	}
	return e.WriteElems(v.Data)
}

// EncodeText writes v as futhark-data's valueText followed by a newline.
func (e *Encoder) EncodeText(v Value) error {
	if err := v.check(); err != nil {
		return err
	}
	if err := e.BeginText(v.Type, v.Shape); err != nil {
		return err
	}
	if len(v.Data) == 0 {
		return e.err
	}
	return e.WriteElems(v.Data)
}

// EncodeType writes the value type followed by a newline, as
// `futhark dataset -t` does: "[2][3]i32\n".
func (e *Encoder) EncodeType(t layout.Type, shape []int64) error {
	if e.err != nil {
		return e.err
	}
	if e.mode != 0 {
		return ErrState
	}
	e.write([]byte(TypeString(t, shape) + "\n"))
	e.flush()
	return e.err
}
