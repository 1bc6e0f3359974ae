package hdf5

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// This file is the package's face to package format: the registration of
// "hdf5" and a format.File over an open *File.

func init() {
	format.Register(format.Format{
		Name:        "hdf5",
		Description: "HDF5 and netCDF-4 files: h5py, PyTables, MATLAB v7.3, climate and satellite data",
		Extensions:  []string{".h5", ".hdf5", ".nc"},
		Sniff:       sniff,
		Probe:       probe,
		Open:        openFormat,
		Write:       Write,
		ParseParams: format.ParamsOfWriting(writeParams),
		Params: []format.Param{
			{Name: "chunks", Usage: "chunk shape of the datasets written, such as 512,1024 (default: contiguous; with --compress, chunks of about 1 MiB chosen from each shape)", Write: true},
			{Name: "compress", Usage: "none|gzip[:LEVEL] (default none: contiguous datasets that map as typed slices; gzip: shuffle then deflate, level 4)", Write: true},
		},
	})
}

func openFormat(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
	var opts Options
	if o != nil {
		if o.Salvage {
			return nil, errAt(path, -1, errors.ErrUnsupported, "salvage: an HDF5 file's structures are spread over the whole file, so there is no part before the damage to keep")
		}
		opts = Options{Options: o.Options, Lenient: o.Lenient}
	}
	f, err := OpenFile(path, mode, &opts)
	if err != nil {
		return nil, err
	}
	return newSource(f), nil
}

// maxMaterialize bounds what a read in an order other than row-major holds
// in memory for a dataset whose values are not one run of the file.
const maxMaterialize = 1 << 30

// source is a File as package format sees it.
type source struct {
	f    *File
	recs []format.Record
	refs []recRef

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

func newSource(f *File) *source {
	s := &source{f: f}
	for _, d := range f.datasets {
		if !d.listed {
			continue
		}
		t := d.typ
		if t.class == classCompound && !t.elem.Valid() {
			for i := range t.members {
				s.addMember(d, &t.members[i])
			}
			continue
		}
		r := format.Record{Array: layout.Array{Name: d.path, Shape: d.shape, Offset: d.data, Size: d.nbytes}, Extra: f.extra(d)}
		attrs, _ := r.Extra["attributes"].(map[string]any)
		dims, _ := r.Extra["dims"].([]string)
		r.Facts = factsOf(attrs, dims)
		describeType(&r, t)
		s.add(r, recRef{d: d})
	}
	return s
}

func (s *source) add(r format.Record, ref recRef) {
	s.recs = append(s.recs, r)
	s.refs = append(s.refs, ref)
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
	if in.class == classString || in.class == classVlen && in.vstring {
		r.Extra["charset"] = map[bool]string{true: "utf-8", false: "ascii"}[in.utf8]
	}
}

// addMember adds a record for one member of a compound dataset: a table
// column where the dataset is 1-D and the member a scalar.
func (s *source) addMember(d *dataset, mb *member) {
	n := d.count
	shape := append(append([]int64{}, d.shape[:len(d.space.dims)]...), mb.typ.arrayDims()...)
	r := format.Record{Array: layout.Array{Name: d.path + "/" + mb.name, Shape: shape, Offset: -1}, Extra: map[string]any{"table": d.path}}
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
	s.add(r, recRef{d: d, mb: mb})
}

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

func (s *source) Records() []format.Record { return s.recs }
func (s *source) Format() string           { return "hdf5" }
func (s *source) Version() string          { return s.f.Version() }
func (s *source) Close() error             { return s.f.Close() }
func (s *source) Sync() error {
	if s.f.mf == nil {
		return nil
	}
	return s.f.mf.Sync()
}

// File returns the hdf5.File behind a source that openFormat made.
func (s *source) File() *File { return s.f }

// FileInfo gives a listing's facts about the whole file: its links that
// are not a dataset's first path, and its groups with their attributes.
func (s *source) FileInfo() map[string]any {
	links := make([]map[string]any, 0, len(s.f.links))
	for _, l := range s.f.links {
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
	groups := make([]map[string]any, 0, len(s.f.groups))
	for _, g := range s.f.groups {
		groups = append(groups, map[string]any{"name": g.Name, "attributes": g.Attributes})
	}
	return map[string]any{"links": links, "groups": groups}
}

// Resolve finds the record a name stands for through links: a second
// hard link or a path through soft links. A dangling soft link, an
// external link or a group is an error naming it.
func (s *source) Resolve(name string) (int, error) {
	s.f.mu.RLock()
	defer s.f.mu.RUnlock()
	d, err := s.f.resolve(name)
	if err != nil {
		return -1, err
	}
	for i := range s.refs {
		if s.refs[i].d == d {
			if s.refs[i].mb != nil {
				return -1, errAt(s.f.name, d.at, fmt.Errorf("%w %q", format.ErrNoRecord, name), "%s is a compound dataset, a table: name one of its columns (%s)", d.path, s.recs[i].Name)
			}
			return i, nil
		}
	}
	return -1, errAt(s.f.name, d.at, fmt.Errorf("%w %q", format.ErrNoRecord, name), "%s is not listed (a netCDF dimension that is not a variable)", d.path)
}

// Skipped lists the external links, which a whole-file conversion leaves
// out: they are never followed.
func (s *source) Skipped() []string {
	var out []string
	for _, l := range s.f.links {
		if l.ExternalFile != "" || l.ExternalPath != "" {
			out = append(out, fmt.Sprintf("%s is an external link to %s:%s; external links are not followed: skipped", l.Name, l.ExternalFile, l.ExternalPath))
		}
	}
	return out
}

func (s *source) bad(i int, err error, msg string, args ...any) error {
	return errAt(s.f.name, s.refs[i].d.at, err, "%s: "+msg, append([]any{s.recs[i].Name}, args...)...)
}

// check refuses records that cannot be read as arrays, and a closed file.
// s.f.mu is held for reading.
func (s *source) check(i int) error {
	rec, ref := &s.recs[i], &s.refs[i]
	if s.f.closed {
		return errAt(s.f.name, -1, mmapfile.ErrClosed, "%s: read", rec.Name)
	}
	if ref.d.unreadable != nil {
		return ref.d.unreadable
	}
	if !rec.Type.Valid() {
		return s.bad(i, errors.ErrUnsupported, "%s values cannot be read as an array", rec.TypeString())
	}
	return nil
}

// ReadArray copies elements [first, first+len(dst)/size) of record i in
// order and byte order bo.
func (s *source) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	s.f.mu.RLock()
	defer s.f.mu.RUnlock()
	if err := s.check(i); err != nil {
		return err
	}
	rec := &s.recs[i]
	size := int64(rec.Type.Size())
	n := int64(len(dst)) / size
	count, _ := layout.Count(rec.Shape)
	if end, ok := layout.Add(first, n); first < 0 || !ok || end > count || int64(len(dst))%size != 0 {
		return s.bad(i, mmapfile.ErrOutOfRange, "elements [%d, %d+%d) outside [0, %d)", first, first, n, count)
	}
	if p := s.payload(i); p != nil {
		return p.ReadArray(dst, first, order, bo)
	}
	if order == layout.RowMajor || layout.Trivial(rec.Shape) {
		if err := s.raw(i, dst, first, n); err != nil {
			return err
		}
		return s.finish(i, dst, first, rec.ByteOrder(), bo)
	}
	total := count * size
	if total > maxMaterialize {
		return s.bad(i, errors.ErrUnsupported, "a read in %s order holds all %d bytes in memory, more than %d", order, total, maxMaterialize)
	}
	all := make([]byte, total)
	if err := s.raw(i, all, 0, count); err != nil {
		return err
	}
	p := &format.Payload{Array: rec.Array, Data: bytes.NewReader(all), Lenient: s.f.opts.Lenient, Wrap: s.wrap(i)}
	p.Array.Offset = -1
	return p.ReadArray(dst, first, order, bo)
}

// finish turns elements read in the file's byte order into bo, checking
// bools.
func (s *source) finish(i int, dst []byte, first int64, from, to binary.ByteOrder) error {
	t := s.recs[i].Type
	layout.SwapOrder(dst, t, from, to)
	if bad := layout.CheckBools(dst, t, s.f.opts.Lenient); bad >= 0 {
		return s.bad(i, mmapfile.ErrInvalidBool, "element %d: byte 0x%02x", first+int64(bad), dst[bad])
	}
	return nil
}

func (s *source) wrap(i int) func(off int64, err error) error {
	return func(off int64, err error) error { return wrapErr(s.f.name, off, err, "%s", s.recs[i].Name) }
}

// payload returns a format.Payload for a dataset whose values are one run
// of bytes (contiguous allocated, or compact), or nil.
func (s *source) payload(i int) *format.Payload {
	ref := &s.refs[i]
	d := ref.d
	if ref.mb != nil || d.lay.Class == h5.Chunked || d.lay.Class == h5.Contiguous && d.data < 0 {
		return nil
	}
	p, _ := s.pays.Get(i, func() (*format.Payload, error) {
		p := &format.Payload{Array: s.recs[i].Array, Lenient: s.f.opts.Lenient, Wrap: s.wrap(i)}
		if d.lay.Class == h5.Compact {
			p.Data = bytes.NewReader(d.lay.Compact)
			p.Array.Offset = d.lay.CompactAt
			p.NoView = errAt(s.f.name, d.at, errors.ErrUnsupported, "dataset %s has compact storage, inside its object header; use Read", d.path)
			return p, nil
		}
		p.Data, p.Off = s.f.ra, d.data
		if s.f.reg != nil {
			p.Data = s.f.reg
		} else {
			p.NoView = errAt(s.f.name, -1, errors.ErrUnsupported, "dataset %s: a file read through NewReader is not mapped; use Read", d.path)
		}
		return p, nil
	})
	return p
}

// Payload returns the reader of record i's values (format.Payloader): a
// contiguous or compact dataset's bytes. Chunked and never-written
// datasets and the members of compound types have none: they are read
// with Read, which decodes or gathers them.
func (s *source) Payload(i int) (*format.Payload, error) {
	s.f.mu.RLock()
	defer s.f.mu.RUnlock()
	if err := s.check(i); err != nil {
		return nil, err
	}
	if p := s.payload(i); p != nil {
		return p, nil
	}
	d := s.refs[i].d
	switch {
	case s.refs[i].mb != nil:
		return nil, s.bad(i, errors.ErrUnsupported, "a member of a compound type, whose values are strided; use Read")
	case d.lay.Class == h5.Chunked:
		return nil, s.bad(i, errors.ErrUnsupported, "chunked storage, which is not one run of the file; use Read, which decodes the chunks")
	}
	return nil, s.bad(i, errors.ErrUnsupported, "never written (no storage: its values are the fill value); use Read")
}

// raw copies logical elements [first, first+n) of record i, row-major, in
// the file's byte order, into dst: a dataset's values, or one member's
// bytes out of each compound element.
func (s *source) raw(i int, dst []byte, first, n int64) error {
	ref := &s.refs[i]
	d := ref.d
	esize := int64(ref.typ().innermost().size)
	if ref.mb == nil {
		return s.f.readBytes(d, dst, first*esize)
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
		if err := s.f.readElems(d, chunk, e0, rows); err != nil {
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
func (s *source) ReadText(i int, fn func(batch []string) error) error {
	s.f.mu.RLock()
	defer s.f.mu.RUnlock()
	ref := &s.refs[i]
	t := ref.typ()
	if !isText(t) {
		return s.bad(i, errors.ErrUnsupported, "%s is not text", s.recs[i].TypeString())
	}
	if s.f.closed {
		return errAt(s.f.name, -1, mmapfile.ErrClosed, "%s: read", s.recs[i].Name)
	}
	if ref.d.unreadable != nil {
		return ref.d.unreadable
	}
	count, _ := layout.Count(s.recs[i].Shape)
	return s.texts(i, 0, count, 4096, fn)
}

// texts decodes the text elements [first, first+n) of record i in batches.
func (s *source) texts(i int, first, n int64, batch int64, fn func([]string) error) error {
	t := s.refs[i].typ()
	size := int64(t.size)
	buf := make([]byte, min(n, batch)*size)
	out := make([]string, 0, min(n, batch))
	for k := int64(0); k < n; {
		m := min(n-k, batch)
		if err := s.raw(i, buf[:m*size], first+k, m); err != nil {
			return err
		}
		out = out[:0]
		for j := int64(0); j < m; j++ {
			v, err := s.f.text(t, buf[j*size:(j+1)*size])
			if err != nil {
				return s.bad(i, err, "element %d", first+k+j)
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
func (s *source) columns(recs []int) ([]int, error) {
	var table string
	for _, i := range recs {
		if s.recs[i].Kind != format.KindColumn {
			return nil, s.bad(i, errors.ErrUnsupported, "not a table column")
		}
		if tb := s.refs[i].d.path; table == "" {
			table = tb
		} else if tb != table {
			return nil, s.bad(i, format.ErrNotRepresentable, "a column of %s, not of %s: the columns of one scan must be of one compound dataset", tb, table)
		}
	}
	return recs, nil
}

// ScanTable scans the file's table columns: those of one compound dataset
// (a file of several is scanned a table at a time, ScanColumns).
func (s *source) ScanTable(batch int, fn func(first int64, cols []format.Column) error) error {
	var all []int
	for i, r := range s.recs {
		if r.Kind == format.KindColumn {
			all = append(all, i)
		}
	}
	return s.ScanColumns(all, batch, fn)
}

// ScanColumns scans the given column records, which must be columns of
// one compound dataset, in batches of rows.
func (s *source) ScanColumns(recs []int, batch int, fn func(first int64, cols []format.Column) error) error {
	cols, err := s.columns(recs)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return nil
	}
	s.f.mu.RLock()
	defer s.f.mu.RUnlock()
	rows := s.recs[cols[0]].Shape[0]
	batch = format.BatchRows(max(batch, 1), int64(s.refs[cols[0]].d.typ.size))
	out := make([]format.Column, len(cols))
	bufs := make([][]byte, len(cols))
	for first := int64(0); first < rows || first == 0; first += int64(batch) {
		k := min(int64(batch), rows-first)
		if s.f.closed {
			return errAt(s.f.name, -1, mmapfile.ErrClosed, "scan")
		}
		for j, i := range cols {
			if err := s.check(i); err != nil && !errors.Is(err, errors.ErrUnsupported) {
				return err
			}
			if s.refs[i].d.unreadable != nil {
				return s.refs[i].d.unreadable
			}
			t := s.refs[i].typ()
			if !s.recs[i].Type.Valid() {
				var vals []string
				if err := s.texts(i, first, k, k, func(b []string) error { vals = append([]string(nil), b...); return nil }); err != nil {
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
			if err := s.raw(i, b, first, k); err != nil {
				return err
			}
			if err := s.finish(i, b, first, s.recs[i].ByteOrder(), layout.HostOrder()); err != nil {
				return err
			}
			out[j] = format.Column{Values: layout.SliceOf(s.recs[i].Type, b)}
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
func (s *source) SetText(i int, idx []int64, value string) error {
	ref := &s.refs[i]
	rec := &s.recs[i]
	s.f.wmu.Lock()
	defer s.f.wmu.Unlock()
	s.f.mu.RLock()
	defer s.f.mu.RUnlock()
	if s.f.closed {
		return errAt(s.f.name, -1, mmapfile.ErrClosed, "%s: set", rec.Name)
	}
	if !s.f.writable {
		return errAt(s.f.name, -1, mmapfile.ErrNotWritable, "%s: the file is open read-only", rec.Name)
	}
	if ref.mb != nil {
		return s.bad(i, errors.ErrUnsupported, "a field of a compound dataset cannot be changed in place; the file is unchanged")
	}
	if !rec.Type.Valid() {
		return s.bad(i, errors.ErrUnsupported, "%s values cannot be changed in place; the file is unchanged", rec.TypeString())
	}
	b, err := format.ParseLiteral(rec.Type, value, rec.ByteOrder())
	if err != nil {
		e := errAt(s.f.name, -1, err, "")
		e.Record = rec.Name
		return e
	}
	return s.f.setRaw(ref.d, idx, b)
}

var (
	_ format.File         = (*source)(nil)
	_ format.TextReader   = (*source)(nil)
	_ format.Setter       = (*source)(nil)
	_ format.TableScanner = (*source)(nil)
)
