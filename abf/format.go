package abf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// This file is the package's face to package format: the registration of
// "abf", a format.File over an open *File, and the writer that makes an
// ABF file of any format.Source.

func init() {
	format.Register(format.Format{
		Name:        "abf",
		Description: "AlignedBinaryFormat.jl: Julia's mmap-able named arrays, each aligned to its element size",
		Extensions:  []string{".abf"},
		Sniff:       sniff,
		Open:        openFormat,
		Write:       writeFormat,
		ParseParams: format.ParamsOfWriting(parseWriteParams),
		Params: []format.Param{
			{Name: "abf-version", Write: true,
				Usage: "ABF version to write: C (AlignedBinaryFormat.jl v0.5 and later; the default) or A (v0.1 to v0.3)"},
			{Name: "abf-bits", Write: true, Switch: true, NoValue: "true",
				Usage: "write bool arrays as BitArrays (packed bits) rather than Array{Bool}"},
		},
	})
}

// sniff reports whether head, the first bytes of a file, is ABF: empty (an
// empty Format C file), Format A's header in either byte order, or a
// record's byte-order flag (0x00 or 0xFF) followed by a key and type that
// parse as Format C or B as far as the bytes go (a file cut short is still
// ABF, so that opening it reports where it was cut).
func sniff(head []byte) bool {
	switch {
	case len(head) == 0:
		return true
	case bytes.HasPrefix(head, headerALE), bytes.HasPrefix(head, headerABE):
		return true
	case head[0] != 0x00 && head[0] != 0xFF:
		return false
	}
	in := &input{size: int64(len(head)), mem: head}
	return headerWorks(in, FormatC, true) || headerWorks(in, FormatB, true)
}

// openFormat is the registered Open.
func openFormat(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
	var opt Options
	if o != nil {
		opt.Options, opt.Salvage, opt.Lenient, opt.Repair = o.Options, o.Salvage, o.Lenient, o.Repair
	}
	return OpenFile(path, mode, &opt)
}

// face is what a File keeps for package format: the records, described
// on first use (again once records were added), and the payload readers.
type face struct {
	recsMu sync.Mutex
	recs   []format.Record
	pays   format.Payloads
}

var (
	_ format.File      = (*File)(nil)
	_ format.Setter    = (*File)(nil)
	_ format.Damaged   = (*File)(nil)
	_ format.Payloader = (*File)(nil)

	_ format.RecordLister = (*File)(nil)
)

// formatRecord describes e, named name, as package format does: arrays as
// they are (column-major); BitArrays as bool arrays of TypeName "bits";
// Strings as their UTF-8 bytes; serialized Julia values as opaque. shape
// is e's dims (a String's byte count for a String).
func formatRecord(e *entry, name string, shape []int64) format.Record {
	fr := format.Record{Array: layout.Array{Name: name, Shape: shape, Order: layout.ColMajor,
		BigEndian: e.bigEndian(), Offset: e.data, Size: e.dataLen}}
	switch e.kind {
	case KindArray:
		fr.Kind, fr.Type = format.KindArray, e.elem
	case KindBitArray:
		fr.Kind, fr.Type, fr.TypeName = format.KindArray, layout.Bool, "bits"
	case KindString:
		fr.Kind, fr.Type, fr.TypeName = format.KindString, layout.U8, "string"
	default: // DataType, AbfSerializer{…}: what Julia's type was, for listings
		fr.Kind, fr.Type, fr.TypeName = format.KindOpaque, layout.Invalid, e.kind.String()
		fr.Extra = map[string]any{"julia_type": e.typeString()}
	}
	return fr
}

// formatShape is the shape package format gives e: its dims, a String's
// byte count, none for serialized values. prev is the shape of the record
// before, shared when equal; scratch holds the dims decoded.
func formatShape(e *entry, prev []int64, scratch *[]int64) []int64 {
	switch e.kind {
	case KindArray, KindBitArray:
		*scratch = e.dims(*scratch)
	case KindString:
		*scratch = append((*scratch)[:0], e.dataLen)
	default:
		*scratch = (*scratch)[:0]
	}
	if prev != nil && slices.Equal(prev, *scratch) {
		return prev
	}
	return append(make([]int64, 0, len(*scratch)), *scratch...)
}

// Records describes the records as package format does, built on the
// first call (and again once records were added): records of equal
// shapes share their Shape, and names share one string. Entries gives
// the records as this package describes them.
func (f *File) Records() []format.Record {
	f.recsMu.Lock()
	defer f.recsMu.Unlock()
	f.mu.RLock()
	defer f.mu.RUnlock()
	n := f.tab.len()
	if f.recs == nil || len(f.recs) != n {
		recs := make([]format.Record, n)
		var prev, scratch []int64
		f.tab.each(n, func(e *entry, key string) {
			prev = formatShape(e, prev, &scratch)
			recs[e.i] = formatRecord(e, key, prev)
		})
		f.recs = recs
	}
	return f.recs
}

// NumRecords returns the number of records, as len(Records()) does,
// without building the list.
func (f *File) NumRecords() int { return f.Len() }

// Record returns record i described as Records describes it, decoded from
// the table (a few dozen bytes a record) without building the list. It
// panics for i outside [0, NumRecords()), as indexing Records does.
func (f *File) Record(i int) format.Record {
	if n := f.Len(); i < 0 || i >= n {
		panic(fmt.Sprintf("abf: %s: record %d out of range [0,%d)", f.name, i, n))
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	e := f.tab.at(i)
	var scratch []int64
	return formatRecord(&e, string(e.key), formatShape(&e, nil, &scratch))
}

// Format returns "abf"; Version gives the format version's letter.
func (f *File) Format() string { return "abf" }

// ReadArray copies elements of record i; see format.Source.
func (f *File) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	p, err := f.Payload(i)
	if err != nil {
		return err
	}
	a := &p.Array
	if err := p.ReadArray(dst, first, order, bo); err != nil {
		// Reads from the mapping report faults as mmapfile errors.
		return f.readErr(strconv.Quote(a.Name), a.Offset, a.Size, a.Offset, err)
	}
	if _, mapped := p.Data.(*mmapfile.Region); mapped && order != a.Order && !layout.Trivial(a.Shape) {
		// A transposed read takes the bytes straight from the mapping,
		// where the part of a page past the end of a file cut short reads
		// as zeros, not as a fault: make sure the file still holds them.
		if size, err := f.mf.Size(); err == nil && size < a.Offset+a.Size {
			return f.cutShort(strconv.Quote(a.Name), a.Offset, a.Size, max(size, a.Offset), mmapfile.ErrTruncated)
		}
	}
	return nil
}

// Payload returns the reader of record i's values (format.Payloader): an
// array's bytes in the mapping; a BitArray's bits unpacked to one byte
// each, which cannot be viewed; a String's bytes.
func (f *File) Payload(i int) (*format.Payload, error) {
	if n := f.Len(); i < 0 || i >= n {
		return nil, f.errf(-1, mmapfile.ErrOutOfRange, "record %d of %d", i, n)
	}
	if err := f.checkOpen(); err != nil {
		return nil, err
	}
	return f.pays.Get(i, func() (*format.Payload, error) { return f.payload(i) })
}

// payload builds the reader of record i's values.
func (f *File) payload(i int) (*format.Payload, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, f.errf(-1, mmapfile.ErrClosed, "")
	}
	e := f.tab.at(i)
	var scratch []int64
	rec := formatRecord(&e, string(e.key), formatShape(&e, nil, &scratch))
	if rec.Kind == format.KindOpaque {
		return nil, f.errf(e.data, errors.ErrUnsupported, "record %q is a serialized Julia value (%s), not values: use File.ReadBytes", rec.Name, e.typeString())
	}
	key := strconv.Quote(rec.Name)
	p := &format.Payload{Array: rec.Array, Lenient: f.lenient}
	data, n := e.data, e.dataLen
	p.Wrap = func(off int64, err error) error { return f.readErr(key, data, n, off, err) }
	switch {
	case e.kind == KindBitArray:
		// One byte per element, unpacked from the words as they are read:
		// Payload reads (and reorders) them like any bool array. Offsets
		// it names count elements from the payload's start.
		p.Array.BigEndian = false
		p.Data = &bitBytes{f: f, e: &e, n: e.count()}
		p.Wrap = func(off int64, err error) error {
			return f.readErr(key, data, n, data+8*((off-data)/64), err)
		}
		p.NoView = f.errf(e.start, errors.ErrUnsupported, "record %q is a BitArray, whose bits are packed: use Read[bool], which unpacks them, or ViewBits", rec.Name)
	case e.dataLen == 0:
		p.Data = bytes.NewReader(nil)
	case f.mf == nil:
		p.Data, p.Off = f.ra, e.data
	default:
		r, err := f.region(&e)
		if err != nil {
			return nil, err
		}
		p.Data, p.Off = r, e.data-r.Offset()
	}
	if e.bigEndian() && e.kind != KindBitArray {
		p.NoView = f.bigEndianErr(&e)
	}
	return p, nil
}

// SetText changes the element of record i at the 0-based index idx
// (Julia's x[i,j] is idx {i-1, j-1}) to value, a Futhark literal of the
// record's type (format.ParseLiteral; a Julia Char takes one character or
// its code point); BitArray elements take "true" and "false".
func (f *File) SetText(i int, idx []int64, value string) error {
	if n := f.Len(); i < 0 || i >= n {
		return f.errf(-1, mmapfile.ErrOutOfRange, "record %d of %d", i, n)
	}
	f.mu.RLock()
	e := f.tab.at(i)
	key := string(e.key)
	f.mu.RUnlock()
	t, err := f.elemType(&e)
	if err != nil {
		return err
	}
	le, err := format.ParseLiteral(t, value, binary.LittleEndian)
	if err != nil {
		fe := errAt(f.name, -1, err, "")
		fe.Record = key
		return fe
	}
	if idx == nil {
		idx = []int64{}
	}
	return f.set(key, t, idx, 0, le)
}

// bitBytes is a BitArray's payload seen as one byte, 0 or 1, per element,
// column-major: the form in which format.Payload reads (and reorders)
// bool arrays. It unpacks a window of words at a time, so any range in
// any order is read in bounded memory.
type bitBytes struct {
	f *File
	e *entry
	n int64 // elements

	mu    sync.Mutex
	w0    int64    // first word in words
	words []uint64 // the window, host order
}

// bitWindow is how many words bitBytes reads at a time (32 KiB).
const bitWindow = 4096

func (b *bitBytes) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > b.n {
		return 0, fmt.Errorf("element %d outside [0, %d]: %w", off, b.n, mmapfile.ErrOutOfRange)
	}
	want := len(p)
	if int64(want) > b.n-off {
		p = p[:b.n-off]
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := 0; k < len(p); {
		pos := off + int64(k)
		w := pos >> 6
		if b.words == nil || w < b.w0 || w >= b.w0+int64(len(b.words)) {
			if err := b.load(w); err != nil {
				return k, err
			}
		}
		word := b.words[w-b.w0]
		bit := pos & 63
		if bit == 0 && len(p)-k >= 64 {
			q := p[k : k+64]
			for j := range q {
				q[j] = byte(word>>j) & 1
			}
			k += 64
			continue
		}
		p[k] = byte(word>>bit) & 1
		k++
	}
	if len(p) < want {
		return len(p), io.EOF
	}
	return len(p), nil
}

// load reads the window of words that starts at word w, and checks the
// unused bits when it holds the last word.
func (b *bitBytes) load(w int64) error {
	total := b.e.dataLen / 8
	m := min(int64(bitWindow), total-w)
	if cap(b.words) < int(m) {
		b.words = make([]uint64, m)
	}
	b.words = b.words[:m]
	if err := b.f.readWords(b.e, w, b.words); err != nil {
		b.words = nil
		return err
	}
	b.w0 = w
	if w+m == total && m > 0 && !b.f.lenient && b.words[m-1]&unusedMask(b.n) != 0 {
		b.words = nil
		return b.f.unusedErr(b.e)
	}
	return nil
}

// writeParams are the options of writing.
type writeParams struct {
	version Format // "abf-version": C (the default) or A
	bits    bool   // "abf-bits": every bool array as a BitArray
}

// parseWriteParams parses the options of writing.
func parseWriteParams(p map[string]string) (*writeParams, error) {
	w := &writeParams{version: FormatC}
	switch v := p["abf-version"]; strings.ToUpper(v) {
	case "", "C":
	case "A":
		w.version = FormatA
	default:
		return nil, fmt.Errorf("abf-version %q is not A or C (Format B is read only)", v)
	}
	if v := p["abf-bits"]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("abf-bits %q is not a yes/no value", v)
		}
		w.bits = b
	}
	return w, nil
}

// writeFormat is the registered Write: every record of src, in order, as
// an ABF file of the version the "abf-version" parameter names (C by
// default). Arrays are pulled column-major and little-endian, a chunk at a
// time, and written as they come; bool arrays whose TypeName is "bits"
// (ABF's own BitArrays), and all bool arrays with "abf-bits", become
// BitArrays; strings become String records. The file is written beside
// path and renamed over it when complete.
func writeFormat(path string, src format.Source, o *format.Options) error {
	wp, err := format.ParsedParams[*writeParams](o, "abf", true)
	if err != nil {
		return errAt(path, -1, nil, err.Error())
	}
	version, bits := wp.version, wp.bits
	src, err = format.Arrays(src)
	if err != nil {
		return errAt(path, -1, err, "cannot write")
	}
	// The records are taken one at a time, here and below: a source of a
	// million scalars is never listed.
	err = format.EachRecord(src, func(_ int, r *format.Record) error { return representable(r, version) })
	if err != nil {
		return errAt(path, -1, err, "cannot write")
	}
	var perm = atomicfile.DefaultPerm
	if o != nil && o.Perm != 0 {
		perm = o.Perm
	}
	tmp, err := atomicfile.Create(path, perm)
	if err != nil {
		return errAt(path, -1, err, "cannot create")
	}
	defer tmp.Abort()
	// What a failure leaves, which the errors say: the target as it was.
	left := "the file was not created"
	if _, err := os.Stat(path); err == nil {
		left = "the file was left as it was"
	}
	w, err := OpenFile(tmp.Name(), mmapfile.ReadWrite, &Options{Mode: "w", Format: version})
	if err != nil {
		return errAt(path, -1, err, "cannot open the new file beside it; "+left)
	}
	w.name, w.discarded = path, left // errors name the file being written, not its temporary
	// Nothing reads the file until it is complete: gather small writes.
	// Writeback: the disk writes the file while the rest is written.
	c := &combiner{w: atomicfile.WritebackAt(w.mf, w.mf.OSFile())}
	w.wr = c
	if err := format.EachRecord(src, func(i int, r *format.Record) error { return writeRecord(w, src, i, r, bits) }); err != nil {
		w.Close()
		return err
	}
	if err := c.flush(); err != nil {
		w.Close()
		return errAt(path, c.off, err, "write failed; "+left)
	}
	if err := w.Close(); err != nil {
		return errAt(path, -1, errors.Unwrap(err), "syncing the new file failed; "+left)
	}
	if err := tmp.Commit(); err != nil {
		return errAt(path, -1, err, "cannot put the new file in place; "+left)
	}
	return nil
}

// representable checks, before anything is written, that ABF can hold r.
func representable(r *format.Record, version Format) error {
	switch {
	case r.Kind == format.KindOpaque:
		return format.Unrepresentable(r, "a serialized Julia value cannot be re-created outside Julia")
	case r.Kind == format.KindString && version == FormatA:
		return format.Unrepresentable(r, "Format A has no String records (AlignedBinaryFormat.jl v0.1 and v0.2 cannot read them)")
	case r.Kind == format.KindString:
		return nil
	case r.Type.IsComplex():
		return format.Unrepresentable(r, "AlignedBinaryFormat.jl has no complex numbers")
	case juliaNames[r.Type] == "":
		return format.Unrepresentable(r, "AlignedBinaryFormat.jl has no element type "+r.TypeString())
	case len(r.Shape) > MaxDims:
		return format.Unrepresentable(r, fmt.Sprintf("more than %d dimensions", MaxDims))
	}
	return nil
}

// writeRecord appends record i of src to w.
func writeRecord(w *File, src format.Source, i int, r *format.Record, bits bool) error {
	stream := func(out io.Writer) error {
		return format.Stream(src, i, layout.ColMajor, binary.LittleEndian, func(chunk []byte) error {
			_, err := out.Write(chunk)
			return err
		})
	}
	switch {
	case r.Kind == format.KindString:
		b, err := format.ReadAll(src, i, layout.RowMajor, binary.LittleEndian)
		if err != nil {
			return w.errf(-1, err, "record %q: reading the source", r.Name)
		}
		return w.WriteString(r.Name, string(b))
	case r.Type == layout.Bool && (r.TypeName == "bits" || bits):
		return w.WriteBitsStream(r.Name, r.Shape, stream)
	}
	return w.WriteStream(r.Name, r.Type, r.Shape, stream)
}
