package npy

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// writeFormat writes src as a .npz archive when path ends in .npz, else
// as a .npy file.
func writeFormat(path string, src format.Source, o *format.Options) error {
	var opts Options
	if o != nil {
		opts.Options = o.Options
		opts.LargeHeaders = o.Param("npy-large-headers") == "true"
	}
	if strings.EqualFold(filepath.Ext(path), ".npz") {
		return writeNPZ(path, src, &opts)
	}
	return writeNPYSource(path, src, &opts)
}

// ownFile returns the npy File behind src when src is one openFormat
// made, unwrapped.
func ownFile(src format.Source) *File {
	switch s := src.(type) {
	case *File:
		return s
	}
	return nil
}

// writeNPYSource writes the one array, or the table, of src as a .npy.
func writeNPYSource(path string, src format.Source, o *Options) error {
	if f := ownFile(src); f != nil && !f.isZip {
		// A .npy to a .npy: the same header and data, so a file that
		// np.save wrote converts to the same bytes, whatever its dtype.
		f.mu.RLock()
		a := f.arrays[0]
		f.mu.RUnlock()
		return atomicfile.Write(path, o.Perm, func(w *os.File) error {
			return writeEncoded(path, atomicfile.Writeback(w), a.h.encoded(), a.h.dataSize, o, func(out io.Writer) error { return f.copyData(a, out) })
		})
	}
	recs := src.Records()
	if len(recs) == 1 && recs[0].Kind != format.KindColumn {
		if _, ok := format.TextTypeOf(&recs[0]); ok {
			h, data, err := textArray(src, 0)
			if err != nil {
				return err
			}
			return atomicfile.Write(path, o.Perm, func(w *os.File) error {
				return writeNPY(path, atomicfile.Writeback(w), h, o, data)
			})
		}
	}
	for i := range recs {
		if recs[i].Kind == format.KindOpaque {
			return format.Unrepresentable(&recs[i], "a .npy file cannot hold "+recs[i].TypeString()+" values")
		}
	}
	columns := len(recs) > 0
	for i := range recs {
		columns = columns && recs[i].Kind == format.KindColumn
	}
	single := len(recs) == 1 && (recs[0].Kind == format.KindArray || recs[0].Name == "0")
	if !single && (columns || (len(recs) > 1 && format.IsTable(src))) {
		return writeTable(path, src, o)
	}
	if len(recs) != 1 {
		return errAt(path, -1, format.ErrNotRepresentable, "a .npy file holds one array, and the %d records are not the columns of a table; write an .npz, or choose one record (mmapkit convert --name NAME; format.Select)", len(recs))
	}
	h, err := arrayHeader(&recs[0])
	if err != nil {
		return err
	}
	if !recs[0].Type.Valid() {
		return writeTable(path, src, o)
	}
	return atomicfile.Write(path, o.Perm, func(w *os.File) error {
		return writeNPY(path, atomicfile.Writeback(w), h, o, func(out io.Writer) error { return streamRecord(src, 0, h, out) })
	})
}

// canonical is the header np.save writes for the array a header
// describes: Fortran order only where C order would list the elements
// differently.
func canonical(h Header) Header {
	h.FortranOrder = h.FortranOrder && !layout.Trivial(h.Shape)
	return h
}

// copyData writes the array's data as stored. An error of reading names
// this file; an error of out (a full disk) is returned as out gave it, for
// the writer to name its own file.
func (f *File) copyData(a *array, out io.Writer) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	src, base, err := f.source(a)
	if err != nil {
		return err
	}
	in := &readerErr{r: io.NewSectionReader(src, base, a.h.dataSize)}
	var bools *boolWriter
	if a.h.DType.Kind == 'b' {
		bools = &boolWriter{w: out, fix: f.opts.Lenient, bad: -1}
		out = bools
	}
	_, err = io.Copy(out, in)
	if bools != nil && bools.bad >= 0 {
		off := int64(-1)
		if !a.deflated() {
			off = a.data + bools.bad
		}
		return f.errf(off, mmapfile.ErrInvalidBool, "%q, element %d: byte 0x%02x in a bool array, which NumPy reads as true and mmapkit's readers refuse: not copied (Options.Lenient copies it as 1)", a.key, bools.bad, bools.badByte)
	}
	if err != nil && in.err != nil {
		return mapRecordErr(f.name, a.key, a.data, err, "reading its data")
	}
	return err
}

// boolWriter passes the bytes of a bool array on to w, stopping at the
// first byte that is neither 0 nor 1 (bad, its index; badByte) or, with
// fix, passing it on as 1.
type boolWriter struct {
	w       io.Writer
	fix     bool
	n       int64 // bytes passed on
	buf     []byte
	bad     int64
	badByte byte
}

// errBadBool stops a copy at a bool byte that is neither 0 nor 1.
var errBadBool = errors.New("a bool byte that is neither 0 nor 1")

func (b *boolWriter) Write(p []byte) (int, error) {
	q := p
	if i := layout.CheckBools(p, layout.Bool, false); i >= 0 {
		if !b.fix {
			b.bad, b.badByte = b.n+int64(i), p[i]
			return 0, errBadBool
		}
		b.buf = append(b.buf[:0], p...)
		layout.CheckBools(b.buf, layout.Bool, true)
		q = b.buf
	}
	n, err := b.w.Write(q)
	b.n += int64(n)
	return n, err
}

// readerErr is a reader that keeps the error its reads gave (io.EOF
// aside), so that a copy's caller can tell them from its writer's.
type readerErr struct {
	r   io.Reader
	err error
}

func (r *readerErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// recordDType is the dtype a writer gives a record: its own NumPy descr
// where it came from a NumPy file (byte order kept), else the
// little-endian dtype of its type (datetime units from the type name).
func recordDType(r *format.Record) (DType, error) {
	if r.Facts != nil && r.Facts.NativeType != "" {
		if d, err := parseDTypeString(r.Facts.NativeType); err == nil && d.Type() == r.Type && (r.Type.Valid() || d.TypeName() == r.TypeName) {
			return d, nil
		}
	}
	if n := r.TypeName; r.Type == layout.I64 && (strings.HasPrefix(n, "datetime64") || strings.HasPrefix(n, "timedelta64")) {
		if d, err := parseDTypeString("<" + n); err == nil {
			return d, nil
		}
	}
	if !r.Type.Valid() {
		if tt, ok := format.TextTypeOf(r); ok && tt.Kind != 0 && tt.Size <= math.MaxInt32/4 {
			if tt.Kind == 'U' {
				return DType{Kind: 'U', ItemSize: 4 * tt.Size}, nil
			}
			return DType{Kind: 'S', ItemSize: tt.Size}, nil
		}
		if rest, ok := strings.CutPrefix(r.TypeName, "void"); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > 0 && strconv.Itoa(n) == rest && n <= math.MaxInt32 {
				return DType{Kind: 'V', ItemSize: n}, nil
			}
		}
		return DType{}, format.Unrepresentable(r, "NumPy has no fixed-size type for "+r.TypeString())
	}
	d, err := DTypeOf(r.Type)
	if err != nil {
		return DType{}, format.Unrepresentable(r, err.Error())
	}
	return d, nil
}

// arrayHeader is the header of a .npy holding record r, in r's storage
// order.
func arrayHeader(r *format.Record) (Header, error) {
	if len(r.Shape) > MaxRank {
		return Header{}, format.Unrepresentable(r, fmt.Sprintf("%d dimensions; NumPy arrays have at most %d", len(r.Shape), MaxRank))
	}
	d, err := recordDType(r)
	if err != nil {
		return Header{}, err
	}
	return canonical(Header{DType: d, Shape: append([]int64{}, r.Shape...), FortranOrder: r.Order == layout.ColMajor}), nil
}

// streamRecord writes record i of src in h's order and byte order.
func streamRecord(src format.Source, i int, h Header, out io.Writer) error {
	return format.Stream(src, i, h.Order(), h.DType.byteOrder(), func(chunk []byte) error {
		_, err := out.Write(chunk)
		return err
	})
}

// tableField is one field of the structured array a table becomes.
type tableField struct {
	col  int // the column
	mask bool
	dt   DType
	text bool // text that ScanTable gives, of a size found by a first pass
}

// tablePlan is the structured dtype a table becomes: one field per
// column, and a bool mask field after each nullable column.
func tablePlan(path string, src format.Source) ([]format.Record, []tableField, error) {
	cols := format.TableColumns(src)
	if len(cols) == 0 {
		return nil, nil, errAt(path, -1, format.ErrNotRepresentable, "the table has no columns")
	}
	var fields []tableField
	names := map[string]bool{}
	for j := range cols {
		c := &cols[j]
		if c.Kind == format.KindOpaque || (len(c.Shape) != 1 || c.Shape[0] != cols[0].Shape[0]) {
			return nil, nil, format.Unrepresentable(c, "a structured .npy needs columns of one length")
		}
		tf := tableField{col: j}
		d, err := recordDType(c)
		switch {
		case err == nil:
			tf.dt = d
		case !c.Type.Valid():
			tf.text = true
			tf.dt = DType{Kind: 'U', ItemSize: 4}
		default:
			return nil, nil, err
		}
		for _, n := range []string{c.Name, c.Name + MaskSuffix} {
			if names[n] {
				return nil, nil, format.Unrepresentable(c, "two fields would be named "+pyRepr(n))
			}
		}
		names[c.Name] = true
		fields = append(fields, tf)
		if c.Nullable {
			names[c.Name+MaskSuffix] = true
			fields = append(fields, tableField{col: j, mask: true, dt: DType{Kind: 'b', ItemSize: 1}})
		}
	}
	return cols, fields, nil
}

// writeTable writes a table as a structured .npy: one field per column.
func writeTable(path string, src format.Source, o *Options) error {
	cols, fields, err := tablePlan(path, src)
	if err != nil {
		return err
	}
	if err := measureText(src, fields); err != nil {
		return err
	}
	dt := DType{}
	for _, tf := range fields {
		name := cols[tf.col].Name
		if tf.mask {
			name += MaskSuffix
		}
		dt.Fields = append(dt.Fields, Field{Name: name, Offset: dt.ItemSize, DType: tf.dt})
		dt.ItemSize += tf.dt.ItemSize
	}
	rows := cols[0].Shape[0]
	h := Header{DType: dt, Shape: []int64{rows}}
	if len(cols) == 1 && cols[0].Name == "0" && !cols[0].Nullable {
		h.DType = fields[0].dt // a .npy's own text array
	}
	return atomicfile.Write(path, o.Perm, func(w *os.File) error {
		return writeNPY(path, atomicfile.Writeback(w), h, o, func(out io.Writer) error { return writeRows(src, fields, h.DType.ItemSize, out) })
	})
}

// measureText sizes the text fields: the longest value of each, in
// characters (at least one).
func measureText(src format.Source, fields []tableField) error {
	need := false
	for _, tf := range fields {
		need = need || tf.text
	}
	if !need {
		return nil
	}
	longest := make([]int, len(fields))
	err := format.ScanTable(src, 1<<16, func(_ int64, cols []format.Column) error {
		for k, tf := range fields {
			if !tf.text || tf.mask {
				continue
			}
			vals, ok := cols[tf.col].Values.([]string)
			if !ok {
				return fmt.Errorf("column %d: text expected, got %T", tf.col, cols[tf.col].Values)
			}
			for _, v := range vals {
				longest[k] = max(longest[k], utf8.RuneCountInString(v))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k := range fields {
		if fields[k].text {
			if fields[k].dt.ItemSize, err = strItemSize(longest[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// strItemSize is the item size of a str type for text of at most longest
// characters (one at least).
func strItemSize(longest int) (int, error) {
	if longest > math.MaxInt32/4 {
		return 0, fmt.Errorf("text of %d characters: %w", longest, format.ErrNotRepresentable)
	}
	return 4 * max(1, longest), nil
}

// writeRows writes the table's rows as structured elements of itemsize
// bytes, the fields packed in order.
func writeRows(src format.Source, fields []tableField, itemsize int, out io.Writer) error {
	batch := max(1, (8<<20)/itemsize)
	buf := make([]byte, batch*itemsize)
	return format.ScanTable(src, batch, func(_ int64, cols []format.Column) error {
		rows := 0
		if len(cols) > 0 {
			rows = cols[0].Len()
		}
		b := buf[:rows*itemsize]
		clear(b)
		off := 0
		for _, tf := range fields {
			c := cols[tf.col]
			size := tf.dt.ItemSize
			switch {
			case tf.mask:
				for r := 0; r < rows; r++ {
					if c.Reason != nil && c.Reason[r] >= 0 {
						b[r*itemsize+off] = 1
					}
				}
			case !tf.dt.Type().Valid():
				vals, ok := c.Values.([]string)
				if !ok {
					return fmt.Errorf("column %d: text expected, got %T", tf.col, c.Values)
				}
				for r, v := range vals {
					if err := encodeText(tf.dt, v, b[r*itemsize+off:r*itemsize+off+size]); err != nil {
						return fmt.Errorf("row %d: %w: %w", r, err, format.ErrNotRepresentable)
					}
				}
			default:
				lt, vb, ok := layout.BytesOf(c.Values)
				if !ok || lt != tf.dt.Type() {
					return fmt.Errorf("column %d: %s values expected, got %T", tf.col, tf.dt.Type(), c.Values)
				}
				tmp := vb
				if !layout.IsHostOrder(tf.dt.byteOrder()) && lt.SwapSize() > 1 {
					tmp = append([]byte(nil), vb...)
					layout.SwapOrder(tmp, lt, layout.HostOrder(), tf.dt.byteOrder())
				}
				for r := 0; r < rows; r++ {
					copy(b[r*itemsize+off:], tmp[r*size:(r+1)*size])
				}
			}
			off += size
		}
		_, err := out.Write(b)
		return err
	})
}
