// Package refs describes the arrays of any file mmapkit reads as a
// reference set: kerchunk's version-1 JSON, which fsspec's
// ReferenceFileSystem reads as a Zarr v2 store whose chunks are
// [file, offset, length] ranges of the original file. Readers (zarr,
// xarray, dask, on other machines too) then read the file in place:
// nothing is converted or copied, and building a set reads metadata only.
//
// Where each record's bytes are is the format package's business
// (format.Locator); this package turns that into Zarr metadata and chunk
// ranges, cutting a contiguous payload along its slowest axis so that
// readers can work on it in parallel.
package refs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/plainjson"
	"github.com/mmapkit/mmapkit/layout"
)

// DefaultChunkBytes bounds the chunks a contiguous payload is cut into
// when Options.Rows is 0.
const DefaultChunkBytes = 64 << 20

// MaxChunks is the most chunks one record may need; a record needing more
// (a huge prime length) is skipped.
const MaxChunks = 1_000_000

// Options configure Build. A nil *Options means the defaults.
type Options struct {
	// Names, if not empty, are the only records described; a name the
	// file lacks, or a record that cannot be described, is an error.
	Names []string
	// Rows bounds the slices of a contiguous payload's slowest axis per
	// chunk; 0: as many as fit in DefaultChunkBytes (at least one).
	Rows int64
	// URL is where readers will find the file ("https://…/x.npy", a
	// path); one ending in "/" gets the file's base name appended. Empty:
	// the file's absolute path.
	URL string
	// Skipped, if set, is told of each record that cannot be described
	// (when Names is empty), and why.
	Skipped func(rec *format.Record, why error)
	// Computed describes records whose bytes are not ranges of the file
	// (text, compressed members, codecs without a Zarr v2 form) but whose
	// elements ReadArray gives, as uncompressed row-major little-endian
	// arrays cut along their first axis into chunks of at most
	// ComputedChunkBytes (Rows bounds them further): Set.Computed says
	// which elements each chunk holds, for a server to read and send.
	// Such a set has no JSON form.
	Computed bool
}

// ComputedChunkBytes bounds the chunks of a computed array: each is read
// into memory whole when it is asked for.
const ComputedChunkBytes = 8 << 20

// Computed is a chunk whose bytes are elements [First, First+Count) of
// record Record in row-major order, little-endian, read with
// format.Source.ReadArray.
type Computed struct {
	Record       int
	First, Count int64
}

// Ref is one chunk's byte range.
type Ref struct {
	Target         string
	Offset, Length int64
}

// Set is a reference set: metadata documents (JSON text) and chunk
// ranges, by key.
type Set struct {
	Meta     map[string]string
	Data     map[string]Ref
	Computed map[string]Computed // with Options.Computed
}

// ErrComputed: a set with computed chunks has no reference form.
var ErrComputed = errors.New("refs: computed chunks are not byte ranges of a file")

// Build describes the records of f, opened from path, as a reference
// set.
func Build(f format.File, path string, o *Options) (*Set, error) {
	if o == nil {
		o = &Options{}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	target := abs
	scheme := false
	if o.URL != "" {
		target = o.URL
		if strings.HasSuffix(target, "/") {
			target += filepath.Base(abs)
		}
		u, err := url.Parse(o.URL)
		scheme = err == nil && u.Scheme != ""
	}
	b := &builder{f: f, target: target, scheme: scheme, rows: o.Rows, computed: o.Computed,
		set:  &Set{Meta: map[string]string{}, Data: map[string]Ref{}, Computed: map[string]Computed{}},
		meta: map[string]any{}, dims: format.Dimensions{}}
	var which []int
	n := format.NumRecords(f)
	if len(o.Names) == 0 {
		for i := range n {
			which = append(which, i)
		}
	} else {
		byName := map[string]int{}
		for i := range n {
			if name := format.RecordAt(f, i).Name; byName[name] == 0 {
				byName[name] = i + 1
			}
		}
		for _, name := range o.Names {
			i := byName[name]
			if i == 0 {
				return nil, fmt.Errorf("%s: record %q: %w", path, name, format.ErrNoRecord)
			}
			which = append(which, i-1)
		}
	}
	b.group("")
	if af, ok := f.(format.Attributed); ok {
		attrs, err := af.Attributes()
		if err != nil {
			return nil, err
		}
		if attrs != nil {
			b.put(".zattrs", attrs)
		}
	}
	for _, i := range which {
		rec := format.RecordAt(f, i)
		err := b.record(i, &rec)
		if errors.Is(err, errors.ErrUnsupported) && len(o.Names) == 0 {
			if o.Skipped != nil {
				o.Skipped(&rec, err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: record %q (%s%s): %w", path, rec.Name, rec.TypeString(), layout.ShapeString(rec.Shape), err)
		}
	}
	consolidated, err := plainjson.Marshal(map[string]any{"metadata": b.meta, "zarr_consolidated_format": 1})
	if err != nil {
		return nil, err
	}
	b.set.Meta[".zmetadata"] = string(consolidated)
	return b.set, nil
}

type builder struct {
	f        format.File
	target   string
	scheme   bool
	rows     int64
	computed bool
	set      *Set
	meta     map[string]any // every metadata document, for .zmetadata
	dims     format.Dimensions
}

// put adds a metadata document.
func (b *builder) put(key string, doc any) error {
	text, err := plainjson.Marshal(doc)
	if err != nil {
		return err
	}
	b.set.Meta[key] = string(text)
	b.meta[key] = json.RawMessage(text)
	return nil
}

// group adds the group at prefix ("" the root, else ending in "/").
func (b *builder) group(prefix string) {
	if _, ok := b.set.Meta[prefix+".zgroup"]; ok {
		return
	}
	b.put(prefix+".zgroup", map[string]int{"zarr_format": 2})
	if prefix == "" {
		b.put(".zattrs", map[string]any{})
	}
}

// chunkTarget is where the chunk stored at path (inside the opened store;
// "" the opened file) is.
func (b *builder) chunkTarget(path string) string {
	if path == "" {
		return b.target
	}
	if b.scheme {
		segs := strings.Split(path, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		path = strings.Join(segs, "/")
	}
	return strings.TrimSuffix(b.target, "/") + "/" + path
}

// record adds the array of record i.
func (b *builder) record(i int, rec *format.Record) error {
	var loc *format.Location
	err := format.Unlocatable("format %s cannot say where its records' bytes are", b.f.Format())
	if lf, ok := b.f.(format.Locator); ok {
		loc, err = lf.Locate(i)
	}
	if err != nil {
		if b.computed && errors.Is(err, errors.ErrUnsupported) {
			return b.computedRecord(i, rec, err)
		}
		return err
	}
	key := arrayKey(rec)
	zarray := map[string]any{"zarr_format": 2, "shape": loc.Shape, "dtype": loc.DType,
		"order": "C", "compressor": nil, "filters": nil, "fill_value": nil}
	if loc.Order == layout.ColMajor && len(loc.Shape) >= 2 {
		zarray["order"] = "F"
	}
	data := map[string]Ref{}
	if g := loc.Grid; g != nil {
		zarray["chunks"] = g.Chunks
		zarray["compressor"] = compact(g.Compressor)
		zarray["filters"] = compact(g.Filters)
		zarray["fill_value"] = compact(g.FillValue)
		if g.Separator != "." {
			zarray["dimension_separator"] = g.Separator
		}
		for _, c := range g.Stored {
			data[key+"/"+c.Key(g.Separator)] = Ref{b.chunkTarget(c.Path), c.Offset, c.Length}
		}
	} else {
		chunks, refs, err := cut(loc, b.rows)
		if err != nil {
			return err
		}
		zarray["chunks"] = chunks
		for _, r := range refs {
			data[key+"/"+r.key] = Ref{b.chunkTarget(loc.Path), r.off, r.n}
		}
	}
	if err := b.array(key, zarray, loc.Shape, loc.Attributes, loc.DimensionNames); err != nil {
		return err
	}
	for k, r := range data {
		b.set.Data[k] = r
	}
	return nil
}

// arrayKey is the array a record becomes: its name without a leading
// "/", "0" for none.
func arrayKey(rec *format.Record) string {
	key := strings.TrimPrefix(rec.Name, "/")
	if key == "" {
		key = "0"
	}
	return key
}

// array adds the metadata of the array key: its .zarray, its .zattrs
// (attrs and its dimension names), and the groups above it.
func (b *builder) array(key string, zarray map[string]any, shape []int64, attrs map[string]any, dims []string) error {
	all := map[string]any{}
	for k, v := range attrs {
		all[k] = v
	}
	all["_ARRAY_DIMENSIONS"] = b.dims.Name(key, shape, dims)
	if _, dup := b.set.Meta[key+"/.zarray"]; dup {
		return fmt.Errorf("two records are the array %q", key)
	}
	for j := 0; j < len(key); j++ {
		if key[j] == '/' {
			b.group(key[:j+1])
		}
	}
	if err := b.put(key+"/.zarray", zarray); err != nil {
		return err
	}
	return b.put(key+"/.zattrs", all)
}

// computedRecord adds record i, which cannot be located (why), as an
// array whose chunks are computed with ReadArray, if its elements have a
// NumPy form.
func (b *builder) computedRecord(i int, rec *format.Record, why error) error {
	switch rec.Type {
	case layout.Invalid, layout.I128, layout.U128, layout.JuliaChar:
		return why
	}
	if rec.Kind == format.KindOpaque {
		return why
	}
	key := arrayKey(rec)
	shape := slices.Clone(rec.Shape)
	chunks := slices.Clone(shape)
	size := int64(rec.Type.Size())
	var pieces []Computed
	var keys []string
	n, err := layout.Count(shape)
	if err != nil {
		return err
	}
	switch {
	case len(shape) == 0:
		keys, pieces = []string{"0"}, []Computed{{i, 0, 1}}
	case n == 0:
		for j := range chunks {
			chunks[j] = max(chunks[j], 1)
		}
	default:
		slice := n / shape[0] // elements
		bound := max(1, ComputedChunkBytes/(slice*size))
		if b.rows > 0 {
			bound = min(bound, b.rows)
		}
		r := Rows(shape[0], slice*size, bound)
		if shape[0]/r > MaxChunks {
			return format.Unlocatable("%d chunks of %d rows, more than %d", shape[0]/r, r, MaxChunks)
		}
		chunks[0] = r
		rest := strings.Repeat(".0", len(shape)-1)
		for c := int64(0); c < shape[0]/r; c++ {
			keys = append(keys, strconv.FormatInt(c, 10)+rest)
			pieces = append(pieces, Computed{i, c * r * slice, r * slice})
		}
	}
	zarray := map[string]any{"zarr_format": 2, "shape": shape, "chunks": chunks,
		"dtype": format.NumPyDType(rec.Type, rec.TypeName, false),
		"order": "C", "compressor": nil, "filters": nil, "fill_value": nil}
	var attrs map[string]any
	var dims []string
	if rec.Facts != nil {
		attrs, dims = rec.Facts.Attributes, rec.Facts.DimensionNames
	}
	if err := b.array(key, zarray, shape, attrs, dims); err != nil {
		return err
	}
	for j, k := range keys {
		b.set.Computed[key+"/"+k] = pieces[j]
	}
	return nil
}

// compact is raw JSON without its spaces, null where empty.
func compact(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	if len(raw) == 0 || json.Compact(&buf, raw) != nil {
		return json.RawMessage("null")
	}
	return buf.Bytes()
}

type piece struct {
	key    string
	off, n int64
}

// cut cuts a contiguous payload along its slowest axis (the first in C
// order, the last in F order) into chunks of Rows slices.
func cut(loc *format.Location, rows int64) ([]int64, []piece, error) {
	k := len(loc.Shape)
	if k == 0 {
		return []int64{}, []piece{{"0", loc.Offset, loc.Length}}, nil
	}
	chunks := slices.Clone(loc.Shape)
	if slices.Contains(loc.Shape, 0) {
		for i := range chunks {
			chunks[i] = max(chunks[i], 1)
		}
		return chunks, nil, nil
	}
	axis := 0
	if loc.Order == layout.ColMajor {
		axis = k - 1
	}
	n := loc.Shape[axis]
	slice := loc.Length / n
	r := Rows(n, slice, rows)
	if n/r > MaxChunks {
		return nil, nil, format.Unlocatable("%d chunks of %d slices, more than %d (the length %d has no larger divisor within the bound)", n/r, r, MaxChunks, n)
	}
	chunks[axis] = r
	idx := make([]string, k)
	for i := range idx {
		idx[i] = "0"
	}
	pieces := make([]piece, 0, n/r)
	for c := int64(0); c < n/r; c++ {
		idx[axis] = strconv.FormatInt(c, 10)
		pieces = append(pieces, piece{strings.Join(idx, "."), loc.Offset + c*r*slice, r * slice})
	}
	return chunks, pieces, nil
}

// Rows is how many slices of sliceBytes bytes each chunk of an axis of
// length n holds: the largest divisor of n not above rows, or, for rows
// 0, not above DefaultChunkBytes/sliceBytes (at least 1). It must divide
// n: zarr-python reads every uncompressed chunk as a full one, and a file
// has no padding after its last slice.
func Rows(n, sliceBytes, rows int64) int64 {
	if rows <= 0 {
		rows = 1
		if sliceBytes > 0 {
			rows = max(1, DefaultChunkBytes/sliceBytes)
		}
	}
	if rows >= n {
		return max(n, 1)
	}
	best := int64(1)
	for d := int64(1); d*d <= n; d++ {
		if n%d != 0 {
			continue
		}
		if d <= rows {
			best = max(best, d)
		}
		if e := n / d; e <= rows {
			best = max(best, e)
		}
	}
	return best
}

// WriteJSON writes the set as kerchunk's version-1 JSON, keys sorted: the
// same set gives the same bytes.
// A set with computed chunks has none: it returns ErrComputed.
func (s *Set) WriteJSON(w io.Writer) error {
	if len(s.Computed) > 0 {
		return ErrComputed
	}
	keys := make([]string, 0, len(s.Meta)+len(s.Data))
	for k := range s.Meta {
		keys = append(keys, k)
	}
	for k := range s.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var buf bytes.Buffer
	buf.WriteString(`{"version": 1, "refs": {`)
	for i, k := range keys {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n ")
		writeString(&buf, k)
		buf.WriteString(": ")
		if text, ok := s.Meta[k]; ok {
			writeString(&buf, text)
			continue
		}
		r := s.Data[k]
		buf.WriteString("[")
		writeString(&buf, r.Target)
		fmt.Fprintf(&buf, ", %d, %d]", r.Offset, r.Length)
	}
	buf.WriteString("}}\n")
	_, err := w.Write(buf.Bytes())
	return err
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := plainjson.Marshal(s)
	buf.Write(b)
}
