package futhark

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	format.Register(format.Format{
		Name:        "futhark",
		Description: "Futhark values, binary and text (futhark dataset, compiled Futhark programs)",
		Extensions:  []string{".fut", ".in", ".out", ".data"},
		Sniff:       Sniff,
		Open:        openFormat,
		Write:       writeFormat,
		Encode:      encodeFormat,
		ParseParams: format.ParamsOfWriting(parseWriteParams),
		Params: []format.Param{
			{Name: "text", Usage: "write Futhark's text form instead of binary", Write: true, Switch: true},
			{Name: "aligned", Write: true, NoValue: "elem",
				Usage: "pad binary values so that each payload starts at a multiple of its element size (elem) or of N bytes, a power of two up to 4096: every payload can then be viewed without a copy"},
		},
	})
}

var (
	_ format.File    = (*File)(nil)
	_ format.Setter  = (*File)(nil)
	_ format.Damaged = (*File)(nil)

	_ format.RecordLister = (*File)(nil)
)

// fmtState is what a File keeps for the format-neutral interface: its
// records, built on first use, and its payload readers (whose band cache
// serves transposed reads in pieces).
type fmtState struct {
	recs []format.Record
	pays format.Payloads
}

// resetFormat drops the records and payload readers after Close or an
// append; f.mu is held exclusively.
func (f *File) resetFormat() {
	f.recs = nil
	f.pays.Reset()
}

func openFormat(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
	var fo Options
	if o != nil {
		fo.Options, fo.Lenient, fo.Salvage, fo.Repair = o.Options, o.Lenient, o.Salvage, o.Repair
	}
	f, err := OpenFile(path, mode, &fo)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Format returns "futhark".
func (f *File) Format() string { return "futhark" }

// Version returns "2", the only version of the binary format.
func (f *File) Version() string { return "2" }

var (
	binaryExtra = map[string]any{"encoding": "binary"}
	textExtra   = map[string]any{"encoding": "text"}
)

// Records describes the values as records named "0", "1", …, row-major.
// A binary value's Offset is its payload's and Size the payload size; a
// text value, which has no payload in the file, has its Start as Offset and
// its length in bytes as Size. Extra["encoding"] is "binary" or "text".
// The slice is built once and shared (until an append); the records must
// not be changed.
func (f *File) Records() []format.Record {
	f.mu.RLock()
	if f.recs != nil || f.closed {
		r := f.recs
		f.mu.RUnlock()
		return r
	}
	f.mu.RUnlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recs == nil && !f.closed {
		f.recs = f.buildRecords()
	}
	return f.recs
}

// NumRecords returns the number of values, 0 after Close, as
// len(Records()) does, without building the list.
func (f *File) NumRecords() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return 0
	}
	return f.idx.n
}

// Record returns value i described as Records describes it, built from the
// index (a few dozen bytes a value) without building the list: listing a
// file of millions of values one Record at a time holds none of them. It
// panics for i outside [0, NumRecords()), as indexing Records does.
func (f *File) Record(i int) format.Record {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.recs != nil {
		return f.recs[i]
	}
	if i < 0 || i >= f.idx.n {
		panic(fmt.Sprintf("futhark: %s: record %d out of range [0,%d)", f.name, i, f.idx.n))
	}
	return f.record(i, strconv.Itoa(i))
}

// record describes value i, named name; f.mu is held.
func (f *File) record(i int, name string) format.Record {
	e := f.idx.at(i)
	shape := f.idx.shape(e)
	a := layout.Array{Name: name, Type: e.typ, Shape: shape, Order: layout.RowMajor, Offset: e.data()}
	extra := textExtra
	if e.bin {
		a.Size, _ = layout.ByteSize(e.typ, shape)
		extra = binaryExtra
	} else {
		a.Size = e.end - e.start
	}
	return format.Record{Array: a, Kind: format.KindArray, Extra: extra}
}

// buildRecords makes one record per value, their names cut from one
// string and their shapes shared with the index; f.mu is held.
func (f *File) buildRecords() []format.Record {
	var nb strings.Builder
	ends := make([]int, f.idx.n)
	var tmp [20]byte
	for i := range ends {
		nb.Write(strconv.AppendInt(tmp[:0], int64(i), 10))
		ends[i] = nb.Len()
	}
	names := nb.String()
	recs := make([]format.Record, f.idx.n)
	start := 0
	for i := range recs {
		recs[i] = f.record(i, names[start:ends[i]])
		start = ends[i]
	}
	return recs
}

// ReadArray copies elements [first, first+len(dst)/size) of value i into
// dst in order and byte order bo: binary payloads from the mapping through
// format.Payload, text values decoded. Bool bytes other than 0 and 1 read
// as true, as futhark-data reads them. A file truncated under the reader
// gives an error wrapping mmapfile.ErrFault.
func (f *File) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	p, err := f.payload(i)
	if err != nil {
		return err
	}
	return p.ReadArray(dst, first, order, bo)
}

// Payload returns the reader of value i's elements (format.Payloader): a
// binary value's payload in the mapping, or a text value decoded, which
// cannot be viewed (ErrTextValue).
func (f *File) Payload(i int) (*format.Payload, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.payload(i)
}

// payload is Payload; f.mu is held.
func (f *File) payload(i int) (*format.Payload, error) {
	e, err := f.entry(i)
	if err != nil {
		return nil, err
	}
	return f.pays.Get(i, func() (*format.Payload, error) {
		shape := f.idx.shape(e)
		a := layout.Array{Name: strconv.Itoa(i), Type: e.typ, Shape: shape, Order: layout.RowMajor, Offset: e.data()}
		a.Size, _ = layout.ByteSize(e.typ, shape)
		p := &format.Payload{Array: a, Data: f.src, Off: a.Offset, Lenient: true, Wrap: f.wrapAt}
		switch {
		case !e.bin:
			b, err := f.textPayload(i, e)
			if err != nil {
				return nil, err
			}
			p.Data, p.Off = bytes.NewReader(b), 0
			p.NoView = f.err(e.start, ErrTextValue, "value %d is text: decode it with Read", i)
		case f.region != nil:
			p.Data = f.region
		}
		return p, nil
	})
}

func (f *File) wrapAt(off int64, err error) error {
	return errAt(f.name, off, err, "")
}

// SetText changes the element of binary value i at the row-major index
// idx to value, a Futhark literal of the value's type (layout.ParseText:
// "42", "0x1f", "-1.5e3", "inf", "nan", "true"), in place through the
// read-write mapping. Text values cannot be changed in place.
func (f *File) SetText(i int, idx []int64, value string) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.entry(i)
	if err != nil {
		return err
	}
	// A bad literal or index is about the record, as Records names it, and
	// no place in the file.
	recordErr := func(err error) error {
		fe := errAt(f.name, -1, err, "")
		fe.Record = strconv.Itoa(i)
		return fe
	}
	b, err := format.ParseLiteral(e.typ, value, binary.LittleEndian)
	if err != nil {
		return recordErr(err)
	}
	linear, err := layout.Index(f.idx.shape(e), layout.RowMajor, idx...)
	if err != nil {
		return recordErr(format.IndexError(err))
	}
	return f.setElement(i, e, linear, b)
}

// writeParams reads the writer's parameters: "text" and "aligned".
func writeParams(o *format.Options) (Options, bool, error) {
	var wo Options
	if o != nil {
		wo.Options = o.Options
	}
	wp, err := format.ParsedParams[*writeSpec](o, "futhark", true)
	if err != nil {
		return wo, false, err
	}
	wo.Align = wp.align
	return wo, wp.text, nil
}

// writeSpec is what the options of writing say: the payloads' alignment
// (Options.Align), and text rather than binary values.
type writeSpec struct {
	align int
	text  bool
}

// parseWriteParams parses the options of writing.
func parseWriteParams(p map[string]string) (*writeSpec, error) {
	w := &writeSpec{text: p["text"] == "true"}
	switch a := p["aligned"]; a {
	case "":
	case "elem":
		w.align = AlignElement
	default:
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 || n > 4096 || n&(n-1) != 0 {
			return nil, fmt.Errorf("futhark: aligned=%q: want elem or a power of two up to 4096", a)
		}
		w.align = n
	}
	if w.text && w.align != 0 {
		return nil, errors.New("futhark: aligned applies to binary values, not text")
	}
	return w, nil
}

// writable returns src as arrays Futhark can hold, or an error wrapping
// format.ErrNotRepresentable naming the first record it cannot.
func writable(src format.Source) (format.Source, error) {
	src, err := format.Arrays(src)
	if err != nil {
		return nil, err
	}
	err = format.EachRecord(src, func(_ int, r *format.Record) error {
		switch {
		case r.Kind == format.KindString:
			return format.Unrepresentable(r, "Futhark values have no strings")
		case r.Kind == format.KindOpaque:
			return format.Unrepresentable(r, "Futhark cannot hold a value only its own format can read")
		case !IsPrimType(r.Type):
			return format.Unrepresentable(r, "Futhark has no element type "+r.TypeString())
		case len(r.Shape) > MaxRank:
			return format.Unrepresentable(r, fmt.Sprintf("Futhark values have at most %d dimensions", MaxRank))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return src, nil
}

// writeFormat writes every record of src as one Futhark value, binary (or
// text with the "text" parameter), through a temporary file that replaces
// path only when complete.
func writeFormat(path string, src format.Source, o *format.Options) error {
	wo, text, err := writeParams(o)
	if err != nil {
		return err
	}
	if src, err = writable(src); err != nil {
		return errAt(path, -1, err, "")
	}
	// Writeback: the disk writes the file while the rest is encoded, and
	// the commit's fsync waits only for the tail.
	err = atomicfile.Write(path, wo.Perm, func(out *os.File) error {
		return encodeAll(atomicfile.Writeback(out), src, wo, text)
	})
	if err != nil {
		return errAt(path, -1, err, "")
	}
	return nil
}

// encodeFormat streams every record of src to w, as writeFormat writes
// them.
func encodeFormat(w io.Writer, src format.Source, o *format.Options) error {
	wo, text, err := writeParams(o)
	if err != nil {
		return err
	}
	if src, err = writable(src); err != nil {
		return err
	}
	return encodeAll(w, src, wo, text)
}

// encodeAll writes the records of src to w, each streamed from the source
// in row-major order and little-endian in large chunks.
func encodeAll(w io.Writer, src format.Source, o Options, text bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	e := NewWriter(bw, 0, &o)
	// One record at a time: a file of a million scalars is never listed.
	err := format.EachRecord(src, func(i int, r *format.Record) error {
		var err error
		if text {
			err = e.BeginText(r.Type, r.Shape)
		} else {
			err = e.BeginBinary(r.Type, r.Shape)
		}
		if err == nil {
			err = format.Stream(src, i, layout.RowMajor, binary.LittleEndian, e.WriteElems)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", format.Describe(r), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := e.finish(); err != nil {
		return err
	}
	return bw.Flush()
}
