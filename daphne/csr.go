package daphne

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"sort"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// CSR is a compressed sparse row matrix as DAPHNE stores it: row i's
// entries are ColIdxs[RowOffsets[i]:RowOffsets[i+1]] with the matching
// Values. A leniently read matrix may break these rules; At, ToDense and
// Validate check before they index.
type CSR[T layout.Elem] struct {
	Rows, Cols uint64
	RowOffsets []uint64 // Rows+1 entries
	ColIdxs    []uint64
	Values     []T

	// Where the arrays lie in the file they were read from, for error
	// offsets (only when inFile: read from one contiguous layout).
	file                  string
	inFile                bool
	rowAt, colAt, valueAt int64
}

// NNZ returns the number of stored entries, RowOffsets[Rows] −
// RowOffsets[0] (0 for a malformed matrix).
func (m *CSR[T]) NNZ() uint64 {
	if uint64(len(m.RowOffsets)) != m.Rows+1 || m.RowOffsets[m.Rows] < m.RowOffsets[0] {
		return 0
	}
	return m.RowOffsets[m.Rows] - m.RowOffsets[0]
}

func (m *CSR[T]) errAt(base int64, i uint64, err error, format string, args ...any) error {
	off := int64(-1)
	if m.inFile && base >= 0 {
		off = base + int64(i)*8
	}
	return errAt(m.file, off, err, fmt.Sprintf(format, args...))
}

// check validates the arrays. Safety checks (lengths, offsets monotone and
// within the arrays, column indexes < Cols) always apply; strict adds
// RowOffsets[0] = 0 and column indexes increasing within each row.
func (m *CSR[T]) check(strict bool) error {
	if uint64(len(m.RowOffsets)) != m.Rows+1 || m.Rows+1 == 0 {
		return m.errAt(-1, 0, nil, "%d row offsets for %d rows", len(m.RowOffsets), m.Rows)
	}
	if strict && m.RowOffsets[0] != 0 {
		return m.errAt(m.rowAt, 0, nil, "rowOffsets[0] = %d, want 0", m.RowOffsets[0])
	}
	end := m.RowOffsets[m.Rows]
	if end > uint64(len(m.ColIdxs)) || end > uint64(len(m.Values)) {
		return m.errAt(m.rowAt, m.Rows, nil, "rowOffsets[%d] = %d beyond %d column indexes and %d values", m.Rows, end, len(m.ColIdxs), len(m.Values))
	}
	cols := m.ColIdxs[:end]
	for i := uint64(0); i < m.Rows; i++ {
		lo, hi := m.RowOffsets[i], m.RowOffsets[i+1]
		if hi < lo {
			return m.errAt(m.rowAt, i+1, nil, "rowOffsets[%d] = %d below rowOffsets[%d] = %d", i+1, hi, i, lo)
		}
		if hi > end {
			return m.errAt(m.rowAt, i+1, nil, "rowOffsets[%d] = %d beyond rowOffsets[%d] = %d", i+1, hi, m.Rows, end)
		}
		row := cols[lo:hi]
		if len(row) == 0 {
			continue
		}
		if strict {
			// Increasing indexes: only the last can reach Cols.
			for k := 1; k < len(row); k++ {
				if row[k] <= row[k-1] {
					if bad := firstAtLeast(row[:k], m.Cols); bad >= 0 {
						return m.colErr(i, lo+uint64(bad), row[bad])
					}
					return m.errAt(m.colAt, lo+uint64(k), nil, "row %d: column index %d not above the previous %d", i, row[k], row[k-1])
				}
			}
			if row[len(row)-1] >= m.Cols {
				bad := firstAtLeast(row, m.Cols)
				return m.colErr(i, lo+uint64(bad), row[bad])
			}
			continue
		}
		if bad := firstAtLeast(row, m.Cols); bad >= 0 {
			return m.colErr(i, lo+uint64(bad), row[bad])
		}
	}
	return nil
}

func (m *CSR[T]) colErr(row, k, j uint64) error {
	return m.errAt(m.colAt, k, nil, "row %d: column index %d ≥ %d cols", row, j, m.Cols)
}

// firstAtLeast returns the index of the first element ≥ limit, or -1.
func firstAtLeast(s []uint64, limit uint64) int {
	for k, j := range s {
		if j >= limit {
			return k
		}
	}
	return -1
}

// Validate checks the matrix as WriteCSR and a strict read do: Rows+1 row
// offsets starting at 0, never decreasing, within the arrays; column
// indexes below Cols and increasing within each row.
func (m *CSR[T]) Validate() error { return m.check(true) }

// At returns element (i, j), after checking the matrix (a leniently read
// one may be malformed) and the index.
func (m *CSR[T]) At(i, j uint64) (T, error) {
	var zero T
	if err := m.check(false); err != nil {
		return zero, err
	}
	if i >= m.Rows || j >= m.Cols {
		return zero, errAt(m.file, -1, nil, fmt.Sprintf("index (%d, %d) outside the %d×%d matrix", i, j, m.Rows, m.Cols))
	}
	for k := m.RowOffsets[i]; k < m.RowOffsets[i+1]; k++ {
		if m.ColIdxs[k] == j {
			return m.Values[k], nil
		}
	}
	return zero, nil
}

// ToDense returns the matrix as a row-major dense slice, after checking it.
// Repeated column indexes in a row (possible in a lenient read) take the
// last value. maxBytes bounds the result (0: DefaultMaxAlloc).
func (m *CSR[T]) ToDense(maxBytes int64) ([]T, error) {
	if err := m.check(false); err != nil {
		return nil, err
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxAlloc
	}
	hi, lo := mul64(m.Rows, m.Cols)
	s := uint64(unsafeslice.SizeOf[T]())
	if hi != 0 || lo > uint64(maxBytes)/s {
		return nil, errAt(m.file, -1, mmapfile.ErrTooLarge, fmt.Sprintf("%d×%d dense result exceeds %d bytes", m.Rows, m.Cols, maxBytes))
	}
	out := make([]T, lo)
	for i := uint64(0); i < m.Rows; i++ {
		row := out[i*m.Cols : (i+1)*m.Cols]
		for k := m.RowOffsets[i]; k < m.RowOffsets[i+1]; k++ {
			row[m.ColIdxs[k]] = m.Values[k]
		}
	}
	return out, nil
}

// ReadCSR reads a CSR matrix. A DAPHNE (≥ 0.2) file's three arrays are
// each copied with one bulk memmove and, unless Lenient, validated with
// the offending entry's offset in the error. Release-0.1, doc-layout, COO,
// empty and multi-block files are assembled entry by entry.
func ReadCSR[T layout.Elem](f *File) (*CSR[T], error) {
	if f.hdr.Kind != KindCSR {
		return nil, f.errf(1, ErrKind, "CSR read of a %v file (DAPHNE's \"DT mismatch\")", f.hdr.Kind)
	}
	if err := checkValueType[T](f); err != nil {
		return nil, err
	}
	if len(f.blocks) == 1 && f.blocks[0].Type == BodySparse && f.blocks[0].Layout == LayoutCurrent {
		return readCurrentCSR[T](f, f.blocks[0])
	}
	return assembleCSR[T](f)
}

// CSRValues is ReadCSR with the values aliasing the mapping where they
// can (aliased is true): for si8 and ui8, or values that happen to sit at
// an aligned offset. Row offsets and column indexes are u64 at offsets
// ≡ 5 (mod 8) in DAPHNE's layout and are always copied. Aliased values
// die at Close.
func CSRValues[T layout.Elem](f *File) (m *CSR[T], aliased bool, err error) {
	if f.hdr.Kind != KindCSR || valueTypeOf[T]() != f.hdr.ValueType || f.mf == nil ||
		!(len(f.blocks) == 1 && f.blocks[0].Type == BodySparse && f.blocks[0].Layout == LayoutCurrent) {
		m, err = ReadCSR[T](f)
		return m, false, err
	}
	return readCurrent[T](f, f.blocks[0], true)
}

func readCurrentCSR[T layout.Elem](f *File, b Block) (*CSR[T], error) {
	m, _, err := readCurrent[T](f, b, false)
	return m, err
}

func readCurrent[T layout.Elem](f *File, b Block, alias bool) (*CSR[T], bool, error) {
	s := int64(f.hdr.ValueType.Size())
	m := &CSR[T]{Rows: uint64(b.Rows), Cols: uint64(b.Cols), file: f.name, inFile: true}
	m.rowAt = b.DataOffset
	m.colAt = m.rowAt + 8*(int64(b.Rows)+1)
	m.valueAt = m.colAt + 8*int64(b.NNZ)
	var rb, cb, vb []byte
	m.RowOffsets, rb = alloc[uint64](int(b.Rows) + 1)
	m.ColIdxs, cb = alloc[uint64](int(b.NNZ))
	aliased := false
	if alias {
		if r, err := f.mf.Map(m.valueAt, int64(b.NNZ)*s); err == nil {
			if v, err := mmapfile.View[T](r, 0, int(b.NNZ), binary.LittleEndian); err == nil {
				m.Values, aliased = v, true
			} else {
				r.Unmap()
			}
		}
	}
	type array struct {
		dst []byte
		off int64
		typ layout.Type
	}
	arrays := []array{{rb, m.rowAt, layout.U64}, {cb, m.colAt, layout.U64}}
	if !aliased {
		m.Values, vb = alloc[T](int(b.NNZ))
		arrays = append(arrays, array{vb, m.valueAt, f.hdr.ValueType.Layout()})
	}
	for _, a := range arrays {
		if err := f.copyBytes(a.dst, a.off); err != nil {
			return nil, false, err
		}
		layout.SwapOrder(a.dst, a.typ, binary.LittleEndian, layout.HostOrder())
	}
	if !f.opts.Lenient {
		if err := m.check(true); err != nil {
			return nil, false, err
		}
		if m.RowOffsets[m.Rows] != b.NNZ {
			return nil, false, m.errAt(m.rowAt, m.Rows, nil, "rowOffsets[%d] = %d, want nnz %d", m.Rows, m.RowOffsets[m.Rows], b.NNZ)
		}
	}
	return m, aliased, nil
}

// assembleCSR builds a CSR matrix from any blocks: their stored entries
// (all non-zero cells of dense blocks) gathered, ordered by row and column
// when there are several blocks, and compressed.
func assembleCSR[T layout.Elem](f *File) (*CSR[T], error) {
	h := &f.hdr
	s := int64(h.ValueType.Size())
	e, err := f.sortedEntries()
	if err != nil {
		return nil, err
	}
	n := len(e.rows)
	m := &CSR[T]{Rows: h.Rows, Cols: h.Cols, file: f.name, rowAt: -1, colAt: -1, valueAt: -1}
	m.RowOffsets = make([]uint64, h.Rows+1)
	m.ColIdxs = make([]uint64, n)
	var vb []byte
	m.Values, vb = alloc[T](n)
	for k, p := range e.perm {
		m.RowOffsets[e.rows[p]+1]++
		m.ColIdxs[k] = e.cols[p]
		copy(vb[int64(k)*s:], e.vals[int64(p)*s:int64(p+1)*s])
	}
	for i := uint64(0); i < h.Rows; i++ {
		m.RowOffsets[i+1] += m.RowOffsets[i]
	}
	layout.SwapOrder(vb, h.ValueType.Layout(), binary.LittleEndian, layout.HostOrder())
	if !f.opts.Lenient {
		if err := m.check(true); err != nil {
			return nil, errAt(f.name, -1, nil, "a cell is stored twice: "+err.Error())
		}
	}
	return m, nil
}

// entries are the stored cells of a matrix: rows[p], cols[p] and the
// little-endian value vals[p·size:], in the order perm lists them.
type entries struct {
	rows, cols []uint64
	vals       []byte
	perm       []int
}

// sortedEntries gathers the stored entries of every block (all non-zero
// cells of dense blocks), within Options.MaxAlloc, ordered by row and
// column when there are several blocks or COO blocks (sparse and dense
// blocks yield theirs row by row).
func (f *File) sortedEntries() (*entries, error) {
	h := &f.hdr
	s := int64(h.ValueType.Size())
	limit := max(f.opts.maxAlloc(), f.size)
	rowBytes, ok := sizeAt(0, h.Rows+1, 8)
	if !ok || rowBytes > limit || h.Rows+1 == 0 {
		return nil, f.errf(2, mmapfile.ErrTooLarge, "%d row offsets exceed Options.MaxAlloc", h.Rows)
	}
	e := &entries{}
	per := 16 + s
	for _, b := range f.blocks {
		err := f.eachEntry(b, func(i, j uint64, off int64, v []byte) error {
			if b.Type == BodyDense && allZero(v) {
				return nil
			}
			if int64(len(e.rows)+1)*per > limit {
				return f.errf(off, mmapfile.ErrTooLarge, "more than %d entries exceed Options.MaxAlloc", len(e.rows))
			}
			e.rows = append(e.rows, i)
			e.cols = append(e.cols, j)
			e.vals = append(e.vals, v...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	e.perm = make([]int, len(e.rows))
	for k := range e.perm {
		e.perm[k] = k
	}
	unordered := len(f.blocks) > 1
	for _, b := range f.blocks {
		unordered = unordered || b.Type == BodyCOO
	}
	if unordered {
		sort.SliceStable(e.perm, func(a, b int) bool {
			pa, pb := e.perm[a], e.perm[b]
			if e.rows[pa] != e.rows[pb] {
				return e.rows[pa] < e.rows[pb]
			}
			return e.cols[pa] < e.cols[pb]
		})
	}
	return e, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Nonzero is one stored entry of a sparse matrix.
type Nonzero[T layout.Elem] struct {
	Row, Col uint64
	Value    T
}

// errStop ends a walk that the consumer of an iterator stopped.
var errStop = errors.New("stop")

// Nonzeros returns an iterator over the stored entries of a CSR matrix,
// row by row and, within a row, in stored order, without loading the
// matrix: a file of one sparse block is streamed from the file (memory
// stays at a few buffers whatever nnz is); COO and multi-block files are
// gathered and ordered first, within Options.MaxAlloc. Entries are checked
// as they are read (column indexes within the matrix, row offsets in
// order; strictly, increasing columns). T must be the Go type of the
// matrix's value type. Iteration stops at the first error, which is
// yielded with a zero Nonzero.
//
//	for e, err := range daphne.Nonzeros[float64](f) {
//		if err != nil {
//			return err
//		}
//		sum += e.Value
//	}
func Nonzeros[T layout.Elem](f *File) iter.Seq2[Nonzero[T], error] {
	return func(yield func(Nonzero[T], error) bool) {
		if f.hdr.Kind != KindCSR {
			yield(Nonzero[T]{}, f.errf(1, ErrKind, "Nonzeros of a %v file", f.hdr.Kind))
			return
		}
		if err := checkValueType[T](f); err != nil {
			yield(Nonzero[T]{}, err)
			return
		}
		var v [1]T
		b := unsafeslice.Bytes(v[:])
		err := f.Nonzeros(0, layout.HostOrder(), func(row, col int64, value []byte) error {
			copy(b, value)
			if !yield(Nonzero[T]{Row: uint64(row), Col: uint64(col), Value: v[0]}, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && err != errStop {
			yield(Nonzero[T]{}, err)
		}
	}
}
