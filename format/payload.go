package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Payload is an array stored as one contiguous run of bytes: what a
// Payloader hands out, and what View, Set and ReadArray use. It reads the
// array, in its storage order and byte order, in whatever order and byte
// order the caller asks for. It is the ReadArray of every format whose arrays are
// contiguous; formats that store arrays otherwise (chunks, sparse blocks,
// strided fields) implement ReadArray themselves.
//
// Reading in the other order transposes bands of whole target rows in
// cache-sized tiles, straight from the mapping when Data is a
// *mmapfile.Region (one pass, on every core, each part guarded against
// faults), else from runs read with ReadAt. A Payload may be used from
// several goroutines.
type Payload struct {
	// Array describes the payload: type, logical shape, storage order and
	// byte order. Offset is only used to name file offsets in errors.
	Array layout.Array
	// Data holds the payload at Off: a mapped region for the fast path,
	// or any io.ReaderAt.
	Data io.ReaderAt
	Off  int64
	// Lenient reads bool bytes other than 0 and 1 as true; otherwise they
	// are an error wrapping mmapfile.ErrInvalidBool.
	Lenient bool
	// Wrap, if set, turns an error about file offset off into the
	// format's own error, which names the file and the record (the error
	// it is given names neither).
	Wrap func(off int64, err error) error
	// NoView, if set, is why the payload's bytes cannot be aliased
	// although they can be read (a compressed member, a text value): the
	// format's error, naming the copying call. View and Set return it.
	NoView error
	// Check, if set, is called before every copying read (ReadArray), not
	// before a view: a check of the payload's bytes that copies make and
	// views skip, such as an archive member's checksum. It should do its
	// work once and return the same result after.
	Check func() error
	// Writing, if set, is called before the payload's bytes may change:
	// a view of a writable file handed out, an element set (an .npz
	// member's checksum is then rewritten at Close).
	Writing func() error

	mu       sync.Mutex
	band     []byte // rows [bandRow, bandRow+bandRows) in target order
	bandRow  int64
	bandRows int64
	bandFor  layout.Order
	runsMu   sync.Mutex
	runs     []byte

	dropMu         sync.Mutex
	dropLo, dropHi int64 // mapped range touched since the last drop
}

// dropBytes is how much of a mapping a sequential reader touches before the
// pages behind it are dropped (madvise DONTNEED).
const dropBytes = 16 << 20

// sequential reports whether reg's file was opened for a reader that goes
// through it once (sequential advice, as a printer does): such a reader
// keeps a small resident set. Its contiguous reads drop the pages behind
// them, and its transposed reads use pread instead of the mapping, since
// a strided pass over a mapping faults in (with the kernel's fault-around)
// nearly every page of the payload at once.
func sequential(reg *mmapfile.Region) bool {
	return reg.File() != nil && reg.File().Advice() == mmapfile.AdviceSequential
}

// touched records that region bytes [lo, hi) were read by a sequential
// reader, and drops the pages once there are dropBytes of them; the page
// cache keeps them.
func (p *Payload) touched(reg *mmapfile.Region, lo, hi int64) {
	p.dropMu.Lock()
	defer p.dropMu.Unlock()
	if p.dropHi == 0 {
		p.dropLo, p.dropHi = lo, hi
	} else {
		p.dropLo, p.dropHi = min(p.dropLo, lo), max(p.dropHi, hi)
	}
	if p.dropHi-p.dropLo >= dropBytes {
		_ = reg.AdviseRange(p.dropLo, p.dropHi-p.dropLo, mmapfile.AdviceDontNeed)
		p.dropLo, p.dropHi = 0, 0
	}
}

// preadAt reads a region's bytes with pread, not through the mapping.
type preadAt struct{ reg *mmapfile.Region }

func (r preadAt) ReadAt(b []byte, off int64) (int, error) {
	return r.reg.File().ReadAt(b, r.reg.Offset()+off)
}

// bandBytes bounds one band of a transposed read: large enough that each
// run read from the file is long, small enough to stay in the caches of
// the transposing cores.
const bandBytes = 8 << 20

// wrap hands an error about the payload at file offset off to Wrap, which
// names the file and the record; without Wrap, the error names the array.
func (p *Payload) wrap(off int64, err error) error {
	if p.Wrap != nil {
		return p.Wrap(off, err)
	}
	return fmt.Errorf("array %q: %w", p.Array.Name, err)
}

// ReadArray copies elements [first, first+len(dst)/size) in order and byte
// order bo into dst; see Source.ReadArray.
func (p *Payload) ReadArray(dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if p.Check != nil {
		if err := p.Check(); err != nil {
			return err
		}
	}
	a := &p.Array
	size := int64(a.Type.Size())
	if size == 0 || int64(len(dst))%size != 0 {
		return p.wrap(a.Offset, fmt.Errorf("%d bytes is not a whole number of %s elements", len(dst), a.Type))
	}
	n := int64(len(dst)) / size
	count, err := layout.Count(a.Shape)
	if err != nil {
		return p.wrap(a.Offset, err)
	}
	if end, ok := layout.Add(first, n); first < 0 || !ok || end > count {
		return p.wrap(a.Offset, fmt.Errorf("elements [%d, %d+%d) outside [0, %d): %w", first, first, n, count, mmapfile.ErrOutOfRange))
	}
	if n == 0 {
		return nil
	}
	if order == a.Order || layout.Trivial(a.Shape) {
		if err := p.readRun(dst, first*size); err != nil {
			return err
		}
	} else if err := p.readOther(dst, first, n, order); err != nil {
		return err
	}
	layout.SwapOrder(dst, a.Type, a.ByteOrder(), bo)
	if a.Type == layout.Bool {
		if bad := layout.CheckBools(dst, a.Type, p.Lenient); bad >= 0 {
			k := first + int64(bad)
			return p.wrap(a.Offset+storagePos(a.Shape, order, a.Order, k), fmt.Errorf("element %d (%s order): byte 0x%02x: %w", k, order, dst[bad], mmapfile.ErrInvalidBool))
		}
	}
	return nil
}

// storagePos is the position in storage order (stored) of element k of
// an array of shape listed in order: where a bad element of a read sits.
func storagePos(shape []int64, order, stored layout.Order, k int64) int64 {
	if order == stored || layout.Trivial(shape) {
		return k
	}
	idx := make([]int64, len(shape))
	for j := range shape {
		ax := len(shape) - 1 - j // the axis that varies j-th fastest
		if order == layout.ColMajor {
			ax = j
		}
		idx[ax] = k % shape[ax]
		k /= shape[ax]
	}
	pos, _ := layout.Index(shape, stored, idx...)
	return pos
}

// readRun copies payload bytes [off, off+len(dst)).
func (p *Payload) readRun(dst []byte, off int64) error {
	return p.readRunFrom(p.Data, dst, off)
}

func (p *Payload) readRunFrom(data io.ReaderAt, dst []byte, off int64) error {
	n, err := data.ReadAt(dst, p.Off+off)
	if reg, ok := data.(*mmapfile.Region); ok && n > 0 && sequential(reg) {
		p.touched(reg, p.Off+off, p.Off+off+int64(n))
	}
	if err == nil && n < len(dst) {
		err = io.ErrUnexpectedEOF
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return p.wrap(p.Array.Offset+off+int64(n), fmt.Errorf("payload cut short: %w", mmapfile.ErrTruncated))
	}
	if err != nil {
		return p.wrapAt(p.Array.Offset+off, err)
	}
	return nil
}

// geometry returns q, the shape in the target order's row-major terms (the
// logical shape for a row-major target, reversed for a column-major one):
// the target is row-major over q and the storage row-major over q
// reversed, so a target row (fixed q[0] index) is, in storage, one element
// of every run of q[0] consecutive elements.
func geometry(shape []int64, target layout.Order) []int64 {
	q := append([]int64(nil), shape...)
	if target == layout.ColMajor {
		for i, j := 0, len(q)-1; i < j; i, j = i+1, j-1 {
			q[i], q[j] = q[j], q[i]
		}
	}
	return q
}

// readOther fills dst with target elements [first, first+n) when the target
// order is not the storage order.
func (p *Payload) readOther(dst []byte, first, n int64, order layout.Order) error {
	size := int64(p.Array.Type.Size())
	q := geometry(p.Array.Shape, order)
	q0 := q[0]
	var rowElems int64 = 1
	for _, d := range q[1:] {
		rowElems *= d
	}
	rowBytes := rowElems * size
	if rowBytes > bandBytes {
		// A single target row is larger than a band: gather it element
		// by element. Rare (a huge array with a short first axis).
		return p.gather(dst, first, n, q)
	}
	pos, end := first, first+n
	// Whole target rows at the start of dst go straight from the file to
	// dst (the conversions' path: one pass, no copy): from a mapping in
	// bands, from a file read in blocks.
	if reg, ok := p.Data.(*mmapfile.Region); (!ok || sequential(reg)) && pos%rowElems == 0 && end-pos >= rowElems {
		whole := (end - pos) / rowElems * rowElems
		if err := p.copyFrom(dst[:whole*size], q, pos, pos+whole); err != nil {
			return err
		}
		pos += whole
	}
	if pos%rowElems == 0 {
		r := pos / rowElems
		whole := (end - pos) / rowElems
		for whole > 0 {
			b := min(whole, max(1, bandBytes/rowBytes))
			out := dst[(pos-first)*size : (pos-first+b*rowElems)*size]
			if err := p.transposeRows(out, q, r, b); err != nil {
				return err
			}
			pos += b * rowElems
			r += b
			whole -= b
		}
	}
	// Partial rows (printing reads small pieces): through a cached band.
	p.mu.Lock()
	defer p.mu.Unlock()
	for pos < end {
		r := pos / rowElems
		if p.band == nil || p.bandFor != order || r < p.bandRow || r >= p.bandRow+p.bandRows {
			b := min(q0-r, max(1, bandBytes/rowBytes))
			need := b * rowBytes
			if int64(cap(p.band)) < need {
				p.band = unsafeslice.AlignedBytes(need)
			}
			p.band = p.band[:need]
			if err := p.transposeRows(p.band, q, r, b); err != nil {
				p.band = nil
				return err
			}
			p.bandRow, p.bandRows, p.bandFor = r, b, order
		}
		off := (pos - p.bandRow*rowElems) * size
		m := min(int64(len(p.band))-off, (end-pos)*size)
		copy(dst[(pos-first)*size:], p.band[off:off+m])
		pos += m / size
	}
	return nil
}

// transposeRows writes target rows [r, r+b) into out (b·rowElems elements).
// In storage those rows are, for every rest index, the run of b elements
// at q[0]-strided positions; out is the axis reversal of that (rest…, b)
// block.
func (p *Payload) transposeRows(out []byte, q []int64, r, b int64) error {
	size := int64(p.Array.Type.Size())
	k := len(q)
	// The source block, row-major over (q[k-1], …, q[1], b) with its last
	// axis q[0] long in storage.
	src := make([]int64, k)
	for i := 0; i < k-1; i++ {
		src[i] = q[k-1-i]
	}
	src[k-1] = b
	var rest int64 = 1
	for _, d := range q[1:] {
		rest *= d
	}
	q0 := q[0]
	data := p.Data
	if reg, ok := p.Data.(*mmapfile.Region); ok && sequential(reg) {
		data = preadAt{reg}
	} else if ok {
		data := reg.Bytes()
		lo := p.Off + r*size
		hi := p.Off + ((rest-1)*q0+r+b)*size
		if data == nil || lo < 0 || hi > int64(len(data)) {
			return p.wrap(p.Array.Offset+r*size, fmt.Errorf("payload outside the mapping: %w", mmapfile.ErrTruncated))
		}
		view := data[lo:hi]
		if err := layout.Split(src[0], layout.TileRows(int(size)), b*rest*size, func(r0, r1 int64) error {
			return reg.Guard(func() { layout.ReverseAxesRows(out, view, int(size), src, q0, r0, r1) })
		}); err != nil {
			return err
		}
		return p.inFile(reg, lo, hi)
	}
	// Any ReaderAt: read the runs into a compact block, then reverse.
	need := b * rest * size
	p.runsMu.Lock()
	defer p.runsMu.Unlock()
	if int64(cap(p.runs)) < need {
		p.runs = unsafeslice.AlignedBytes(need)
	}
	runs := p.runs[:need]
	if b == q0 {
		if err := p.readRunFrom(data, runs, 0); err != nil {
			return err
		}
	} else {
		for j := int64(0); j < rest; j++ {
			if err := p.readRunFrom(data, runs[j*b*size:(j+1)*b*size], (j*q0+r)*size); err != nil {
				return err
			}
		}
	}
	layout.ReverseAxes(out, runs, int(size), src)
	return nil
}

// gather copies target elements [first, first+n) when one target row
// exceeds a band: each box of the range one strided copy, straight from a
// mapping, else from Data read in blocks.
func (p *Payload) gather(dst []byte, first, n int64, q []int64) error {
	if reg, ok := p.Data.(*mmapfile.Region); ok && !sequential(reg) {
		// Storage is row-major over reverse(q).
		return p.gatherMapped(reg, dst, first, n, q, layout.Strides(q, layout.ColMajor))
	}
	return p.copyFrom(dst, q, first, first+n)
}

// copyFrom copies target elements [lo, hi) into dst from Data read in
// blocks of at most bandBytes, not through a mapping: each box of the
// range one strided copy.
func (p *Payload) copyFrom(dst []byte, q []int64, lo, hi int64) error {
	size := int64(p.Array.Type.Size())
	data := p.Data
	if reg, ok := data.(*mmapfile.Region); ok {
		data = preadAt{reg}
	}
	stride := layout.Strides(q, layout.ColMajor)
	target := layout.Strides(q, layout.RowMajor)
	count, _ := layout.Count(q)
	p.runsMu.Lock()
	defer p.runsMu.Unlock()
	if need := min(bandBytes, count*size); int64(cap(p.runs)) < need {
		p.runs = unsafeslice.AlignedBytes(need)
	}
	buf := p.runs[:cap(p.runs)]
	read := func(b []byte, off int64) error { return p.readRunFrom(data, b, off) }
	var c layout.StridedCopy
	return layout.LinearBoxes(q, lo, hi, func(start, count []int64) error {
		var s0, d0 int64
		for i := range start {
			s0 += start[i] * stride[i]
			d0 += start[i] * target[i]
		}
		c.Plan(count, stride, target, int(size))
		return c.CopyFrom(dst, d0-lo, s0, buf, read)
	})
}

// gatherMapped is gather from a mapping: the target range cut into boxes,
// each one strided copy from the storage (stride) into the row-major
// target.
func (p *Payload) gatherMapped(reg *mmapfile.Region, dst []byte, first, n int64, q, stride []int64) error {
	size := int64(p.Array.Type.Size())
	data := reg.Bytes()
	if p.Off < 0 || p.Off > int64(len(data)) {
		return p.wrap(p.Array.Offset, fmt.Errorf("payload outside the mapping: %w", mmapfile.ErrTruncated))
	}
	src := data[p.Off:]
	target := layout.Strides(q, layout.RowMajor)
	var c layout.StridedCopy
	bad := int64(-1)
	lo, hi := int64(len(src)), int64(0)
	err := reg.Guard(func() {
		_ = layout.LinearBoxes(q, first, first+n, func(start, count []int64) error {
			var s0, d0, last int64
			for i := range start {
				s0 += start[i] * stride[i]
				d0 += start[i] * target[i]
				last += (count[i] - 1) * stride[i]
			}
			if (s0+last+1)*size > int64(len(src)) {
				bad = s0
				return mmapfile.ErrTruncated
			}
			c.Plan(count, stride, target, int(size))
			c.Copy(dst, d0-first, src, s0)
			lo, hi = min(lo, s0*size), max(hi, (s0+last+1)*size)
			return nil
		})
	})
	if err != nil {
		return err
	}
	if bad >= 0 {
		return p.wrap(p.Array.Offset+bad*size, fmt.Errorf("payload outside the mapping: %w", mmapfile.ErrTruncated))
	}
	return p.inFile(reg, p.Off+lo, p.Off+hi)
}

// inFile checks, after a read straight from the mapping, that region
// bytes [lo, hi) are still in the file: a file truncated under the mapping
// reads as zeros in the page its end falls in, instead of faulting.
func (p *Payload) inFile(reg *mmapfile.Region, lo, hi int64) error {
	if hi <= lo {
		return nil
	}
	if err := reg.InFile(lo, hi-lo); err != nil {
		return p.wrapAt(p.Array.Offset+lo-p.Off, err)
	}
	return nil
}

// wrapAt wraps an error of reading the payload at file offset off, or at
// the offset an mmapfile error names (where a truncated file now ends).
func (p *Payload) wrapAt(off int64, err error) error {
	var me *mmapfile.Error
	if errors.As(err, &me) && me.Offset >= 0 {
		off = me.Offset
	}
	return p.wrap(off, err)
}
