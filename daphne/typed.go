package daphne

import (
	"slices"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// The typed calls below name a record as every format package does: a
// matrix is the record "matrix" (MatrixName), a frame's columns are
// records named by their labels. T must be the Go type of the record's
// value type (float64 for f64, int32 for si32, …): else the error wraps
// mmapfile.ErrTypeMismatch, DAPHNE's "VT mismatch".

// typedRecord returns the index and descriptor of the record name after
// checking that the file is open and that T is its element type.
func typedRecord[T layout.Elem](f *File, name string) (int, *format.Record, error) {
	recs := f.Records()
	i := slices.IndexFunc(recs, func(r format.Record) bool { return r.Name == name })
	if i < 0 {
		names := make([]string, len(recs))
		for k := range recs {
			names[k] = recs[k].Name
		}
		return 0, nil, f.errf(-1, format.ErrNoRecord, "no record %q; the file holds %q", name, strings.Join(names, `", "`))
	}
	if _, err := f.record(i); err != nil {
		return 0, nil, err
	}
	rec := &recs[i]
	if t := layout.TypeOf[T](); rec.Type != t {
		off, vt := int64(headerSize), f.hdr.ValueType
		if f.hdr.Kind == KindFrame {
			off, vt = int64(headerSize+i), f.hdr.ColumnTypes[i]
		}
		var z T
		return 0, nil, f.errf(off, mmapfile.ErrTypeMismatch, "%T access to record %q of %v values (DAPHNE's \"VT mismatch\")", z, name, vt)
	}
	return i, rec, nil
}

// View returns the values of the dense matrix (name "matrix"), row-major,
// as a slice that aliases the file's mapping. It never copies: where the
// values cannot be aliased it fails, naming Read, which copies. In
// DAPHNE's layout the values start at byte 45, so only si8 and ui8
// matrices can be viewed (mmapfile.ErrMisaligned for the others; see
// DenseValues, which views where it can and copies otherwise); a CSR
// matrix, a frame's columns (interleaved row by row), a matrix of several
// blocks and a File from NewReader are not one mapped run (ErrNotMapped).
// The slice is valid until Close.
func View[T layout.Elem](f *File, name string) ([]T, error) {
	i, _, err := typedRecord[T](f, name)
	if err != nil {
		return nil, err
	}
	return format.View[T](f, i)
}

// Read returns a copy of the record name's values: a matrix's values
// row-major (a CSR matrix's dense values, within Options.MaxAlloc; ReadCSR
// keeps it sparse), a frame column's values in row order. A DAPHNE file's
// dense values are copied with one bulk memmove.
func Read[T layout.Elem](f *File, name string) ([]T, error) {
	i, rec, err := typedRecord[T](f, name)
	if err != nil {
		return nil, err
	}
	if f.hdr.Kind != KindFrame && !f.contiguous() {
		// Cells the file does not store one by one (sparse, empty
		// blocks) are bounded by MaxAlloc, not by the file's size.
		n, err := f.elems(uint64(rec.Shape[0]), uint64(cols(rec)))
		if err != nil {
			return nil, err
		}
		if nb := int64(n) * int64(rec.Type.Size()); nb > f.opts.maxAlloc() {
			hint := ""
			if f.hdr.Kind == KindCSR {
				hint = "; read it sparse with ReadCSR or Nonzeros"
			}
			return nil, f.errf(2, mmapfile.ErrTooLarge, "record %q: %s dense values need %d bytes, Options.MaxAlloc is %d%s", rec.Name, layout.ShapeString(rec.Shape), nb, f.opts.maxAlloc(), hint)
		}
	}
	return format.Read[T](f, i)
}

// cols is the number of columns of a 2-D record, 1 for a column.
func cols(rec *format.Record) int64 {
	if len(rec.Shape) < 2 {
		return 1
	}
	return rec.Shape[1]
}

// ReadAt copies the values [start, start+len(dst)) of the record name, in
// row-major order (a matrix's rows one after another, a frame column's
// rows), into dst: a part of a huge matrix in bounded memory, also of a
// CSR one. It fills dst or returns an error (mmapfile.ErrOutOfRange for a
// range outside the record).
func ReadAt[T layout.Elem](f *File, name string, start int64, dst []T) error {
	i, _, err := typedRecord[T](f, name)
	if err != nil {
		return err
	}
	return format.ReadAt(f, i, start, dst)
}

// Set changes the element of the dense matrix (name "matrix") at the
// 0-based index idx, [row, col], to v in place, through a read-write
// mapping (OpenFile with mmapfile.ReadWrite). An index outside the matrix
// wraps mmapfile.ErrOutOfRange; CSR matrices and frames are not changed in
// place (errors.ErrUnsupported). The change is visible to every reader of
// the file at once and durable after Sync or Close.
func Set[T layout.Elem](f *File, name string, idx []int64, v T) error {
	i, rec, err := typedRecord[T](f, name)
	if err != nil {
		return err
	}
	if err := f.checkSet(rec, idx); err != nil {
		return err
	}
	return format.Set(f, i, idx, v)
}
