package zarr

import (
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/parallel"
	"github.com/mmapkit/mmapkit/layout"
)

// writeData writes the chunk files of array i: pulled from src in its
// storage order one row of chunks (of shards) at a time, each row cut
// into chunks that are encoded and written on every core.
func (w *writer) writeData(m *meta, src format.Source, i int) error {
	k := len(m.shape)
	size := int64(m.dt.typ.Size())
	n, _ := layout.Count(m.shape)
	if n == 0 {
		return nil
	}
	order := layout.RowMajor
	if !m.rowMajor() {
		order = layout.ColMajor
	}
	if k == 0 {
		buf := make([]byte, size)
		if err := src.ReadArray(i, buf, 0, order, m.byteOrder()); err != nil {
			return err
		}
		enc, err := encodeChain(m.chain, nil, buf)
		if err != nil {
			return err
		}
		return w.st.write(m.chunkKey(nil), enc)
	}
	// Storage space: the shape, grid and units with axes in storage
	// order, slowest first; there every unit is a C-order block.
	q, qg, qu := permute(m.shape, m.perm), permute(m.grid, m.perm), permute(m.unit, m.perm)
	if m.shard == nil && len(m.chain) == 0 && slices.Equal(qu[1:], q[1:]) {
		return w.writeRuns(m, src, i, order, q, qu)
	}
	return w.writeBoxes(m, src, i, order, q, qg, qu)
}

// writeBudget bounds the bytes of a source's array that the writer holds
// at once (the slab cut into chunks), and, apart, the chunks being encoded
// from it, whatever the array's shape. A single chunk (shard) larger than
// it is held whole, one at a time.
var writeBudget int64 = 32 << 20 // a variable so that tests can lower it

// writeBoxes writes the chunk files (shards) of array i a slab at a time:
// a box of the array in storage space, cut along grid lines, at most
// writeBudget bytes (or one chunk, where a chunk is larger), read from src
// run by run and cut into chunks that are encoded and written on every
// core. The boxes are whole along the fastest axes that fit: an array
// whose rows of chunks fit is read from its first element to its last.
func (w *writer) writeBoxes(m *meta, src format.Source, i int, order layout.Order, q, qg, qu []int64) error {
	k := len(q)
	size := int64(m.dt.typ.Size())
	ext := make([]int64, k) // a grid unit's extent along each axis, clipped to the array
	for j := range k {
		ext[j] = min(qg[j], q[j])
	}
	// The slab: one grid unit along axes [0, j), band units along j,
	// whole along the rest.
	j, band := k-1, int64(1)
	for a := range k {
		b := size
		for x := range k {
			switch {
			case x <= a:
				b *= ext[x]
			default:
				b *= q[x]
			}
		}
		if b <= writeBudget {
			j, band = a, max(1, writeBudget/b)
			break
		}
	}
	box := make([]int64, k) // the slab's extent, before clipping at the edge
	slabBytes := size
	for x := range k {
		switch {
		case x < j:
			box[x] = ext[x]
		case x == j:
			box[x] = min(band, ceilDiv(q[x], qg[x])) * qg[x]
		default:
			box[x] = q[x]
		}
		slabBytes *= min(box[x], q[x])
	}
	slab := grow(nil, slabBytes)
	ub := m.unitBytes()
	if m.shard != nil {
		ub, _ = layout.ByteSize(m.dt.typ, m.grid)
	}
	// Each worker holds a chunk (shard) and its encoding.
	workers := min(int64(runtime.GOMAXPROCS(0)), max(1, writeBudget/(2*ub)))
	qstr := layout.Strides(q, layout.RowMajor)
	org, cnt := make([]int64, k), make([]int64, k)
	for {
		for x := range k {
			cnt[x] = min(box[x], q[x]-org[x])
		}
		// Runs of the source: whole along the axes past j.
		run := cnt[j] * qstr[j]
		runs := int64(1)
		for x := range j {
			runs *= cnt[x]
		}
		r := make([]int64, j)
		for n := int64(0); n < runs; n++ {
			first := org[j] * qstr[j]
			for x := range j {
				first += (org[x] + r[x]) * qstr[x]
			}
			if err := src.ReadArray(i, slab[n*run*size:(n+1)*run*size], first, order, m.byteOrder()); err != nil {
				return err
			}
			for x := j - 1; x >= 0; x-- {
				if r[x]++; r[x] < cnt[x] {
					break
				}
				r[x] = 0
			}
		}
		if err := w.flushBox(m, q, qg, qu, slab[:runs*run*size], org, cnt, workers); err != nil {
			return err
		}
		// The next box, in C order over the axes [0, j].
		x := j
		for ; x >= 0; x-- {
			if org[x] += box[x]; org[x] < q[x] {
				break
			}
			org[x] = 0
		}
		if x < 0 {
			return nil
		}
	}
}

// writeRuns writes the chunk files of array i when each chunk is one run
// of the array in storage order (raw chunks that are whole along every
// axis but the slowest of that order): the source's bytes go straight
// from the stream to the chunk files, with no copy, and the last chunk is
// padded with the fill value.
func (w *writer) writeRuns(m *meta, src format.Source, i int, order layout.Order, q, qu []int64) error {
	ub := m.unitBytes()
	var f *os.File
	var at, c int64 // bytes in the chunk file, chunk index along the slowest axis
	key := func() string {
		sg := make([]int64, len(q))
		sg[0] = c
		lg := make([]int64, len(q))
		for j, p := range m.perm {
			lg[p] = sg[j]
		}
		return m.chunkKey(lg)
	}
	put := func(b []byte) error {
		if f == nil {
			var err error
			if f, err = w.st.create(key()); err != nil {
				return err
			}
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			f = nil
			return err
		}
		if at += int64(len(b)); at == ub {
			err := w.st.written(f, ub)
			f, at = nil, 0
			c++
			return err
		}
		return nil
	}
	err := format.Stream(src, i, order, m.byteOrder(), func(b []byte) error {
		for len(b) > 0 {
			n := min(int64(len(b)), ub-at)
			if err := put(b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	})
	if err == nil && f != nil { // the edge chunk: pad it
		pad := make([]byte, ub-at)
		for j := 0; j < len(pad); j += len(m.fill) {
			copy(pad[j:], m.fill)
		}
		return put(pad)
	}
	if f != nil {
		f.Close()
	}
	return err
}

func permute(x []int64, perm []int) []int64 {
	out := make([]int64, len(x))
	for j, p := range perm {
		out[j] = x[p]
	}
	return out
}

// flushBox writes the chunks (shards) whose elements the slab holds: the
// box of storage space at org of extent cnt, C order, cut along grid
// lines, on up to workers goroutines.
func (w *writer) flushBox(m *meta, q, qg, qu []int64, slab []byte, org, cnt []int64, workers int64) error {
	k := len(q)
	size := m.dt.typ.Size()
	G := make([]int64, k) // grid units of the box
	total := int64(1)
	for j := range k {
		G[j] = ceilDiv(cnt[j], qg[j])
		total *= G[j]
	}
	sstr := layout.Strides(cnt, layout.RowMajor)
	ustr := layout.Strides(qu, layout.RowMajor)
	// unit copies the unit of storage-space start us into buf, padded
	// with the fill value.
	unit := func(us []int64, buf []byte) {
		c := make([]int64, k)
		edge := false
		var soff int64
		for j := range k {
			c[j] = min(qu[j], q[j]-us[j])
			edge = edge || c[j] < qu[j]
			soff += (us[j] - org[j]) * sstr[j]
		}
		if edge {
			p := layout.NewStridedCopy(qu, ustr, ustr, size)
			p.Fill(buf, 0, m.fill)
		}
		p := layout.NewStridedCopy(c, sstr, ustr, size)
		p.Copy(buf, 0, slab, soff)
	}
	logical := func(sg []int64) []int64 {
		lg := make([]int64, k)
		for j, p := range m.perm {
			lg[p] = sg[j]
		}
		return lg
	}
	return withWorkers(total, workers, &w.bufs, func(jj int64, wk *worker) error {
		sg := make([]int64, k)
		for j := k - 1; j >= 0; j-- {
			sg[j] = org[j]/qg[j] + jj%G[j]
			jj /= G[j]
		}
		key := m.chunkKey(logical(sg))
		ub := m.unitBytes()
		wk.scratch = grow(wk.scratch, ub)
		us := make([]int64, k)
		if m.shard == nil {
			for j := range k {
				us[j] = sg[j] * qg[j]
			}
			unit(us, wk.scratch)
			if len(m.chain) == 0 {
				return w.st.write(key, wk.scratch)
			}
			enc, err := encodeChain(m.chain, wk.enc, wk.scratch)
			if err != nil {
				return err
			}
			wk.enc = enc
			return w.st.write(key, enc)
		}
		ps := permute(m.shard.perShard, m.perm)
		chunks := make([][]byte, m.shard.n)
		ip := make([]int64, k)
		for range m.shard.n {
			inside := true
			for j := range k {
				us[j] = sg[j]*qg[j] + ip[j]*qu[j]
				inside = inside && us[j] < q[j]
			}
			if inside {
				unit(us, wk.scratch)
				enc, err := encodeChain(m.chain, nil, wk.scratch)
				if err != nil {
					return err
				}
				lip := logical(ip)
				var lin int64
				for i := range k {
					lin = lin*m.shard.perShard[i] + lip[i]
				}
				chunks[lin] = enc
			}
			for j := k - 1; j >= 0; j-- {
				if ip[j]++; ip[j] < ps[j] {
					break
				}
				ip[j] = 0
			}
		}
		return w.st.write(key, encodeShard(m.shard, chunks, len(m.chain) == 0))
	})
}

// withWorkers calls fn for j in [0, total) on up to workers goroutines, each
// with its own buffers (from pool, if not nil), and returns the first
// error.
func withWorkers(total, workers int64, pool *sync.Pool, fn func(j int64, w *worker) error) error {
	get := func() *worker {
		if pool != nil {
			if w, ok := pool.Get().(*worker); ok {
				return w
			}
		}
		return &worker{}
	}
	put := func(w *worker) {
		if pool != nil {
			pool.Put(w)
		}
	}
	return parallel.Do(int(total), int(workers), get, put, func(w *worker, j int) error { return fn(int64(j), w) })
}
