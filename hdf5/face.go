package hdf5

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// This file is the package's face to package format: a *File is the
// format.File that format.Open returns.

// maxMaterialize bounds what a read in an order other than row-major holds
// in memory for a dataset whose values are not one run of the file.
const maxMaterialize = 1 << 30

// face is what a File keeps for package format: a record for each
// dataset, or for each member of a compound dataset (a table column), in
// walk order, and their payload readers. The listed records come first;
// after them come the netCDF dimensions that are not variables, which no
// listing shows but the typed calls read by name (see allDatasets). The
// records are built when the file is opened; what a listing adds to each
// (attributes, storage, the facts a writer keeps) is built by the first
// call of Records, so that a program that only reads by name never
// decodes every dataset's attributes.
type face struct {
	recs   []format.Record // without Extra and Facts
	refs   []recRef
	listed int // recs[:listed] are the records Records lists

	listingOnce sync.Once
	listing     []format.Record

	pays format.Payloads
}

// recRef is what a record is: a dataset, or one member of a compound
// dataset (a table column).
type recRef struct {
	d  *dataset
	mb *member
}

// typ is the datatype of the record's values.
func (r *recRef) typ() *dtype {
	if r.mb != nil {
		return r.mb.typ
	}
	return r.d.typ
}

// buildFace makes the records of the listed datasets, then those of the
// netCDF dimensions that are not variables.
func (f *File) buildFace() {
	n := 0
	for _, d := range f.datasets {
		n += max(1, len(d.typ.members))
	}
	f.recs = make([]format.Record, 0, n)
	f.refs = make([]recRef, 0, n)
	for _, listed := range []bool{true, false} {
		for _, d := range f.datasets {
			if d.listed == listed {
				f.addRecords(d)
			}
		}
		if listed {
			f.listed = len(f.recs)
		}
	}
}

// addRecords adds the record of dataset d, or the records of its members
// where it is a table.
func (f *File) addRecords(d *dataset) {
	d.rec = -1
	t := d.typ
	if t.class == classCompound && !t.elem.Valid() {
		for i := range t.members {
			f.addMember(d, &t.members[i])
		}
		return
	}
	r := format.Record{Array: layout.Array{Name: d.path, Shape: d.shape, Offset: d.data, Size: d.nbytes}}
	describeType(&r, t)
	f.add(r, recRef{d: d})
}

func (f *File) add(r format.Record, ref recRef) {
	if ref.d.rec < 0 {
		ref.d.rec = len(f.recs)
	}
	f.recs = append(f.recs, r)
	f.refs = append(f.refs, ref)
}

// describeType sets a record's type, kind and byte order from t.
func describeType(r *format.Record, t *dtype) {
	in := t.innermost()
	r.Type = in.elem
	r.BigEndian = in.bigEndian && in.elem.Valid() && in.elem.Size() > 1
	r.Kind = format.KindArray
	if !in.elem.Valid() {
		r.TypeName = t.typeName()
		r.Kind = format.KindOpaque
	}
}

// addMember adds a record for one member of a compound dataset: a table
// column where the dataset is 1-D and the member a scalar.
func (f *File) addMember(d *dataset, mb *member) {
	n := d.count
	shape := append(append([]int64{}, d.shape[:len(d.space.dims)]...), mb.typ.arrayDims()...)
	r := format.Record{Array: layout.Array{Name: d.path + "/" + mb.name, Shape: shape, Offset: -1}}
	describeType(&r, mb.typ)
	r.Size = n * int64(mb.typ.size)
	if mb.typ.class == classVlen {
		r.Size = -1
	}
	if len(d.space.dims) <= 1 && len(mb.typ.arrayDims()) == 0 && (r.Type.Valid() || isText(mb.typ)) {
		r.Kind = format.KindColumn
		if len(shape) == 0 {
			r.Shape = []int64{1}
		}
	}
	f.add(r, recRef{d: d, mb: mb})
}

// Records lists the file's records: each dataset, or each member of a
// compound dataset (a table column), in walk order, with what a listing
// shows of it in Extra. A netCDF dimension that is not a variable is no
// record, as netCDF4-python and xarray list none; the typed calls still
// read it by name, as h5py does. The slice must not be changed.
func (f *File) Records() []format.Record {
	f.listingOnce.Do(func() {
		f.listing = slices.Clone(f.recs[:f.listed])
		for i := range f.listing {
			f.describeRecord(&f.listing[i], &f.refs[i])
		}
	})
	return f.listing
}

// describeRecord adds to r what a listing shows of the dataset or member
// ref and what a writer keeps of it.
func (f *File) describeRecord(r *format.Record, ref *recRef) {
	if ref.mb != nil {
		r.Extra = map[string]any{"table": ref.d.path}
	} else {
		r.Extra = f.extra(ref.d)
		attrs, _ := r.Extra["attributes"].(map[string]any)
		dims, _ := r.Extra["dims"].([]string)
		r.Facts = factsOf(attrs, dims)
	}
	if in := ref.typ().innermost(); in.class == classString || in.class == classVlen && in.vstring {
		r.Extra["charset"] = map[bool]string{true: "utf-8", false: "ascii"}[in.utf8]
	}
}

// allDatasets is a File as its typed calls hand it to the engine (package
// format's View, Read, ReadAt and Set): its records are every dataset a
// name reaches, the netCDF dimensions that are not variables included,
// described without what a listing adds.
type allDatasets struct{ *File }

func (a allDatasets) Records() []format.Record { return a.recs }
func (a allDatasets) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	return a.readArray(i, dst, first, order, bo)
}
func (a allDatasets) Payload(i int) (*format.Payload, error)      { return a.payloadOf(i) }
func (a allDatasets) SetBytes(i int, idx []int64, b []byte) error { return a.setBytes(i, idx, b) }

// isText reports whether t's values are text: fixed or variable-length
// strings, or opaque bytes (as hex).
func isText(t *dtype) bool {
	return t.class == classString || t.class == classOpaque || t.class == classVlen && t.vstring
}

// extra is what a listing shows of a dataset beyond name, type and shape.
func (f *File) extra(d *dataset) map[string]any {
	ds := f.describe(d)
	x := map[string]any{}
	if ds.Chunks != nil {
		x["chunks"] = ds.Chunks
		filters := make([]map[string]any, 0, len(ds.Filters))
		var names []string
		for _, fl := range ds.Filters {
			params := fl.Params
			if params == nil {
				params = []uint32{}
			}
			filters = append(filters, map[string]any{"id": fl.ID, "name": fl.Name, "params": params})
			names = append(names, fl.Name)
		}
		x["filters"] = filters
		x["storage"] = "chunks " + layout.ShapeString(ds.Chunks) + strings.TrimSuffix(" "+strings.Join(names, ","), " ")
	} else if d.elsewhere != "" {
		x["storage"] = d.elsewhere
	} else if d.lay.Class == h5.Compact {
		x["storage"] = "compact"
	} else if d.lay.Class == h5.Contiguous && d.stored < 0 && d.count > 0 {
		x["storage"] = "never written"
	}
	if len(ds.Attributes) > 0 {
		x["attributes"] = ds.Attributes
	}
	if ds.Dims != nil {
		x["dims"] = ds.Dims
	}
	if d.fill != nil {
		x["fill"] = f.value(d.typ, d.fill)
	}
	if ds.BigEndian {
		x["byteorder"] = "big"
	}
	if d.unreadable != nil {
		x["unreadable"] = unreadableText(d.unreadable)
	}
	return x
}

// unreadableText is the reason an error gives, without the file's name.
func unreadableText(err error) string {
	var fe *FormatError
	if errors.As(err, &fe) {
		c := *fe
		c.Offset = -1
		return c.Detail()
	}
	return err.Error()
}

// Format returns "hdf5".
func (f *File) Format() string { return "hdf5" }

// Sync makes the changes of Set and of writable views durable.
func (f *File) Sync() error {
	if f.mf == nil {
		return nil
	}
	return f.mf.Sync()
}

// FileInfo gives a listing's facts about the whole file: its links that
// are not a dataset's first path, and its groups with their attributes.
func (f *File) FileInfo() map[string]any {
	links := make([]map[string]any, 0, len(f.links))
	for _, l := range f.links {
		e := map[string]any{"name": l.Name}
		switch {
		case l.Soft != "":
			e["soft"] = l.Soft
		case l.Hard != "":
			e["hard"] = l.Hard
		case l.ExternalFile != "" || l.ExternalPath != "":
			e["external"] = map[string]any{"file": l.ExternalFile, "path": l.ExternalPath}
		default:
			e["type"] = l.Type
		}
		links = append(links, e)
	}
	groups := make([]map[string]any, 0, len(f.groups))
	for _, g := range f.groups {
		groups = append(groups, map[string]any{"name": g.Name, "attributes": g.Attributes})
	}
	return map[string]any{"links": links, "groups": groups}
}

// Resolve finds the record a name stands for through links: a second
// hard link or a path through soft links. A dangling soft link, an
// external link or a group is an error naming it.
func (f *File) Resolve(name string) (int, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	d, err := f.resolve(name)
	if err != nil {
		return -1, err
	}
	if i := d.rec; i >= 0 && i < f.listed {
		if f.refs[i].mb != nil {
			return -1, errAt(f.name, d.at, fmt.Errorf("%w %q", format.ErrNoRecord, name), "%s is a compound dataset, a table: name one of its columns (%s)", d.path, f.recs[i].Name)
		}
		return i, nil
	}
	return -1, errAt(f.name, d.at, fmt.Errorf("%w %q", format.ErrNoRecord, name), "%s is not listed (a netCDF dimension that is not a variable)", d.path)
}

// Skipped lists the external links, which a whole-file conversion leaves
// out: they are never followed.
func (f *File) Skipped() []string {
	var out []string
	for _, l := range f.links {
		if l.ExternalFile != "" || l.ExternalPath != "" {
			out = append(out, fmt.Sprintf("%s is an external link to %s:%s; external links are not followed: skipped", l.Name, l.ExternalFile, l.ExternalPath))
		}
	}
	return out
}

func (f *File) bad(i int, err error, msg string, args ...any) error {
	return errAt(f.name, f.refs[i].d.at, err, "%s: "+msg, append([]any{f.recs[i].Name}, args...)...)
}

// listedRecord refuses an i that is not a record of Records: the methods
// of package format's interfaces take no other.
func (f *File) listedRecord(i int) error {
	if i < 0 || i >= f.listed {
		return errAt(f.name, -1, mmapfile.ErrOutOfRange, "record %d of %d", i, f.listed)
	}
	return nil
}

// check refuses records that cannot be read as arrays, and a closed file.
// f.mu is held for reading.
func (f *File) check(i int) error {
	rec, ref := &f.recs[i], &f.refs[i]
	if f.closed {
		return errAt(f.name, -1, mmapfile.ErrClosed, "%s: read", rec.Name)
	}
	if ref.d.unreadable != nil {
		return ref.d.unreadable
	}
	if !rec.Type.Valid() {
		return f.bad(i, errors.ErrUnsupported, "%s values cannot be read as an array", rec.TypeString())
	}
	return nil
}

// ReadArray copies elements [first, first+len(dst)/size) of record i in
// order and byte order bo.
func (f *File) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if err := f.listedRecord(i); err != nil {
		return err
	}
	return f.readArray(i, dst, first, order, bo)
}

// readArray is ReadArray of any record, listed or not.
func (f *File) readArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.check(i); err != nil {
		return err
	}
	rec := &f.recs[i]
	size := int64(rec.Type.Size())
	n := int64(len(dst)) / size
	count, _ := layout.Count(rec.Shape)
	if end, ok := layout.Add(first, n); first < 0 || !ok || end > count || int64(len(dst))%size != 0 {
		return f.bad(i, mmapfile.ErrOutOfRange, "elements [%d, %d+%d) outside [0, %d)", first, first, n, count)
	}
	if p := f.payload(i); p != nil {
		return p.ReadArray(dst, first, order, bo)
	}
	if order == layout.RowMajor || layout.Trivial(rec.Shape) {
		if err := f.raw(i, dst, first, n); err != nil {
			return err
		}
		return f.finish(i, dst, first, rec.ByteOrder(), bo)
	}
	total := count * size
	if total > maxMaterialize {
		return f.bad(i, errors.ErrUnsupported, "a read in %s order holds all %d bytes in memory, more than %d", order, total, maxMaterialize)
	}
	all := make([]byte, total)
	if err := f.raw(i, all, 0, count); err != nil {
		return err
	}
	p := &format.Payload{Array: rec.Array, Data: bytes.NewReader(all), Lenient: f.opts.Lenient, Wrap: f.wrap(i)}
	p.Array.Offset = -1
	return p.ReadArray(dst, first, order, bo)
}

// finish turns elements read in the file's byte order into bo, checking
// bools.
func (f *File) finish(i int, dst []byte, first int64, from, to binary.ByteOrder) error {
	t := f.recs[i].Type
	layout.SwapOrder(dst, t, from, to)
	if bad := layout.CheckBools(dst, t, f.opts.Lenient); bad >= 0 {
		return f.bad(i, mmapfile.ErrInvalidBool, "element %d: byte 0x%02x", first+int64(bad), dst[bad])
	}
	return nil
}

func (f *File) wrap(i int) func(off int64, err error) error {
	return func(off int64, err error) error { return wrapErr(f.name, off, err, "%s", f.recs[i].Name) }
}

// payload returns a format.Payload for a dataset whose values are one run
// of bytes (contiguous allocated, compact, or none at all), or nil.
func (f *File) payload(i int) *format.Payload {
	ref := &f.refs[i]
	d := ref.d
	if ref.mb != nil || d.lay.Class == h5.Chunked || d.lay.Class == h5.Contiguous && d.data < 0 && d.count > 0 {
		return nil
	}
	p, _ := f.pays.Get(i, func() (*format.Payload, error) {
		p := &format.Payload{Array: f.recs[i].Array, Lenient: f.opts.Lenient, Wrap: f.wrap(i)}
		if d.lay.Class == h5.Compact {
			p.Data = bytes.NewReader(d.lay.Compact)
			p.Array.Offset = d.lay.CompactAt
			p.NoView = errAt(f.name, d.at, errors.ErrUnsupported, "dataset %s has compact storage, inside its object header; use Read", d.path)
			return p, nil
		}
		p.Data, p.Off = f.ra, max(d.data, 0)
		if f.reg != nil {
			p.Data = f.reg
		} else {
			p.NoView = errAt(f.name, -1, errors.ErrUnsupported, "dataset %s: a file read through NewReader is not mapped; use Read", d.path)
		}
		return p, nil
	})
	return p
}

// Payload returns the reader of record i's values (format.Payloader): a
// contiguous or compact dataset's bytes. Chunked and never-written
// datasets and the members of compound types have none: they are read
// with Read, which decodes or gathers them.
func (f *File) Payload(i int) (*format.Payload, error) {
	if err := f.listedRecord(i); err != nil {
		return nil, err
	}
	return f.payloadOf(i)
}

// payloadOf is Payload of any record, listed or not.
func (f *File) payloadOf(i int) (*format.Payload, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.check(i); err != nil {
		return nil, err
	}
	if p := f.payload(i); p != nil {
		return p, nil
	}
	d := f.refs[i].d
	switch {
	case f.refs[i].mb != nil:
		return nil, f.bad(i, errors.ErrUnsupported, "a member of a compound type, whose values are strided; use Read")
	case d.lay.Class == h5.Chunked:
		return nil, f.bad(i, errors.ErrUnsupported, "chunked storage, which is not one run of the file; use Read, which decodes the chunks")
	}
	return nil, f.bad(i, errors.ErrUnsupported, "never written (no storage: its values are the fill value); use Read")
}

// raw copies logical elements [first, first+n) of record i, row-major, in
// the file's byte order, into dst: a dataset's values, or one member's
// bytes out of each compound element.
func (f *File) raw(i int, dst []byte, first, n int64) error {
	ref := &f.refs[i]
	d := ref.d
	esize := int64(ref.typ().innermost().size)
	if ref.mb == nil {
		return f.readBytes(d, dst, first*esize)
	}
	sub := int64(1)
	for _, k := range ref.mb.typ.arrayDims() {
		sub *= k
	}
	item := int64(d.typ.size)
	per := max(1, (1<<20)/item)
	buf := make([]byte, min(per, (first+n-1)/sub-first/sub+1)*item)
	for k := int64(0); k < n; {
		e0 := (first + k) / sub
		rows := min(int64(len(buf))/item, (first+n-1)/sub-e0+1)
		chunk := buf[:rows*item]
		if err := f.readElems(d, chunk, e0, rows); err != nil {
			return err
		}
		for ; k < n && (first+k)/sub < e0+rows; k++ {
			e, w := (first+k)/sub, (first+k)%sub
			p := (e-e0)*item + int64(ref.mb.offset) + w*esize
			copy(dst[k*esize:(k+1)*esize], chunk[p:p+esize])
		}
	}
	return nil
}

// ReadText calls fn with the elements of record i, a dataset or column
// of strings or opaque bytes, in logical row-major order: fixed strings
// without their padding, variable-length strings as stored, opaque bytes
// as 0x… hex; see format.TextReader.
func (f *File) ReadText(i int, fn func(batch []string) error) error {
	if err := f.listedRecord(i); err != nil {
		return err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	ref := &f.refs[i]
	t := ref.typ()
	if !isText(t) {
		return f.bad(i, errors.ErrUnsupported, "%s is not text", f.recs[i].TypeString())
	}
	if f.closed {
		return errAt(f.name, -1, mmapfile.ErrClosed, "%s: read", f.recs[i].Name)
	}
	if ref.d.unreadable != nil {
		return ref.d.unreadable
	}
	count, _ := layout.Count(f.recs[i].Shape)
	return f.texts(i, 0, count, 4096, fn)
}

// texts decodes the text elements [first, first+n) of record i in batches.
func (f *File) texts(i int, first, n int64, batch int64, fn func([]string) error) error {
	t := f.refs[i].typ()
	size := int64(t.size)
	buf := make([]byte, min(n, batch)*size)
	out := make([]string, 0, min(n, batch))
	for k := int64(0); k < n; {
		m := min(n-k, batch)
		if err := f.raw(i, buf[:m*size], first+k, m); err != nil {
			return err
		}
		out = out[:0]
		for j := int64(0); j < m; j++ {
			v, err := f.text(t, buf[j*size:(j+1)*size])
			if err != nil {
				return f.bad(i, err, "element %d", first+k+j)
			}
			out = append(out, v)
		}
		if err := fn(out); err != nil {
			return err
		}
		k += m
	}
	return nil
}

// text decodes one element of a text type.
func (f *File) text(t *dtype, b []byte) (string, error) {
	switch t.class {
	case classOpaque:
		return "0x" + hex.EncodeToString(b), nil
	case classVlen:
		v, err := f.vlenString(b)
		if err != nil {
			return "", err
		}
		return stripPadding(v, t.pad), nil
	}
	s := stripPadding(b, t.pad)
	if t.utf8 && !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, nil
}

// columns are the records of the table columns among recs.
func (f *File) columns(recs []int) ([]int, error) {
	var table string
	for _, i := range recs {
		if err := f.listedRecord(i); err != nil {
			return nil, err
		}
		if f.recs[i].Kind != format.KindColumn {
			return nil, f.bad(i, errors.ErrUnsupported, "not a table column")
		}
		if tb := f.refs[i].d.path; table == "" {
			table = tb
		} else if tb != table {
			return nil, f.bad(i, format.ErrNotRepresentable, "a column of %s, not of %s: the columns of one scan must be of one compound dataset", tb, table)
		}
	}
	return recs, nil
}

// ScanTable scans the file's table columns: those of one compound dataset
// (a file of several is scanned a table at a time, ScanColumns).
func (f *File) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	var all []int
	for i, r := range f.recs[:f.listed] {
		if r.Kind == format.KindColumn {
			all = append(all, i)
		}
	}
	return f.ScanColumns(all, batch, fn)
}

// ScanColumns scans the given column records, which must be columns of
// one compound dataset, in batches of rows.
func (f *File) ScanColumns(recs []int, batch int, fn func(first int64, cols []format.Column) error) error {
	cols, err := f.columns(recs)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	rows := f.recs[cols[0]].Shape[0]
	batch = format.BatchRows(max(batch, 1), int64(f.refs[cols[0]].d.typ.size))
	out := make([]format.Column, len(cols))
	bufs := make([][]byte, len(cols))
	for first := int64(0); first < rows || first == 0; first += int64(batch) {
		k := min(int64(batch), rows-first)
		if f.closed {
			return errAt(f.name, -1, mmapfile.ErrClosed, "scan")
		}
		for j, i := range cols {
			if err := f.check(i); err != nil && !errors.Is(err, errors.ErrUnsupported) {
				return err
			}
			if f.refs[i].d.unreadable != nil {
				return f.refs[i].d.unreadable
			}
			t := f.refs[i].typ()
			if !f.recs[i].Type.Valid() {
				var vals []string
				if err := f.texts(i, first, k, k, func(b []string) error { vals = append([]string(nil), b...); return nil }); err != nil {
					return err
				}
				if k == 0 {
					vals = []string{}
				}
				out[j] = format.Column{Values: vals}
				continue
			}
			size := int64(t.size)
			if int64(cap(bufs[j])) < k*size {
				bufs[j] = unsafeslice.AlignedBytes(k * size)
			}
			b := bufs[j][:k*size]
			if err := f.raw(i, b, first, k); err != nil {
				return err
			}
			if err := f.finish(i, b, first, f.recs[i].ByteOrder(), layout.HostOrder()); err != nil {
				return err
			}
			out[j] = format.Column{Values: layout.SliceOf(f.recs[i].Type, b)}
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

// SetText changes element idx of record i in place: numbers and bools
// written as Futhark literals; see Set for what can be changed.
func (f *File) SetText(i int, idx []int64, value string) error {
	if err := f.listedRecord(i); err != nil {
		return err
	}
	return f.setElement(i, idx, func(rec *format.Record) ([]byte, error) {
		b, err := format.ParseLiteral(rec.Type, value, rec.ByteOrder())
		if err != nil {
			e := errAt(f.name, -1, err, "")
			e.Record = rec.Name
			return nil, e
		}
		return b, nil
	})
}

// SetBytes changes element idx of record i, whose values are not one
// mapped run of bytes (an unfiltered chunk), to b, one element in the
// file's byte order; see format.BytesSetter and Set.
func (f *File) SetBytes(i int, idx []int64, b []byte) error {
	if err := f.listedRecord(i); err != nil {
		return err
	}
	return f.setBytes(i, idx, b)
}

// setBytes is SetBytes of any record, listed or not.
func (f *File) setBytes(i int, idx []int64, b []byte) error {
	return f.setElement(i, idx, func(*format.Record) ([]byte, error) { return b, nil })
}

// setElement changes element idx of record i, after the checks of
// settable, to the bytes elem gives for the record.
func (f *File) setElement(i int, idx []int64, elem func(rec *format.Record) ([]byte, error)) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if err := f.settable(i); err != nil {
		return err
	}
	b, err := elem(&f.recs[i])
	if err != nil {
		return err
	}
	return f.setRaw(f.refs[i].d, idx, b)
}

// settable refuses to change record i of a closed or read-only file, and
// records whose elements are not changed in place. f.wmu is held, and
// f.mu for reading.
func (f *File) settable(i int) error {
	rec := &f.recs[i]
	switch {
	case f.closed:
		return errAt(f.name, -1, mmapfile.ErrClosed, "%s: set", rec.Name)
	case !f.writable:
		return errAt(f.name, -1, mmapfile.ErrNotWritable, "%s: the file is open read-only", rec.Name)
	case f.refs[i].mb != nil:
		return f.bad(i, errors.ErrUnsupported, "a field of a compound dataset cannot be changed in place; the file is unchanged")
	case !rec.Type.Valid():
		return f.bad(i, errors.ErrUnsupported, "%s values cannot be changed in place; the file is unchanged", rec.TypeString())
	}
	return f.refs[i].d.unreadable
}

// PartElems is how many elements a copy of record i reads at a time, or
// a multiple of it (format.PartSizer): a row of chunks of a chunked
// dataset, so that no chunk is decoded twice.
func (f *File) PartElems(i int) int64 {
	if i < 0 || i >= len(f.refs) {
		return 0
	}
	ref := &f.refs[i]
	d := ref.d
	if ref.mb != nil || d.lay.Class != h5.Chunked || len(d.space.dims) == 0 || d.space.dims[0] == 0 {
		return 0
	}
	return int64(d.lay.ChunkDims[0]) * (d.logical() / int64(d.space.dims[0]))
}
