package daphne

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func init() {
	format.Register(format.Format{
		Name:        "daphne",
		Description: "DAPHNE binary data format (.dbdf with its .meta sidecar): dense and CSR matrices, frames",
		Extensions:  []string{".dbdf"},
		// Never sniffed: DAPHNE files have no magic number.
		Open: func(path string, mode mmapfile.Mode, o *format.Options) (format.File, error) {
			do, err := optionsFrom(path, o)
			if err != nil {
				return nil, err
			}
			return OpenFile(path, mode, do)
		},
		Write: Write,
		ParseParams: func(p map[string]string, write bool) (any, error) {
			return parseLayout("", p, write)
		},
		// Separate for reading and writing, so that one conversion goes
		// from one layout to the other.
		Params: []format.Param{
			{Name: "daphne-layout", Usage: "code (the default: DAPHNE's implementation, value types 0–7) or document (the layout of DAPHNE's doc/BinaryFormat.md, value types 1–10) of the file read"},
			{Name: "out-daphne-layout", Write: true, Usage: "code (the default) or document: the layout of the file written"},
		},
	})
}

// optionsFrom maps the format-neutral options onto this package's.
// Salvage is refused (errors.ErrUnsupported), never ignored: this package
// does not read a damaged DAPHNE file as a smaller matrix or frame.
func optionsFrom(path string, o *format.Options) (*Options, error) {
	doc, err := documentParam(path, o, false)
	if err != nil || o == nil {
		return nil, err
	}
	if o.Salvage {
		return nil, errAt(path, -1, errors.ErrUnsupported, "Salvage is not supported: a DAPHNE file is one matrix or one frame, and a damaged one is refused, never read as a smaller one")
	}
	return &Options{Options: o.Options, Lenient: o.Lenient, DocumentLayout: doc}, nil
}

// The methods below make a *File a format.File: a dense or CSR matrix is
// one record named "matrix", a frame one column record per column.

// Format returns "daphne".
func (f *File) Format() string { return "daphne" }

// Version returns the file's version byte ("1").
func (f *File) Version() string { return strconv.Itoa(int(f.hdr.Version)) }

// Records lists the file's records: "matrix" (its "layout" is "dense" or
// "csr"; Offset and Size are those of the dense values or of the sparse
// block, -1 when the matrix is spread over several blocks) or one column
// per frame column (Offset -1: a frame's values are interleaved).
func (f *File) Records() []format.Record {
	f.recsOnce.Do(func() {
		arrays := f.arrays()
		if f.hdr.Kind != KindFrame {
			f.recs = []format.Record{{Array: arrays[0], Kind: format.KindArray, Extra: map[string]any{"layout": f.hdr.Kind.String()}}}
			return
		}
		f.recs = make([]format.Record, len(arrays))
		for i := range arrays {
			f.recs[i] = format.Record{Array: arrays[i], Kind: format.KindColumn}
		}
	})
	return f.recs
}

// NumRecords returns the number of records, as len(Records()) does,
// without building the list: one per frame column, or 1.
func (f *File) NumRecords() int {
	if f.hdr.Kind == KindFrame {
		return len(f.hdr.ColumnTypes)
	}
	return 1
}

// Record returns record i described as Records describes it, built from
// the header and the frame's labels without building the list: listing a
// frame of a million columns one Record at a time holds none of them. It
// panics for i outside [0, NumRecords()), as indexing Records does.
func (f *File) Record(i int) format.Record {
	if f.hdr.Kind != KindFrame {
		return f.Records()[i]
	}
	h := &f.hdr
	vt := h.ColumnTypes[i]
	return format.Record{Array: layout.Array{Name: f.label(i), Type: vt.Layout(), Shape: []int64{int64(h.Rows)},
		Order: layout.RowMajor, Offset: -1, Size: int64(h.Rows) * int64(vt.Size())}, Kind: format.KindColumn}
}

// record checks i and that the file is open, and describes record i.
func (f *File) record(i int) (format.Record, error) {
	if n := f.NumRecords(); i < 0 || i >= n {
		return format.Record{}, f.errf(-1, format.ErrNoRecord, "record %d of %d", i, n)
	}
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return format.Record{}, f.errf(-1, mmapfile.ErrClosed, "")
	}
	return f.Record(i), nil
}

// ReadArray copies elements [first, first+len(dst)/size) of record i in
// order and byte order bo into dst. A dense matrix is read straight from
// the mapping (transposed in cache-sized tiles for column-major orders); a
// CSR matrix gives its dense values, reading only the rows (or, column-
// major, the entries) the range covers, so any range of any matrix is read
// in memory bounded by dst; a frame column is gathered from the rows the
// range covers.
func (f *File) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	rec, err := f.record(i)
	if err != nil {
		return err
	}
	size := int64(rec.Type.Size())
	count, _ := layout.Count(rec.Shape)
	n := int64(len(dst)) / size
	if int64(len(dst))%size != 0 {
		return f.errf(-1, mmapfile.ErrOutOfRange, "record %q: %d bytes is not a whole number of %s elements", rec.Name, len(dst), rec.Type)
	}
	if end, ok := layout.Add(first, n); first < 0 || !ok || end > count {
		return f.errf(-1, mmapfile.ErrOutOfRange, "record %q: elements [%d, %d+%d) outside [0, %d)", rec.Name, first, first, n, count)
	}
	if n == 0 {
		return nil
	}
	switch {
	case f.hdr.Kind == KindFrame:
		err = f.readColumn(i, dst, first)
	case f.contiguous():
		var p *format.Payload
		if p, err = f.densePayload(); err == nil {
			return p.ReadArray(dst, first, order, bo)
		}
	default:
		err = f.readMatrix(dst, first, order)
	}
	if err != nil {
		return err
	}
	layout.SwapOrder(dst, rec.Type, binary.LittleEndian, bo)
	return nil
}

// Payload returns the reader of record i's values (format.Payloader):
// only a dense matrix stored as one block has one; its values are the
// mapping's, or the ReaderAt's bytes for NewReader (which cannot be
// viewed). Frames, CSR matrices and matrices of several blocks give an
// error wrapping ErrNotMapped.
func (f *File) Payload(i int) (*format.Payload, error) {
	rec, err := f.record(i)
	if err != nil {
		return nil, err
	}
	switch {
	case f.hdr.Kind == KindFrame:
		return nil, f.errf(f.hdr.DataOffset, ErrNotMapped, "frame column %q: values are interleaved row by row; copy with Read", rec.Name)
	case f.hdr.Kind == KindCSR:
		return nil, f.errf(1, ErrNotMapped, "record %q is a CSR matrix, not dense values; copy with Read (dense) or CSRValues", rec.Name)
	case !f.contiguous():
		return nil, f.errf(f.hdr.DataOffset, ErrNotMapped, "record %q: values are not one mapped run; use Read or DenseValues, which copy", MatrixName)
	}
	return f.densePayload()
}

// densePayload returns the Payload of a dense matrix's values: the mapped
// values for a file from Open, the ReaderAt's bytes for NewReader.
func (f *File) densePayload() (*format.Payload, error) {
	return f.pays.Get(0, func() (*format.Payload, error) {
		a := f.arrays()[0]
		p := &format.Payload{Array: a, Data: f.ra, Off: a.Offset,
			Wrap: func(off int64, err error) error { return f.errf(off, err, "") }}
		if f.mf == nil {
			p.NoView = f.errf(f.hdr.DataOffset, ErrNotMapped, "record %q: a File from NewReader is not mapped; use Read or DenseValues, which copy", MatrixName)
			return p, nil
		}
		r, err := f.payloadRegion()
		if err != nil {
			return nil, err
		}
		p.Data, p.Off = r, 0
		return p, nil
	})
}

// readColumn gathers elements [first, first+n) of frame column c into dst
// as little-endian values, mapping a few MiB of rows at a time.
func (f *File) readColumn(c int, dst []byte, first int64) error {
	if f.doc {
		return f.readColumnBlocks(c, dst, first)
	}
	s := int64(f.hdr.ColumnTypes[c].Size())
	n := int64(len(dst)) / s
	if f.rowSize >= smallRead {
		// Rows so wide (a frame of many thousand columns) that each
		// value of the column is a page of its own: read value by value.
		for r := int64(0); r < n; r++ {
			off := f.hdr.DataOffset + (first+r)*f.rowSize + f.colOff[c]
			if err := f.readAt(dst[r*s:(r+1)*s], off); err != nil {
				return err
			}
		}
		return nil
	}
	step := max(1, frameChunk/f.rowSize)
	for r := int64(0); r < n; r += step {
		k := min(step, n-r)
		off := f.hdr.DataOffset + (first+r)*f.rowSize
		out := dst[r*s : (r+k)*s]
		err := f.withRange(off, k*f.rowSize, func(src []byte) {
			gatherLE(out, src, int(k), int(f.rowSize), int(f.colOff[c]), int(s))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// readColumnBlocks is readColumn for a frame of the document's blocks:
// the blocks that hold column c, each mapped over the rows it shares with
// the range, values converted to the column's type.
func (f *File) readColumnBlocks(c int, dst []byte, first int64) error {
	t := f.hdr.ColumnTypes[c]
	s := int64(t.Size())
	end := first + int64(len(dst))/s
	clear(dst)
	for i := range f.blocks {
		b := &f.blocks[i]
		col := uint64(c)
		r0, r1 := max(uint64(first), b.RX), min(uint64(end), b.RX+uint64(b.Rows))
		if b.Type == BodyEmpty || col < b.CX || col >= b.CX+uint64(b.Cols) || r0 >= r1 {
			continue
		}
		bs := int64(b.ValueType.Size())
		stride := int64(b.Cols) * bs
		off := b.DataOffset + int64(r0-b.RX)*stride + int64(col-b.CX)*bs
		err := f.withRange(off, int64(r1-r0-1)*stride+bs, func(src []byte) {
			for r := r0; r < r1; r++ {
				at := (int64(r) - first) * s
				v := src[int64(r-r0)*stride:]
				convertValue(dst[at:at+s], v[:bs], b.ValueType, t)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// gatherLE copies one column of rows rows (rowSize bytes each, the
// column's size-byte values at byte off) from src to dst, as stored.
func gatherLE(dst, src []byte, rows, rowSize, off, size int) {
	switch size {
	case 1:
		for i := range rows {
			dst[i] = src[i*rowSize+off]
		}
	case 4:
		for i := range rows {
			binary.LittleEndian.PutUint32(dst[i*4:], binary.LittleEndian.Uint32(src[i*rowSize+off:]))
		}
	default:
		for i := range rows {
			binary.LittleEndian.PutUint64(dst[i*8:], binary.LittleEndian.Uint64(src[i*rowSize+off:]))
		}
	}
}

// IsSparse reports whether record i is a CSR matrix.
func (f *File) IsSparse(i int) bool { return i == 0 && f.hdr.Kind == KindCSR }

// Nonzeros calls fn for each stored entry of the CSR matrix, row by row
// and, within a row, in stored order, with its value in byte order bo
// (valid only during the call). A file of one sparse block is streamed;
// other layouts (COO blocks, several blocks) are gathered and ordered
// first, within Options.MaxAlloc.
func (f *File) Nonzeros(i int, bo binary.ByteOrder, fn func(row, col int64, value []byte) error) error {
	if _, err := f.record(i); err != nil {
		return err
	}
	if !f.IsSparse(i) {
		return f.errf(1, ErrKind, "Nonzeros of a %v file", f.hdr.Kind)
	}
	t := f.hdr.ValueType.Layout()
	s := t.Size()
	var buf [8]byte
	emit := func(row, col uint64, v []byte) error {
		if !layout.IsHostOrder(bo) || !layout.IsHostOrder(binary.LittleEndian) {
			v = append(buf[:0], v...)
			layout.SwapOrder(v, t, binary.LittleEndian, bo)
		}
		return fn(int64(row), int64(col), v)
	}
	if len(f.blocks) == 1 && f.blocks[0].Type == BodySparse {
		return f.eachEntry(f.blocks[0], func(row, col uint64, _ int64, v []byte) error { return emit(row, col, v) })
	}
	e, err := f.sortedEntries()
	if err != nil {
		return err
	}
	for _, p := range e.perm {
		if err := emit(e.rows[p], e.cols[p], e.vals[p*s:(p+1)*s]); err != nil {
			return err
		}
	}
	return nil
}

// SetText changes element idx ([row, col]) of a dense matrix to value, a
// Futhark literal of its type ("42", "-1.5e3", "0x1f", "inf", "nan"), in
// place; the file must have been opened read-write.
func (f *File) SetText(i int, idx []int64, value string) error {
	rec, err := f.record(i)
	if err != nil {
		return err
	}
	if err := f.checkSet(&rec, idx); err != nil {
		return err
	}
	b, err := format.ParseLiteral(rec.Type, value, binary.LittleEndian)
	if err != nil {
		return f.errf(-1, err, "record %q", rec.Name)
	}
	return f.SetElement(uint64(idx[0]), uint64(idx[1]), b)
}

// checkSet checks that record rec can be changed in place at idx: a dense
// matrix of one block, and a [row, col] inside it.
func (f *File) checkSet(rec *format.Record, idx []int64) error {
	if f.hdr.Kind != KindDense {
		return f.errf(1, errors.ErrUnsupported, "record %q: only dense matrices are changed in place, this is a %v file", rec.Name, f.hdr.Kind)
	}
	if !f.contiguous() {
		return f.errf(f.hdr.DataOffset, errors.ErrUnsupported, "record %q: a matrix stored in several blocks is not changed in place", rec.Name)
	}
	if err := layout.CheckIndex("", rec.Shape, idx); err != nil {
		return f.errf(-1, format.IndexError(err), "record %q", rec.Name)
	}
	return nil
}

// Write writes the records of src to path (and path+".meta") in DAPHNE's
// layout, streaming their values (no copy of a whole array in memory):
//
//   - one 2-D array is a dense matrix, or a CSR matrix when src says it is
//     sparse (format.Sparse), written from its nonzeros without densifying;
//   - equal-length 1-D arrays, or a table, are a frame (labels from the
//     record names);
//   - anything else — complex, 16-bit, bool, i128 or text values, nulls,
//     three or more dimensions, several matrices — is an error wrapping
//     format.ErrNotRepresentable that names the record.
//
// Both files are written to temporaries, synced and renamed into place,
// data first; a failed write leaves both as they were.
func Write(path string, src format.Source, o *format.Options) error {
	doc, err := documentParam(path, o, true)
	if err != nil {
		return err
	}
	wo := WriteOptions{DocumentLayout: doc}
	recs := src.Records()
	if len(recs) == 0 {
		return errAt(path, -1, format.ErrNotRepresentable, "no records to write")
	}
	if len(recs) == 1 && recs[0].Kind == format.KindArray && len(recs[0].Shape) == 2 {
		r := &recs[0]
		vt, err := valueTypeOfRecord(r, doc)
		if err != nil {
			return err
		}
		rows, cols := uint64(r.Shape[0]), uint64(r.Shape[1])
		if err := checkDims(path, rows, cols); err != nil {
			return format.Unrepresentable(r, err.Error())
		}
		if sp, ok := src.(format.Sparse); ok && sp.IsSparse(0) {
			return writeSparse(path, sp, r, rows, cols, vt, doc)
		}
		meta := &Meta{NumRows: rows, NumCols: cols, ValueType: vt.String(), NumNonZeros: -1}
		return writeFiles(path, meta, wo, func(w io.Writer) error {
			if _, err := w.Write(matrixHeader(KindDense, vt, doc, rows, cols, BodyDense)); err != nil {
				return err
			}
			return format.Stream(src, 0, layout.RowMajor, binary.LittleEndian, func(chunk []byte) error {
				_, err := w.Write(chunk)
				return err
			})
		})
	}
	if !format.IsTable(src) {
		for i := range recs {
			r := &recs[i]
			switch {
			case r.Kind == format.KindString || r.Kind == format.KindOpaque:
				return format.Unrepresentable(r, "DAPHNE holds numbers only")
			case len(r.Shape) == 0:
				return format.Unrepresentable(r, "a scalar (a 0-d array) cannot be a DAPHNE matrix, which is 2-D, or a frame column, which is 1-D")
			case len(r.Shape) > 2:
				return format.Unrepresentable(r, "DAPHNE holds one 2-D matrix or a frame of 1-D columns")
			case len(r.Shape) == 2:
				return format.Unrepresentable(r, "DAPHNE holds one matrix per file")
			}
		}
		return format.Unrepresentable(&recs[0], "DAPHNE frames need columns of one length")
	}
	return writeFrameFrom(path, src, doc)
}

// documentParam reads the parameter daphne-layout, or out-daphne-layout
// for writing: "code" (the default) or "document".
func documentParam(path string, o *format.Options, write bool) (bool, error) {
	doc, err := format.ParsedParams[bool](o, "daphne", write)
	if err != nil {
		return parseLayout(path, o.Params, write) // the same error, naming the file
	}
	return doc, nil
}

// parseLayout parses the option daphne-layout (of reading) or
// out-daphne-layout (write): whether the layout is the document's.
func parseLayout(path string, p map[string]string, write bool) (bool, error) {
	name := "daphne-layout"
	if write {
		name = "out-daphne-layout"
	}
	switch v := p[name]; v {
	case "", "code":
		return false, nil
	case "document":
		return true, nil
	default:
		return false, errAt(path, -1, errors.ErrUnsupported, fmt.Sprintf("%s %q: want code or document", name, v))
	}
}

// valueTypeOfRecord returns the value type of a record to write.
func valueTypeOfRecord(r *format.Record, doc bool) (ValueType, error) {
	vt := anyValueTypeFor(r.Type)
	if err := storable("", vt, doc, r.TypeString()); err != nil {
		var fe *FormatError
		errors.As(err, &fe)
		return INVALID, format.Unrepresentable(r, fe.Msg)
	}
	return vt, nil
}

// writeSparse writes a CSR matrix from the nonzeros of src's record 0 in
// four passes over them — check and count, row offsets, column indexes,
// values — so that memory stays a few buffers whatever the matrix's size.
func writeSparse(path string, src format.Sparse, rec *format.Record, rows, cols uint64, vt ValueType, doc bool) error {
	var nnz uint64
	prevRow, prevCol := int64(-1), int64(-1)
	err := src.Nonzeros(0, binary.LittleEndian, func(r, c int64, _ []byte) error {
		if r < 0 || uint64(r) >= rows || c < 0 || uint64(c) >= cols {
			return fmt.Errorf("%s: entry (%d, %d) outside %d×%d", format.Describe(rec), r, c, rows, cols)
		}
		if r < prevRow || r == prevRow && c <= prevCol {
			return fmt.Errorf("%s: entry (%d, %d) after (%d, %d): CSR needs entries by row, increasing columns", format.Describe(rec), r, c, prevRow, prevCol)
		}
		prevRow, prevCol = r, c
		nnz++
		return nil
	})
	if err != nil {
		return err
	}
	meta := &Meta{NumRows: rows, NumCols: cols, ValueType: vt.String(), NumNonZeros: int64(nnz)}
	return writeFiles(path, meta, WriteOptions{DocumentLayout: doc}, func(w io.Writer) error {
		hdr := binary.LittleEndian.AppendUint64(matrixHeader(KindCSR, vt, doc, rows, cols, BodySparse), nnz)
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		if doc {
			return sparseRows(w, src, rows)
		}
		var buf [8]byte
		put := func(x uint64) error {
			_, err := w.Write(binary.LittleEndian.AppendUint64(buf[:0], x))
			return err
		}
		// Row offsets: rowOffsets[r+1] is the count up to row r.
		var k, next uint64 // entries so far; the next offset to write
		if err := put(0); err != nil {
			return err
		}
		err := src.Nonzeros(0, binary.LittleEndian, func(r, _ int64, _ []byte) error {
			for ; next < uint64(r); next++ {
				if err := put(k); err != nil {
					return err
				}
			}
			k++
			return nil
		})
		for ; err == nil && next < rows; next++ {
			err = put(k)
		}
		if err == nil {
			k = 0
			err = src.Nonzeros(0, binary.LittleEndian, func(_, c int64, _ []byte) error {
				k++
				return put(uint64(c))
			})
		}
		if err == nil && k == nnz {
			k = 0
			err = src.Nonzeros(0, binary.LittleEndian, func(_, _ int64, v []byte) error {
				k++
				_, err := w.Write(v)
				return err
			})
		}
		if err == nil && k != nnz {
			err = fmt.Errorf("%s: %d nonzeros, then %d", format.Describe(rec), nnz, k)
		}
		return err
	})
}

// sparseRows writes the nonzeros of src's record 0 as the format
// document's rows: a count u32, then (column u32, value) pairs; one row's
// entries are held at a time.
func sparseRows(w io.Writer, src format.Sparse, rows uint64) error {
	var row []byte
	var n uint32
	var cur uint64
	var buf [4]byte
	flush := func(upTo uint64) error {
		for ; cur < upTo; cur++ {
			if _, err := w.Write(binary.LittleEndian.AppendUint32(buf[:0], n)); err != nil {
				return err
			}
			if _, err := w.Write(row); err != nil {
				return err
			}
			row, n = row[:0], 0
		}
		return nil
	}
	err := src.Nonzeros(0, binary.LittleEndian, func(r, c int64, v []byte) error {
		if err := flush(uint64(r)); err != nil {
			return err
		}
		row = binary.LittleEndian.AppendUint32(row, uint32(c))
		row = append(row, v...)
		n++
		return nil
	})
	if err != nil {
		return err
	}
	return flush(rows)
}

// writeFrameFrom writes the table of src as a frame, interleaving batches
// of rows from format.ScanTable.
func writeFrameFrom(path string, src format.Source, doc bool) error {
	cols := format.TableColumns(src)
	rows := uint64(cols[0].Shape[0])
	labels := make([]string, len(cols))
	types := make([]ValueType, len(cols))
	meta := &Meta{NumRows: rows, NumCols: uint64(len(cols)), NumNonZeros: -1, Schema: make([]SchemaColumn, len(cols))}
	for i := range cols {
		c := &cols[i]
		vt, err := valueTypeOfRecord(c, doc)
		if err != nil {
			return err
		}
		labels[i], types[i] = c.Name, vt
		meta.Schema[i] = SchemaColumn{Label: c.Name, ValueType: vt.String()}
	}
	if err := checkLabels(path, labels, false); err != nil {
		return err
	}
	hdr, rowSize := frameHeader(rows, labels, types, doc)
	return writeFiles(path, meta, WriteOptions{DocumentLayout: doc}, func(w io.Writer) error {
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		if rowSize == 0 {
			return nil
		}
		batch := max(1, frameChunk/rowSize)
		buf := make([]byte, batch*rowSize)
		colBytes := make([][]byte, len(cols))
		var done uint64
		err := format.ScanTable(src, batch, func(first int64, cs []format.Column) error {
			var k int
			off := 0
			for c := range cs {
				t, b, ok := layout.BytesOf(cs[c].Values)
				if !ok || t != cols[c].Type {
					return format.Unrepresentable(&cols[c], fmt.Sprintf("its values are %T, not %s", cs[c].Values, cols[c].Type))
				}
				size := t.Size()
				k = len(b) / size
				if r := slices.IndexFunc(cs[c].Reason, func(r int8) bool { return r >= 0 }); r >= 0 {
					return format.Unrepresentable(&cols[c], fmt.Sprintf("row %d is null; DAPHNE frames have no nulls", first+int64(r)))
				}
				if doc {
					colBytes[c] = b
					continue
				}
				scatter(buf, b, 0, k, rowSize, off, size)
				off += size
			}
			done += uint64(k)
			if doc {
				// One block per column for each batch of rows.
				return frameColumnBlocks(w, uint64(first), k, types, colBytes, 0)
			}
			_, err := w.Write(buf[:k*rowSize])
			return err
		})
		if err == nil && done != rows {
			err = errAt(path, -1, nil, fmt.Sprintf("%d rows, the table gave %d", rows, done))
		}
		return err
	})
}

// formatState is the File's format-neutral state, built on first use.
type formatState struct {
	recsOnce sync.Once
	recs     []format.Record
	pays     format.Payloads
}
