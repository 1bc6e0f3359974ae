package scidb

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Mapped is a file of fixed-size cells, mapped into memory: cell i is the
// stride bytes at i × stride, reachable in O(1) without decoding the file.
type Mapped struct {
	file   *mmapfile.File
	region *mmapfile.Region
	data   []byte
	f      *Format
	stride int
	n      int64
	path   string
}

// OpenMapped maps the file at path read-only as cells of format f, which
// must be fixed-size (ErrNotFixed otherwise). A size that is not a
// multiple of the cell size is an error naming the last, partial cell. An
// opaque backup file is refused (unless o.NoOpaqueCheck). With o.Strict,
// every cell is validated first (see Validate).
func OpenMapped(path string, f *Format, o ReadOptions) (*Mapped, error) {
	return OpenMappedFile(path, f, mmapfile.ReadOnly, o)
}

// OpenMappedFile is OpenMapped with a mode: mmapfile.ReadWrite maps the
// file writable (under an exclusive lock) so that Set can change cells in
// place.
func OpenMappedFile(path string, f *Format, mode mmapfile.Mode, o ReadOptions) (*Mapped, error) {
	f, err := f.prepare()
	if err != nil {
		return nil, err
	}
	stride, ok := f.Stride()
	if !ok {
		return nil, fmt.Errorf("scidb: %s: format %s: %w", path, f, ErrNotFixed)
	}
	mf, err := mmapfile.OpenFile(path, mode, nil)
	if err != nil {
		return nil, err
	}
	m := &Mapped{file: mf, f: f, stride: stride, path: path}
	if err := m.init(o); err != nil {
		mf.Close()
		return nil, err
	}
	return m, nil
}

func (m *Mapped) init(o ReadOptions) error {
	r, err := m.file.MapAll()
	if err != nil {
		return err
	}
	m.region = r
	m.data = r.Bytes()
	size := len(m.data)
	var ferr error
	gerr := r.Guard(func() {
		if !o.NoOpaqueCheck {
			if e := detectOpaque(m.data, int64(size)); e != nil {
				e.File = m.path
				ferr = e
				return
			}
		}
		m.n = int64(size / m.stride)
		if o.Strict {
			if ferr = m.validate(); ferr != nil {
				return
			}
		}
		if size%m.stride != 0 {
			spans := make([]span, len(m.f.Columns))
			at := size / m.stride * m.stride
			_, err := m.f.scanCell(m.data, at, m.n, 0, o.Strict, spans)
			ferr = withFile(err, m.path)
		}
	})
	if gerr != nil {
		return gerr
	}
	return ferr
}

// Len returns the number of cells.
func (m *Mapped) Len() int64 { return m.n }

// Stride returns the size of a cell in bytes.
func (m *Mapped) Stride() int { return m.stride }

// Format returns the mapping's format.
func (m *Mapped) Format() *Format { return m.f }

// Bytes returns the whole mapping. It is valid until Close; see the package
// documentation for what is unsafe.
func (m *Mapped) Bytes() []byte { return m.data }

// Cell returns the bytes of cell i, aliasing the mapping (valid until
// Close). It panics if i is out of range, as slice indexing does.
func (m *Mapped) Cell(i int64) []byte {
	if i < 0 || i >= m.n {
		panic(fmt.Sprintf("scidb: cell %d out of range [0,%d)", i, m.n))
	}
	p := int(i) * m.stride
	return m.data[p : p+m.stride : p+m.stride]
}

// Read fills row (one Value per attribute) with cell i. Raw bytes alias
// the mapping and are valid until Close. Prefixes are read as load() does
// (0x80–0xFF present). A fault while reading the null prefixes (the file
// truncated under the mapping) is an error wrapping mmapfile.ErrFault.
func (m *Mapped) Read(i int64, row Row) error {
	if i < 0 || i >= m.n {
		return fmt.Errorf("scidb: %s: cell %d out of range [0,%d)", m.path, i, m.n)
	}
	if len(row) != len(m.f.Attrs) {
		return fmt.Errorf("scidb: row has %d values, format %s has %d attributes", len(row), m.f, len(m.f.Attrs))
	}
	return m.region.Guard(func() { m.read(i, row) })
}

func (m *Mapped) read(i int64, row Row) {
	cell := m.Cell(i)
	for a, ci := range m.f.Attrs {
		c := &m.f.Columns[ci]
		off := m.f.offsets[ci]
		if c.Nullable {
			if p := int8(cell[off]); p >= 0 {
				row[a] = NullValue(p)
				continue
			}
			off++
		}
		b := stored(c, cell[off:off+c.valueSize()])
		row[a] = Value{Reason: -1, Raw: b[:len(b):len(b)]}
	}
}

// DecodeInto decodes cells start, start+1, … into t's columns, reusing
// their memory, for streaming a huge file in bounded memory: as many cells
// as t has room for (the n of NewTable), fewer at the end of the file. It
// sets t.Len, reslicing every column, to the number decoded and returns
// it; 0 when start is Len(). Values of string(N) and binary(N) attributes
// are new allocations, the rest are copied into place. t must come from
// NewTable with this file's format. A fault while reading the mapping is
// an error wrapping mmapfile.ErrFault.
func (m *Mapped) DecodeInto(t *Table, start int64) (int, error) {
	if start < 0 || start > m.n {
		return 0, fmt.Errorf("scidb: %s: start %d out of range [0,%d]", m.path, start, m.n)
	}
	if t.Format == nil || t.capacity == 0 && t.Len > 0 || len(t.Cols) != len(m.f.Attrs) || t.Format.String() != m.f.String() {
		return 0, fmt.Errorf("scidb: DecodeInto needs a table from NewTable with format %s: %w", m.f, ErrType)
	}
	n := int(min(int64(t.capacity), m.n-start))
	for a := range t.Cols {
		col := &t.Cols[a]
		col.Data = reslice(col.Data, n)
		if col.Null != nil {
			col.Null, col.Reason = col.Null[:n], col.Reason[:n]
		}
	}
	t.Len = n
	data := m.data[int(start)*m.stride : (int(start)+n)*m.stride]
	if err := m.region.Guard(func() { fillFixed(t, data, m.stride, n) }); err != nil {
		return 0, err
	}
	return n, nil
}

// reslice returns the column slice s with length n (n ≤ its capacity).
func reslice(s any, n int) any {
	return reflect.ValueOf(s).Slice(0, n).Interface()
}

// Validate scans every cell strictly (see ReadOptions.Strict) and returns
// the first error. A fault (the file truncated under the mapping) is an
// error, not a crash.
func (m *Mapped) Validate() error {
	var err error
	if gerr := m.region.Guard(func() { err = m.validate() }); gerr != nil {
		return gerr
	}
	return err
}

func (m *Mapped) validate() error {
	// In slices, so that cell numbers stay ints on 32-bit hosts too.
	const batch = 1 << 20
	for first := int64(0); first < m.n; first += batch {
		n := int(min(batch, m.n-first))
		p := int(first) * m.stride
		if err := validateFixed(m.data[p:p+n*m.stride], m.f, m.stride, n, first); err != nil {
			de := err.(*DataError)
			de.Offset += int64(p)
			de.File = m.path
			return de
		}
	}
	return nil
}

// Set writes v into attribute attr of cell i, in place: the value (zeros for
// a null) and, for a nullable entry, the prefix FF or the reason. The
// mapping must be writable (OpenMappedFile with mmapfile.ReadWrite);
// otherwise the error wraps mmapfile.ErrNotWritable. Changes reach the file at
// Close (or sooner, by the OS).
func (m *Mapped) Set(i int64, attr int, v Value) error {
	if i < 0 || i >= m.n {
		return fmt.Errorf("scidb: %s: cell %d out of range [0,%d)", m.path, i, m.n)
	}
	if attr < 0 || attr >= len(m.f.Attrs) {
		return fmt.Errorf("scidb: %s: attribute %d out of range [0,%d)", m.path, attr, len(m.f.Attrs))
	}
	ci := m.f.Attrs[attr]
	c := &m.f.Columns[ci]
	var scratch [32]byte
	b, err := appendEntry(scratch[:0], c, &v)
	if err != nil {
		de := err.(*DataError)
		e := m.f.dataError(i, ci, -1, de.Err, de.Msg)
		e.File = m.path
		return e
	}
	off := i*int64(m.stride) + int64(m.f.offsets[ci])
	_, err = m.region.WriteAt(b, off)
	return err
}

// Sync flushes changes made with Set to the file.
func (m *Mapped) Sync() error { return m.file.Sync() }

// Close unmaps and closes the file. Slices obtained from the Mapped (Cell,
// Bytes, View, Raw bytes of Read) must not be used afterwards.
func (m *Mapped) Close() error {
	m.data = nil
	return m.file.Close()
}

// Arrays returns one 1-D descriptor per attribute (Offset -1: values are
// strided; Type layout.Invalid where the SciDB type has no layout type).
func (m *Mapped) Arrays() []layout.Array { return m.f.arrays(m.n, nil) }

// Fixed is the set of Go types a strided column can hold: the Go types of
// the fixed-size SciDB types (byte for char and uint8).
type Fixed interface {
	bool | int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 |
		float32 | float64 | Datetime | DatetimeTZ
}

// goTypeMatches reports whether T is the Go type of SciDB type t.
func goTypeMatches[T Fixed](t Type) bool {
	switch any((*T)(nil)).(type) {
	case *bool:
		return t == TypeBool
	case *uint8:
		return t == TypeUint8 || t == TypeChar
	case *int8:
		return t == TypeInt8
	case *int16:
		return t == TypeInt16
	case *uint16:
		return t == TypeUint16
	case *int32:
		return t == TypeInt32
	case *uint32:
		return t == TypeUint32
	case *int64:
		return t == TypeInt64
	case *uint64:
		return t == TypeUint64
	case *float32:
		return t == TypeFloat
	case *float64:
		return t == TypeDouble
	case *Datetime:
		return t == TypeDatetime
	case *DatetimeTZ:
		return t == TypeDatetimeTZ
	}
	return false
}

// Strided is one attribute of a Mapped file: values at a fixed offset in
// every cell, read in place without decoding the file.
type Strided[T Fixed] struct {
	m        *Mapped
	c        Column
	prefix   int // offset of the null prefix in a cell; -1 if none
	off      int // offset of the value in a cell
	size     int
	nullable bool
}

// ColumnOf returns attribute attr of m as a strided column of T, which
// must be the Go type of the attribute's SciDB type (ErrType otherwise):
// bool, byte (char, uint8), int8 … uint64, float32 (float), float64
// (double), Datetime, DatetimeTZ. string(N) and binary(N) attributes are
// read with Mapped.Read.
func ColumnOf[T Fixed](m *Mapped, attr int) (*Strided[T], error) {
	if attr < 0 || attr >= len(m.f.Attrs) {
		return nil, fmt.Errorf("scidb: attribute %d out of range [0,%d)", attr, len(m.f.Attrs))
	}
	ci := m.f.Attrs[attr]
	c := m.f.Columns[ci]
	if c.Width > 0 || !goTypeMatches[T](c.Type) {
		var z T
		return nil, fmt.Errorf("scidb: attribute %d (%s) is %s, not %T: %w", attr, m.f.name(attr), c, z, ErrType)
	}
	s := &Strided[T]{m: m, c: c, prefix: -1, off: m.f.offsets[ci], size: c.Type.Size(), nullable: c.Nullable}
	if c.Nullable {
		s.prefix = s.off
		s.off++
	}
	return s, nil
}

// Len returns the number of values (cells).
func (s *Strided[T]) Len() int64 { return s.m.n }

// At returns value i, whether it is null, and its missing reason (-1 when
// present). A null's value is the zero value: its payload is never read.
// It panics if i is out of range.
func (s *Strided[T]) At(i int64) (v T, null bool, reason int8) {
	if i < 0 || i >= s.m.n {
		panic(fmt.Sprintf("scidb: value %d out of range [0,%d)", i, s.m.n))
	}
	p := int(i) * s.m.stride
	if s.prefix >= 0 {
		if r := int8(s.m.data[p+s.prefix]); r >= 0 {
			return v, true, r
		}
	}
	b := s.m.data[p+s.off : p+s.off+s.size]
	switch x := any(&v).(type) {
	case *bool:
		*x = b[0] != 0
	case *uint8:
		*x = b[0]
	case *int8:
		*x = int8(b[0])
	case *int16:
		*x = int16(binary.LittleEndian.Uint16(b))
	case *uint16:
		*x = binary.LittleEndian.Uint16(b)
	case *int32:
		*x = int32(binary.LittleEndian.Uint32(b))
	case *uint32:
		*x = binary.LittleEndian.Uint32(b)
	case *int64:
		*x = int64(binary.LittleEndian.Uint64(b))
	case *uint64:
		*x = binary.LittleEndian.Uint64(b)
	case *float32:
		*x = math.Float32frombits(binary.LittleEndian.Uint32(b))
	case *float64:
		*x = math.Float64frombits(binary.LittleEndian.Uint64(b))
	case *Datetime:
		*x = Datetime(binary.LittleEndian.Uint64(b))
	case *DatetimeTZ:
		*x = DatetimeTZ{int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))}
	}
	return v, false, -1
}

// Copy copies the first min(len(dst), Len()) values into dst, with zero
// values for nulls, and returns how many it copied. It is one tight loop
// over the mapping; a fault (the file truncated under the mapping) panics
// as any access to a lost page does, use CopyFrom for a guarded copy.
func (s *Strided[T]) Copy(dst []T) int {
	n, _ := s.copyFrom(dst, 0)
	return n
}

// CopyFrom copies values start, start+1, … into dst, as many as fit, with
// zero values for nulls, and returns how many it copied. A fault while
// reading the mapping is an error wrapping mmapfile.ErrFault.
func (s *Strided[T]) CopyFrom(dst []T, start int64) (int, error) {
	var n int
	var err error
	if gerr := s.m.region.Guard(func() { n, err = s.copyFrom(dst, start) }); gerr != nil {
		return 0, gerr
	}
	return n, err
}

func (s *Strided[T]) copyFrom(dst []T, start int64) (int, error) {
	if start < 0 || start > s.m.n {
		return 0, fmt.Errorf("scidb: start %d out of range [0,%d]", start, s.m.n)
	}
	n := int(min(int64(len(dst)), s.m.n-start))
	dst = dst[:n]
	mem := unsafeslice.Bytes(dst)
	base := int(start) * s.m.stride
	gather(mem, s.size, s.m.data, base+s.off, s.m.stride, n)
	if s.c.Type == TypeBool {
		normBools(mem)
	}
	if s.prefix >= 0 && n > 0 {
		data := s.m.data
		_ = data[base+s.prefix+(n-1)*s.m.stride]
		for i := 0; i < n; i++ {
			if data[base+s.prefix+i*s.m.stride] < 0x80 {
				clear(mem[i*s.size : (i+1)*s.size])
			}
		}
	}
	return n, nil
}

// Nulls fills null (as many as fit, from value 0) with the null mask and
// returns how many it filled; reasons, if not nil, gets the missing reasons
// (-1 where present). A non-nullable attribute has no nulls. A fault while
// reading the mapping is an error wrapping mmapfile.ErrFault.
func (s *Strided[T]) Nulls(null []bool, reasons []int8) (int, error) {
	var n int
	if err := s.m.region.Guard(func() { n = s.nulls(null, reasons) }); err != nil {
		return 0, err
	}
	return n, nil
}

func (s *Strided[T]) nulls(null []bool, reasons []int8) int {
	n := int(min(int64(len(null)), s.m.n))
	for i := 0; i < n; i++ {
		r := int8(-1)
		if s.prefix >= 0 {
			if p := int8(s.m.data[i*s.m.stride+s.prefix]); p >= 0 {
				r = p
			}
		}
		null[i] = r >= 0
		if i < len(reasons) {
			reasons[i] = r
		}
	}
	return n
}

// View returns the mapping as a []T when the format is a single
// non-nullable attribute of T's type (e.g. "(double)" as []float64), the
// host is little-endian and the mapping is aligned for T: no copy. It
// fails otherwise (mmapfile's errors say why); use ColumnOf to copy.
// The slice dies at Close.
func View[T layout.Elem](m *Mapped) ([]T, error) {
	if len(m.f.Columns) != 1 || m.f.Columns[0].Type == TypeSkip || m.f.Columns[0].Nullable || m.f.Columns[0].Width > 0 {
		return nil, fmt.Errorf("scidb: format %s is not one non-nullable fixed-size attribute: %w", m.f, ErrType)
	}
	c := m.f.Columns[0]
	lt, ok := LayoutType(c.Type)
	if !ok || lt != layout.TypeOf[T]() {
		var z T
		return nil, fmt.Errorf("scidb: attribute 0 is %s, not %T: %w", c.Type, z, ErrType)
	}
	return mmapfile.View[T](m.region, 0, int(m.n), binary.LittleEndian)
}
