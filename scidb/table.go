package scidb

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Table is a whole file decoded into columns: row k is cell k, in file
// order. It never aliases the input.
type Table struct {
	Format *Schema
	Len    int   // number of cells
	Cols   []Col // one per attribute, skips excluded

	capacity int // cells the columns have room for (NewTable, DecodeInto)
}

// NewTable returns a table of n cells of format f with zero values, its
// columns allocated: for File.DecodeInto to fill and refill.
func NewTable(f *Schema, n int) (*Table, error) {
	f, err := f.prepare()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("scidb: negative table length %d", n)
	}
	t := newTable(f, n)
	allocColumns(t, n)
	return t, nil
}

// Col is one attribute of a Table.
type Col struct {
	Name   string
	Column Column
	// Data is a slice of Len values: []bool, []byte (char, uint8), []int8 …
	// []uint64, []float32 (float), []float64 (double), []Datetime,
	// []DatetimeTZ, []string (string, string(N)) or [][]byte (binary,
	// binary(N)). Null slots hold zero values.
	Data any
	// Null marks null values; nil if the entry is not nullable.
	Null []bool
	// Reason is the missing reason 0..127 of each null, -1 where present;
	// nil if the entry is not nullable.
	Reason []int8
}

// Value returns the value of attribute attr in row i, aliasing the
// table's memory for strings and binaries. It panics if i or attr is out
// of range, as slice indexing does.
func (t *Table) Value(i, attr int) Value {
	c := &t.Cols[attr]
	if c.Null != nil && c.Null[i] {
		r := int8(0)
		if c.Reason != nil {
			r = c.Reason[i]
		}
		return NullValue(r)
	}
	switch d := c.Data.(type) {
	case []bool:
		return BoolValue(d[i])
	case []uint8:
		return Uint8Value(d[i])
	case []int8:
		return Int8Value(d[i])
	case []int16:
		return Int16Value(d[i])
	case []uint16:
		return Uint16Value(d[i])
	case []int32:
		return Int32Value(d[i])
	case []uint32:
		return Uint32Value(d[i])
	case []int64:
		return Int64Value(d[i])
	case []uint64:
		return Uint64Value(d[i])
	case []float32:
		return Float32Value(d[i])
	case []float64:
		return Float64Value(d[i])
	case []Datetime:
		return DatetimeValue(d[i])
	case []DatetimeTZ:
		return DatetimeTZValue(d[i])
	case []string:
		v := Value{Reason: -1, Raw: []byte(d[i])}
		if v.Raw == nil {
			v.Raw = []byte{}
		}
		return v
	case [][]byte:
		v := BinaryValue(d[i])
		if v.Raw == nil {
			v.Raw = []byte{}
		}
		return v
	}
	return Value{}
}

// LayoutType returns the layout element type that holds values of t:
// bool → Bool, char → U8, int8…uint64 → I8…U64, float → F32, double → F64,
// datetime → I64 (seconds). datetimetz, string, binary and skip have none.
func LayoutType(t Type) (layout.Type, bool) {
	switch t {
	case TypeBool:
		return layout.Bool, true
	case TypeChar, TypeUint8:
		return layout.U8, true
	case TypeInt8:
		return layout.I8, true
	case TypeInt16:
		return layout.I16, true
	case TypeInt32:
		return layout.I32, true
	case TypeInt64, TypeDatetime:
		return layout.I64, true
	case TypeUint16:
		return layout.U16, true
	case TypeUint32:
		return layout.U32, true
	case TypeUint64:
		return layout.U64, true
	case TypeFloat:
		return layout.F32, true
	case TypeDouble:
		return layout.F64, true
	}
	return layout.Invalid, false
}

// arrays describes the attributes of n cells as 1-D layout arrays.
// Offset is -1: values are strided through the cells, never one run.
func (f *Schema) arrays(n int64, varBytes func(attr int) int64) []layout.Array {
	out := make([]layout.Array, len(f.Attrs))
	for a, ci := range f.Attrs {
		c := f.Columns[ci]
		lt, _ := LayoutType(c.Type)
		size := int64(0)
		if vs := c.valueSize(); vs > 0 {
			size, _ = layout.Mul(n, int64(vs))
		} else if varBytes != nil {
			size = varBytes(a)
		}
		out[a] = layout.Array{Name: f.name(a), Type: lt, Shape: []int64{n}, Order: layout.RowMajor, Offset: -1, Size: size}
	}
	return out
}

// Decode decodes a whole SciDB binary file held in data, of format
// o.Format, into columns. Input that starts like an opaque backup file is
// refused with an *OpaqueError (ErrOpaque) unless o.NoOpaqueCheck is set.
// Bad input gives a *FormatError naming the cell, the attribute and the
// byte offset.
func Decode(data []byte, o *Options) (*Table, error) {
	return decode(data, "", o)
}

func decode(data []byte, path string, o *Options) (*Table, error) {
	f, err := o.format(path)
	if err != nil {
		return nil, err
	}
	if err := o.noSalvage(path); err != nil {
		return nil, err
	}
	if o.opaqueCheck() {
		if e := detectOpaque(data, int64(len(data))); e != nil {
			return nil, e
		}
	}
	if stride, ok := f.Stride(); ok {
		return decodeFixed(data, f, stride, o.strict())
	}
	return decodeVar(data, f, o.strict(), 0)
}

// DecodeFile maps the file at path and decodes it (see Decode). A fault
// while reading the mapping (the file truncated by another process) is an
// error wrapping mmapfile.ErrFault, not a crash.
func DecodeFile(path string, o *Options) (*Table, error) {
	mf, r, err := mmapfile.OpenMapped(path, mmapfile.ReadOnly, nil)
	if err != nil {
		return nil, err
	}
	defer mf.Close()
	var t *Table
	gerr := r.Guard(func() { t, err = decode(r.Bytes(), path, o) })
	if gerr != nil {
		return nil, gerr
	}
	if err != nil {
		return nil, withFile(err, path)
	}
	return t, nil
}

// withFile names the file in the package's errors (none if path is "").
func withFile(err error, path string) error {
	if path == "" {
		return err
	}
	var de *FormatError
	if errors.As(err, &de) {
		de.File = path
	}
	var oe *OpaqueError
	if errors.As(err, &oe) {
		oe.File = path
	}
	return err
}

func newTable(f *Schema, n int) *Table {
	t := &Table{Format: f, Len: n, Cols: make([]Col, len(f.Attrs))}
	for a, ci := range f.Attrs {
		c := f.Columns[ci]
		t.Cols[a] = Col{Name: f.name(a), Column: c}
	}
	return t
}

// decodeFixed decodes a file of fixed-size cells without a per-cell parse:
// for each block of cells, each attribute is one tight loop over the block.
func decodeFixed(data []byte, f *Schema, stride int, strict bool) (*Table, error) {
	n := len(data) / stride
	if strict {
		if err := validateFixed(data, f, stride, n, 0); err != nil {
			return nil, err
		}
	}
	if rem := len(data) % stride; rem != 0 {
		spans := make([]span, len(f.Columns))
		_, err := f.scanCell(data, n*stride, int64(n), 0, strict, spans)
		if err == nil { // cannot happen: a partial cell always fails
			err = f.dataError(int64(n), 0, int64(n*stride), mmapfile.ErrTruncated, "partial cell")
		}
		return nil, err
	}
	t := newTable(f, n)
	allocColumns(t, n)
	fillFixed(t, data, stride, n)
	return t, nil
}

// allocColumns gives each of t's columns room for n values.
func allocColumns(t *Table, n int) {
	f := t.Format
	for a, ci := range f.Attrs {
		c := f.Columns[ci]
		col := &t.Cols[a]
		switch c.Type {
		case TypeString:
			col.Data = make([]string, n)
		case TypeBinary:
			col.Data = make([][]byte, n)
		default:
			col.Data, _ = newData(c.Type, n)
		}
		if c.Nullable {
			col.Null = make([]bool, n)
			col.Reason = make([]int8, n)
		}
	}
	t.capacity = n
}

// fillFixed decodes the first n fixed-size cells of data into rows [0, n)
// of t's columns, which hold exactly n values. Each block of cells is read
// from memory once and stays in the first-level cache while every
// attribute's loop runs over it.
func fillFixed(t *Table, data []byte, stride, n int) {
	f := t.Format
	anyNull := make([]bool, len(f.Attrs))
	// The memory of the fixed-size columns, found once, not per block.
	mems := make([][]byte, len(f.Attrs))
	for a := range t.Cols {
		_, mems[a] = dataBytes(t.Cols[a].Data)
	}
	block := decodeBlock(stride)
	for start := 0; start < n; start += block {
		nb := min(block, n-start)
		base := start * stride
		for a, ci := range f.Attrs {
			c := &f.Columns[ci]
			col := &t.Cols[a]
			voff := base + f.offsets[ci]
			if c.Nullable {
				if nullsBlock(col.Null[start:start+nb], col.Reason[start:start+nb], data, voff, stride) {
					anyNull[a] = true
				}
				voff++
			}
			switch d := col.Data.(type) {
			case []string: // string(N)
				w := int(c.Width)
				for i := start; i < start+nb; i++ {
					p := voff + (i-start)*stride
					d[i] = string(stored(c, data[p:p+w]))
				}
			case [][]byte: // binary(N)
				w := int(c.Width)
				arena := make([]byte, nb*w)
				gather(arena, w, data, voff, stride, nb)
				for i := 0; i < nb; i++ {
					d[start+i] = arena[i*w : (i+1)*w : (i+1)*w]
				}
			default:
				size := c.Type.Size()
				mem := mems[a][start*size : (start+nb)*size]
				gather(mem, size, data, voff, stride, nb)
				if c.Type == TypeBool {
					layout.CheckBools(mem, layout.Bool, true)
				}
			}
		}
	}
	for a := range t.Cols {
		if anyNull[a] {
			zeroNulls(&t.Cols[a])
		}
	}
}

// decodeBlock is the number of cells of the given stride that fillFixed
// decodes at a time: decodeBlockBytes of cells (at least 64), so that a
// block's cells and the column values decoded from them (no more bytes
// than the cells) fit in a core's 32 KiB first-level cache together. It is
// the gather ceiling's block. Blocks of 2048 16-byte cells (32 KiB of
// cells, 32 KiB of values) ran at 0.7 of the speed of blocks of 512 and
// 256, which ran alike (BenchmarkSciDBDecodeVsGather in ./benchmarks).
func decodeBlock(stride int) int {
	return max(decodeBlockBytes/stride, 64)
}

const decodeBlockBytes = 8 << 10

// nullsBlock reads the prefixes of one nullable attribute for a block of
// cells (the first prefix at data[off]) and reports whether any is null.
func nullsBlock(null []bool, reason []int8, data []byte, off, stride int) bool {
	if len(null) == 0 {
		return false
	}
	_ = data[off+(len(null)-1)*stride]
	reason = reason[:len(null)]
	anyNull := false
	for i := range null {
		r := int8(data[off+i*stride])
		isNull := r >= 0
		null[i] = isNull
		anyNull = anyNull || isNull
		reason[i] = r | int8(b2i(!isNull))*-1
	}
	return anyNull
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// zeroNulls sets the Data slots of nulls to the zero value.
func zeroNulls(col *Col) {
	switch d := col.Data.(type) {
	case []string:
		for i, nl := range col.Null {
			if nl {
				d[i] = ""
			}
		}
	case [][]byte:
		for i, nl := range col.Null {
			if nl {
				d[i] = nil
			}
		}
	default:
		_, mem := dataBytes(col.Data)
		size := len(mem) / max(len(col.Null), 1)
		for i, nl := range col.Null {
			if nl {
				clear(mem[i*size : (i+1)*size])
			}
		}
	}
}

// validateFixed applies the strict checks to n fixed-size cells starting
// at data[0]; first is the number of the first cell. It reports the error
// a cell-by-cell reader meets first: the lowest cell, then the lowest entry.
func validateFixed(data []byte, f *Schema, stride, n int, first int64) error {
	var best *FormatError
	bestCell := n
	for ci, c := range f.Columns {
		checkPrefix := c.Nullable && c.Type != TypeSkip
		checkValue := c.Type == TypeBool || (c.Type == TypeString && c.Width > 0)
		if !checkPrefix && !checkValue {
			continue
		}
		off := f.offsets[ci]
		voff := off
		if c.Nullable {
			voff++
		}
		w := c.valueSize()
		for i := 0; i < bestCell; i++ {
			if c.Nullable {
				p := data[off+i*stride]
				if p < 0x80 {
					continue
				}
				if p != 0xff && checkPrefix {
					best, bestCell = f.dataError(first+int64(i), ci, int64(off+i*stride), ErrPrefix, fmt.Sprintf("null prefix 0x%02x", p)), i
					break
				}
			}
			if !checkValue {
				continue
			}
			p := voff + i*stride
			b := data[p : p+w]
			if c.Type == TypeBool && b[0] > 1 {
				best, bestCell = f.dataError(first+int64(i), ci, int64(p), ErrBool, fmt.Sprintf("bool byte 0x%02x", b[0])), i
				break
			}
			if c.Type == TypeString && bytes.IndexByte(b, 0) < 0 {
				best, bestCell = f.dataError(first+int64(i), ci, int64(p), ErrString, fmt.Sprintf("string(%d) without a NUL", c.Width)), i
				break
			}
		}
	}
	if best != nil {
		return best
	}
	return nil
}

// builder accumulates one attribute in decodeVar.
type builder struct {
	c     Column
	fixed []byte // little-endian values, for fixed-size types
	arena []byte // string and binary bytes, back to back
	ends  []int  // end of each value in arena
	null  []bool
	rsn   []int8
}

// decodeVar decodes cell by cell, for formats with variable-size entries;
// first is the number of the first cell in data, for errors.
func decodeVar(data []byte, f *Schema, strict bool, first int64) (*Table, error) {
	spans := make([]span, len(f.Columns))
	bs := make([]builder, len(f.Attrs))
	for a, ci := range f.Attrs {
		bs[a].c = f.Columns[ci]
	}
	var zeros [16]byte
	pos, n := 0, 0
	for pos < len(data) {
		end, err := f.scanCell(data, pos, first+int64(n), 0, strict, spans)
		if err != nil {
			return nil, err
		}
		for a, ci := range f.Attrs {
			b := &bs[a]
			sp := spans[ci]
			isNull := sp.prefix >= 0
			if b.c.Nullable {
				b.null = append(b.null, isNull)
				b.rsn = append(b.rsn, sp.prefix)
			}
			if b.c.Width == 0 && b.c.Type.Size() > 0 {
				if isNull {
					b.fixed = append(b.fixed, zeros[:b.c.Type.Size()]...)
				} else {
					b.fixed = append(b.fixed, data[sp.start:sp.end]...)
				}
				continue
			}
			if !isNull {
				b.arena = append(b.arena, stored(&b.c, data[sp.start:sp.end])...)
			}
			b.ends = append(b.ends, len(b.arena))
		}
		pos = end
		n++
	}
	t := newTable(f, n)
	for a := range bs {
		b := &bs[a]
		col := &t.Cols[a]
		col.Null, col.Reason = b.null, b.rsn
		if b.c.Nullable && col.Null == nil {
			col.Null, col.Reason = []bool{}, []int8{}
		}
		switch b.c.Type {
		case TypeString:
			all := string(b.arena)
			s := make([]string, n)
			start := 0
			for i, e := range b.ends {
				s[i] = all[start:e]
				start = e
			}
			col.Data = s
		case TypeBinary:
			s := make([][]byte, n)
			start := 0
			for i, e := range b.ends {
				switch {
				case b.null != nil && b.null[i]:
				case start == e:
					s[i] = []byte{}
				default:
					s[i] = b.arena[start:e:e]
				}
				start = e
			}
			col.Data = s
		default:
			d, mem := newData(b.c.Type, n)
			size := b.c.Type.Size()
			gather(mem, size, b.fixed, 0, size, n)
			if b.c.Type == TypeBool {
				layout.CheckBools(mem, layout.Bool, true)
			}
			col.Data = d
		}
	}
	return t, nil
}
