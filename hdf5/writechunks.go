package hdf5

import (
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/hdf5/internal/h5"
	"github.com/mmapkit/mmapkit/internal/parallel"
	"github.com/mmapkit/mmapkit/layout"
)

// This file is the writer's chunked storage: --chunks and --compress.

// writeOptions are the writer's parameters.
type writeOptions struct {
	chunks  []int64 // the chunk shape asked for
	chunked bool    // chunked storage: --chunks or --compress given
	level   int     // deflate's level, -1 for no filters
	// holes: contiguous data are left unwritten (Create), the file's
	// holes reading as zero.
	holes bool
	// nc: netCDF-4 output, its dimensions.
	nc *ncState
}

// defaultGzipLevel is gzip's level where --compress gzip names none, as
// h5py's compression="gzip" does.
const defaultGzipLevel = 4

// chunkTarget is the size of the chunks chosen from the shape: h5py's
// largest automatic chunk, small enough that a read of a few elements
// decodes little, large enough that deflate compresses well.
const chunkTarget = 1 << 20

// bandTarget is how much of a dataset is read from the source at a time
// to be cut into chunks; a variable so that tests can cut small bands.
var bandTarget int64 = 32 << 20

// writeParams reads the parameters chunks and compress.
func writeParams(p map[string]string) (*writeOptions, error) {
	wo := &writeOptions{level: -1}
	var err error
	if wo.chunks, err = layout.ParseShape("chunks", p["chunks"]); err != nil {
		return nil, err
	}
	switch c := p["compress"]; {
	case c == "" || c == "none":
	case c == "gzip":
		wo.level = defaultGzipLevel
	case strings.HasPrefix(c, "gzip:"):
		l, err := strconv.Atoi(c[len("gzip:"):])
		if err != nil || l < 0 || l > 9 {
			return nil, fmt.Errorf("compress %q: gzip's level is 0 to 9", c)
		}
		wo.level = l
	default:
		return nil, fmt.Errorf("compress %q: HDF5 is written with none or gzip[:LEVEL]", c)
	}
	wo.chunked = wo.chunks != nil || wo.level >= 0
	return wo, nil
}

// plan sizes the dataset of record r and chooses its storage: chunked
// where asked for, except a scalar or empty dataset, which is contiguous.
func (n *wnode) plan(r format.Record, wo *writeOptions) error {
	if n.text {
		// Text is contiguous: a variable-length string's bytes are in
		// the global heap, which no filter compresses.
		n.elemSize = vlenSize
		if !n.vlen {
			tt, _ := format.TextTypeOf(&r)
			n.elemSize = tt.Size
		}
		count, err := layout.Count(r.Shape)
		if err != nil {
			return fmt.Errorf("%s: %w", format.Describe(&r), err)
		}
		var ok bool
		if n.nbytes, ok = layout.Mul(count, int64(n.elemSize)); !ok {
			return fmt.Errorf("%s: %d elements of %d bytes overflow a file offset", format.Describe(&r), count, n.elemSize)
		}
		return nil
	}
	nb, err := layout.ByteSize(r.Type, r.Shape)
	if err != nil {
		return fmt.Errorf("%s: %w", format.Describe(&r), err)
	}
	n.nbytes, n.elemSize = nb, r.Type.Size()
	if !wo.chunked || len(r.Shape) == 0 || nb == 0 {
		return nil
	}
	c := wo.chunks
	if c == nil {
		c = layout.ChooseChunks(r.Shape, layout.RowMajor, n.elemSize, chunkTarget)
	}
	if len(c) != len(r.Shape) {
		return format.Unrepresentable(&r, fmt.Sprintf("chunks %v have %d axes, and the array %d", c, len(c), len(r.Shape)))
	}
	n.chunks = make([]int64, len(c))
	grid := make([]int64, len(c))
	for i := range c {
		n.chunks[i] = min(c[i], r.Shape[i]) // libhdf5 takes no chunk larger than a fixed dimension
		grid[i] = (r.Shape[i] + n.chunks[i] - 1) / n.chunks[i]
	}
	if cb, err := layout.ByteSize(r.Type, n.chunks); err != nil || cb > 1<<32-1 {
		return format.Unrepresentable(&r, fmt.Sprintf("chunks %v hold more than the 4 GiB an HDF5 chunk can", n.chunks))
	}
	if n.nchunks, err = layout.Count(grid); err != nil {
		return fmt.Errorf("%s: chunks %v: %w", format.Describe(&r), n.chunks, err)
	}
	n.level = wo.level
	return nil
}

// appendShuffleDeflate appends a version 2 filter pipeline message:
// shuffle of elements of size bytes, then deflate at level, both optional
// as h5py marks them.
func appendShuffleDeflate(b []byte, size, level int) []byte {
	b = append(b, 2, 2)
	for _, f := range [][2]int{{h5.FilterShuffle, size}, {h5.FilterDeflate, level}} {
		b = binary.LittleEndian.AppendUint16(b, uint16(f[0]))
		b = binary.LittleEndian.AppendUint16(b, 1) // optional
		b = binary.LittleEndian.AppendUint16(b, 1) // one client data value
		b = binary.LittleEndian.AppendUint32(b, uint32(f[1]))
	}
	return b
}

// writeChunks writes the dataset's chunks from address at on, in row-major
// order of the chunk grid, and returns the address after the last. The
// source is read a band of whole chunk rows at a time; the band's chunks
// are cut out and encoded in parallel, one worker per core, and written in
// order. Unfiltered chunks start at aligned addresses, so that each maps.
func (n *wnode) writeChunks(w io.WriterAt, src format.Source, bo binary.ByteOrder, at int64) (int64, error) {
	rank := len(n.shape)
	size := int64(n.elemSize)
	grid := make([]int64, rank)
	for i := range grid {
		grid[i] = (n.shape[i] + n.chunks[i] - 1) / n.chunks[i]
	}
	rowElems, _ := layout.Count(n.shape[1:])                   // within nbytes
	perRow, _ := layout.Count(grid[1:])                        // within nchunks
	chunkElems, _ := layout.Count(n.chunks)                    // within 4 GiB
	bandRows := max(1, bandTarget/(n.chunks[0]*rowElems*size)) // chunk rows per band
	band := make([]byte, min(bandRows*n.chunks[0], n.shape[0])*rowElems*size)
	workers := runtime.GOMAXPROCS(0)
	type worker struct {
		buf    []byte
		enc    *h5.ChunkEncoder
		copier layout.StridedCopy
	}
	ws := make([]worker, workers)
	for k := range ws {
		ws[k].buf = make([]byte, chunkElems*size)
		if n.level >= 0 {
			enc, err := h5.NewChunkEncoder(n.elemSize, n.level)
			if err != nil {
				return 0, err
			}
			ws[k].enc = enc
		}
	}
	n.entries = make([]h5.ChunkEntry, 0, n.nchunks)
	for g0 := int64(0); g0 < grid[0]; g0 += bandRows {
		r0, r1 := g0*n.chunks[0], min(n.shape[0], (g0+bandRows)*n.chunks[0])
		b := band[:(r1-r0)*rowElems*size]
		if err := src.ReadArray(n.rec, b, r0*rowElems, layout.RowMajor, bo); err != nil {
			return 0, err
		}
		bandDims := append([]int64{r1 - r0}, n.shape[1:]...)
		count := (min(g0+bandRows, grid[0]) - g0) * perRow
		outs := make([][]byte, count)
		offsets := make([][]int64, count)
		free := make(chan *worker, len(ws))
		for k := range ws {
			free <- &ws[k]
		}
		err := parallel.Do(int(count), len(ws), func() *worker { return <-free }, func(wk *worker) { free <- wk },
			func(wk *worker, jj int) error {
				j := int64(jj)
				// The chunk's grid position, and where it starts in the band.
				origin := make([]int64, rank)
				rest := j % perRow
				for i := rank - 1; i >= 1; i-- {
					origin[i] = rest % grid[i] * n.chunks[i]
					rest /= grid[i]
				}
				origin[0] = (j / perRow) * n.chunks[0]
				clear(wk.buf)
				gather(&wk.copier, wk.buf, b, bandDims, n.chunks, origin, size)
				off := append([]int64{origin[0] + r0}, origin[1:]...)
				offsets[j] = off
				if wk.enc == nil {
					outs[j] = append([]byte(nil), wk.buf...)
					return nil
				}
				e, err := wk.enc.Encode(wk.buf)
				if err != nil {
					return err
				}
				outs[j] = append([]byte(nil), e...)
				return nil
			})
		if err != nil {
			return 0, fmt.Errorf("dataset %s: deflate: %w", n.fullPath, err)
		}
		for j, out := range outs {
			if n.level < 0 {
				var err error
				if at, err = layout.AlignUp(at, dataAlign); err != nil {
					return 0, err
				}
			}
			if _, err := w.WriteAt(out, at); err != nil {
				return 0, err
			}
			n.entries = append(n.entries, h5.ChunkEntry{Offset: offsets[j], Size: uint32(len(out)), Addr: uint64(at)})
			at += int64(len(out))
		}
	}
	return at, nil
}

// gather copies into dst, a chunk of dims (row-major), the part of src, an
// array of srcDims, that the chunk placed at origin covers; what lies
// beyond src is left as it is.
func gather(c *layout.StridedCopy, dst, src []byte, srcDims, dims, origin []int64, size int64) {
	count := make([]int64, len(dims))
	srcStrides := layout.Strides(srcDims, layout.RowMajor)
	var s0 int64
	for i := range dims {
		count[i] = min(dims[i], srcDims[i]-origin[i])
		s0 += origin[i] * srcStrides[i]
	}
	c.Plan(count, srcStrides, layout.Strides(dims, layout.RowMajor), int(size))
	c.Copy(dst, 0, src, s0)
}
