package npy

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// target is what a name stands for: an array, or one field of a
// structured array.
type target struct {
	name  string
	a     *array
	field *Field // nil: the whole array
	fi    int    // the field's index in the array's fields
}

// dtype is the type of the target's elements.
func (t *target) dtype() DType {
	if t.field != nil {
		return t.field.DType
	}
	return t.a.h.DType
}

// shape is the target's logical shape: the array's, then a subarray
// field's own dimensions.
func (t *target) shape() []int64 {
	s := append([]int64{}, t.a.h.Shape...)
	if t.field != nil {
		s = append(s, t.field.Shape...)
	}
	return s
}

// count is the number of elements of the target.
func (t *target) count() int64 {
	n := t.a.h.count
	if t.field != nil {
		for _, d := range t.field.Shape {
			n *= d // within the data size, which did not overflow
		}
	}
	return n
}

// resolve finds what name stands for: "0" or "" for a .npy's array, a
// member's key, a field's name (in a .npy), or "key/field" (in an .npz).
// f.mu must be held.
func (f *File) resolve(name string) (target, error) {
	if f.closed {
		return target{}, f.recordErr(name, -1, mmapfile.ErrClosed, "")
	}
	if i, ok := f.keys[name]; ok {
		return target{name: name, a: f.arrays[i]}, nil
	}
	if name == "" && len(f.arrays) == 1 {
		return target{name: f.arrays[0].key, a: f.arrays[0]}, nil
	}
	if !f.isZip && len(f.arrays) == 1 {
		if t, ok := fieldNamed(f.arrays[0], name, name); ok {
			return t, nil
		}
	}
	for j := strings.LastIndexByte(name, '/'); j >= 0; j = strings.LastIndexByte(name[:j], '/') {
		if i, ok := f.keys[name[:j]]; ok {
			if t, ok := fieldNamed(f.arrays[i], name, name[j+1:]); ok {
				return t, nil
			}
		}
	}
	return target{}, f.errf(-1, format.NoRecord(name), "")
}

// fieldNamed is the target name: the field field of a.
func fieldNamed(a *array, name, field string) (target, bool) {
	if a.h.fields == nil {
		return target{}, false
	}
	j := a.h.fields.lookup(field)
	if j < 0 {
		return target{}, false
	}
	fl := a.h.fields.field(j)
	return target{name: name, a: a, field: &fl, fi: j}, true
}

// typeCheck refuses a Go element type that is not the target's.
func (f *File) typeCheck(t *target, lt layout.Type) error {
	dt := t.dtype()
	if dt.Type() != lt || dt.Structured() {
		what := dt.simpleDescrOr()
		if name := dt.Type(); name.Valid() {
			what += " (" + name.String() + ")"
		}
		return f.errf(t.a.data, mmapfile.ErrTypeMismatch, "%q holds %s, not %s", t.name, what, lt)
	}
	return nil
}

// typed resolves name and checks that lt is its element type.
func (f *File) typed(name string, lt layout.Type) (target, error) {
	t, err := f.resolve(name)
	if err != nil {
		return t, err
	}
	return t, f.typeCheck(&t, lt)
}

// simpleDescrOr names a dtype in messages.
func (d DType) simpleDescrOr() string {
	if d.Structured() {
		return "a structured type"
	}
	return d.simpleDescr()
}

// View returns the array name as a slice that aliases the file's mapping:
// no copy is made. name is "0" (or "") for a .npy's array, a member's key
// for an .npz. T must be the array's element type (int64 for datetime64
// and timedelta64). View fails, saying to use Read, where the bytes
// cannot be aliased: big-endian data (mmapfile.ErrByteOrder), data at an
// offset not aligned for T (mmapfile.ErrMisaligned; np.savez does not
// align its members, this package's ZipWriter does), deflated members,
// fields of structured arrays (strided), files read through NewReader.
// Bool arrays must hold only bytes 0 and 1.
//
// In a file opened read-write, writing to the slice changes the file;
// in an .npz, the member's CRC-32 is rewritten at Close. The slice is
// valid until Close.
func View[T layout.Elem](f *File, name string) ([]T, error) {
	i, err := f.recordOf(name, layout.TypeOf[T]())
	if err != nil {
		return nil, err
	}
	return format.View[T](f, i)
}

// recordOf returns the record of the array or field name after checking
// that lt is its element type.
func (f *File) recordOf(name string, lt layout.Type) (int, error) {
	i, t, _, err := f.lookup(name, lt)
	if err == nil && i < 0 {
		return 0, f.errf(t.a.data, errors.ErrUnsupported, "%q is not a record of its own; use Read", name)
	}
	return i, err
}

// lookup resolves name, checks that lt is its element type and returns
// its record, or -1 for a nullable column's mask, which has none, and its
// element count (which an append changes).
func (f *File) lookup(name string, lt layout.Type) (int, target, int64, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t, err := f.typed(name, lt)
	if err != nil {
		return 0, t, 0, err
	}
	return f.recordFor(&t), t, t.count(), nil
}

// regionFor returns a mapping of the file that reaches end (it grows with
// appends; earlier mappings stay valid until Close).
func (f *File) regionFor(end int64) (*mmapfile.Region, error) {
	if reg := f.reg.Load(); reg != nil && int64(reg.Len()) >= end {
		return reg, nil
	}
	f.mapMu.Lock()
	defer f.mapMu.Unlock()
	if reg := f.reg.Load(); reg != nil && int64(reg.Len()) >= end {
		return reg, nil
	}
	reg, err := f.mf.MapAll()
	if err != nil {
		return nil, err
	}
	f.reg.Store(reg)
	return reg, nil
}

// Read returns a copy of the array or field name in storage order (the
// file's C or Fortran order; a subarray field's own dimensions vary
// fastest), in the host's byte order. T must be the element type (int64
// for datetime64 and timedelta64). A deflated member is inflated, up to
// Options.MaxInflate bytes.
func Read[T layout.Elem](f *File, name string) ([]T, error) {
	i, t, n, err := f.lookup(name, layout.TypeOf[T]())
	if err != nil {
		return nil, err
	}
	if size := n * int64(t.dtype().ItemSize); t.a.deflated() && size > f.opts.maxInflate() {
		return nil, f.errf(t.a.m.data, ErrInflateLimit, "%q inflates to %d bytes, more than %d (raise Options.MaxInflate, or stream it through format.Stream)", name, size, f.opts.maxInflate())
	}
	if i < 0 {
		dst := make([]T, n)
		return dst, f.readMask(&t, 0, unsafeslice.Bytes(dst))
	}
	return format.Read[T](f, i)
}

// ReadAt copies len(dst) elements of the array or field name, from
// element start in storage order (see Read), into dst: part of a large
// array in bounded memory. It fills dst or returns an error.
func ReadAt[T layout.Elem](f *File, name string, start int64, dst []T) error {
	i, t, n, err := f.lookup(name, layout.TypeOf[T]())
	if err != nil {
		return err
	}
	if i < 0 {
		if end, ok := layout.Add(start, int64(len(dst))); start < 0 || !ok || end > n {
			return f.recordErr(name, t.a.data, mmapfile.ErrOutOfRange, "elements [%d, %d+%d) outside [0, %d)", start, start, len(dst), n)
		}
		return f.readMask(&t, start, unsafeslice.Bytes(dst))
	}
	return format.ReadAt(f, i, start, dst)
}

// readMask copies the elements [start, …) of a nullable column's mask,
// which is no record of its own, into dst.
func (f *File) readMask(t *target, start int64, dst []byte) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return f.recordErr(t.name, -1, mmapfile.ErrClosed, "")
	}
	return f.read(t, start, dst)
}

// read copies the target's elements [start, …) in storage order into
// dst (whole elements), converting to the host's byte order and checking
// bools.
func (f *File) read(t *target, start int64, dst []byte) error {
	if err := f.readRaw(t, start, dst); err != nil {
		return err
	}
	dt := t.dtype()
	if lt := dt.Type(); lt.Valid() {
		layout.SwapOrder(dst, lt, dt.byteOrder(), layout.HostOrder())
		if bad := layout.CheckBools(dst, lt, f.opts.Lenient); bad >= 0 {
			return f.errf(f.elemOffset(t, start+int64(bad)), mmapfile.ErrInvalidBool, "%q, element %d: byte 0x%02x (Options.Lenient reads it as true, as NumPy does)", t.name, start+int64(bad), dst[bad])
		}
	}
	return nil
}

// byteOrder is the byte order of the dtype's elements.
func (d DType) byteOrder() binary.ByteOrder {
	if d.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// elemOffset is the file offset of the target's element k (storage
// order), or the member's data offset for a deflated member.
func (f *File) elemOffset(t *target, k int64) int64 {
	if t.a.deflated() {
		return t.a.m.data
	}
	return t.a.data + t.pos(k)
}

// pos is the offset, from the first data byte, of the target's element k
// in storage order.
func (t *target) pos(k int64) int64 {
	if t.field == nil {
		return k * int64(t.a.h.DType.ItemSize)
	}
	sub := t.subCount()
	return k/sub*int64(t.a.h.DType.ItemSize) + int64(t.field.Offset) + k%sub*int64(t.field.DType.ItemSize)
}

func (t *target) subCount() int64 {
	n := int64(1)
	for _, d := range t.field.Shape {
		n *= d
	}
	return n
}

// source returns where the array's data can be copied from and the
// offset of its first byte there: the mapping, the file, or a deflated
// member's inflater. A stored member's CRC-32 is checked first, once.
func (f *File) source(a *array) (io.ReaderAt, int64, error) {
	if a.deflated() {
		return a.inf, a.h.dataOff(), nil
	}
	if err := f.checkStored(a); err != nil {
		return nil, 0, err
	}
	if reg := f.reg.Load(); reg != nil && int64(reg.Len()) >= a.data+a.h.dataSize {
		return reg, a.data, nil
	}
	return f.ra, a.data, nil
}

// readRaw copies the target's elements [start, …) in storage order, as
// they are stored, into dst.
func (f *File) readRaw(t *target, start int64, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if t.field != nil {
		return f.gather(t, dst, start, layout.RowMajor, true)
	}
	src, base, err := f.source(t.a)
	if err != nil {
		return err
	}
	off := base + start*int64(t.a.h.DType.ItemSize)
	if err := readFull(src, dst, off); err != nil {
		return mapRecordErr(f.name, t.name, f.elemOffset(t, start), err, "reading its data")
	}
	return t.a.checkEnd(off + int64(len(dst)))
}

// checkEnd: when a read of a deflated member reaches the end of its
// array data, the rest of the stream is inflated too, so that its size
// and CRC-32 are checked.
func (a *array) checkEnd(end int64) error {
	if !a.deflated() || end != a.h.dataOff()+a.h.dataSize {
		return nil
	}
	_, err := a.inf.ReadAt(nil, a.m.usize)
	return err
}

// ReadStrings returns the values of a fixed-size text or bytes array or
// field (|S<n>, <U<n>, |V<n>) in storage order: |S values as their bytes
// without trailing NULs (as NumPy gives them), <U values as UTF-8 without
// trailing NULs, |V values as all their bytes.
func (f *File) ReadStrings(name string) ([]string, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t, err := f.resolve(name)
	if err != nil {
		return nil, err
	}
	dt := t.dtype()
	if dt.Kind != 'S' && dt.Kind != 'U' && dt.Kind != 'V' {
		return nil, f.errf(t.a.data, mmapfile.ErrTypeMismatch, "%q holds %s, not text or bytes", name, dt.simpleDescrOr())
	}
	n := t.count()
	if t.a.deflated() && n*int64(dt.ItemSize) > f.opts.maxInflate() {
		return nil, f.errf(t.a.m.data, ErrInflateLimit, "%q inflates to %d bytes, more than %d", name, n*int64(dt.ItemSize), f.opts.maxInflate())
	}
	out := make([]string, 0, n)
	size := int64(dt.ItemSize)
	buf := make([]byte, min(n, max(1, (1<<20)/size))*size)
	for k := int64(0); k < n; {
		m := min(n-k, int64(len(buf))/size)
		if err := f.readRaw(&t, k, buf[:m*size]); err != nil {
			return nil, err
		}
		for j := int64(0); j < m; j++ {
			out = append(out, decodeText(dt, buf[j*size:(j+1)*size]))
		}
		k += m
	}
	return out, nil
}

// decodeText is the text of one |S, <U or |V item.
func decodeText(dt DType, b []byte) string {
	switch dt.Kind {
	case 'S':
		for len(b) > 0 && b[len(b)-1] == 0 {
			b = b[:len(b)-1]
		}
		return string(b)
	case 'U':
		var s strings.Builder
		order := dt.byteOrder()
		end := len(b) / 4
		for end > 0 && order.Uint32(b[4*(end-1):]) == 0 {
			end--
		}
		for i := 0; i < end; i++ {
			r := rune(order.Uint32(b[4*i:]))
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			s.WriteRune(r)
		}
		return s.String()
	}
	return string(b)
}

// encodeText is the inverse of decodeText: value as one item of dt, or an
// error if it does not fit.
func encodeText(dt DType, value string, out []byte) error {
	clear(out)
	switch dt.Kind {
	case 'V':
		// Raw bytes travel as text in 0x… hex, as tables print them.
		if h, ok := strings.CutPrefix(value, "0x"); ok {
			b, err := hex.DecodeString(h)
			if err != nil {
				return fmt.Errorf("%q is not 0x followed by hex digits", value)
			}
			value = string(b)
		}
		fallthrough
	case 'S':
		if len(value) > len(out) {
			return fmt.Errorf("%d bytes do not fit a %d-byte item", len(value), len(out))
		}
		copy(out, value)
	case 'U':
		if !utf8.ValidString(value) {
			return errors.New("text is not valid UTF-8")
		}
		if n := utf8.RuneCountInString(value); n > len(out)/4 {
			return fmt.Errorf("%d characters do not fit %d", n, len(out)/4)
		}
		order := dt.byteOrder()
		i := 0
		for _, r := range value {
			order.PutUint32(out[4*i:], uint32(r))
			i++
		}
	default:
		return fmt.Errorf("%s is not a text type", dt.simpleDescrOr())
	}
	return nil
}

// Set changes the element of the array or field name at the 0-based
// logical (C-order) index idx to v, in place: in the file's byte order,
// through the read-write mapping. T must be the element type. In an .npz
// only stored members can be edited (a deflated one gives an error
// wrapping errors.ErrUnsupported and the file is unchanged), and the
// member's CRC-32 is rewritten at Sync or Close. The change is visible to
// every reader of the file at once and durable after Sync or Close.
func Set[T layout.Elem](f *File, name string, idx []int64, v T) error {
	i, t, _, err := f.lookup(name, layout.TypeOf[T]())
	if err != nil {
		return err
	}
	if i < 0 {
		f.wmu.Lock()
		defer f.wmu.Unlock()
		f.mu.RLock()
		defer f.mu.RUnlock()
		return f.setRaw(&t, idx, append([]byte(nil), unsafeslice.Bytes([]T{v})...)) // a bool: no byte order
	}
	return format.Set(f, i, idx, v)
}

// SetBytes changes element idx of record i, one that is not one mapped
// run of bytes (a field, a deflated member), to b; see format.BytesSetter.
func (f *File) SetBytes(i int, idx []int64, b []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.readable(i); err != nil {
		return err
	}
	ref := f.ref(i)
	return f.setRaw(&ref.t, idx, b)
}

// setRaw writes one element's bytes (in the file's byte order) at the
// logical index idx. f.wmu and f.mu (read) must be held.
func (f *File) setRaw(t *target, idx []int64, b []byte) error {
	a := t.a
	switch {
	case !f.writable:
		return f.recordErr(t.name, -1, mmapfile.ErrNotWritable, "the file is open read-only")
	case a.deflated():
		return f.errf(a.m.data, errors.ErrUnsupported, "%q is a deflated member, which cannot be edited in place; the file is unchanged", t.name)
	}
	outer := len(a.h.Shape)
	if err := layout.CheckIndex("", t.shape(), idx); err != nil {
		return f.recordErr(t.name, a.data, format.IndexError(err), "")
	}
	o, _ := layout.Index(a.h.Shape, a.h.Order(), idx[:outer]...)
	pos := o * int64(a.h.DType.ItemSize)
	if t.field != nil {
		s, _ := layout.Index(t.field.Shape, layout.RowMajor, idx[outer:]...)
		pos += int64(t.field.Offset) + s*int64(t.field.DType.ItemSize)
	}
	if t.dtype().Kind == 'b' && b[0] > 1 {
		return f.recordErr(t.name, a.data+pos, mmapfile.ErrInvalidBool, "bool byte 0x%02x", b[0])
	}
	if a.m != nil {
		if err := f.mark(a.m); err != nil {
			return err
		}
	}
	reg, err := f.regionFor(a.data + a.h.dataSize)
	if err != nil {
		return err
	}
	if _, err := reg.WriteAt(b, a.data+pos); err != nil {
		return mapRecordErr(f.name, t.name, a.data+pos, err, "writing the element")
	}
	return nil
}
