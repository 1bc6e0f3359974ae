package scidb

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// Decoder reads cells from a stream, one at a time, as SciDB's load()
// does. Its memory is bounded by the largest cell: a bogus length word
// makes it read (at most 1 MiB ahead of the data received) until the
// stream ends.
type Decoder struct {
	r      *bufio.Reader
	f      *Schema
	strict bool
	check  bool   // look for an opaque header
	buf    []byte // the current cell's bytes
	spans  []span
	cell   int64 // cells read
	off    int64 // stream offset of the next cell
	err    error // sticky
	opaque bool  // the opaque check is done
	name   string
}

// NewDecoder returns a Decoder of cells of format o.Format from r. If r
// has a Name method (an *os.File does), errors name the file.
func NewDecoder(r io.Reader, o *Options) *Decoder {
	var name string
	if n, ok := r.(interface{ Name() string }); ok {
		name = n.Name()
	}
	pf, err := o.format(name)
	if err == nil {
		err = o.noSalvage(name)
	}
	if err != nil {
		return &Decoder{err: err}
	}
	return &Decoder{r: bufio.NewReaderSize(r, 1<<16), f: pf, strict: o.strict(), check: o.opaqueCheck(),
		spans: make([]span, len(pf.Columns)), name: name}
}

// Cell returns the number of cells read so far, which is the index of the
// next cell.
func (r *Decoder) Cell() int64 { return r.cell }

// Offset returns the stream offset of the next cell.
func (r *Decoder) Offset() int64 { return r.off }

// Format returns the reader's format.
func (r *Decoder) Format() *Schema { return r.f }

// Read reads the next cell into row, which must have one Value per
// attribute. Raw bytes alias the reader's buffer and are valid until the
// next Read. It returns io.EOF only at a cell boundary; a stream ending
// inside a cell is a *FormatError. Errors are sticky.
func (r *Decoder) Read(row Row) error {
	if r.err != nil {
		return r.err
	}
	if len(row) != len(r.f.Attrs) {
		return fileError(r.name, -1, ErrWidth, "row has %d values, format %s has %d attributes", len(row), r.f, len(r.f.Attrs))
	}
	if !r.opaque {
		r.opaque = true
		if r.check {
			if e := r.detectOpaque(); e != nil {
				r.err = withFile(e, r.name)
				return r.err
			}
		}
	}
	if _, err := r.r.Peek(1); err != nil { // io.EOF here is the end between cells
		r.err = err
		return err
	}
	if !r.scanBuffered() {
		if err := r.readCell(); err != nil {
			r.err = withFile(err, r.name)
			return r.err
		}
	}
	a := 0
	for i := range r.f.Columns {
		c := &r.f.Columns[i]
		if c.Type == TypeSkip {
			continue
		}
		sp := r.spans[i]
		if sp.prefix >= 0 {
			row[a] = Value{Null: true, Reason: sp.prefix}
		} else {
			b := stored(c, r.buf[sp.start:sp.end])
			row[a] = Value{Reason: -1, Raw: b[:len(b):len(b)]}
		}
		a++
	}
	r.off += int64(len(r.buf))
	r.cell++
	return nil
}

// scanBuffered takes the next cell from the read buffer when all of it is
// there and valid: one scan over bytes in memory, one copy. Anything else
// (a cell across the buffer's end, bad data) is left to readCell, which
// reads entry by entry and reports errors exactly.
func (r *Decoder) scanBuffered() bool {
	b, _ := r.r.Peek(r.r.Buffered())
	if len(b) == 0 {
		return false
	}
	end, err := r.f.scanCell(b, 0, r.cell, r.off, r.strict, r.spans)
	if err != nil {
		return false
	}
	r.buf = append(r.buf[:0], b[:end]...)
	r.r.Discard(end)
	return true
}

// readCell reads one cell's bytes into r.buf and scans them into r.spans.
func (r *Decoder) readCell() error {
	f := r.f
	r.buf = r.buf[:0]
	for i := range f.Columns {
		c := &f.Columns[i]
		sp := span{prefix: -1}
		if c.Nullable {
			if err := r.fill(1, i); err != nil {
				return err
			}
			p := int8(r.buf[len(r.buf)-1])
			if c.Type != TypeSkip {
				if p >= 0 {
					sp.prefix = p
				} else if r.strict && p != -1 {
					return f.dataError(r.cell, i, r.off+int64(len(r.buf)-1), ErrPrefix, fmt.Sprintf("null prefix 0x%02x", byte(p)))
				}
			}
		}
		if vs := c.valueSize(); vs > 0 {
			sp.start = len(r.buf)
			if err := r.fill(vs, i); err != nil {
				return err
			}
		} else {
			if err := r.fill(4, i); err != nil {
				return err
			}
			l := uint64(le32(r.buf[len(r.buf)-4:]))
			sp.start = len(r.buf)
			if err := r.fillLength(l, i); err != nil {
				return err
			}
		}
		sp.end = len(r.buf)
		if r.strict {
			if err := f.checkStrict(r.buf, sp, r.cell, i, r.off); err != nil {
				return err
			}
		}
		r.spans[i] = sp
	}
	return nil
}

// fill appends exactly n bytes of a fixed-size read to r.buf.
func (r *Decoder) fill(n, col int) error {
	start := len(r.buf)
	r.buf = grow(r.buf, n)
	got, err := io.ReadFull(r.r, r.buf[start:start+n])
	r.buf = r.buf[:start+got]
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.f.dataError(r.cell, col, r.off+int64(start), mmapfile.ErrTruncated, fmt.Sprintf("%d-byte read, stream ends after %d", n, got))
	}
	return err
}

// fillLength appends the l bytes of a variable-size value, growing the
// buffer only as data arrives, so that a bogus length costs no more memory
// than the stream holds (plus 1 MiB).
func (r *Decoder) fillLength(l uint64, col int) error {
	start := len(r.buf)
	// Grow with the data received: 64 KiB at first, then as much as has
	// arrived, never more than 1 MiB ahead.
	for rest := l; rest > 0; {
		n := int(min(rest, uint64(min(max(len(r.buf)-start, 64<<10), 1<<20))))
		at := len(r.buf)
		r.buf = grow(r.buf, n)
		got, err := io.ReadFull(r.r, r.buf[at:at+n])
		r.buf = r.buf[:at+got]
		rest -= uint64(got)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return r.f.dataError(r.cell, col, r.off+int64(start), errLengthCut,
					"length "+strconv.FormatUint(l, 10)+" exceeds "+bytesLeft(int64(len(r.buf)-start)))
			}
			return err
		}
	}
	return nil
}

// grow extends b by n bytes of length, reallocating at most geometrically.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), max(2*cap(b), len(b)+n, 256))
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// detectOpaque looks for an opaque header at the start of the stream. When
// the header's first record fits the read buffer, the stream must hold all
// of it, as Decode requires when it knows the size.
func (r *Decoder) detectOpaque() *OpaqueError {
	head, _ := r.r.Peek(opaqueHeader)
	e := detectOpaque(head, -1)
	if e == nil {
		return nil
	}
	need := min(opaqueHeader+int(le32(head[8:])), r.r.Size())
	b, _ := r.r.Peek(need)
	if len(b) < need || need < r.r.Size() {
		// The stream ends within the buffer, or holds the whole record.
		return detectOpaque(b, int64(len(b)))
	}
	return e
}
