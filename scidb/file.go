package scidb

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"reflect"
	"sync"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// File is a SciDB binary file opened with a format: its cells in memory
// (mapped by Open and OpenFile, read by NewReader), reachable without
// decoding the whole file. Cells of a fixed-size format are packed
// records: cell i is the stride bytes at i × stride, found in O(1), and
// each attribute can be read in place as a strided column (ColumnOf).
// Cells of a variable-size format are found from a mark every
// markEvery cells, taken while Open checks the file.
type File struct {
	file   *mmapfile.File   // nil for NewReader
	region *mmapfile.Region // nil for NewReader
	data   []byte
	f      *Schema
	stride int // 0 for a variable-size format
	n      int64
	path   string
	strict bool
	// Variable-size formats: the offset of every markEvery-th cell.
	marks []int64
	// The bytes of each attribute's present values, for listings.
	valueBytes []int64

	// damage is what Options.Salvage skipped: the error at the first
	// damaged cell, or nil.
	damage error

	mu     sync.Mutex
	closed bool
	formatState
}

// markEvery is the distance in cells between the marks of a variable-size
// file: finding a cell scans at most markEvery−1 others, and the marks
// cost 8 bytes per markEvery cells.
const markEvery = 256

// Open maps the file at path read-only as cells of format o.Format (which
// is required) and checks every cell: strictly unless o.Lenient, as
// SciDB's load() would read it otherwise. A size that leaves a partial last
// cell is an error naming that cell (o.Salvage keeps the cells before the
// first damaged one and reports it in Damage). An opaque backup file is
// refused (unless o.NoOpaqueCheck).
func Open(path string, o *Options) (*File, error) {
	return OpenFile(path, mmapfile.ReadOnly, o)
}

// OpenFile is Open in a mode: mmapfile.ReadWrite maps the file writable
// (under an exclusive lock, unless o.Lock says otherwise) so that Set and
// SetValue can change cells of a fixed-size format in place. It never
// creates a file: write one with EncodeFile, or make one to fill in place
// with Create.
func OpenFile(path string, mode mmapfile.Mode, o *Options) (*File, error) {
	f, err := o.format(path)
	if err != nil {
		return nil, err
	}
	if o.Create || o.Truncate {
		return nil, fileError(path, -1, errors.ErrUnsupported, "OpenFile does not create SciDB files; use EncodeFile")
	}
	mo := o.Options
	mf, r, err := mmapfile.OpenMapped(path, mode, &mo)
	if err != nil {
		return nil, err
	}
	m := &File{file: mf, region: r, data: r.Bytes(), f: f, path: path, strict: o.strict()}
	if err := m.init(o); err != nil {
		mf.Close()
		return nil, err
	}
	return m, nil
}

// Create makes a new file at path of n cells of o.Format, which must be
// fixed-size (ErrNotFixed), and opens it read-write: numpy's
// open_memmap(mode="w+"). Every value is zero and every nullable entry
// null (missing reason 0) until Set or SetValue fills it; a format of one
// non-nullable attribute is filled through View, whose values start at
// byte 0 and so are aligned for any type. The file is made beside path,
// its disk blocks reserved (a full disk is an error here, not a fault
// when the view is written), and renamed over path only when complete:
// a replaced file keeps its permission bits, a new one gets o.Perm.
func Create(path string, n int64, o *Options) (*File, error) {
	f, err := o.format(path)
	if err != nil {
		return nil, err
	}
	stride, fixed := f.Stride()
	if !fixed {
		return nil, fileError(path, -1, ErrNotFixed, "Create of format %s", f)
	}
	size, ok := layout.Mul(n, int64(stride))
	if n < 0 || !ok {
		return nil, fileError(path, -1, mmapfile.ErrOutOfRange, "%d cells of %d bytes", n, stride)
	}
	tmp, err := atomicfile.Create(path, o.Perm)
	if err != nil {
		return nil, err
	}
	defer tmp.Abort()
	mf, err := tmp.Map(&mmapfile.Options{Lock: mmapfile.LockNone})
	if err != nil {
		return nil, err
	}
	if err := errors.Join(mf.Grow(size), mf.Close()); err != nil {
		return nil, fileError(path, -1, err, "reserving %d bytes: %v", size, err)
	}
	if err := tmp.Commit(); err != nil {
		return nil, err
	}
	opts := *o
	opts.Create, opts.Truncate = false, false
	return OpenFile(path, mmapfile.ReadWrite, &opts)
}

// NewReader reads size bytes of SciDB cells of format o.Format from r into
// memory and checks them as Open does. Views of a File from NewReader
// alias that memory, not a file.
func NewReader(r io.ReaderAt, size int64, o *Options) (*File, error) {
	f, err := o.format("")
	if err != nil {
		return nil, err
	}
	if size < 0 || size > math.MaxInt {
		return nil, fileError("", -1, mmapfile.ErrOutOfRange, "size %d", size)
	}
	data := make([]byte, size)
	if n, err := r.ReadAt(data, 0); n < len(data) {
		if err == nil || err == io.EOF {
			err = mmapfile.ErrTruncated
		}
		return nil, fileError("", int64(n), err, "reading %d bytes: %v", size, err)
	}
	m := &File{data: data, f: f, strict: o.strict()}
	if err := m.init(o); err != nil {
		return nil, err
	}
	return m, nil
}

// guard runs fn, turning a fault in the mapping (the file truncated by
// another process) into an error wrapping mmapfile.ErrFault that names the
// file and offset.
func (m *File) guard(fn func()) error {
	if m.region == nil {
		fn()
		return nil
	}
	err := m.region.Guard(fn)
	if err == nil {
		return nil
	}
	off := int64(-1)
	var me *mmapfile.Error
	if errors.As(err, &me) {
		off = me.Offset
	}
	if errors.Is(err, mmapfile.ErrClosed) {
		return fileError(m.path, -1, err, "file is closed")
	}
	return fileError(m.path, off, err, "memory fault in the mapping (was the file truncated?)")
}

// use fails when the file is closed.
func (m *File) use() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fileError(m.path, -1, mmapfile.ErrClosed, "")
	}
	return nil
}

func (m *File) init(o *Options) error {
	size := len(m.data)
	stride, fixed := m.f.Stride()
	var ferr error
	gerr := m.guard(func() {
		if o.opaqueCheck() {
			if e := detectOpaque(m.data, int64(size)); e != nil {
				e.File = m.path
				ferr = e
				return
			}
		}
		m.valueBytes = make([]int64, len(m.f.Attrs))
		if !fixed {
			// index stops at a damaged cell, with the cells before it
			// counted, marked and summed.
			if ferr = m.index(); ferr != nil && o.salvage() {
				m.damage, ferr = ferr, nil
			}
			return
		}
		m.stride = stride
		m.n = int64(size / stride)
		if m.strict {
			ferr = m.validate()
		}
		if ferr == nil && size%stride != 0 {
			spans := make([]span, len(m.f.Columns))
			at := size / stride * stride
			_, err := m.f.scanCell(m.data, at, m.n, 0, m.strict, spans)
			ferr = withFile(err, m.path)
		}
		if ferr != nil && o.salvage() {
			m.salvage(ferr)
			ferr = nil
		}
		for a, ci := range m.f.Attrs {
			m.valueBytes[a] = m.n * int64(m.f.Columns[ci].valueSize())
		}
	})
	if gerr != nil {
		return gerr
	}
	return ferr
}

// salvage keeps the cells of a fixed-size file before the damaged cell
// that err names.
func (m *File) salvage(err error) {
	m.damage = err
	var de *FormatError
	if errors.As(err, &de) && de.Cell >= 0 && de.Cell < m.n {
		m.n = de.Cell
	}
}

// Damage reports what Options.Salvage skipped: the error at the first
// damaged cell, whose cells and the ones after it the File does not hold;
// nil for a sound file.
func (m *File) Damage() error { return m.damage }

// index checks every cell of a variable-size file, counting them, marking
// every markEvery-th and adding up the attributes' bytes.
func (m *File) index() error {
	spans := make([]span, len(m.f.Columns))
	for pos := 0; pos < len(m.data); m.n++ {
		if m.n%markEvery == 0 {
			m.marks = append(m.marks, int64(pos))
		}
		end, err := m.f.scanCell(m.data, pos, m.n, 0, m.strict, spans)
		if err != nil {
			return withFile(err, m.path)
		}
		for a, ci := range m.f.Attrs {
			if sp := spans[ci]; sp.prefix < 0 {
				m.valueBytes[a] += int64(len(stored(&m.f.Columns[ci], m.data[sp.start:sp.end])))
			}
		}
		pos = end
	}
	return nil
}

// cellAt returns where cell i (< Len) starts and ends in the data.
func (m *File) cellAt(i int64, spans []span) (int, int) {
	if m.stride > 0 {
		p := int(i) * m.stride
		return p, p + m.stride
	}
	pos := int(m.marks[i/markEvery])
	for k := i / markEvery * markEvery; ; k++ {
		end, _ := m.f.scanCell(m.data, pos, k, 0, false, spans) // checked at open
		if k == i {
			return pos, end
		}
		pos = end
	}
}

// Len returns the number of cells.
func (m *File) Len() int64 { return m.n }

// Stride returns the size of a cell in bytes, or 0 for a variable-size
// format.
func (m *File) Stride() int { return m.stride }

// CellFormat returns the file's format.
func (m *File) CellFormat() *Schema { return m.f }

// Name returns the path the file was opened with ("" for NewReader).
func (m *File) Name() string { return m.path }

// Bytes returns the whole mapping. It is valid until Close; see the package
// documentation for what is unsafe.
func (m *File) Bytes() []byte { return m.data }

// Cell returns the bytes of cell i, aliasing the mapping (valid until
// Close). It panics if i is out of range, as slice indexing does.
func (m *File) Cell(i int64) []byte {
	if i < 0 || i >= m.n {
		panic("scidb: " + m.path + ": cell out of range")
	}
	var spans []span
	if m.stride == 0 {
		spans = make([]span, len(m.f.Columns))
	}
	p, end := m.cellAt(i, spans)
	return m.data[p:end:end]
}

// Read fills row (one Value per attribute) with cell i. The values are
// copies: they stay valid after Close and whatever happens to the file.
// Prefixes are read as load() does (0x80–0xFF present). A fault while
// reading the mapping (the file truncated under it) is an error wrapping
// mmapfile.ErrFault.
func (m *File) Read(i int64, row Row) error {
	if err := m.use(); err != nil {
		return err
	}
	if i < 0 || i >= m.n {
		return fileError(m.path, -1, mmapfile.ErrOutOfRange, "cell %d out of range [0,%d)", i, m.n)
	}
	if len(row) != len(m.f.Attrs) {
		return fileError(m.path, -1, ErrWidth, "row has %d values, format %s has %d attributes", len(row), m.f, len(m.f.Attrs))
	}
	if m.stride > 0 {
		return m.guard(func() { m.readFixed(i, row) })
	}
	spans := make([]span, len(m.f.Columns))
	return m.guard(func() {
		p, _ := m.cellAt(i, spans)
		m.f.scanCell(m.data, p, i, 0, false, spans) // checked at open
		for a, ci := range m.f.Attrs {
			if sp := spans[ci]; sp.prefix >= 0 {
				row[a] = NullValue(sp.prefix)
			} else {
				row[a] = copiedValue(stored(&m.f.Columns[ci], m.data[sp.start:sp.end]))
			}
		}
	})
}

// readFixed is Read for a fixed-size format, at the entries' offsets.
func (m *File) readFixed(i int64, row Row) {
	p := int(i) * m.stride
	cell := m.data[p : p+m.stride]
	for a, ci := range m.f.Attrs {
		c := &m.f.Columns[ci]
		off := m.f.offsets[ci]
		if c.Nullable {
			if r := int8(cell[off]); r >= 0 {
				row[a] = NullValue(r)
				continue
			}
			off++
		}
		row[a] = copiedValue(stored(c, cell[off:off+c.valueSize()]))
	}
}

// copiedValue returns a present value holding a copy of b: inline for
// fixed-size values, without allocating.
func copiedValue(b []byte) Value {
	v := Value{Reason: -1}
	if len(b) > 0 && len(b) <= len(v.inline) {
		v.n = uint8(copy(v.inline[:], b))
		return v
	}
	v.Raw = append([]byte{}, b...)
	return v
}

// DecodeInto decodes cells start, start+1, … into t's columns, reusing
// their memory, for streaming a huge file in bounded memory: as many cells
// as t has room for (the n of NewTable), fewer at the end of the file. It
// sets t.Len, reslicing every column, to the number decoded and returns
// it; 0 when start is Len(). Values of string(N) and binary(N) attributes
// are new allocations, the rest are copied into place. t must come from
// NewTable with this file's format, which must be fixed-size. A fault
// while reading the mapping is an error wrapping mmapfile.ErrFault.
func (m *File) DecodeInto(t *Table, start int64) (int, error) {
	if err := m.use(); err != nil {
		return 0, err
	}
	if m.stride == 0 {
		return 0, fileError(m.path, -1, ErrNotFixed, "DecodeInto of format %s", m.f)
	}
	if start < 0 || start > m.n {
		return 0, fileError(m.path, -1, mmapfile.ErrOutOfRange, "start %d out of range [0,%d]", start, m.n)
	}
	if t.Format == nil || t.capacity == 0 && t.Len > 0 || len(t.Cols) != len(m.f.Attrs) || t.Format.String() != m.f.String() {
		return 0, fileError(m.path, -1, mmapfile.ErrTypeMismatch, "DecodeInto needs a table from NewTable with format %s", m.f)
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
	if err := m.guard(func() { fillFixed(t, data, m.stride, n) }); err != nil {
		return 0, err
	}
	return n, nil
}

// reslice returns the column slice s with length n (n ≤ its capacity).
func reslice(s any, n int) any {
	return reflect.ValueOf(s).Slice(0, n).Interface()
}

// Validate scans every cell strictly (see Options.Lenient) and returns
// the first error. A fault (the file truncated under the mapping) is an
// error, not a crash.
func (m *File) Validate() error {
	if err := m.use(); err != nil {
		return err
	}
	var err error
	if gerr := m.guard(func() { err = m.validate() }); gerr != nil {
		return gerr
	}
	return err
}

func (m *File) validate() error {
	if m.stride == 0 {
		spans := make([]span, len(m.f.Columns))
		pos := 0
		for i := int64(0); i < m.n; i++ {
			end, err := m.f.scanCell(m.data, pos, i, 0, true, spans)
			if err != nil {
				return withFile(err, m.path)
			}
			pos = end
		}
		return nil
	}
	// In slices, so that cell numbers stay ints on 32-bit hosts too.
	const batch = 1 << 20
	for first := int64(0); first < m.n; first += batch {
		n := int(min(batch, m.n-first))
		p := int(first) * m.stride
		if err := validateFixed(m.data[p:p+n*m.stride], m.f, m.stride, n, first); err != nil {
			de := err.(*FormatError)
			de.Offset += int64(p)
			de.File = m.path
			return de
		}
	}
	return nil
}

// SetValue writes v into attribute attr of cell i, in place: the value
// (zeros for a null) and, for a nullable entry, the prefix FF or the
// reason. The format must be fixed-size (ErrNotFixed) and the file opened
// writable (OpenFile with mmapfile.ReadWrite), else the error wraps
// mmapfile.ErrNotWritable. Changes reach the file at Sync or Close (or
// sooner, by the OS).
func (m *File) SetValue(i int64, attr int, v Value) error {
	if err := m.use(); err != nil {
		return err
	}
	if m.stride == 0 {
		return fileError(m.path, -1, ErrNotFixed, "cells of format %s cannot change in place", m.f)
	}
	if m.region == nil || !m.region.Writable() {
		return fileError(m.path, -1, mmapfile.ErrNotWritable, "cells change in place only in a file opened with OpenFile(path, mmapfile.ReadWrite, …)")
	}
	if i < 0 || i >= m.n {
		return fileError(m.path, -1, mmapfile.ErrOutOfRange, "cell %d out of range [0,%d)", i, m.n)
	}
	if attr < 0 || attr >= len(m.f.Attrs) {
		return fileError(m.path, -1, errNoAttr, "attribute %d of [0,%d)", attr, len(m.f.Attrs))
	}
	ci := m.f.Attrs[attr]
	c := &m.f.Columns[ci]
	var scratch [32]byte
	b, err := appendEntry(scratch[:0], c, &v)
	if err != nil {
		de := err.(*FormatError)
		e := m.f.dataError(i, ci, -1, de.Err, de.Msg)
		e.File = m.path
		return e
	}
	off := i*int64(m.stride) + int64(m.f.offsets[ci])
	if _, err = m.region.WriteAt(b, off); err != nil {
		return fileError(m.path, off, err, "%v", err)
	}
	return nil
}

// Sync flushes changes made with Set to the file.
func (m *File) Sync() error {
	if m.file == nil {
		return nil
	}
	return m.file.Sync()
}

// Close unmaps and closes the file; closing twice returns an error wrapping
// mmapfile.ErrClosed. Slices obtained from the File (Cell, Bytes, View)
// must not be used afterwards.
func (m *File) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fileError(m.path, -1, mmapfile.ErrClosed, "")
	}
	m.closed = true
	m.pays.Reset()
	// m.data is left as it is: a copying read that passed its check of
	// closed may still be reading it inside the region's guard, which
	// Unmap waits for; a read that starts later finds the region closed.
	if m.file == nil {
		return nil
	}
	return m.file.Close()
}

// arrays returns one 1-D descriptor per attribute, which Records lists
// (Offset -1: values are strided; Type layout.Invalid where the SciDB type
// has no layout type; Size the bytes of the present values, strings
// without terminators).
func (m *File) arrays() []layout.Array {
	return m.f.arrays(m.n, func(a int) int64 { return m.valueBytes[a] })
}

// Fixed is the set of Go types a strided column can hold: the Go types of
// the fixed-size SciDB types (byte for char and uint8).
type Fixed interface {
	bool | int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 |
		float32 | float64 | Datetime | DatetimeTZ
}

// goTypeMatches reports whether T is the Go type of SciDB type t: its
// layout type's (LayoutType; byte for char too), Datetime for datetime,
// DatetimeTZ for datetimetz.
func goTypeMatches[T Fixed](t Type) bool {
	switch any((*T)(nil)).(type) {
	case *Datetime:
		return t == TypeDatetime
	case *DatetimeTZ:
		return t == TypeDatetimeTZ
	}
	lt, ok := LayoutType(t)
	gt, _, elem := layout.BytesOf([]T(nil))
	return ok && elem && t != TypeDatetime && lt == gt
}

// Strided is one attribute of a File of fixed-size cells: values at a
// fixed offset in every cell, read in place without decoding the file.
type Strided[T Fixed] struct {
	m        *File
	c        Column
	prefix   int // offset of the null prefix in a cell; -1 if none
	off      int // offset of the value in a cell
	size     int
	nullable bool
}

// ColumnOf returns attribute attr of m as a strided column of T, which
// must be the Go type of the attribute's SciDB type (an error wrapping
// mmapfile.ErrTypeMismatch otherwise): bool, byte (char, uint8), int8 …
// uint64, float32 (float), float64 (double), Datetime, DatetimeTZ. The
// format must be fixed-size (ErrNotFixed). string(N) and binary(N)
// attributes are read with File.Read.
func ColumnOf[T Fixed](m *File, attr int) (*Strided[T], error) {
	if err := m.use(); err != nil {
		return nil, err
	}
	if m.stride == 0 {
		return nil, fileError(m.path, -1, ErrNotFixed, "strided columns of format %s", m.f)
	}
	if attr < 0 || attr >= len(m.f.Attrs) {
		return nil, fileError(m.path, -1, errNoAttr, "attribute %d of [0,%d)", attr, len(m.f.Attrs))
	}
	ci := m.f.Attrs[attr]
	c := m.f.Columns[ci]
	if c.Width > 0 || !goTypeMatches[T](c.Type) {
		var z T
		return nil, fileError(m.path, -1, mmapfile.ErrTypeMismatch, "attribute %d (%s) is %s, not %T", attr, m.f.name(attr), c, z)
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
// It panics if i is out of range. At reads the mapping directly, as a view
// does: it is not guarded against a file truncated under the mapping (use
// CopyFrom for that), and must not be called after Close.
func (s *Strided[T]) At(i int64) (v T, null bool, reason int8) {
	if i < 0 || i >= s.m.n {
		panic("scidb: " + s.m.path + ": value out of range")
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
// values for nulls, and returns how many it copied: CopyFrom(dst, 0).
func (s *Strided[T]) Copy(dst []T) (int, error) { return s.CopyFrom(dst, 0) }

// CopyFrom copies values start, start+1, … into dst, as many as fit, with
// zero values for nulls, and returns how many it copied. It is one tight
// loop over the mapping; a fault while reading it (the file truncated
// under the mapping) is an error wrapping mmapfile.ErrFault.
func (s *Strided[T]) CopyFrom(dst []T, start int64) (int, error) {
	if err := s.m.use(); err != nil {
		return 0, err
	}
	if start < 0 || start > s.m.n {
		return 0, fileError(s.m.path, -1, mmapfile.ErrOutOfRange, "start %d out of range [0,%d]", start, s.m.n)
	}
	var n int
	if err := s.m.guard(func() { n = s.copyFrom(dst, start) }); err != nil {
		return 0, err
	}
	return n, nil
}

func (s *Strided[T]) copyFrom(dst []T, start int64) int {
	n := int(min(int64(len(dst)), s.m.n-start))
	dst = dst[:n]
	mem := unsafeslice.Bytes(dst)
	base := int(start) * s.m.stride
	gather(mem, s.size, s.m.data, base+s.off, s.m.stride, n)
	if s.c.Type == TypeBool {
		layout.CheckBools(mem, layout.Bool, true)
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
	return n
}

// Nulls fills null with the null mask of values start, start+1, … (as
// many as fit) and returns how many it filled; reasons, if not nil, gets
// the missing reasons (-1 where present). A non-nullable attribute has no
// nulls. A fault while reading the mapping is an error wrapping
// mmapfile.ErrFault.
func (s *Strided[T]) Nulls(start int64, null []bool, reasons []int8) (int, error) {
	if err := s.m.use(); err != nil {
		return 0, err
	}
	if start < 0 || start > s.m.n {
		return 0, fileError(s.m.path, -1, mmapfile.ErrOutOfRange, "start %d out of range [0,%d]", start, s.m.n)
	}
	var n int
	if err := s.m.guard(func() { n = s.nulls(start, null, reasons) }); err != nil {
		return 0, err
	}
	return n, nil
}

func (s *Strided[T]) nulls(start int64, null []bool, reasons []int8) int {
	n := int(min(int64(len(null)), s.m.n-start))
	base := int(start) * s.m.stride
	for i := 0; i < n; i++ {
		r := int8(-1)
		if s.prefix >= 0 {
			if p := int8(s.m.data[base+i*s.m.stride+s.prefix]); p >= 0 {
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
