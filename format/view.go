package format

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Payloader is implemented by files that hand out a record's values as one
// contiguous run of bytes: the Payload whose Data is the mapped region
// for a file that is mapped. View and Set work on such records;
// Read and ReadAt work on every file.
type Payloader interface {
	// Payload returns the reader of record i's values, or an error for
	// records whose values are not one run of bytes (strided fields,
	// chunked or sparse arrays, text), for a closed file and for i out of
	// range. The Payload is shared: its fields must not be changed.
	Payload(i int) (*Payload, error)
}

// payloadsKept is how many records' payload readers a Payloads keeps: a
// reader keeps the band of a transposed read that printing reads in
// pieces, so the records read last should keep theirs.
const payloadsKept = 8

// Payloads is the payload cache of a file: the readers of the records
// read last, so that a record read in pieces (a printer's transposed
// reads, a view taken again) builds its reader once. A file embeds one
// and calls Get from its Payload method; Reset forgets every reader (at
// Close, or when the file's mapping changes). The zero value is ready;
// it may be used from several goroutines.
type Payloads struct {
	mu   sync.Mutex
	kept [payloadsKept]keptPayload
	next int
}

type keptPayload struct {
	i int
	p *Payload
}

// Get returns the reader of record i, calling build for one it does not
// keep. Errors are not kept.
func (c *Payloads) Get(i int, build func() (*Payload, error)) (*Payload, error) {
	c.mu.Lock()
	for _, k := range c.kept {
		if k.p != nil && k.i == i {
			c.mu.Unlock()
			return k.p, nil
		}
	}
	c.mu.Unlock()
	p, err := build()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.kept {
		if k.p != nil && k.i == i {
			// Another goroutine built it meanwhile: share one reader.
			return k.p, nil
		}
	}
	c.kept[c.next] = keptPayload{i, p}
	c.next = (c.next + 1) % payloadsKept
	return p, nil
}

// Reset forgets every reader.
func (c *Payloads) Reset() {
	c.mu.Lock()
	c.kept = [payloadsKept]keptPayload{}
	c.next = 0
	c.mu.Unlock()
}

// copyingCall is what a view that cannot alias tells its caller to use.
const copyingCall = "use Read, which copies"

// payloadOf returns the payload of record i of f after checking that T
// is its element type; uint8 also views a bool array's raw bytes.
func payloadOf[T layout.Elem](f File, i int) (*Payload, error) {
	pf, ok := f.(Payloader)
	if !ok {
		return nil, fmt.Errorf("%s file: record %d: %w: the format hands out no payloads; %s", f.Format(), i, errors.ErrUnsupported, copyingCall)
	}
	p, err := pf.Payload(i)
	if err != nil {
		return nil, err
	}
	if t := layout.TypeOf[T](); t != p.Array.Type && !(t == layout.U8 && p.Array.Type == layout.Bool) {
		var z T
		return nil, p.wrap(p.Array.Offset, fmt.Errorf("holds %s, not %T: %w", p.Array.Type, z, mmapfile.ErrTypeMismatch))
	}
	return p, nil
}

// region returns the mapping a payload's bytes are in, or an error that
// names the copying call.
func (p *Payload) region() (*mmapfile.Region, error) {
	if p.NoView != nil {
		return nil, p.NoView
	}
	reg, ok := p.Data.(*mmapfile.Region)
	if !ok {
		return nil, p.wrap(p.Array.Offset, fmt.Errorf("the values are not mapped (%w); %s", errors.ErrUnsupported, copyingCall))
	}
	return reg, nil
}

// count is the number of elements of the payload as an int.
func (p *Payload) count() (int, error) {
	n, err := layout.Count(p.Array.Shape)
	if err == nil && n > math.MaxInt {
		err = mmapfile.ErrTooLarge
	}
	if err != nil {
		return 0, p.wrap(p.Array.Offset, err)
	}
	return int(n), nil
}

// View returns the values of record i of f as a slice that aliases the
// file's mapping, in the record's storage order: no copy is made. T must
// be the record's element type (uint8 also views a bool array's bytes).
// Where the bytes cannot be aliased — not in the host's byte order
// (mmapfile.ErrByteOrder), not aligned for T (mmapfile.ErrMisaligned), a
// bool byte other than 0 and 1, compressed or not one run in the file, a
// file read from an io.ReaderAt — the error says to use Read, which
// copies. An empty array gives an empty, non-nil slice.
//
// In a file opened read-write, writing to the slice changes the file
// (durable after the file's Sync or Close); in a read-only file it
// crashes the process. The slice is valid until the file is closed or, for
// formats that say so, changed in size.
func View[T layout.Elem](f File, i int) ([]T, error) {
	p, err := payloadOf[T](f, i)
	if err != nil {
		return nil, err
	}
	n, err := p.count()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return []T{}, nil
	}
	reg, err := p.region()
	if err != nil {
		return nil, err
	}
	bo := p.Array.ByteOrder()
	if layout.TypeOf[T]() == layout.U8 {
		bo = layout.HostOrder() // a bool array's raw bytes: no order, no check
	}
	v, err := mmapfile.View[T](reg, p.Off, n, bo)
	if err != nil {
		off := p.Array.Offset
		var me *mmapfile.Error
		if errors.As(err, &me) {
			if me.Offset >= 0 {
				off = me.Offset
			}
			err = me.Err
		}
		return nil, p.wrap(off, fmt.Errorf("cannot be aliased: %w; %s", err, copyingCall))
	}
	if reg.Writable() && p.Writing != nil {
		if err := p.Writing(); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Read returns a copy of the values of record i of f in the record's
// storage order (its Order), in the host's byte order. T must be the
// record's element type (uint8 also reads bool arrays). It works on every File: through the file's
// ReadArray, which inflates, gathers and swaps as the format needs.
func Read[T layout.Elem](f File, i int) ([]T, error) {
	a, mapped, err := arrayOf[T](f, i)
	if err != nil {
		return nil, err
	}
	n, err := layout.Count(a.Shape)
	if err == nil && n > math.MaxInt {
		err = mmapfile.ErrTooLarge
	}
	if err != nil {
		return nil, fmt.Errorf("%s file: record %q: %d elements: %w", f.Format(), a.Name, n, err)
	}
	// The count comes from the file: unless the values are in the mapping
	// (whose size the format checked), memory grows with what is read, a
	// part at a time, not all at once on a header's word (a compressed
	// record can claim any size).
	part := max(1, readPartBytes/int64(a.Type.Size()))
	if mapped {
		part = n
	} else if ps, ok := f.(PartSizer); ok {
		if unit := ps.PartElems(i); unit > 0 {
			part = max(unit, part/unit*unit)
		}
	}
	dst := make([]T, 0, min(n, part))
	for int64(len(dst)) < n {
		k := int(min(n-int64(len(dst)), part))
		at := len(dst)
		dst = slices.Grow(dst, k)[:at+k]
		if err := f.ReadArray(i, unsafeslice.Bytes(dst[at:]), int64(at), a.Order, layout.HostOrder()); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// PartSizer is implemented by files whose records are read best in parts
// of a certain size (a chunked array's row of chunks, so that no chunk is
// decoded twice): Read, which copies a record it cannot map a part at a
// time, makes each part a multiple of PartElems(i) elements (in the
// record's storage order), or one of them where that is more than Read's
// own part.
type PartSizer interface {
	PartElems(i int) int64
}

// readPartBytes is how much Read reads at a time beyond its first part.
const readPartBytes = 64 << 20

// arrayOf describes record i of f after checking that T is its element
// type: as the file's payload reader describes it, where it hands one out
// (kept, so that a read of a small array does not describe it afresh),
// and whether its values are one run of bytes in a mapping.
func arrayOf[T layout.Elem](f File, i int) (layout.Array, bool, error) {
	p, err := payloadOf[T](f, i)
	switch {
	case err == nil:
		_, mapped := p.Data.(*mmapfile.Region)
		return p.Array, mapped, nil
	case errors.Is(err, mmapfile.ErrTypeMismatch):
		return layout.Array{}, false, err
	}
	rec, err := typedRecord[T](f, i)
	return rec.Array, false, err
}

// ReadAt copies len(dst) values of record i of f, from element start in
// the record's storage order, into dst in the host's byte order: part of
// a large record in bounded memory. It fills dst or returns an error.
func ReadAt[T layout.Elem](f File, i int, start int64, dst []T) error {
	a, _, err := arrayOf[T](f, i)
	if err != nil {
		return err
	}
	return f.ReadArray(i, unsafeslice.Bytes(dst), start, a.Order, layout.HostOrder())
}

// typedRecord returns record i of f after checking that T is its
// element type.
func typedRecord[T layout.Elem](f File, i int) (Record, error) {
	if i < 0 || i >= NumRecords(f) {
		return Record{}, fmt.Errorf("%s file: record %d of %d: %w", f.Format(), i, NumRecords(f), mmapfile.ErrOutOfRange)
	}
	rec := RecordAt(f, i)
	if t := layout.TypeOf[T](); rec.Type != t && !(t == layout.U8 && rec.Type == layout.Bool) {
		var z T
		return rec, fmt.Errorf("%s file: record %q holds %s, not %T: %w", f.Format(), rec.Name, rec.TypeString(), z, mmapfile.ErrTypeMismatch)
	}
	return rec, nil
}

// BytesSetter is implemented by files whose records are not all one
// mapped run of bytes but whose elements can still be changed one at a
// time (a field strided through a structured array, packed bits, a
// nullable attribute, chunks that are compressed or not yet written): Set
// hands such a record's element to it.
type BytesSetter interface {
	// SetBytes changes the element of record i at the 0-based logical
	// index idx to b, one element in the record's byte order (a bool as 0
	// or 1), with what the format does besides (a chunk re-encoded, a
	// null marker cleared).
	SetBytes(i int, idx []int64, b []byte) error
}

// Set changes the element of record i of f at the 0-based logical index
// idx (one index per dimension, in the record's shape) to v, in place
// through the file's read-write mapping, in the file's byte order. T must
// be the record's element type (uint8 also sets a bool element, to 0 or
// 1). A record that is one mapped run of bytes is written here; any other
// goes to the file's BytesSetter, and where the file has none (or the run
// is compressed, strided, read from an io.ReaderAt) it cannot be changed
// so: the error wraps mmapfile.ErrNotWritable and errors.ErrUnsupported.
// The change is visible to every reader of the file at once and durable
// after the file's Sync or Close.
func Set[T layout.Elem](f File, i int, idx []int64, v T) error {
	a, _, err := arrayOf[T](f, i)
	if err != nil {
		return err
	}
	return setBytes(f, i, idx, layout.ElemBytes(v, a.ByteOrder()))
}

// setBytes is Set of b, one element in the record's byte order.
func setBytes(f File, i int, idx []int64, b []byte) error {
	p, reg, err := settable(f, i)
	if reg == nil {
		if bs, ok := f.(BytesSetter); ok {
			return bs.SetBytes(i, idx, b)
		}
		return err
	}
	a := &p.Array
	if !reg.Writable() {
		return p.wrap(a.Offset, fmt.Errorf("%w (open it read-write)", mmapfile.ErrNotWritable))
	}
	if err := layout.CheckIndex("", a.Shape, idx); err != nil {
		return p.wrap(a.Offset, IndexError(err))
	}
	linear, _ := layout.Index(a.Shape, a.Order, idx...)
	if a.Type == layout.Bool && b[0] > 1 {
		return p.wrap(a.Offset, fmt.Errorf("bool byte 0x%02x: %w", b[0], mmapfile.ErrInvalidBool))
	}
	if p.Writing != nil {
		if err := p.Writing(); err != nil {
			return err
		}
	}
	at := linear * int64(len(b))
	if _, err := reg.WriteAt(b, p.Off+at); err != nil {
		return p.wrapAt(a.Offset+at, err)
	}
	return nil
}

// settable returns the payload of record i of f and the mapping it is one
// run of bytes in, or a nil mapping and why there is none.
func settable(f File, i int) (*Payload, *mmapfile.Region, error) {
	pf, ok := f.(Payloader)
	if !ok {
		return nil, nil, fmt.Errorf("%s file: record %d: the format hands out no payloads: %w: %w", f.Format(), i, mmapfile.ErrNotWritable, errors.ErrUnsupported)
	}
	p, err := pf.Payload(i)
	if err != nil {
		return nil, nil, err
	}
	reg, ok := p.Data.(*mmapfile.Region)
	if !ok || p.NoView != nil {
		return nil, nil, p.wrap(p.Array.Offset, fmt.Errorf("the values are not one mapped run of bytes: %w: %w", mmapfile.ErrNotWritable, errors.ErrUnsupported))
	}
	return p, reg, nil
}
