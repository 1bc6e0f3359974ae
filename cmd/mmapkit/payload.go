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
}

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
// from a column-major payload of the given shape: an odometer over the
// row-major index keeps the column-major position up to date.
func (p *payload) readColMajor(dst []byte, first int64, shape []int64) error {
	if colMajorIsRowMajor(shape) {
		return p.readContiguous(dst, first)
	}
	r, err := p.mapped()
	if err != nil {
		return err
	}
	size := p.elemSize
	n := int64(len(dst)) / size
	idx, pos, strides := startOdometer(shape, first)
	src := r.Bytes()
	var gerr error
	ferr := r.Guard(func() {
		for k := int64(0); k < n; k++ {
			if pos < 0 || (pos+1)*size > int64(len(src)) {
				gerr = fmt.Errorf("element %d outside the payload", pos)
				return
			}
			copy(dst[k*size:(k+1)*size], src[pos*size:(pos+1)*size])
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
	p.dropBehind(n * size)
	return nil
}

// readBitsColMajor reads elements [first, first+n) of a column-major
// BitArray payload (64-bit words, element i at bit i&63 of word i>>6) in
// logical row-major order, one byte 0/1 per element.
func (p *payload) readBitsColMajor(dst []byte, first int64, shape []int64) error {
	r, err := p.mapped()
	if err != nil {
		return err
	}
	n := int64(len(dst))
	idx, pos, strides := startOdometer(shape, first)
	src := r.Bytes()
	var gerr error
	ferr := r.Guard(func() {
		for k := int64(0); k < n; k++ {
			b := pos >> 3
			if p.bigEndian {
				b = (pos>>6)*8 + 7 - (pos&63)>>3
			}
			if pos < 0 || b >= int64(len(src)) {
				gerr = fmt.Errorf("bit %d outside the payload", pos)
				return
			}
			dst[k] = (src[b] >> (pos & 7)) & 1
			pos = stepOdometer(shape, idx, strides, pos)
		}
	})
	if ferr != nil {
		return ferr
	}
	if gerr != nil {
		return gerr
	}
	p.dropBehind((n + 7) / 8)
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
