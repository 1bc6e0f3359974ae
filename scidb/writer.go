package scidb

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// appendEntry appends entry c holding v as SciDB's save() writes it: a
// prefix FF (present) or the reason (null) for a "null" entry, zeros in
// null slots, strings with their NUL counted, (N) forms padded with zeros.
// Skips are written as zeros and v is ignored.
func appendEntry(buf []byte, c *Column, v *Value) ([]byte, error) {
	var zeros [16]byte
	if c.Type == TypeSkip {
		n := 4
		if c.Width > 0 {
			n = int(c.Width)
		}
		if c.Nullable {
			n++
		}
		return appendZeros(buf, n), nil
	}
	if v.Null {
		if !c.Nullable {
			return buf, errNull(ErrNull, "null value for an entry without null")
		}
		if v.Reason < 0 {
			return buf, errNull(ErrReason, fmt.Sprintf("missing reason %d", v.Reason))
		}
		buf = append(buf, byte(v.Reason))
		if vs := c.valueSize(); vs > 0 {
			if vs <= len(zeros) {
				return append(buf, zeros[:vs]...), nil
			}
			return appendZeros(buf, vs), nil
		}
		return append(buf, 0, 0, 0, 0), nil
	}
	if c.Nullable {
		buf = append(buf, 0xff)
	}
	b := v.bytes()
	switch {
	case c.Type == TypeString && c.Width > 0:
		if bytes.IndexByte(b, 0) >= 0 {
			return buf, errNull(ErrString, "string contains a NUL")
		}
		if len(b)+1 > int(c.Width) {
			return buf, errNull(ErrWidth, fmt.Sprintf("%d bytes and a NUL do not fit string(%d)", len(b), c.Width))
		}
		buf = append(buf, b...)
		return appendZeros(buf, int(c.Width)-len(b)), nil
	case c.Type == TypeBinary && c.Width > 0:
		if len(b) > int(c.Width) {
			return buf, errNull(ErrWidth, fmt.Sprintf("%d bytes do not fit binary(%d)", len(b), c.Width))
		}
		buf = append(buf, b...)
		return appendZeros(buf, int(c.Width)-len(b)), nil
	case c.Type == TypeString:
		if bytes.IndexByte(b, 0) >= 0 {
			return buf, errNull(ErrString, "string contains a NUL")
		}
		if uint64(len(b))+1 > math.MaxUint32 {
			return buf, errNull(ErrLength, fmt.Sprintf("string of %d bytes", len(b)))
		}
		buf = appendLen(buf, len(b)+1)
		buf = append(buf, b...)
		return append(buf, 0), nil
	case c.Type == TypeBinary:
		if uint64(len(b)) > math.MaxUint32 {
			return buf, errNull(ErrLength, fmt.Sprintf("binary of %d bytes", len(b)))
		}
		buf = appendLen(buf, len(b))
		return append(buf, b...), nil
	}
	if len(b) != c.Type.Size() {
		return buf, errNull(ErrWidth, fmt.Sprintf("%d-byte value for %s", len(b), c.Type))
	}
	if c.Type == TypeBool {
		if b[0] != 0 {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	}
	return append(buf, b...), nil
}

// errNull is a FormatError without location; the caller fills it in.
func errNull(kind error, msg string) *FormatError {
	e := newError("", -1, kind, msg)
	e.Attr, e.Column = 0, 0 // the caller fills in the cell and entry
	return e
}

func appendZeros(buf []byte, n int) []byte {
	return append(buf, make([]byte, n)...)
}

func appendLen(buf []byte, n int) []byte {
	return append(buf, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
}

// appendCell encodes one row of f (one Value per attribute) onto buf. On
// error buf is returned unchanged in length, so that nothing of a bad row
// is written.
func (f *Schema) appendCell(buf []byte, row Row, rowIndex int64) ([]byte, error) {
	if len(row) != len(f.Attrs) {
		e := newError("", -1, ErrWidth, fmt.Sprintf("row has %d values, format %s has %d attributes", len(row), f, len(f.Attrs)))
		e.Cell, e.Column = rowIndex, 0
		return buf, e
	}
	start := len(buf)
	a := 0
	var skip Value
	for i := range f.Columns {
		c := &f.Columns[i]
		v := &skip
		if c.Type != TypeSkip {
			v = &row[a]
			a++
		}
		var err error
		buf, err = appendEntry(buf, c, v)
		if err != nil {
			de := err.(*FormatError)
			e := f.dataError(rowIndex, i, -1, de.Err, de.Msg)
			return buf[:start], e
		}
	}
	return buf, nil
}

// Encoder writes cells to a stream, as SciDB's save() does.
type Encoder struct {
	w    *bufio.Writer
	f    *Schema
	buf  []byte
	n    int64
	err  error  // an unusable format
	name string // the file written, for errors
}

// NewEncoder returns an Encoder of cells of format f to w. Call Flush at
// the end.
// If w has a Name method (an *os.File does), errors name the file.
func NewEncoder(w io.Writer, f *Schema) *Encoder {
	var name string
	if n, ok := w.(interface{ Name() string }); ok {
		name = n.Name()
	}
	pf, err := f.prepare()
	if err != nil {
		return &Encoder{w: bufio.NewWriterSize(w, 1<<16), f: f, err: fileError(name, -1, err, "%v", err), name: name}
	}
	return &Encoder{w: bufio.NewWriterSize(w, 1<<16), f: pf, name: name}
}

// Write writes one cell: one Value per attribute of the format. A row that
// cannot be written (a null into an entry without null, a reason outside
// 0..127, a string with a NUL, a value too wide) is an error naming the row
// and the attribute, and nothing of it is written.
func (w *Encoder) Write(row Row) error {
	if w.err != nil {
		return w.err
	}
	var err error
	w.buf, err = w.f.appendCell(w.buf[:0], row, w.n)
	if err != nil {
		return withFile(err, w.name)
	}
	if _, err := w.w.Write(w.buf); err != nil {
		return err
	}
	w.n++
	return nil
}

// Count returns the number of cells written.
func (w *Encoder) Count() int64 { return w.n }

// Flush writes buffered cells to the underlying writer.
func (w *Encoder) Flush() error { return w.w.Flush() }

// Encode writes the table as SciDB's save() would, with t.Format. Every
// column must have Len values of its Go type (see Col).
func Encode(w io.Writer, t *Table) error {
	if err := t.check(""); err != nil {
		return err
	}
	wr := NewEncoder(w, t.Format)
	if stride, ok := wr.f.Stride(); ok {
		return encodeFixed(wr, t, stride)
	}
	if err := encodeRows(wr, t, 0, t.Len); err != nil {
		return err
	}
	return wr.Flush()
}

// encodeRows writes rows [from, to) of t one by one.
func encodeRows(wr *Encoder, t *Table, from, to int) error {
	row := make(Row, len(t.Cols))
	for i := from; i < to; i++ {
		for a := range row {
			row[a] = t.Value(i, a)
		}
		if err := wr.Write(row); err != nil {
			return err
		}
	}
	return nil
}

// encodeBlock is the number of cells encodeFixed builds at a time.
const encodeBlock = 4096

// encodeFixed writes a table of fixed-size cells block by block: each
// attribute is stored into the block's cells by one loop. A block with a
// bad value is redone row by row, so that the error is the one the row
// writer reports (the first bad row), and nothing of that row is written.
func encodeFixed(wr *Encoder, t *Table, stride int) error {
	f := wr.f
	block := make([]byte, min(t.Len, encodeBlock)*stride)
	for start := 0; start < t.Len; start += encodeBlock {
		nb := min(encodeBlock, t.Len-start)
		buf := block[:nb*stride]
		if !fillFixedBlock(buf, f, t, start, nb, stride) {
			wr.n = int64(start)
			if err := encodeRows(wr, t, start, start+nb); err != nil {
				return err
			}
			continue
		}
		if _, err := wr.w.Write(buf); err != nil {
			return err
		}
		wr.n = int64(start + nb)
	}
	return wr.Flush()
}

// fillFixedBlock encodes rows [start, start+nb) of t into buf and reports
// whether every value could be written.
func fillFixedBlock(buf []byte, f *Schema, t *Table, start, nb, stride int) bool {
	clear(buf) // skips, null slots and (N) padding are zeros
	for a, ci := range f.Attrs {
		c := &f.Columns[ci]
		col := &t.Cols[a]
		off := f.offsets[ci]
		voff := off
		var null []bool
		if col.Null != nil {
			null = col.Null[start : start+nb]
		}
		if c.Nullable {
			voff++
			for i := 0; i < nb; i++ {
				p := byte(0xff)
				if null != nil && null[i] {
					r := int8(0)
					if col.Reason != nil {
						r = col.Reason[start+i]
					}
					if r < 0 {
						return false
					}
					p = byte(r)
				}
				buf[off+i*stride] = p
			}
		} else {
			for _, nl := range null {
				if nl {
					return false
				}
			}
		}
		switch d := col.Data.(type) {
		case []string: // string(N)
			w := int(c.Width)
			for i, s := range d[start : start+nb] {
				if null != nil && null[i] {
					continue
				}
				if len(s)+1 > w || strings.IndexByte(s, 0) >= 0 {
					return false
				}
				copy(buf[voff+i*stride:], s)
			}
		case [][]byte: // binary(N)
			w := int(c.Width)
			for i, b := range d[start : start+nb] {
				if null != nil && null[i] {
					continue
				}
				if len(b) > w {
					return false
				}
				copy(buf[voff+i*stride:], b)
			}
		default:
			size := c.Type.Size()
			_, mem := dataBytes(d)
			scatter(buf, voff, stride, mem[start*size:(start+nb)*size], size, nb)
			if c.Type == TypeBool {
				for i := 0; i < nb; i++ {
					if p := voff + i*stride; buf[p] > 1 {
						buf[p] = 1
					}
				}
			}
			if null != nil && c.Nullable {
				for i, nl := range null {
					if nl {
						clear(buf[voff+i*stride : voff+i*stride+size])
					}
				}
			}
		}
	}
	return true
}

// check verifies that the table's columns match its format; errors name
// file.
func (t *Table) check(file string) error {
	f, err := t.Format.prepare()
	if err != nil {
		return fileError(file, -1, err, "%v", err)
	}
	if len(t.Cols) != len(f.Attrs) {
		return fileError(file, -1, ErrWidth, "table has %d columns, format %s has %d attributes", len(t.Cols), f, len(f.Attrs))
	}
	for a := range t.Cols {
		c := &t.Cols[a]
		want := f.Attr(a)
		if c.Column.Type != want.Type {
			return fileError(file, -1, mmapfile.ErrTypeMismatch, "column %d (%s) is %s, format says %s", a, c.Name, c.Column.Type, want.Type)
		}
		if n := dataLen(want, c.Data); n != t.Len {
			if n < 0 {
				return fileError(file, -1, mmapfile.ErrTypeMismatch, "column %d (%s): Data is %T, want %s", a, c.Name, c.Data, GoType(want.Type))
			}
			return fileError(file, -1, ErrWidth, "column %d (%s) has %d values, table has %d rows", a, c.Name, n, t.Len)
		}
		if c.Null != nil && len(c.Null) != t.Len || c.Reason != nil && len(c.Reason) != t.Len {
			return fileError(file, -1, ErrWidth, "column %d (%s): null mask or reasons not of length %d", a, c.Name, t.Len)
		}
	}
	return nil
}

// EncodeFile writes the table to path through a temporary file in the same
// directory, renamed over path only when everything is written: a failed
// write leaves path as it was. A replaced file keeps its permission bits; a
// new one gets 0644 less the umask.
func EncodeFile(path string, t *Table) error {
	if err := t.check(path); err != nil {
		return err
	}
	return atomicfile.Write(path, 0, func(f *os.File) error { return withFile(Encode(f, t), path) })
}
