package daphne

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// WriteOptions configures the writers. A nil *WriteOptions means the
// defaults.
type WriteOptions struct {
	// NoMeta skips writing "<path>.meta".
	NoMeta bool
	// RowStride (WriteDense) is the distance in elements between the starts
	// of consecutive rows in v; 0 means cols. DAPHNE ignores strides when
	// writing views (its issue #679); mmapkit honours them.
	RowStride uint64
	// AllowLongLabels (WriteFrame) permits labels over 32 bytes, which
	// DAPHNE's frame reader copies into a 32-byte std::string object,
	// corrupting its heap.
	AllowLongLabels bool
	// Perm is the permission of new files, less the umask; 0 means 0644.
	// A file that is replaced keeps its own permission bits.
	Perm os.FileMode
	// DocumentLayout writes the layout of DAPHNE's format document (see
	// Options.DocumentLayout), which DAPHNE itself does not read: value
	// type codes 1–10 (16-bit types allowed), CSR blocks with u32 counts
	// and column indexes, a frame as one dense block per column.
	DocumentLayout bool
}

// storable checks that the layout can hold value type vt.
func storable(path string, vt ValueType, doc bool, what string) error {
	switch {
	case doc && documentCode(vt) == 0:
		return errAt(path, -1, mmapfile.ErrTypeMismatch, fmt.Sprintf("%s: DAPHNE's format document has no value type for it (u8 u16 u32 u64 i8 i16 i32 i64 f32 f64)", what))
	case !doc && !vt.Numeric():
		msg := "DAPHNE has no value type for it (si8 si32 si64 ui8 ui32 ui64 f32 f64)"
		if vt == SI16 || vt == UI16 {
			msg = "DAPHNE's code has no 16-bit value types (its format document does: WriteOptions.DocumentLayout)"
		}
		return errAt(path, -1, mmapfile.ErrTypeMismatch, what+": "+msg)
	}
	return nil
}

// typeCode is the byte that names vt in the layout.
func typeCode(vt ValueType, doc bool) byte {
	if doc {
		return documentCode(vt)
	}
	return byte(vt)
}

func writeOpts(o *WriteOptions) WriteOptions {
	if o == nil {
		return WriteOptions{}
	}
	return *o
}

func argErr(path, format string, args ...any) error {
	return errAt(path, -1, nil, fmt.Sprintf(format, args...))
}

func checkDims(path string, rows, cols uint64) error {
	if rows > maxU32 || cols > maxU32 {
		return errAt(path, -1, mmapfile.ErrTooLarge, fmt.Sprintf("%d×%d matrix: DAPHNE's block header stores dims as u32 (at most 4294967295)", rows, cols))
	}
	return nil
}

// matrixHeader returns bytes 0–44 of a single-block matrix file.
func matrixHeader(kind Kind, vt ValueType, doc bool, rows, cols uint64, bt BodyType) []byte {
	b := make([]byte, DenseDataOffset)
	b[0] = 1
	b[1] = byte(kind)
	binary.LittleEndian.PutUint64(b[2:], rows)
	binary.LittleEndian.PutUint64(b[10:], cols)
	b[18] = typeCode(vt, doc)
	binary.LittleEndian.PutUint32(b[35:], uint32(rows))
	binary.LittleEndian.PutUint32(b[39:], uint32(cols))
	b[43] = byte(bt)
	b[44] = typeCode(vt, doc)
	return b
}

// writeLE writes v's little-endian bytes: v's own memory on little-endian
// hosts, swapped copies in chunks on big-endian ones.
func writeLE[T layout.Elem](w io.Writer, v []T) error {
	return writeHostAsLE(w, unsafeslice.Bytes(v), layout.TypeOf[T]())
}

// WriteDense writes a rows×cols dense matrix from row-major v (rows
// RowStride apart, if set) to path in DAPHNE's layout, and path+".meta"
// as DaphneDSL writes it. Values are written bit-exact (NaN payloads,
// −0.0). Invalid input fails before any file is touched; the files are
// written beside the target and renamed into place, data first.
func WriteDense[T layout.Elem](path string, rows, cols uint64, v []T, o *WriteOptions) error {
	opts := writeOpts(o)
	if err := checkDims(path, rows, cols); err != nil {
		return err
	}
	stride := opts.RowStride
	if stride == 0 {
		stride = cols
	}
	if stride < cols {
		return argErr(path, "row stride %d below %d cols", stride, cols)
	}
	if rows > 0 && cols > 0 {
		hi, need := mul64(rows-1, stride)
		need += cols
		if hi != 0 || need < cols || uint64(len(v)) < need {
			return argErr(path, "%d values for %d×%d with row stride %d (need %d)", len(v), rows, cols, stride, need)
		}
	}
	vt := valueTypeOf[T]()
	if err := storable(path, vt, opts.DocumentLayout, fmt.Sprintf("%T values", v)); err != nil {
		return err
	}
	meta := &Meta{NumRows: rows, NumCols: cols, ValueType: vt.String(), NumNonZeros: -1}
	return writeFiles(path, meta, opts, func(w io.Writer) error {
		return encodeDense(w, rows, cols, stride, v, opts.DocumentLayout)
	})
}

func encodeDense[T layout.Elem](w io.Writer, rows, cols, stride uint64, v []T, doc bool) error {
	if _, err := w.Write(matrixHeader(KindDense, valueTypeOf[T](), doc, rows, cols, BodyDense)); err != nil {
		return err
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	if stride == cols {
		return writeLE(w, v[:rows*cols])
	}
	for i := uint64(0); i < rows; i++ {
		if err := writeLE(w, v[i*stride:i*stride+cols]); err != nil {
			return err
		}
	}
	return nil
}

// WriteCSR writes m in DAPHNE's current (≥ 0.2) CSR layout, with a .meta
// that carries numNonZeros (so DaphneDSL can choose a sparse
// representation). As DAPHNE does, row offsets are written relative to
// RowOffsets[0] and only the entries they cover are written. m must pass
// Validate, except that RowOffsets[0] may be non-zero.
func WriteCSR[T layout.Elem](path string, m *CSR[T], o *WriteOptions) error {
	opts := writeOpts(o)
	if err := checkDims(path, m.Rows, m.Cols); err != nil {
		return err
	}
	if err := m.check(false); err != nil {
		return argErr(path, "invalid CSR matrix: %v", err)
	}
	for i := uint64(0); i < m.Rows; i++ {
		for k := m.RowOffsets[i] + 1; k < m.RowOffsets[i+1]; k++ {
			if m.ColIdxs[k] <= m.ColIdxs[k-1] {
				return argErr(path, "row %d: column index %d not above the previous %d", i, m.ColIdxs[k], m.ColIdxs[k-1])
			}
		}
	}
	nnz := m.NNZ()
	vt := valueTypeOf[T]()
	if err := storable(path, vt, opts.DocumentLayout, fmt.Sprintf("%T values", m.Values)); err != nil {
		return err
	}
	meta := &Meta{NumRows: m.Rows, NumCols: m.Cols, ValueType: vt.String(), NumNonZeros: int64(nnz)}
	return writeFiles(path, meta, opts, func(w io.Writer) error {
		if opts.DocumentLayout {
			return encodeCSRDocument(w, m)
		}
		return encodeCSR(w, m)
	})
}

// encodeCSRDocument writes m as the format document's sparse block: nnz
// u64, then per row its count u32 and (column u32, value) pairs.
func encodeCSRDocument[T layout.Elem](w io.Writer, m *CSR[T]) error {
	vt := valueTypeOf[T]()
	s := vt.Size()
	hdr := binary.LittleEndian.AppendUint64(matrixHeader(KindCSR, vt, true, m.Rows, m.Cols, BodySparse), m.NNZ())
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	vals := unsafeslice.Bytes(m.Values)
	var buf []byte
	for i := uint64(0); i < m.Rows; i++ {
		lo, hi := m.RowOffsets[i], m.RowOffsets[i+1]
		buf = binary.LittleEndian.AppendUint32(buf[:0], uint32(hi-lo))
		for k := lo; k < hi; k++ {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(m.ColIdxs[k]))
			at := len(buf)
			buf = append(buf, vals[k*uint64(s):(k+1)*uint64(s)]...)
			layout.SwapOrder(buf[at:], vt.Layout(), layout.HostOrder(), binary.LittleEndian)
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

func encodeCSR[T layout.Elem](w io.Writer, m *CSR[T]) error {
	nnz := m.NNZ()
	first := m.RowOffsets[0]
	hdr := matrixHeader(KindCSR, valueTypeOf[T](), false, m.Rows, m.Cols, BodySparse)
	hdr = binary.LittleEndian.AppendUint64(hdr, nnz)
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	if first == 0 {
		if err := writeLE(w, m.RowOffsets); err != nil {
			return err
		}
	} else {
		buf := make([]byte, 0, 8*1024)
		for _, r := range m.RowOffsets {
			buf = binary.LittleEndian.AppendUint64(buf, r-first)
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	if err := writeLE(w, m.ColIdxs[first:first+nnz]); err != nil {
		return err
	}
	return writeLE(w, m.Values[first:first+nnz])
}

// maxSafeLabel is sizeof(std::string) in libstdc++: DAPHNE's frame reader
// copies each label into such an object.
const maxSafeLabel = 32

// WriteFrame writes fr in DAPHNE's frame layout with the real UTF-8 label
// bytes (DAPHNE writes pointer bytes there; its reader skips them, so the
// files stay compatible) and a .meta with the schema. Nil Labels means
// col_0, col_1, …; nil Types are taken from the columns. Labels must be
// unique, valid UTF-8 and at most 32 bytes (65535 with AllowLongLabels).
func WriteFrame(path string, fr *Frame, o *WriteOptions) error {
	opts := writeOpts(o)
	labels, types, cols, err := checkFrame(path, fr, &opts)
	if err != nil {
		return err
	}
	meta := &Meta{NumRows: fr.Rows, NumCols: uint64(len(cols)), NumNonZeros: -1, Schema: make([]SchemaColumn, len(cols))}
	for i := range cols {
		if err := storable(path, types[i], opts.DocumentLayout, fmt.Sprintf("column %d", i)); err != nil {
			return err
		}
		meta.Schema[i] = SchemaColumn{Label: labels[i], ValueType: types[i].String()}
	}
	return writeFiles(path, meta, opts, func(w io.Writer) error {
		if !opts.DocumentLayout {
			return encodeFrame(w, fr.Rows, labels, types, cols)
		}
		hdr, _ := frameHeader(fr.Rows, labels, types, true)
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		for r := uint64(0); r < fr.Rows; r += maxU32 {
			if err := frameColumnBlocks(w, r, int(min(maxU32, fr.Rows-r)), types, cols, int(r)); err != nil {
				return err
			}
		}
		return nil
	})
}

// frameColumnBlocks writes rows [at, at+k) of each column (host-order
// values in cols) as the format document's dense blocks, one per column,
// at row first of the frame.
func frameColumnBlocks(w io.Writer, first uint64, k int, types []ValueType, cols [][]byte, at int) error {
	var hdr []byte
	for c, t := range types {
		hdr = binary.LittleEndian.AppendUint64(hdr[:0], first)
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(c))
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(k))
		hdr = binary.LittleEndian.AppendUint32(hdr, 1)
		hdr = append(hdr, byte(BodyDense), documentCode(t))
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		s := t.Size()
		if err := writeHostAsLE(w, cols[c][at*s:(at+k)*s], t.Layout()); err != nil {
			return err
		}
	}
	return nil
}

// writeHostAsLE writes host-order values of type t as little endian.
func writeHostAsLE(w io.Writer, b []byte, t layout.Type) error {
	size := t.Size()
	if size == 1 || layout.IsHostOrder(binary.LittleEndian) {
		_, err := w.Write(b)
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for len(b) > 0 {
		n := min(len(b), cap(buf)/size*size)
		buf = append(buf[:0], b[:n]...)
		layout.SwapOrder(buf, t, layout.HostOrder(), binary.LittleEndian)
		if _, err := w.Write(buf); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func checkFrame(path string, fr *Frame, o *WriteOptions) ([]string, []ValueType, [][]byte, error) {
	n := len(fr.Columns)
	labels := fr.Labels
	if labels == nil {
		labels = defaultLabels(n)
	}
	if len(labels) != n {
		return nil, nil, nil, argErr(path, "%d labels for %d columns", len(labels), n)
	}
	if fr.Types != nil && len(fr.Types) != n {
		return nil, nil, nil, argErr(path, "%d types for %d columns", len(fr.Types), n)
	}
	types := make([]ValueType, n)
	cols := make([][]byte, n)
	for i, c := range fr.Columns {
		vt, length, b, ok := columnBytes(c)
		if !ok {
			return nil, nil, nil, argErr(path, "column %d is a %T, not a slice of a DAPHNE value type", i, c)
		}
		if fr.Types != nil && fr.Types[i] != vt {
			return nil, nil, nil, argErr(path, "column %d holds %v, Types says %v", i, vt, fr.Types[i])
		}
		if uint64(length) != fr.Rows {
			return nil, nil, nil, argErr(path, "column %d has %d values for %d rows", i, length, fr.Rows)
		}
		types[i], cols[i] = vt, b
	}
	if err := checkLabels(path, labels, o.AllowLongLabels); err != nil {
		return nil, nil, nil, err
	}
	return labels, types, cols, nil
}

// checkLabels checks frame labels as DAPHNE and the .meta need them:
// valid UTF-8, unique, at most 65535 bytes (32 unless long is set).
func checkLabels(path string, labels []string, long bool) error {
	for i, l := range labels {
		if !utf8.ValidString(l) {
			return argErr(path, "label %d %q is not valid UTF-8", i, l)
		}
		if len(l) > 65535 {
			return argErr(path, "label %d is %d bytes; the format stores lengths as u16", i, len(l))
		}
		if len(l) > maxSafeLabel && !long {
			return argErr(path, "label %d %q is %d bytes; DAPHNE's reader overwrites its heap with labels over %d bytes (WriteOptions.AllowLongLabels)", i, l, len(l), maxSafeLabel)
		}
	}
	if i, j, dup := firstDuplicate(len(labels), func(i int) string { return labels[i] }); dup {
		return argErr(path, "label %q of column %d repeats column %d", labels[i], i, j)
	}
	return nil
}

// frameHeader returns a frame file's bytes up to its first value, and the
// size of a row.
func frameHeader(rows uint64, labels []string, types []ValueType, doc bool) ([]byte, int) {
	hdr := make([]byte, headerSize, headerSize+len(types)*4+16)
	hdr[0], hdr[1] = 1, byte(KindFrame)
	binary.LittleEndian.PutUint64(hdr[2:], rows)
	binary.LittleEndian.PutUint64(hdr[10:], uint64(len(types)))
	rowSize := 0
	for _, t := range types {
		hdr = append(hdr, typeCode(t, doc))
		rowSize += t.Size()
	}
	for _, l := range labels {
		hdr = binary.LittleEndian.AppendUint16(hdr, uint16(len(l)))
		hdr = append(hdr, l...)
	}
	if doc {
		return hdr, rowSize // blocks follow, each with its (rx, cx)
	}
	return append(hdr, make([]byte, bodySize)...), rowSize
}

func encodeFrame(w io.Writer, rows uint64, labels []string, types []ValueType, cols [][]byte) error {
	hdr, rowSize := frameHeader(rows, labels, types, false)
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	if rowSize == 0 || rows == 0 {
		return nil
	}
	chunk := max(1, (1<<20)/rowSize)
	buf := make([]byte, chunk*rowSize)
	for r := 0; r < int(rows); r += chunk {
		k := min(chunk, int(rows)-r)
		off := 0
		for c, t := range types {
			scatter(buf, cols[c], r, k, rowSize, off, t.Size())
			off += t.Size()
		}
		if _, err := w.Write(buf[:k*rowSize]); err != nil {
			return err
		}
	}
	return nil
}

// scatter interleaves elements [at, at+rows) of one column (host order)
// into dst's rows as little endian.
func scatter(dst, col []byte, at, rows, rowSize, off, size int) {
	switch size {
	case 1:
		for i := range rows {
			dst[i*rowSize+off] = col[at+i]
		}
	case 4:
		s := unsafeslice.Cast[uint32](col)[at : at+rows]
		for i, v := range s {
			binary.LittleEndian.PutUint32(dst[i*rowSize+off:], v)
		}
	case 8:
		s := unsafeslice.Cast[uint64](col)[at : at+rows]
		for i, v := range s {
			binary.LittleEndian.PutUint64(dst[i*rowSize+off:], v)
		}
	}
}

// writeFiles writes the data file and its .meta to temporaries beside
// path and puts them in place together, data first, as an atomicfile
// Group: nothing at path changes unless every byte was written and
// synced; if the .meta cannot be put in place after the data file was,
// the old data file is put back, so that a failed write leaves both files
// as they were; a replaced file keeps its permission bits; a target held
// by a writer is not replaced (mmapfile.ErrLocked). Both targets are taken
// before a byte is written, so that one that cannot be replaced (a
// directory, a device, a locked file) fails the write at once. A crash
// between the two renames can still leave the new data file beside the
// old .meta (a strict Open reports it when they disagree).
func writeFiles(path string, meta *Meta, o WriteOptions, data func(io.Writer) error) error {
	var metaBytes []byte
	if !o.NoMeta {
		var err error
		if metaBytes, err = meta.Bytes(); err != nil {
			return argErr(path, "%v", err)
		}
	}
	g := atomicfile.NewGroup(&atomicfile.Options{Perm: o.Perm})
	defer g.Abort()
	dataFile, err := g.Create(path)
	if err != nil {
		return err
	}
	var metaFile *atomicfile.File
	if !o.NoMeta {
		if metaFile, err = g.CreateLast(path + ".meta"); err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(atomicfile.Writeback(dataFile.File), 1<<20) // on disk while the rest is written
	if err = data(bw); err == nil {
		err = bw.Flush()
	}
	if err == nil && metaFile != nil {
		_, err = metaFile.Write(metaBytes)
	}
	if err == nil && commitHook != nil {
		err = commitHook()
	}
	if err != nil {
		return err
	}
	return g.Commit()
}

// commitHook, when set (by tests), runs right before the group is
// committed; an error fails the write.
var commitHook func() error
