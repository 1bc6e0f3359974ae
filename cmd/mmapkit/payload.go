package main

import (
	"fmt"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// dropEvery is how many bytes a payload reader touches before it asks the
// kernel to drop the mapped pages (madvise DONTNEED), which keeps cat's
// resident set bounded whatever the file's size.
const dropEvery = 16 << 20

// payload reads one array payload of a file through its own read-only
// mapping, dropping pages behind it. Reads are guarded: a file truncated
// under the mapping gives an error, not a crash.
type payload struct {
	mf        *mmapfile.File
	off, size int64 // payload range in the file
	elemSize  int64
	bigEndian bool
	region    *mmapfile.Region
	touched   int64

	// The band cache of readColMajor: rows [bandRow, bandRow+bandRows) of
	// the first dimension, in logical row-major order.
	band              []byte
	bandRow, bandRows int64
	bandBuf           []byte
}

// bandLimit bounds the memory of one band of a column-major array.
const bandLimit = 4 << 20

// openPayloadFile opens a file read-only for payload readers; the caller
// closes it.
func openPayloadFile(path string) (*mmapfile.File, error) {
	return mmapfile.OpenFile(path, mmapfile.ReadOnly, &mmapfile.Options{Advice: mmapfile.AdviceSequential})
}

func (p *payload) mapped() (*mmapfile.Region, error) {
	if p.region == nil {
		r, err := p.mf.Map(p.off, p.size)
		if err != nil {
			return nil, err
		}
		p.region = r
	}
	return p.region, nil
}

// dropBehind releases touched pages once enough have accumulated.
func (p *payload) dropBehind(n int64) {
	p.touched += n
	if p.touched >= dropEvery && p.region != nil {
		_ = p.region.Advise(mmapfile.AdviceDontNeed)
		p.touched = 0
	}
}

// readContiguous copies payload bytes [first·size, …) into dst, in host
// order.
func (p *payload) readContiguous(dst []byte, first int64) error {
	r, err := p.mapped()
	if err != nil {
		return err
	}
	if _, err := r.ReadAt(dst, first*p.elemSize); err != nil {
		return err
	}
	if p.bigEndian {
		layout.SwapBytes(dst, int(p.elemSize))
	}
	p.dropBehind(int64(len(dst)))
	return nil
}

// readColMajor copies elements [first, first+n) in logical row-major order
// from a column-major payload of the given shape. With d0 the first
// dimension and R the product of the others, logical row i (all elements
// with first index i) is R elements, and a band of B rows is R runs of B
// contiguous elements in the file. Bands are read with pread (no mapped
// pages, so no resident set) and transposed in memory; a band holds at most
// bandLimit bytes. Arrays whose single row exceeds that are gathered from
// the mapping instead, dropping pages as they go.
func (p *payload) readColMajor(dst []byte, first int64, shape []int64) error {
	if colMajorIsRowMajor(shape) {
		return p.readContiguous(dst, first)
	}
	size := p.elemSize
	if first == 0 && int64(len(dst)) == p.size {
		// The whole array (convert): one read, one transpose.
		col := alignedBytes(p.size)
		if err := p.readContiguous(col, 0); err != nil {
			return err
		}
		return reorderBytes(dst, col, shape, int(size), layout.ColMajor)
	}
	d0 := shape[0]
	rowElems := int64(1)
	for _, d := range shape[1:] {
		rowElems *= d
	}
	if rowElems*size > bandLimit {
		return p.gatherColMajor(dst, first, shape)
	}
	n := int64(len(dst)) / size
	for k := int64(0); k < n; {
		pos := first + k
		row := pos / rowElems
		if p.band == nil || row < p.bandRow || row >= p.bandRow+p.bandRows {
			if err := p.loadBand(row, d0, rowElems, shape); err != nil {
				return err
			}
		}
		off := (pos - p.bandRow*rowElems) * size
		m := min(int64(len(p.band))-off, (n-k)*size)
		copy(dst[k*size:k*size+m], p.band[off:off+m])
		k += m / size
	}
	return nil
}

// loadBand reads rows [row, row+B) of a column-major array into p.band in
// row-major order.
func (p *payload) loadBand(row, d0, rowElems int64, shape []int64) error {
	size := p.elemSize
	b := max(1, min(bandLimit/(rowElems*size), d0-row))
	need := b * rowElems * size
	if int64(cap(p.bandBuf)) < need {
		p.bandBuf = alignedBytes(need)
		p.band = alignedBytes(need)
	}
	runs := p.bandBuf[:need]
	if b == d0 {
		// The whole array: one read.
		if _, err := p.mf.ReadAt(runs, p.off); err != nil {
			return err
		}
	} else {
		for r := int64(0); r < rowElems; r++ {
			if _, err := p.mf.ReadAt(runs[r*b*size:(r+1)*b*size], p.off+(row+r*d0)*size); err != nil {
				return err
			}
		}
	}
	if p.bigEndian {
		layout.SwapBytes(runs, int(size))
	}
	// runs holds, for each rest index r (column-major over shape[1:]), the
	// band's b elements. Emit rows in order, the rest indexes row-major.
	out := p.band[:need]
	rest := shape[1:]
	k := int64(0)
	for i := int64(0); i < b; i++ {
		idx, r, strides := startOdometer(rest, 0)
		for j := int64(0); j < rowElems; j++ {
			copy(out[k*size:(k+1)*size], runs[(r*b+i)*size:(r*b+i+1)*size])
			k++
			r = stepOdometer(rest, idx, strides, r)
		}
	}
	p.band, p.bandRow, p.bandRows = out, row, b
	return nil
}

// gatherColMajor copies elements one by one from the mapping, following an
// odometer over the row-major index, and drops the mapped pages every
// dropEvery bytes of pages touched.
func (p *payload) gatherColMajor(dst []byte, first int64, shape []int64) error {
	r, err := p.mapped()
	if err != nil {
		return err
	}
	size := p.elemSize
	n := int64(len(dst)) / size
	idx, pos, strides := startOdometer(shape, first)
	src := r.Bytes()
	var gerr error
	lastPage := int64(-1)
	ferr := r.Guard(func() {
		for k := int64(0); k < n; k++ {
			if pos < 0 || (pos+1)*size > int64(len(src)) {
				gerr = fmt.Errorf("element %d outside the payload", pos)
				return
			}
			copy(dst[k*size:(k+1)*size], src[pos*size:(pos+1)*size])
			if pg := pos * size >> 12; pg != lastPage {
				lastPage = pg
				p.dropBehind(4096)
			}
			pos = stepOdometer(shape, idx, strides, pos)
		}
	})
	if ferr != nil {
		return ferr
	}
	if gerr != nil {
		return gerr
	}
	if p.bigEndian {
		layout.SwapBytes(dst, int(size))
	}
	return nil
}

// colMajorIsRowMajor reports whether both orders list the elements the same
// way: at most one dimension is larger than 1.
func colMajorIsRowMajor(shape []int64) bool {
	big := 0
	for _, d := range shape {
		if d > 1 {
			big++
		}
	}
	return big <= 1
}

// startOdometer returns the row-major index tuple of linear position first,
// its column-major position and the column-major strides.
func startOdometer(shape []int64, first int64) (idx []int64, pos int64, strides []int64) {
	rank := len(shape)
	idx = make([]int64, rank)
	strides = make([]int64, rank)
	s := int64(1)
	for i := 0; i < rank; i++ {
		strides[i] = s
		s *= shape[i]
	}
	rem := first
	for i := rank - 1; i >= 0; i-- {
		if shape[i] > 0 {
			idx[i] = rem % shape[i]
			rem /= shape[i]
		}
		pos += idx[i] * strides[i]
	}
	return idx, pos, strides
}

// stepOdometer advances the row-major index tuple by one (last dimension
// fastest) and returns the new column-major position.
func stepOdometer(shape, idx, strides []int64, pos int64) int64 {
	for i := len(shape) - 1; i >= 0; i-- {
		idx[i]++
		pos += strides[i]
		if idx[i] < shape[i] {
			return pos
		}
		pos -= idx[i] * strides[i]
		idx[i] = 0
	}
	return pos
}

// reorderBytes copies src, elements of size bytes stored in order from with
// the logical shape, into dst in the other order.
func reorderBytes(dst, src []byte, shape []int64, size int, from layout.Order) error {
	switch size {
	case 1:
		return layout.Reorder(castBytes[[1]byte](dst), castBytes[[1]byte](src), shape, from)
	case 2:
		return layout.Reorder(castBytes[[2]byte](dst), castBytes[[2]byte](src), shape, from)
	case 4:
		return layout.Reorder(castBytes[[4]byte](dst), castBytes[[4]byte](src), shape, from)
	case 8:
		return layout.Reorder(castBytes[[8]byte](dst), castBytes[[8]byte](src), shape, from)
	case 16:
		return layout.Reorder(castBytes[[16]byte](dst), castBytes[[16]byte](src), shape, from)
	}
	return fmt.Errorf("element size %d", size)
}
