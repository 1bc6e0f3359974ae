package scidb

import (
	"encoding/binary"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// The typed calls below name an attribute by its 0-based index, as
// ColumnOf does, and take T, the layout type of its SciDB type (int64
// for int64 and for datetime seconds, uint8 for uint8 and char, bool,
// float32 for float, …); string, binary and datetimetz attributes are
// read with File.Read or ColumnOf.

// typedAttr returns the entry of attribute attr after checking that the
// file is open, that attr exists and that T is its layout type.
func typedAttr[T layout.Elem](m *File, attr int) (int, error) {
	if err := m.use(); err != nil {
		return 0, err
	}
	if attr < 0 || attr >= len(m.f.Attrs) {
		return 0, fileError(m.path, -1, errNoAttr, "attribute %d of [0,%d)", attr, len(m.f.Attrs))
	}
	ci := m.f.Attrs[attr]
	c := m.f.Columns[ci]
	if lt, ok := LayoutType(c.Type); !ok || c.Width > 0 || lt != layout.TypeOf[T]() {
		var z T
		return 0, fileError(m.path, -1, mmapfile.ErrTypeMismatch, "attribute %d (%s) is %s, not %T", attr, m.f.name(attr), c, z)
	}
	return ci, nil
}

// View returns the values of attribute attr as a slice that aliases the
// mapping: no copy is made. Only a file whose cells are that one
// non-nullable attribute (format "(double)" viewed as []float64) holds
// its values as one contiguous run; any other attribute is strided
// through its cells, and View fails naming Read, which copies it. View
// also fails, naming Read, on a big-endian host, for a File from
// NewReader, and where the mapping is not aligned for T. The slice dies
// at Close.
func View[T layout.Elem](m *File, attr int) ([]T, error) {
	if _, err := typedAttr[T](m, attr); err != nil {
		return nil, err
	}
	return format.View[T](m, attr)
}

// Read returns a copy of the values of attribute attr, one per cell, in
// the host's byte order; nulls read as zeros (ColumnOf's Nulls, or
// File.Read, says where they are). A fault while reading the mapping (the
// file truncated under it) is an error wrapping mmapfile.ErrFault.
func Read[T layout.Elem](m *File, attr int) ([]T, error) {
	ci, err := typedAttr[T](m, attr)
	if err != nil {
		return nil, err
	}
	if m.asText(attr) {
		dst := make([]T, m.n)
		return dst, m.readTyped(ci, 0, unsafeslice.Bytes(dst), layout.TypeOf[T]())
	}
	return format.Read[T](m, attr)
}

// ReadAt copies the values of attribute attr of cells [start,
// start+len(dst)) into dst, as Read does: it fills dst or returns an
// error (mmapfile.ErrOutOfRange for cells outside the file).
func ReadAt[T layout.Elem](m *File, attr int, start int64, dst []T) error {
	ci, err := typedAttr[T](m, attr)
	if err != nil {
		return err
	}
	if !m.asText(attr) {
		return format.ReadAt(m, attr, start, dst)
	}
	if end, ok := layout.Add(start, int64(len(dst))); start < 0 || !ok || end > m.n {
		return fileError(m.path, -1, mmapfile.ErrOutOfRange, "attribute %d (%s): cells [%d, %d+%d) outside [0, %d)", attr, m.f.name(attr), start, start, len(dst), m.n)
	}
	return m.readTyped(ci, start, unsafeslice.Bytes(dst), layout.TypeOf[T]())
}

// asText reports whether attribute attr is one that records describe as
// text (datetime, char), which the typed calls read as numbers (the
// seconds, the byte) without package format.
func (m *File) asText(attr int) bool { return !m.Records()[attr].Type.Valid() }

// readTyped copies the values of entry ci from cell first into dst and
// puts them in the host's byte order.
func (m *File) readTyped(ci int, first int64, dst []byte, t layout.Type) error {
	if err := m.copyValues(ci, first, dst); err != nil {
		return err
	}
	layout.SwapOrder(dst, t, binary.LittleEndian, layout.HostOrder())
	return nil
}

// copyValues copies the little-endian values of entry ci of cells first,
// first+1, … into dst (whole values, inside the file), zeros for nulls,
// bool bytes read as 0 or 1.
func (m *File) copyValues(ci int, first int64, dst []byte) error {
	c := &m.f.Columns[ci]
	size := c.valueSize()
	n := int64(len(dst) / size)
	err := m.guard(func() {
		if m.stride > 0 {
			off := m.f.offsets[ci]
			if c.Nullable {
				off++
			}
			base := int(first) * m.stride
			for k := 0; k < int(n); k++ {
				p := base + k*m.stride
				out := dst[k*size : (k+1)*size]
				if c.Nullable && m.data[p+off-1] < 0x80 {
					clear(out)
					continue
				}
				copy(out, m.data[p+off:p+off+size])
			}
			return
		}
		spans := make([]span, len(m.f.Columns))
		pos, _ := m.cellAt(first, spans)
		for k := int64(0); k < n; k++ {
			pos, _ = m.f.scanCell(m.data, pos, first+k, 0, false, spans)
			out := dst[k*int64(size) : (k+1)*int64(size)]
			if sp := spans[ci]; sp.prefix >= 0 {
				clear(out)
			} else {
				copy(out, m.data[sp.start:sp.end])
			}
		}
	})
	if err != nil {
		return err
	}
	if c.Type == TypeBool {
		layout.CheckBools(dst, layout.Bool, true)
	}
	return nil
}

// Set changes attribute attr of cell idx[0] (an attribute is 1-D: the
// index is [cell]) to v, a present value, in place (see SetValue). T must
// be the attribute's layout type (else the error wraps
// mmapfile.ErrTypeMismatch); the format must be fixed-size and the file
// opened read-write. The change is visible to every reader of the file at
// once and durable after Sync or Close.
func Set[T layout.Elem](m *File, attr int, idx []int64, v T) error {
	if _, err := typedAttr[T](m, attr); err != nil {
		return err
	}
	if m.asText(attr) {
		b := unsafeslice.Bytes([]T{v})
		layout.SwapOrder(b, layout.TypeOf[T](), layout.HostOrder(), binary.LittleEndian)
		return m.SetBytes(attr, idx, b)
	}
	return format.Set(m, attr, idx, v)
}

// SetBytes changes attribute attr of cell idx[0] to b, a present value
// in the file's byte order; see format.BytesSetter and SetValue.
func (m *File) SetBytes(attr int, idx []int64, b []byte) error {
	if err := m.checkCell(attr, idx); err != nil {
		return err
	}
	return m.SetValue(idx[0], attr, copiedValue(b))
}

// checkCell refuses an index into attribute attr that is not one cell of
// the file's: an attribute is 1-D, its index [cell].
func (m *File) checkCell(attr int, idx []int64) error {
	if err := layout.CheckIndex("", []int64{m.Len()}, idx); err != nil {
		return fileError(m.path, -1, format.IndexError(err), "attribute %q", m.f.name(attr))
	}
	return nil
}
