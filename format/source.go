package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// StreamBytes is the size of the chunks Stream hands to a writer.
const StreamBytes = 8 << 20

// Stream reads record i of src from its first element to its last, in
// order and byte order bo, and calls fn with consecutive chunks of about
// StreamBytes (whole elements; for arrays of rank ≥ 2, whole rows of the
// order's slowest axis where they fit). The next chunk is read — and
// transposed, where the orders differ — while fn consumes the current one,
// so a writer's I/O and the reading overlap on two cores. The chunk must
// not be kept after fn returns.
func Stream(src Source, i int, order layout.Order, bo binary.ByteOrder, fn func(chunk []byte) error) error {
	rec := RecordAt(src, i)
	size := int64(rec.Type.Size())
	if size == 0 {
		return fmt.Errorf("record %q: type %s cannot be read as values: %w", rec.Name, rec.TypeString(), errors.ErrUnsupported)
	}
	n, err := layout.Count(rec.Shape)
	if err != nil {
		return fmt.Errorf("record %q: %w", rec.Name, err)
	}
	if n == 0 {
		return nil
	}
	per := max(1, StreamBytes/size)
	if len(rec.Shape) >= 2 {
		// Whole rows of the target order, so that transposed reads go
		// straight into the chunk.
		q := geometry(rec.Shape, order)
		row := n / max(1, q[0])
		if row > 0 && row <= per {
			per = per / row * row
		}
	}
	per = min(per, n)
	type chunk struct {
		b   []byte
		err error
	}
	bufs := [2][]byte{unsafeslice.AlignedBytes(per * size), nil}
	if n > per {
		bufs[1] = unsafeslice.AlignedBytes(per * size)
	}
	read := func(buf []byte, first int64) chunk {
		k := min(per, n-first)
		b := buf[:k*size]
		return chunk{b, src.ReadArray(i, b, first, order, bo)}
	}
	cur := read(bufs[0], 0)
	for first, k := int64(0), 0; ; k ^= 1 {
		if cur.err != nil {
			return cur.err
		}
		next := first + int64(len(cur.b))/size
		var pending chan chunk
		if next < n {
			pending = make(chan chunk, 1)
			go func(buf []byte, at int64) { pending <- read(buf, at) }(bufs[k^1], next)
		}
		ferr := fn(cur.b)
		if pending == nil {
			return ferr
		}
		nc := <-pending
		if ferr != nil {
			return ferr
		}
		cur, first = nc, next
	}
}

// ReadAll copies the whole of record i in order and byte order bo into a
// new slice aligned for any element type.
func ReadAll(src Source, i int, order layout.Order, bo binary.ByteOrder) ([]byte, error) {
	rec := RecordAt(src, i)
	nb, err := layout.ByteSize(rec.Type, rec.Shape)
	if err != nil {
		return nil, fmt.Errorf("record %q: %w", rec.Name, err)
	}
	buf := unsafeslice.AlignedBytes(nb)
	if nb == 0 {
		return buf, nil
	}
	return buf, src.ReadArray(i, buf, 0, order, bo)
}

// Select returns a Source holding only the named records of src, in the
// order given. Names match as Find matches them, in time linear in the
// numbers of records and names.
func Select(src Source, names ...string) (Source, error) {
	s := &view{src: src, index: make([]int, 0, len(names)), recs: make([]Record, 0, len(names))}
	find := func(name string) (int, error) { return Find(src, name) }
	if len(names) > 8 {
		find = finder(src) // a few names need no list of every record
	}
	for _, name := range names {
		i, err := find(name)
		if err != nil {
			return nil, err
		}
		s.index = append(s.index, i)
		s.recs = append(s.recs, RecordAt(src, i))
	}
	return s, nil
}

// finder returns Find's lookup over src's records through two maps built
// once: a name's first exact match, else the first record whose name
// equals it when a leading "/" is dropped from both, else what src's
// Resolver says.
func finder(src Source) func(name string) (int, error) {
	recs := src.Records()
	exact := make(map[string]int, len(recs))
	trimmed := make(map[string]int, len(recs))
	for i := len(recs) - 1; i >= 0; i-- {
		exact[recs[i].Name] = i
		trimmed[strings.TrimPrefix(recs[i].Name, "/")] = i
	}
	return func(name string) (int, error) {
		if i, ok := exact[name]; ok {
			return i, nil
		}
		if i, ok := trimmed[strings.TrimPrefix(name, "/")]; ok {
			return i, nil
		}
		if r, ok := src.(Resolver); ok {
			return r.Resolve(name)
		}
		return -1, noRecord(src, name)
	}
}

// Rename returns a Source whose records carry the given names, in record
// order. Its records are described on demand from src's, so renaming a
// source of many records holds no second list of them.
func Rename(src Source, names []string) (Source, error) {
	if n := NumRecords(src); len(names) != n {
		return nil, fmt.Errorf("%d names for %d records", len(names), n)
	}
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("the name %q is given twice", name)
		}
		seen[name] = true
	}
	s := &view{src: src, index: make([]int, len(names)), names: slices.Clone(names)}
	for i := range s.index {
		s.index[i] = i
	}
	return s, nil
}

// view is a Source over some records of another, possibly renamed: a
// selection lists its records when made; a renaming (names set)
// describes each from src's on demand.
type view struct {
	src   Source
	index []int
	names []string

	once sync.Once
	recs []Record
}

func (v *view) NumRecords() int { return len(v.index) }

func (v *view) Record(i int) Record {
	if v.names == nil {
		return v.recs[i]
	}
	r := RecordAt(v.src, v.index[i])
	r.Name = v.names[i]
	return r
}

func (v *view) Records() []Record {
	if v.names != nil {
		v.once.Do(func() {
			recs := make([]Record, len(v.index))
			for i := range recs {
				recs[i] = v.Record(i)
			}
			v.recs = recs
		})
	}
	return v.recs
}

func (v *view) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	return v.src.ReadArray(v.index[i], dst, first, order, bo)
}

func (v *view) ScanTable(batch int, fn func(first int64, cols []Column) error) error {
	return v.scan(batch, nil, fn)
}

func (v *view) ScanTableText(batch int, text []bool, fn func(first int64, cols []Column) error) error {
	return v.scan(batch, text, fn)
}

// scan is ScanTable, or ScanTableText with text (by the view's columns).
// Over a source that scans its own table, the view's columns are picked
// from the batches of all of them; over any other, only the view's
// columns are read.
func (v *view) scan(batch int, text []bool, fn func(first int64, cols []Column) error) error {
	if cs, ok := v.src.(ColumnScanner); ok && text == nil {
		return cs.ScanColumns(v.index, batch, fn)
	}
	if _, ok := v.src.(TableScanner); text == nil && (!ok || !hasColumns(v.src)) {
		return scanRecords(v, batch, fn)
	}
	// Each view column's position among the underlying table's columns.
	want := make(map[int][]int, len(v.index))
	for j, i := range v.index {
		want[i] = append(want[i], j)
	}
	pick := make([]int, len(v.index))
	for j := range pick {
		pick[j] = -1
	}
	ncols := 0
	EachRecord(v.src, func(i int, r *Record) error {
		if r.Kind == KindColumn {
			for _, j := range want[i] {
				pick[j] = ncols
			}
			ncols++
		}
		return nil
	})
	for j, k := range pick {
		if k < 0 {
			return fmt.Errorf("record %q is not a table column", RecordAt(v.src, v.index[j]).Name)
		}
	}
	out := make([]Column, len(pick))
	pass := func(first int64, cols []Column) error {
		for j, k := range pick {
			out[j] = cols[k]
		}
		return fn(first, out)
	}
	if text == nil {
		return ScanTable(v.src, batch, pass)
	}
	under := make([]bool, ncols)
	for j, k := range pick {
		under[k] = under[k] || text[j]
	}
	return ScanTableText(v.src, batch, under, pass)
}

func (v *view) IsSparse(i int) bool {
	s, ok := v.src.(Sparse)
	return ok && s.IsSparse(v.index[i])
}

func (v *view) Nonzeros(i int, bo binary.ByteOrder, fn func(row, col int64, value []byte) error) error {
	s, ok := v.src.(Sparse)
	if !ok {
		return errors.ErrUnsupported
	}
	return s.Nonzeros(v.index[i], bo, fn)
}

// IsTable reports whether src holds a table: records that are all columns
// of one length, or 1-D arrays of one length (which any table format can
// take as columns). A table's nulls may travel through array formats as
// an i8 array named "<column>.reason" after its column (see ScanTable).
func IsTable(src Source) bool {
	if NumRecords(src) == 0 {
		return false
	}
	rows := int64(-1)
	return EachRecord(src, func(_ int, r *Record) error {
		if (r.Kind != KindColumn && r.Kind != KindArray) || len(r.Shape) != 1 || (rows >= 0 && r.Shape[0] != rows) {
			return errNotTable
		}
		rows = r.Shape[0]
		return nil
	}) == nil
}

// errNotTable stops IsTable's walk at the first record that is no column.
var errNotTable = errors.New("not a table")

// ScanTable calls fn with batches of at most batch rows of src's table:
// through the file's own TableScanner where it has one, else by reading
// the records (columns, or equal-length 1-D arrays) with ReadArray. In
// the latter case an i8 record "<name>.reason" right after the record
// <name> is taken as that column's nulls (-1 where a value is present),
// the form in which nullable columns travel through array formats.
func ScanTable(src Source, batch int, fn func(first int64, cols []Column) error) error {
	if ts, ok := src.(TableScanner); ok && hasColumns(src) {
		return ts.ScanTable(batch, fn)
	}
	if !IsTable(src) {
		return notATable(src)
	}
	return scanRecords(src, batch, fn)
}

// BatchRows bounds a batch of batch table rows of rowBytes bytes each to
// 8 MiB (one row at least), for the table scans: a table of a million
// columns is read a few rows at a time.
func BatchRows(batch int, rowBytes int64) int {
	return int(max(1, min(int64(batch), (8<<20)/max(1, rowBytes))))
}

// scanRecords is ScanTable by ReadArray of each column's record.
func scanRecords(src Source, batch int, fn func(first int64, cols []Column) error) error {
	// Which records are columns and which carry another's nulls.
	type col struct {
		rec, reason int // reason: the record of its nulls, or -1
		typ         layout.Type
	}
	var cols []col
	rows := int64(-1)
	rowBytes := int64(0)
	err := eachColumn(src, func(rec, reason int, r *Record) error {
		if !r.Type.Valid() {
			return fmt.Errorf("record %q: type %s cannot be read as values: %w", r.Name, r.TypeString(), errors.ErrUnsupported)
		}
		if rows < 0 {
			rows = r.Shape[0]
		}
		cols = append(cols, col{rec: rec, reason: reason, typ: r.Type})
		rowBytes += int64(r.Type.Size())
		if reason >= 0 {
			rowBytes++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if batch <= 0 {
		batch = 1 << 16
	}
	batch = BatchRows(batch, rowBytes)
	// One buffer for the batch, each column's part 8-byte aligned (a part
	// is at most 8 MiB: BatchRows).
	part := func(n int64) int64 {
		p, _ := layout.AlignUp(n, 8)
		return p
	}
	var total int64
	for _, c := range cols {
		total += part(int64(batch) * int64(c.typ.Size()))
		if c.reason >= 0 {
			total += part(int64(batch))
		}
	}
	buf := unsafeslice.AlignedBytes(total)
	out := make([]Column, len(cols))
	host := layout.HostOrder()
	for first := int64(0); first < rows || (first == 0 && rows <= 0); first += int64(batch) {
		k := max(0, min(int64(batch), rows-first))
		at := int64(0)
		for j, c := range cols {
			n := k * int64(c.typ.Size())
			b := buf[at : at+n]
			at += part(int64(batch) * int64(c.typ.Size()))
			if k > 0 {
				if err := src.ReadArray(c.rec, b, first, layout.RowMajor, host); err != nil {
					return err
				}
			}
			out[j] = Column{Values: layout.SliceOf(c.typ, b)}
			if c.reason >= 0 {
				rb := buf[at : at+k]
				at += part(int64(batch))
				if k > 0 {
					if err := src.ReadArray(c.reason, rb, first, layout.RowMajor, host); err != nil {
						return err
					}
				}
				out[j].Reason = layout.SliceOf(layout.I8, rb).([]int8)
			}
		}
		if err := fn(first, out); err != nil {
			return err
		}
		if rows <= 0 {
			break
		}
	}
	return nil
}

// HasText reports whether src's table can give its columns as the text
// they are stored as (see TextTable), also through Select and Rename.
func HasText(src Source) bool {
	if v, ok := src.(*view); ok {
		return HasText(v.src)
	}
	_, ok := src.(TextTable)
	return ok && hasColumns(src)
}

// ScanTableText is ScanTable with the columns j for which text[j] is true
// given as the text they are stored as ([]string; see TextTable). A src
// without such text (HasText false) gives an error wrapping
// errors.ErrUnsupported when any text[j] is true.
func ScanTableText(src Source, batch int, text []bool, fn func(first int64, cols []Column) error) error {
	want := false
	for _, t := range text {
		want = want || t
	}
	if !want {
		return ScanTable(src, batch, fn)
	}
	if !HasText(src) {
		return fmt.Errorf("the table's columns are not stored as text: %w", errors.ErrUnsupported)
	}
	if len(text) != len(TableColumns(src)) {
		return fmt.Errorf("%d text flags for %d columns", len(text), len(TableColumns(src)))
	}
	return src.(TextTable).ScanTableText(batch, text, fn)
}

// TableColumns describes the columns ScanTable gives for src: the records
// of its columns, a nullable column's "<name>.reason" record folded into
// it. EachTableColumn gives them one at a time.
func TableColumns(src Source) []Record {
	var out []Record
	EachTableColumn(src, func(r *Record) error {
		out = append(out, *r)
		return nil
	})
	return out
}

// EachTableColumn calls fn with each column TableColumns lists, in order,
// without holding the list where src is a RecordLister (a frame of a
// million columns), stopping at the first error fn returns, which it
// returns. *r must not be kept after fn returns.
func EachTableColumn(src Source, fn func(r *Record) error) error {
	return eachColumn(src, func(_, _ int, r *Record) error { return fn(r) })
}

// eachColumn calls fn with each column of src's table: the index of its
// values' record, that of its nulls' record (-1 for none) and its record
// (Nullable where the nulls are a record of their own).
func eachColumn(src Source, fn func(rec, reason int, r *Record) error) error {
	if _, ok := src.(TableScanner); ok && hasColumns(src) {
		return EachRecord(src, func(i int, r *Record) error {
			if r.Kind != KindColumn {
				return nil
			}
			return fn(i, -1, r)
		})
	}
	// A record is held until the next shows whether it carries its nulls.
	var held Record
	at := -1
	err := EachRecord(src, func(i int, r *Record) error {
		if at >= 0 {
			k := at
			at = -1
			if r.Type == layout.I8 && r.Name == held.Name+".reason" {
				held.Nullable = true
				return fn(k, i, &held)
			}
			if err := fn(k, -1, &held); err != nil {
				return err
			}
		}
		held, at = *r, i
		return nil
	})
	if err == nil && at >= 0 {
		err = fn(at, -1, &held)
	}
	return err
}

// notATable names the first record that keeps src from being a table.
func notATable(src Source) error {
	if NumRecords(src) == 0 {
		return fmt.Errorf("%w: there are no records to make a table of", ErrNotRepresentable)
	}
	first := RecordAt(src, 0)
	return EachRecord(src, func(_ int, r *Record) error {
		switch {
		case r.Kind != KindColumn && r.Kind != KindArray:
			return Unrepresentable(r, "a table holds arrays and columns only")
		case len(r.Shape) == 0:
			return Unrepresentable(r, "a scalar (a 0-d array) cannot be a table column, which is 1-D")
		case len(r.Shape) != 1:
			return Unrepresentable(r, "a table's columns are 1-D")
		case r.Shape[0] != first.Shape[0]:
			return Unrepresentable(r, fmt.Sprintf("a table's columns have one length, and %s has %d", Describe(&first), first.Shape[0]))
		}
		return nil
	})
}

// hasColumns reports whether src's records are table columns.
func hasColumns(src Source) bool {
	return NumRecords(src) > 0 && RecordAt(src, 0).Kind == KindColumn
}

// Describe names a record for error messages: `record "x" (f64[2][3])`.
func Describe(r *Record) string {
	return fmt.Sprintf("record %q (%s%s)", r.Name, r.TypeString(), layout.ShapeString(r.Shape))
}

// Unrepresentable returns an error wrapping ErrNotRepresentable that names
// the record and says what the target format lacks ("DAPHNE has no
// complex numbers").
func Unrepresentable(r *Record, why string) error {
	return fmt.Errorf("%s: %w: %s", Describe(r), ErrNotRepresentable, why)
}

// Arrays returns src as arrays, for writers of formats that hold arrays
// but no tables: a nullable column is followed by an i8 record
// "<name>.reason" (-1 where a value is present, else the missing reason),
// the form in which ScanTable reads nulls back; a column of a type that
// layout lacks (text) is an error wrapping ErrNotRepresentable. Sources
// without such columns are returned as they are.
func Arrays(src Source) (Source, error) { return arrays(src, false) }

// ArraysWithText is Arrays for writers of formats that hold text too: a
// text column (see TextTypeOf) is kept as it is, for ReadText.
func ArraysWithText(src Source) (Source, error) { return arrays(src, true) }

func arrays(src Source, text bool) (Source, error) {
	need := false
	err := EachRecord(src, func(_ int, r *Record) error {
		if _, ok := TextTypeOf(r); ok && text {
			need = need || (r.Kind == KindColumn && r.Nullable)
			return nil
		}
		if r.Kind == KindColumn && !r.Type.Valid() {
			return Unrepresentable(r, "the type "+r.TypeString()+" has no array equivalent")
		}
		if r.Kind == KindColumn && r.Nullable {
			need = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !need {
		return src, nil
	}
	recs := src.Records()
	a := &withReasons{src: src}
	for i, r := range recs {
		a.recs = append(a.recs, r)
		a.index = append(a.index, i)
		if r.Kind == KindColumn && r.Nullable {
			reason := Record{Array: layout.Array{Name: r.Name + ".reason", Type: layout.I8, Shape: r.Shape, Offset: -1, Size: r.Shape[0]}, Kind: KindColumn}
			a.recs = append(a.recs, reason)
			a.index = append(a.index, -1-i)
		}
	}
	return a, nil
}

// withReasons is Arrays' view: index[k] ≥ 0 is a record of src, -1-i the
// nulls of src's record i, read from the table on first use.
type withReasons struct {
	src     Source
	recs    []Record
	index   []int
	reasons map[int][]int8 // by src record
}

func (a *withReasons) Records() []Record { return a.recs }

func (a *withReasons) ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error {
	if a.index[i] >= 0 {
		return a.src.ReadArray(a.index[i], dst, first, order, bo)
	}
	if a.reasons == nil {
		if err := a.load(); err != nil {
			return err
		}
	}
	r := a.reasons[-1-a.index[i]]
	if end, ok := layout.Add(first, int64(len(dst))); first < 0 || !ok || end > int64(len(r)) {
		return fmt.Errorf("record %q: elements [%d, +%d) outside [0, %d): %w", a.recs[i].Name, first, len(dst), len(r), mmapfile.ErrOutOfRange)
	}
	for k := range dst {
		dst[k] = byte(r[first+int64(k)])
	}
	return nil
}

// load reads every nullable column's reasons in one scan of the table.
func (a *withReasons) load() error {
	recs := a.src.Records()
	var cols []int // src record of each table column
	for i, r := range recs {
		if r.Kind == KindColumn {
			cols = append(cols, i)
		}
	}
	out := map[int][]int8{}
	for _, i := range cols {
		if recs[i].Nullable {
			out[i] = make([]int8, 0, recs[i].Shape[0])
		}
	}
	err := ScanTable(a.src, 1<<16, func(first int64, c []Column) error {
		for j, i := range cols {
			if _, ok := out[i]; !ok {
				continue
			}
			if c[j].Reason == nil {
				n := columnLen(c[j].Values)
				for k := 0; k < n; k++ {
					out[i] = append(out[i], -1)
				}
				continue
			}
			out[i] = append(out[i], c[j].Reason...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	a.reasons = out
	return nil
}

// Len is the number of cells in the batch.
func (c *Column) Len() int { return columnLen(c.Values) }

// columnLen is the length of a column's Values.
func columnLen(v any) int {
	if s, ok := v.([]string); ok {
		return len(s)
	}
	if t, b, ok := layout.BytesOf(v); ok {
		return len(b) / t.Size()
	}
	return 0
}
