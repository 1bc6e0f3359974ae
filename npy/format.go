package npy

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	format.Register(format.Format{
		Name:        "npy",
		Description: "NumPy arrays: .npy files and .npz archives of them",
		Extensions:  []string{".npy", ".npz"},
		Sniff:       sniff,
		Open:        openFormat,
		Write:       writeFormat,
		Params: []format.Param{
			{Name: "npy-large-headers", Write: true, Switch: true, NoValue: "true",
				Usage: "write .npy headers longer than the 10000 characters np.load reads by default (it then needs allow_pickle=True)"},
		},
	})
}

// MaskSuffix names the bool field that holds a nullable table column's
// nulls in a structured .npy (and the bool member beside it in an .npz):
// the column "x" becomes the field "x" and the field "x.mask", True where
// the cell is null, as numpy.ma's masks are. Reading a structured .npy as
// a table folds such a field back into its column.
const MaskSuffix = ".mask"

// sniff recognises NumPy's magic, or a ZIP archive whose first member is
// a .npy file.
func sniff(head []byte) bool {
	if bytes.HasPrefix(head, []byte(magic)) {
		return true
	}
	if len(head) < localLen || binary.LittleEndian.Uint32(head) != sigLocal {
		return false
	}
	n := int(binary.LittleEndian.Uint16(head[26:]))
	return localLen+n <= len(head) && strings.HasSuffix(string(head[localLen:localLen+n]), ".npy")
}

func openFormat(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
	var opts Options
	if o != nil {
		opts = Options{Options: o.Options, Lenient: o.Lenient, Salvage: o.Salvage, Repair: o.Repair}
	}
	return OpenFile(path, mode, &opts)
}

var (
	_ format.File         = (*File)(nil)
	_ format.Payloader    = (*File)(nil)
	_ format.Setter       = (*File)(nil)
	_ format.Damaged      = (*File)(nil)
	_ format.TableScanner = (*File)(nil)
	_ format.TextReader   = (*File)(nil)
)

// face is what a File keeps for package format: its records (arrays,
// fields, columns, other members), what each is, and their payload
// readers. It is built when the headers are read and again after an
// append; f.mu guards it.
type face struct {
	recs  []format.Record
	refs  []recRef
	index map[recKey]int // the record of each array and field
	table bool           // a .npy whose array is 1-D structured or 1-D text: its records are columns

	pays     format.Payloads
	inflMu   sync.Mutex
	inflated map[int]*format.Payload // deflated members read in another order, whole in memory
}

// recKey names an array or one of its fields.
type recKey struct {
	a     *array
	field *Field
}

// recRef is what a record is: a target (array or field), and for a
// nullable column the field holding its mask.
type recRef struct {
	t    target
	mask *Field
}

func (f *File) buildFace() {
	n := len(f.others)
	for _, a := range f.arrays {
		n += max(1, len(a.h.DType.Fields))
	}
	f.face = face{index: make(map[recKey]int, n), inflated: map[int]*format.Payload{}}
	f.recs = make([]format.Record, 0, n)
	f.refs = make([]recRef, 0, n)
	// Records of one type share their Facts (a record's are never
	// changed): an archive may hold a hundred thousand arrays of a few
	// types.
	facts := map[string]*format.Facts{}
	for _, a := range f.arrays {
		f.addArray(a, facts)
	}
	for _, m := range f.others {
		rec := format.Record{Array: layout.Array{Name: m.name, Shape: []int64{m.usize}, Offset: -1, Size: m.usize}, Kind: format.KindOpaque, TypeName: "bytes",
			Extra: map[string]any{"member": m.name}}
		if m.stored() {
			rec.Offset = m.data
		}
		f.recs = append(f.recs, rec)
		f.refs = append(f.refs, recRef{})
	}
}

func (f *File) addArray(a *array, facts map[string]*format.Facts) {
	h := a.h
	dt := h.DType
	oneD := !f.isZip && len(h.Shape) == 1
	// Room for every key at once: a map grown by its inserts would leave
	// the smaller one behind, for each member of a large archive.
	base := format.Record{Array: layout.Array{Order: h.Order(), Offset: -1}, Extra: make(map[string]any, 5)}
	if f.isZip {
		base.Extra["version"] = h.version()
		base.Extra["member"] = a.m.name
		if a.deflated() {
			base.Extra["compressed"] = "deflate"
			base.Extra["storage"] = "deflated"
		}
	}
	add := func(r format.Record, ref recRef) {
		f.index[recKey{ref.t.a, ref.t.field}] = len(f.recs)
		f.recs = append(f.recs, r)
		f.refs = append(f.refs, ref)
	}
	factsOf := func(descr string) *format.Facts {
		fa := facts[descr]
		if fa == nil {
			fa = &format.Facts{NativeType: descr}
			facts[descr] = fa
		}
		return fa
	}
	// Fields of one type share their Extra too: a structured type may
	// have a hundred thousand fields of a few types.
	var extras map[string]map[string]any
	describe := func(r *format.Record, d DType, shape []int64) {
		r.Type, r.TypeName = d.Type(), d.TypeName()
		r.BigEndian = d.BigEndian
		r.Shape = shape
		r.Size = h.count * int64(d.ItemSize)
		for _, n := range shape[len(h.Shape):] {
			r.Size *= n
		}
		switch {
		case d.Structured():
			r.Extra = maps.Clone(base.Extra)
		case !dt.Structured():
			r.Facts = factsOf(d.simpleDescr())
			r.Extra["descr"] = r.Facts.NativeType
		default:
			r.Facts = factsOf(d.simpleDescr())
			descr := r.Facts.NativeType
			if r.Extra = extras[descr]; r.Extra == nil {
				r.Extra = maps.Clone(base.Extra)
				r.Extra["descr"] = descr
				if extras == nil {
					extras = map[string]map[string]any{}
				}
				extras[descr] = r.Extra
			}
		}
		switch {
		case d.Structured():
			r.Kind = format.KindOpaque
		case !r.Type.Valid() && oneD && len(shape) == 1:
			r.Kind = format.KindColumn
		case !r.Type.Valid():
			r.Kind = format.KindOpaque
		case oneD && len(shape) == 1 && dt.Structured():
			r.Kind = format.KindColumn
		default:
			r.Kind = format.KindArray
		}
	}
	if !dt.Structured() {
		r := base
		r.Name = a.key
		describe(&r, dt, append([]int64{}, h.Shape...))
		if !a.deflated() {
			r.Offset = a.data
		}
		if r.Kind == format.KindColumn {
			f.table = true
		}
		add(r, recRef{t: target{name: a.key, a: a}})
		return
	}
	if oneD {
		f.table = true
	}
	fields := dt.Fields
	scalarShape := slices.Clone(h.Shape) // the shape of every scalar field
	for i := 0; i < len(fields); i++ {
		fl := &fields[i]
		r := base
		r.Name = fl.Name
		if f.isZip {
			r.Name = a.key + "/" + fl.Name
		}
		shape := scalarShape
		if len(fl.Shape) > 0 {
			shape = append(slices.Clone(h.Shape), fl.Shape...)
		}
		describe(&r, fl.DType, shape)
		ref := recRef{t: target{name: r.Name, a: a, field: fl}}
		if r.Kind == format.KindColumn && i+1 < len(fields) {
			if m := &fields[i+1]; m.Name == fl.Name+MaskSuffix && m.DType.Kind == 'b' && m.Shape == nil {
				r.Nullable = true
				ref.mask = m
				i++
			}
		}
		add(r, ref)
	}
}

// Records lists the file's arrays as records: an array, or each field of
// a structured array ("key/field" in an .npz), and the .npz members that
// are not arrays, as opaque bytes. A .npy of one 1-D structured or text
// array is a table: its fields are columns, and a bool field "x.mask"
// after "x" holds that column's nulls. The slice must not be changed; an
// append builds a new one.
func (f *File) Records() []format.Record {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.recs
}

// Format returns "npy".
func (f *File) Format() string { return "npy" }

func (f *File) bad(i int, err error, format string, args ...any) error {
	return recordErr(f.name, f.recs[i].Name, f.recs[i].Offset, err, format, args...)
}

// ReadArray copies elements [first, first+len(dst)/size) of record i, in
// order and byte order bo.
func (f *File) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.readable(i); err != nil {
		return err
	}
	if f.refs[i].t.field != nil {
		return f.readField(i, dst, first, order, bo)
	}
	rec := &f.recs[i]
	p, err := f.payload(i)
	if err == nil && f.refs[i].t.a.deflated() && order != rec.Order && !layout.Trivial(rec.Shape) {
		p, err = f.inflatedPayload(i, p, order)
	}
	if err != nil {
		return err
	}
	return p.ReadArray(dst, first, order, bo)
}

// readable checks that record i holds values ReadArray can copy; f.mu is
// held.
func (f *File) readable(i int) error {
	if i < 0 || i >= len(f.recs) {
		return f.errf(-1, mmapfile.ErrOutOfRange, "record %d of %d", i, len(f.recs))
	}
	if rec := &f.recs[i]; rec.Kind == format.KindOpaque || !rec.Type.Valid() {
		return f.bad(i, errors.ErrUnsupported, "%s values cannot be read as an array", rec.TypeString())
	}
	if f.closed {
		return f.bad(i, mmapfile.ErrClosed, "read")
	}
	return nil
}

// Payload returns the reader of record i, a whole array (format.Payloader):
// its bytes in the mapping, or a deflated member inflated as a stream,
// which cannot be viewed. Fields of structured arrays are strided and
// have none.
func (f *File) Payload(i int) (*format.Payload, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.readable(i); err != nil {
		return nil, err
	}
	if f.refs[i].t.field != nil {
		return nil, f.bad(i, errors.ErrUnsupported, "a field of a structured array, whose values are strided; use Read")
	}
	return f.payload(i)
}

// payload is Payload for a whole array; f.mu is held.
func (f *File) payload(i int) (*format.Payload, error) {
	return f.pays.Get(i, func() (*format.Payload, error) {
		a := f.refs[i].t.a
		rec := &f.recs[i]
		p := &format.Payload{Array: rec.Array, Lenient: f.opts.Lenient}
		p.Array.Offset = a.data
		p.Wrap = func(off int64, err error) error { return mapRecordErr(f.name, rec.Name, off, err, "") }
		if !a.deflated() {
			// A stored member's CRC-32 is checked before the first copy;
			// views skip it (Verify checks on demand).
			p.Data, p.Off = f.ra, a.data
			p.Check = func() error { return f.checkStored(a) }
			if reg := f.reg.Load(); reg != nil && int64(reg.Len()) >= a.data+a.h.dataSize {
				p.Data = reg
			}
			if f.mf != nil {
				// A mapping that reaches the data's end: appends grow it.
				reg, err := f.regionFor(a.data + a.h.dataSize)
				if err != nil {
					return nil, err
				}
				p.Data = reg
			}
			if m := a.m; m != nil && f.writable {
				p.Writing = func() error { return f.viewing(m) }
			}
			return p, nil
		}
		// Reads in the member's own order inflate it as a stream.
		p.Data, p.Off = inflated{a}, a.h.dataOff()
		p.NoView = f.errf(a.m.data, errors.ErrUnsupported, "%q is a deflated member; use Read, which inflates it", rec.Name)
		return p, nil
	})
}

// viewing marks member m as handed out in a writable view: its CRC-32 is
// rewritten at Close.
func (f *File) viewing(m *member) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.mark(m); err != nil {
		return err
	}
	m.viewed = true
	return nil
}

// inflatedPayload returns the reader of deflated record i, whose streaming
// reader is p, for a read in another order, which needs the whole member
// in memory; f.mu is held.
func (f *File) inflatedPayload(i int, p *format.Payload, order layout.Order) (*format.Payload, error) {
	f.inflMu.Lock()
	defer f.inflMu.Unlock()
	if q := f.inflated[i]; q != nil {
		return q, nil
	}
	a := f.refs[i].t.a
	if a.h.dataSize > f.opts.maxInflate() {
		return nil, f.bad(i, ErrInflateLimit, "a read in %s order inflates all %d bytes of the member, more than %d", order, a.h.dataSize, f.opts.maxInflate())
	}
	b := make([]byte, a.h.dataSize)
	if err := readFull(a.inf, b, a.h.dataOff()); err != nil {
		return nil, err
	}
	q := &format.Payload{Array: p.Array, Lenient: p.Lenient, Wrap: p.Wrap, NoView: p.NoView, Data: bytes.NewReader(b)}
	f.inflated[i] = q
	return q, nil
}

// inflated reads a deflated member's inflated bytes and, where a read
// reaches the end of its array data, checks the rest of the stream.
type inflated struct{ a *array }

func (r inflated) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.a.inf.ReadAt(p, off)
	if err == nil {
		err = r.a.checkEnd(off + int64(n))
	}
	return n, err
}

// readField copies elements of a field of a structured array in order.
func (f *File) readField(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	t := &f.refs[i].t
	rec := &f.recs[i]
	size := int64(rec.Type.Size())
	n := int64(len(dst)) / size
	if end, ok := layout.Add(first, n); first < 0 || !ok || end > t.count() || int64(len(dst))%size != 0 {
		return f.bad(i, mmapfile.ErrOutOfRange, "elements [%d, %d+%d) outside [0, %d)", first, first, n, t.count())
	}
	shape := t.shape()
	storage := order == rec.Order && (len(t.field.Shape) == 0 || order == layout.RowMajor)
	if storage || layout.Trivial(shape) {
		if err := f.readRaw(t, first, dst); err != nil {
			return err
		}
	} else if err := f.gather(t, dst, first, order); err != nil {
		return err
	}
	layout.SwapOrder(dst, rec.Type, rec.ByteOrder(), bo)
	if bad := layout.CheckBools(dst, rec.Type, f.opts.Lenient); bad >= 0 {
		return f.bad(i, mmapfile.ErrInvalidBool, "element %d (%s order): byte 0x%02x", first+int64(bad), order, dst[bad])
	}
	return nil
}

// gather copies the target's elements [first, first+n) listed in order
// (over its logical shape) into dst, one by one: for fields read in an
// order that is not their storage order.
func (f *File) gather(t *target, dst []byte, first int64, order layout.Order) error {
	shape := t.shape()
	k := len(shape)
	outer := len(t.a.h.Shape)
	fsize := int64(t.field.DType.ItemSize)
	item := int64(t.a.h.DType.ItemSize)
	// The logical index of target element first, in order.
	idx := make([]int64, k)
	rem := first
	axes := make([]int, k) // axes from fastest to slowest in order
	for j := range axes {
		if order == layout.RowMajor {
			axes[j] = k - 1 - j
		} else {
			axes[j] = j
		}
	}
	for _, ax := range axes {
		idx[ax] = rem % shape[ax]
		rem /= shape[ax]
	}
	src, base, err := f.source(t.a)
	if err != nil {
		return err
	}
	w := window{src: src, end: base + t.a.h.dataSize}
	n := int64(len(dst)) / fsize
	for j := int64(0); j < n; j++ {
		o, _ := layout.Index(t.a.h.Shape, t.a.h.Order(), idx[:outer]...)
		sub, _ := layout.Index(t.field.Shape, layout.RowMajor, idx[outer:]...)
		pos := o*item + int64(t.field.Offset) + sub*fsize
		b, err := w.at(base+pos, fsize)
		if err != nil {
			return mapRecordErr(f.name, t.name, f.elemOffset(t, 0), err, "reading its data")
		}
		copy(dst[j*fsize:], b)
		for _, ax := range axes {
			if idx[ax]++; idx[ax] < shape[ax] {
				break
			}
			idx[ax] = 0
		}
	}
	return nil
}

// window serves small reads of [0, end) of a ReaderAt through a 1 MiB
// buffer.
type window struct {
	src io.ReaderAt
	end int64
	buf []byte
	off int64
	n   int64
}

func (w *window) at(pos, size int64) ([]byte, error) {
	if pos >= w.off && pos+size <= w.off+w.n {
		return w.buf[pos-w.off : pos-w.off+size], nil
	}
	if w.buf == nil {
		w.buf = make([]byte, 1<<20)
	}
	if size > int64(len(w.buf)) {
		w.buf = make([]byte, size)
	}
	w.off = pos
	n, err := w.src.ReadAt(w.buf[:max(0, min(int64(len(w.buf)), w.end-pos))], pos)
	if int64(n) < size {
		if err == nil || err == io.EOF {
			err = mmapfile.ErrTruncated
		}
		w.n = 0
		return nil, err
	}
	w.n = int64(n)
	return w.buf[:size], nil
}

// ScanTable reads the table's columns in batches of rows.
func (f *File) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	var cols []int
	for i, r := range f.recs {
		if r.Kind == format.KindColumn {
			cols = append(cols, i)
		}
	}
	if batch <= 0 {
		batch = 1 << 16
	}
	f.mu.RLock()
	a := f.refs[cols[0]].t.a
	rows := a.h.Shape[0]
	item := int64(a.h.DType.ItemSize)
	f.mu.RUnlock()
	batch = format.BatchRows(batch, item)
	raw := make([]byte, int64(batch)*item)
	out := make([]format.Column, len(cols))
	bufs := make([][]byte, len(cols))
	reasons := make([][]int8, len(cols))
	whole := target{name: a.key, a: a}
	for first := int64(0); first < rows || first == 0; first += int64(batch) {
		k := min(int64(batch), rows-first)
		chunk := raw[:k*item]
		f.mu.RLock()
		err := error(nil)
		if f.closed {
			err = f.errf(-1, mmapfile.ErrClosed, "scan")
		} else if k > 0 {
			err = f.readRaw(&whole, first, chunk)
		}
		f.mu.RUnlock()
		if err != nil {
			return err
		}
		for j, i := range cols {
			ref := &f.refs[i]
			var v any
			var err error
			v, bufs[j], err = f.column(i, ref, chunk, k, item, bufs[j])
			if err != nil {
				return err
			}
			out[j] = format.Column{Values: v}
			if ref.mask != nil {
				if int64(cap(reasons[j])) < k {
					reasons[j] = make([]int8, k)
				}
				r := reasons[j][:k]
				for row := int64(0); row < k; row++ {
					r[row] = -1
					if chunk[row*item+int64(ref.mask.Offset)] != 0 {
						r[row] = 0
					}
				}
				out[j].Reason = r
			}
		}
		if err := fn(first, out); err != nil {
			return err
		}
		if rows == 0 {
			break
		}
	}
	return nil
}

// column takes record i's values out of k whole records in chunk.
func (f *File) column(i int, ref *recRef, chunk []byte, k, item int64, buf []byte) (any, []byte, error) {
	rec := &f.recs[i]
	off, dt := int64(0), ref.t.a.h.DType
	if ref.t.field != nil {
		off, dt = int64(ref.t.field.Offset), ref.t.field.DType
	}
	size := int64(dt.ItemSize)
	if !rec.Type.Valid() {
		vals := make([]string, k)
		for row := int64(0); row < k; row++ {
			p := row*item + off
			if dt.Kind == 'V' {
				// Raw bytes as text, as SetText reads them back.
				vals[row] = "0x" + hex.EncodeToString(chunk[p:p+size])
			} else {
				vals[row] = decodeText(dt, chunk[p:p+size])
			}
		}
		return vals, buf, nil
	}
	if int64(cap(buf)) < k*size {
		buf = unsafeslice.AlignedBytes(k * size)
	}
	b := buf[:k*size]
	for row := int64(0); row < k; row++ {
		p := row*item + off
		copy(b[row*size:], chunk[p:p+size])
	}
	layout.SwapOrder(b, rec.Type, dt.byteOrder(), layout.HostOrder())
	if bad := layout.CheckBools(b, rec.Type, f.opts.Lenient); bad >= 0 {
		return nil, buf, f.bad(i, mmapfile.ErrInvalidBool, "row %d: byte 0x%02x", bad, b[bad])
	}
	return layout.SliceOf(rec.Type, b), buf, nil
}

// ReadText calls fn with the elements of record i, an array or field of
// bytes, str or void elements, in logical (C) order; see
// format.TextReader. A Fortran-order array is read an element at a time.
func (f *File) ReadText(i int, fn func(batch []string) error) error {
	ref := &f.refs[i]
	if !ref.isText() {
		return f.bad(i, errors.ErrUnsupported, "%s is not text", f.recs[i].TypeString())
	}
	t := ref.t
	dt := t.dtype()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return f.bad(i, mmapfile.ErrClosed, "read")
	}
	text := func(b []byte) string {
		if dt.Kind == 'V' {
			return "0x" + hex.EncodeToString(b)
		}
		return decodeText(dt, b)
	}
	n, size := t.count(), int64(dt.ItemSize)
	shape := t.a.h.Shape
	sub := int64(1)
	if t.field != nil {
		sub = t.subCount()
	}
	fortran := t.a.h.Order() == layout.ColMajor
	const batch = 4096
	out := make([]string, 0, min(n, batch))
	buf := make([]byte, min(n, batch)*size)
	for k := int64(0); k < n; {
		m := min(n-k, batch)
		out = out[:0]
		if !fortran {
			if err := f.readRaw(&t, k, buf[:m*size]); err != nil {
				return err
			}
			for j := range m {
				out = append(out, text(buf[j*size:(j+1)*size]))
			}
		} else {
			for j := range m {
				// Logical element k+j: its outer index, row-major,
				// stored column-major; a field's subarray in C order.
				outer, inner := (k+j)/sub, (k+j)%sub
				var stored, stride int64 = 0, 1
				for d := len(shape) - 1; d >= 0; d-- {
					stride *= shape[d]
				}
				rest := outer
				for d := range shape {
					stride /= shape[d]
					stored += (rest / stride) * colStride(shape, d)
					rest %= stride
				}
				if err := f.readRaw(&t, stored*sub+inner, buf[:size]); err != nil {
					return err
				}
				out = append(out, text(buf[:size]))
			}
		}
		if err := fn(out); err != nil {
			return err
		}
		k += m
	}
	return nil
}

// isText reports whether the record is an array or field of bytes, str
// or void elements.
func (r *recRef) isText() bool {
	if r.t.a == nil {
		return false
	}
	dt := r.t.dtype()
	return !dt.Structured() && (dt.Kind == 'S' || dt.Kind == 'U' || dt.Kind == 'V')
}

// colStride is the distance between neighbours along axis d of a
// column-major array of shape.
func colStride(shape []int64, d int) int64 {
	s := int64(1)
	for _, n := range shape[:d] {
		s *= n
	}
	return s
}

// SetText changes element idx of record i in place; see format.Setter.
// Numbers take Futhark's literals (and Python's complex literals for
// complex numbers), bools true or false, datetimes their integer (or
// NaT), text and bytes fields their text (void: 0x… hex). For a nullable
// column, "null" sets its mask and any value clears it.
func (f *File) SetText(i int, idx []int64, value string) error {
	ref := &f.refs[i]
	rec := &f.recs[i]
	if rec.Kind == format.KindOpaque && !ref.isText() {
		return f.bad(i, errors.ErrUnsupported, "%s values cannot be set", rec.TypeString())
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return f.bad(i, mmapfile.ErrClosed, "set")
	}
	if ref.mask != nil {
		m := target{name: ref.t.name + MaskSuffix, a: ref.t.a, field: ref.mask}
		if value == "null" {
			return f.setRaw(&m, idx, []byte{1})
		}
		b, err := parseValue(ref.t.dtype(), value)
		if err != nil {
			return f.recordErr(rec.Name, -1, err, "")
		}
		if err := f.setRaw(&ref.t, idx, b); err != nil {
			return err
		}
		return f.setRaw(&m, idx, []byte{0})
	}
	b, err := parseValue(ref.t.dtype(), value)
	if err != nil {
		return f.recordErr(rec.Name, -1, err, "")
	}
	return f.setRaw(&ref.t, idx, b)
}

// parseValue parses a literal for one element of dt and returns its
// bytes in dt's byte order.
func parseValue(dt DType, v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	literal := v
	out := make([]byte, dt.ItemSize)
	order := dt.byteOrder()
	lt := dt.Type()
	if lt.Valid() && lt != layout.Bool {
		v = strings.TrimSuffix(v, lt.String())
	}
	switch dt.Kind {
	case 'b':
		switch v {
		case "true", "True":
			out[0] = 1
		case "false", "False":
		default:
			return nil, fmt.Errorf("%q is not true or false", v)
		}
	case 'M', 'm':
		if v == "NaT" {
			order.PutUint64(out, 1<<63)
			break
		}
		fallthrough
	case 'i', 'u', 'f':
		// Futhark's literals, as every format's elements are set: 010 is
		// ten, and a value the type cannot hold is an error.
		b, err := format.ParseLiteral(lt, literal, order)
		if err != nil {
			return nil, err
		}
		copy(out, b)
	case 'c':
		if b, err := format.ParseLiteral(lt, literal, order); err == nil {
			copy(out, b)
			break
		}
		c, err := parseComplex(v, lt.Part())
		if err != nil {
			return nil, err
		}
		half := dt.ItemSize / 2
		layout.PutFloat(out[:half], order, lt.Part(), real(c))
		layout.PutFloat(out[half:], order, lt.Part(), imag(c))
	case 'S', 'U', 'V':
		if err := encodeText(dt, v, out); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("cannot set %s elements", dt.simpleDescrOr())
	}
	return out, nil
}

// The writers.

// writeFormat writes src as a .npz archive when path ends in .npz, else
// as a .npy file.
func writeFormat(path string, src format.Source, o *format.Options) error {
	var opts Options
	if o != nil {
		opts.Options = o.Options
		opts.LargeHeaders = o.Param("npy-large-headers") == "true"
	}
	if strings.EqualFold(filepath.Ext(path), ".npz") {
		return writeNPZ(path, src, &opts)
	}
	return writeNPYSource(path, src, &opts)
}

// ownFile returns the npy File behind src when src is one openFormat
// made, unwrapped.
func ownFile(src format.Source) *File {
	switch s := src.(type) {
	case *File:
		return s
	}
	return nil
}

// writeNPYSource writes the one array, or the table, of src as a .npy.
func writeNPYSource(path string, src format.Source, o *Options) error {
	if f := ownFile(src); f != nil && !f.isZip {
		// A .npy to a .npy: the same header and data, so a file that
		// np.save wrote converts to the same bytes, whatever its dtype.
		f.mu.RLock()
		a := f.arrays[0]
		f.mu.RUnlock()
		return atomicfile.Write(path, o.Perm, func(w *os.File) error {
			return writeNPY(path, atomicfile.Writeback(w), canonical(a.h.Header), o, func(out io.Writer) error { return f.copyData(a, out) })
		})
	}
	recs := src.Records()
	if len(recs) == 1 && recs[0].Kind != format.KindColumn {
		if _, ok := format.TextTypeOf(&recs[0]); ok {
			h, data, err := textArray(src, 0)
			if err != nil {
				return err
			}
			return atomicfile.Write(path, o.Perm, func(w *os.File) error {
				return writeNPY(path, atomicfile.Writeback(w), h, o, data)
			})
		}
	}
	for i := range recs {
		if recs[i].Kind == format.KindOpaque {
			return format.Unrepresentable(&recs[i], "a .npy file cannot hold "+recs[i].TypeString()+" values")
		}
	}
	columns := len(recs) > 0
	for i := range recs {
		columns = columns && recs[i].Kind == format.KindColumn
	}
	single := len(recs) == 1 && (recs[0].Kind == format.KindArray || recs[0].Name == "0")
	if !single && (columns || (len(recs) > 1 && format.IsTable(src))) {
		return writeTable(path, src, o)
	}
	if len(recs) != 1 {
		return errAt(path, -1, format.ErrNotRepresentable, "a .npy file holds one array, and the %d records are not the columns of a table; write an .npz, or choose one record (mmapkit convert --name NAME; format.Select)", len(recs))
	}
	h, err := arrayHeader(&recs[0])
	if err != nil {
		return err
	}
	if !recs[0].Type.Valid() {
		return writeTable(path, src, o)
	}
	return atomicfile.Write(path, o.Perm, func(w *os.File) error {
		return writeNPY(path, atomicfile.Writeback(w), h, o, func(out io.Writer) error { return streamRecord(src, 0, h, out) })
	})
}

// canonical is the header np.save writes for the array a header
// describes: Fortran order only where C order would list the elements
// differently.
func canonical(h Header) Header {
	h.FortranOrder = h.FortranOrder && !layout.Trivial(h.Shape)
	return h
}

// copyData writes the array's data as stored. An error of reading names
// this file; an error of out (a full disk) is returned as out gave it, for
// the writer to name its own file.
func (f *File) copyData(a *array, out io.Writer) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	src, base, err := f.source(a)
	if err != nil {
		return err
	}
	in := &readerErr{r: io.NewSectionReader(src, base, a.h.dataSize)}
	var bools *boolWriter
	if a.h.DType.Kind == 'b' {
		bools = &boolWriter{w: out, fix: f.opts.Lenient, bad: -1}
		out = bools
	}
	_, err = io.Copy(out, in)
	if bools != nil && bools.bad >= 0 {
		off := int64(-1)
		if !a.deflated() {
			off = a.data + bools.bad
		}
		return f.errf(off, mmapfile.ErrInvalidBool, "%q, element %d: byte 0x%02x in a bool array, which NumPy reads as true and mmapkit's readers refuse: not copied (Options.Lenient copies it as 1)", a.key, bools.bad, bools.badByte)
	}
	if err != nil && in.err != nil {
		return mapRecordErr(f.name, a.key, a.data, err, "reading its data")
	}
	return err
}

// boolWriter passes the bytes of a bool array on to w, stopping at the
// first byte that is neither 0 nor 1 (bad, its index; badByte) or, with
// fix, passing it on as 1.
type boolWriter struct {
	w       io.Writer
	fix     bool
	n       int64 // bytes passed on
	buf     []byte
	bad     int64
	badByte byte
}

// errBadBool stops a copy at a bool byte that is neither 0 nor 1.
var errBadBool = errors.New("a bool byte that is neither 0 nor 1")

func (b *boolWriter) Write(p []byte) (int, error) {
	q := p
	if i := layout.CheckBools(p, layout.Bool, false); i >= 0 {
		if !b.fix {
			b.bad, b.badByte = b.n+int64(i), p[i]
			return 0, errBadBool
		}
		b.buf = append(b.buf[:0], p...)
		layout.CheckBools(b.buf, layout.Bool, true)
		q = b.buf
	}
	n, err := b.w.Write(q)
	b.n += int64(n)
	return n, err
}

// readerErr is a reader that keeps the error its reads gave (io.EOF
// aside), so that a copy's caller can tell them from its writer's.
type readerErr struct {
	r   io.Reader
	err error
}

func (r *readerErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// recordDType is the dtype a writer gives a record: its own NumPy descr
// where it came from a NumPy file (byte order kept), else the
// little-endian dtype of its type (datetime units from the type name).
func recordDType(r *format.Record) (DType, error) {
	if r.Facts != nil && r.Facts.NativeType != "" {
		if d, err := parseDTypeString(r.Facts.NativeType); err == nil && d.Type() == r.Type && (r.Type.Valid() || d.TypeName() == r.TypeName) {
			return d, nil
		}
	}
	if n := r.TypeName; r.Type == layout.I64 && (strings.HasPrefix(n, "datetime64") || strings.HasPrefix(n, "timedelta64")) {
		if d, err := parseDTypeString("<" + n); err == nil {
			return d, nil
		}
	}
	if !r.Type.Valid() {
		if tt, ok := format.TextTypeOf(r); ok && tt.Kind != 0 && tt.Size <= math.MaxInt32/4 {
			if tt.Kind == 'U' {
				return DType{Kind: 'U', ItemSize: 4 * tt.Size}, nil
			}
			return DType{Kind: 'S', ItemSize: tt.Size}, nil
		}
		if rest, ok := strings.CutPrefix(r.TypeName, "void"); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > 0 && strconv.Itoa(n) == rest && n <= math.MaxInt32 {
				return DType{Kind: 'V', ItemSize: n}, nil
			}
		}
		return DType{}, format.Unrepresentable(r, "NumPy has no fixed-size type for "+r.TypeString())
	}
	d, err := DTypeOf(r.Type)
	if err != nil {
		return DType{}, format.Unrepresentable(r, err.Error())
	}
	return d, nil
}

// arrayHeader is the header of a .npy holding record r, in r's storage
// order.
func arrayHeader(r *format.Record) (Header, error) {
	if len(r.Shape) > MaxRank {
		return Header{}, format.Unrepresentable(r, fmt.Sprintf("%d dimensions; NumPy arrays have at most %d", len(r.Shape), MaxRank))
	}
	d, err := recordDType(r)
	if err != nil {
		return Header{}, err
	}
	return canonical(Header{DType: d, Shape: append([]int64{}, r.Shape...), FortranOrder: r.Order == layout.ColMajor}), nil
}

// streamRecord writes record i of src in h's order and byte order.
func streamRecord(src format.Source, i int, h Header, out io.Writer) error {
	return format.Stream(src, i, h.Order(), h.DType.byteOrder(), func(chunk []byte) error {
		_, err := out.Write(chunk)
		return err
	})
}

// tableField is one field of the structured array a table becomes.
type tableField struct {
	col  int // the column
	mask bool
	dt   DType
	text bool // text that ScanTable gives, of a size found by a first pass
}

// tablePlan is the structured dtype a table becomes: one field per
// column, and a bool mask field after each nullable column.
func tablePlan(path string, src format.Source) ([]format.Record, []tableField, error) {
	cols := format.TableColumns(src)
	if len(cols) == 0 {
		return nil, nil, errAt(path, -1, format.ErrNotRepresentable, "the table has no columns")
	}
	var fields []tableField
	names := map[string]bool{}
	for j := range cols {
		c := &cols[j]
		if c.Kind == format.KindOpaque || (len(c.Shape) != 1 || c.Shape[0] != cols[0].Shape[0]) {
			return nil, nil, format.Unrepresentable(c, "a structured .npy needs columns of one length")
		}
		tf := tableField{col: j}
		d, err := recordDType(c)
		switch {
		case err == nil:
			tf.dt = d
		case !c.Type.Valid():
			tf.text = true
			tf.dt = DType{Kind: 'U', ItemSize: 4}
		default:
			return nil, nil, err
		}
		for _, n := range []string{c.Name, c.Name + MaskSuffix} {
			if names[n] {
				return nil, nil, format.Unrepresentable(c, "two fields would be named "+pyRepr(n))
			}
		}
		names[c.Name] = true
		fields = append(fields, tf)
		if c.Nullable {
			names[c.Name+MaskSuffix] = true
			fields = append(fields, tableField{col: j, mask: true, dt: DType{Kind: 'b', ItemSize: 1}})
		}
	}
	return cols, fields, nil
}

// writeTable writes a table as a structured .npy: one field per column.
func writeTable(path string, src format.Source, o *Options) error {
	cols, fields, err := tablePlan(path, src)
	if err != nil {
		return err
	}
	if err := measureText(src, fields); err != nil {
		return err
	}
	dt := DType{}
	for _, tf := range fields {
		name := cols[tf.col].Name
		if tf.mask {
			name += MaskSuffix
		}
		dt.Fields = append(dt.Fields, Field{Name: name, Offset: dt.ItemSize, DType: tf.dt})
		dt.ItemSize += tf.dt.ItemSize
	}
	rows := cols[0].Shape[0]
	h := Header{DType: dt, Shape: []int64{rows}}
	if len(cols) == 1 && cols[0].Name == "0" && !cols[0].Nullable {
		h.DType = fields[0].dt // a .npy's own text array
	}
	return atomicfile.Write(path, o.Perm, func(w *os.File) error {
		return writeNPY(path, atomicfile.Writeback(w), h, o, func(out io.Writer) error { return writeRows(src, fields, h.DType.ItemSize, out) })
	})
}

// measureText sizes the text fields: the longest value of each, in
// characters (at least one).
func measureText(src format.Source, fields []tableField) error {
	need := false
	for _, tf := range fields {
		need = need || tf.text
	}
	if !need {
		return nil
	}
	longest := make([]int, len(fields))
	err := format.ScanTable(src, 1<<16, func(_ int64, cols []format.Column) error {
		for k, tf := range fields {
			if !tf.text || tf.mask {
				continue
			}
			vals, ok := cols[tf.col].Values.([]string)
			if !ok {
				return fmt.Errorf("column %d: text expected, got %T", tf.col, cols[tf.col].Values)
			}
			for _, v := range vals {
				longest[k] = max(longest[k], utf8.RuneCountInString(v))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k := range fields {
		if fields[k].text {
			if fields[k].dt.ItemSize, err = strItemSize(longest[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// strItemSize is the item size of a str type for text of at most longest
// characters (one at least).
func strItemSize(longest int) (int, error) {
	if longest > math.MaxInt32/4 {
		return 0, fmt.Errorf("text of %d characters: %w", longest, format.ErrNotRepresentable)
	}
	return 4 * max(1, longest), nil
}

// writeRows writes the table's rows as structured elements of itemsize
// bytes, the fields packed in order.
func writeRows(src format.Source, fields []tableField, itemsize int, out io.Writer) error {
	batch := max(1, (8<<20)/itemsize)
	buf := make([]byte, batch*itemsize)
	return format.ScanTable(src, batch, func(_ int64, cols []format.Column) error {
		rows := 0
		if len(cols) > 0 {
			rows = cols[0].Len()
		}
		b := buf[:rows*itemsize]
		clear(b)
		off := 0
		for _, tf := range fields {
			c := cols[tf.col]
			size := tf.dt.ItemSize
			switch {
			case tf.mask:
				for r := 0; r < rows; r++ {
					if c.Reason != nil && c.Reason[r] >= 0 {
						b[r*itemsize+off] = 1
					}
				}
			case !tf.dt.Type().Valid():
				vals, ok := c.Values.([]string)
				if !ok {
					return fmt.Errorf("column %d: text expected, got %T", tf.col, c.Values)
				}
				for r, v := range vals {
					if err := encodeText(tf.dt, v, b[r*itemsize+off:r*itemsize+off+size]); err != nil {
						return fmt.Errorf("row %d: %w: %w", r, err, format.ErrNotRepresentable)
					}
				}
			default:
				lt, vb, ok := layout.BytesOf(c.Values)
				if !ok || lt != tf.dt.Type() {
					return fmt.Errorf("column %d: %s values expected, got %T", tf.col, tf.dt.Type(), c.Values)
				}
				tmp := vb
				if !layout.IsHostOrder(tf.dt.byteOrder()) && lt.SwapSize() > 1 {
					tmp = append([]byte(nil), vb...)
					layout.SwapOrder(tmp, lt, layout.HostOrder(), tf.dt.byteOrder())
				}
				for r := 0; r < rows; r++ {
					copy(b[r*itemsize+off:], tmp[r*size:(r+1)*size])
				}
			}
			off += size
		}
		_, err := out.Write(b)
		return err
	})
}

// writeNPZ writes every record of src as a member of an .npz archive.
func writeNPZ(path string, src format.Source, o *Options) error {
	z, err := CreateZip(path, o)
	if err != nil {
		return err
	}
	if err := addAll(z, src); err != nil {
		z.Abort()
		return err
	}
	return z.Close()
}

// addAll adds src's records to z: an npy file's own arrays and members as
// they are, anything else record by record.
func addAll(z *ZipWriter, src format.Source) error {
	if f := ownFile(src); f != nil {
		return f.addTo(z)
	}
	// Record by record: a source that describes its records on demand
	// (a CSV of a million columns) never holds a list of them.
	return format.EachRecord(src, func(i int, r *format.Record) error {
		// Text arrays of other formats (HDF5's strings); NumPy's own,
		// which may be fields of a structured member, convert with their
		// file whole.
		_, text := format.TextTypeOf(r)
		switch {
		case text && r.Kind != format.KindColumn && (r.Facts == nil || r.Facts.NativeType == ""):
			h, data, err := textArray(src, i)
			if err != nil {
				return err
			}
			if err := z.addNPY(r.Name, h, data); err != nil {
				return err
			}
		case r.Kind == format.KindOpaque:
			return format.Unrepresentable(r, "an .npz member cannot hold "+r.TypeString()+" values")
		case r.Type.Valid():
			h, err := arrayHeader(r)
			if err != nil {
				return err
			}
			if err := z.addNPY(r.Name, h, func(w io.Writer) error { return streamRecord(src, i, h, w) }); err != nil {
				return err
			}
		default:
			if err := addTextColumn(z, src, i); err != nil {
				return err
			}
		}
		if r.Kind == format.KindColumn && r.Nullable {
			return addMaskColumn(z, src, i)
		}
		return nil
	})
}

// columnIndex is the position of record i among src's table columns.
func columnIndex(src format.Source, i int) int {
	k := 0
	for _, r := range src.Records()[:i] {
		if r.Kind == format.KindColumn {
			k++
		}
	}
	return k
}

// addTextColumn adds a text column of a table as a 1-D text member.
func addTextColumn(z *ZipWriter, src format.Source, i int) error {
	r := format.RecordAt(src, i)
	if r.Kind != format.KindColumn || len(r.Shape) != 1 {
		return format.Unrepresentable(&r, "an .npz member cannot hold "+r.TypeString()+" values")
	}
	// The column read on its own (one scan of the table where the file
	// cannot), not a scan of every table of the file.
	dt, err := recordDType(&r)
	if err != nil {
		dt = DType{Kind: 'U'} // as long as its longest cell
	}
	h, data, err := textOf(src, i, []int64{r.Shape[0]}, dt)
	if err != nil {
		return err
	}
	return z.addNPY(r.Name, h, data)
}

// textArray is the header and the data of record i of src, an array of
// text: bytes<n> as |S<n>, str<n> as <U<n>, and text of any length as
// str as long as its longest element.
func textArray(src format.Source, i int) (Header, func(io.Writer) error, error) {
	r := format.RecordAt(src, i)
	if len(r.Shape) > MaxRank {
		return Header{}, nil, format.Unrepresentable(&r, fmt.Sprintf("%d dimensions; NumPy arrays have at most %d", len(r.Shape), MaxRank))
	}
	if r.Order == layout.ColMajor && !layout.Trivial(r.Shape) {
		// Text is read in row-major order only.
		return Header{}, nil, format.Unrepresentable(&r, "column-major text converts with its file whole")
	}
	dt := DType{Kind: 'U'}
	if tt, _ := format.TextTypeOf(&r); tt.Kind != 0 {
		var err error
		if dt, err = recordDType(&r); err != nil {
			return Header{}, nil, err
		}
	}
	return textOf(src, i, r.Shape, dt)
}

// textOf is the header and the data of record i of src, text elements of
// shape, as an array of dt; a str dt of ItemSize 0 is sized to the
// longest element, found by a first pass.
func textOf(src format.Source, i int, shape []int64, dt DType) (Header, func(io.Writer) error, error) {
	if dt.ItemSize == 0 {
		longest := 0
		err := format.ReadText(src, i, func(batch []string) error {
			for _, v := range batch {
				longest = max(longest, utf8.RuneCountInString(v))
			}
			return nil
		})
		if err != nil {
			return Header{}, nil, err
		}
		if dt.ItemSize, err = strItemSize(longest); err != nil {
			return Header{}, nil, err
		}
	}
	h := Header{DType: dt, Shape: append([]int64{}, shape...)}
	return h, func(w io.Writer) error {
		var buf []byte
		return format.ReadText(src, i, func(batch []string) error {
			buf = slices.Grow(buf[:0], len(batch)*dt.ItemSize)[:len(batch)*dt.ItemSize]
			for r, v := range batch {
				if err := encodeText(dt, v, buf[r*dt.ItemSize:(r+1)*dt.ItemSize]); err != nil {
					return fmt.Errorf("%w: %w", err, format.ErrNotRepresentable)
				}
			}
			_, err := w.Write(buf)
			return err
		})
	}, nil
}

// addMaskColumn adds the nulls of a nullable column as the bool member
// "<name>.mask".
func addMaskColumn(z *ZipWriter, src format.Source, i int) error {
	r := format.RecordAt(src, i)
	if nr, ok := src.(format.NullReader); ok {
		// The column's nulls read on their own, rather than one scan of
		// the whole table for each nullable column.
		h := Header{DType: DType{Kind: 'b', ItemSize: 1}, Shape: []int64{r.Shape[0]}}
		return z.addNPY(r.Name+MaskSuffix, h, func(w io.Writer) error {
			var buf []byte
			return nr.ReadNulls(i, func(batch []bool) error {
				buf = slices.Grow(buf[:0], len(batch))[:len(batch)]
				for k, null := range batch {
					buf[k] = 0
					if null {
						buf[k] = 1
					}
				}
				_, err := w.Write(buf)
				return err
			})
		})
	}
	fields := []tableField{{col: columnIndex(src, i), mask: true, dt: DType{Kind: 'b', ItemSize: 1}}}
	h := Header{DType: fields[0].dt, Shape: []int64{r.Shape[0]}}
	return z.addNPY(r.Name+MaskSuffix, h, func(w io.Writer) error { return writeRows(src, fields, 1, w) })
}

// addTo adds the file's arrays (and an archive's other members) to z as
// they are: the same headers (as np.save writes them), the same data,
// deflated members inflated and stored.
func (f *File) addTo(z *ZipWriter) error {
	f.mu.RLock()
	closed := f.closed
	f.mu.RUnlock()
	if closed {
		return f.errf(-1, mmapfile.ErrClosed, "read")
	}
	if !f.isZip {
		a := f.arrays[0]
		return z.addNPY(a.key, canonical(a.h.Header), func(w io.Writer) error { return f.copyData(a, w) })
	}
	byMember := map[*member]*array{}
	for _, a := range f.arrays {
		byMember[a.m] = a
	}
	for _, m := range f.dir.members {
		if a := byMember[m]; a != nil {
			if err := z.addNPY(a.key, canonical(a.h.Header), func(w io.Writer) error { return f.copyData(a, w) }); err != nil {
				return err
			}
			continue
		}
		var r io.Reader
		switch {
		case m.flags&1 == 0 && m.stored():
			r = io.NewSectionReader(f.ra, m.data, m.csize)
		case m.flags&1 == 0 && m.method == 8:
			r = io.NewSectionReader(&inflater{file: f.name, src: f.ra, m: m}, 0, m.usize)
		default:
			return f.errf(m.local, format.ErrNotRepresentable, "member %q is encrypted or compressed with method %d, which this package does not read", m.name, m.method)
		}
		err := z.addMember(m.name, m.usize, func(w io.Writer) error {
			h := crc32.NewIEEE()
			if _, err := io.Copy(io.MultiWriter(w, h), r); err != nil {
				return err
			}
			if m.stored() && h.Sum32() != m.crc {
				return f.crcMismatch(m, h.Sum32()) // a deflated member's is checked as it inflates
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
