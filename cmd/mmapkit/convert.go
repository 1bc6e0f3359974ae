package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/spf13/cobra"
)

// convertOptions are the output flags of convert.
type convertOptions struct {
	to          string
	names       []string
	abfVersion  string // "A" or "C"
	abfBits     bool
	text        bool
	aligned     int64 // 0: off; else the alignment in bytes (element size = -1)
	outScidbFmt string
}

// writer writes a dataset to path (a temporary name beside the target;
// writers may create companion files path+suffix, which are renamed along).
type writer func(e *env, path string, ds *dataset, o *convertOptions) error

var writers = map[string]writer{}

// dataset is a whole input in memory, as convert moves it: arrays (row-major,
// host order) or one table.
type dataset struct {
	format      string
	arrays      []*arrayData
	table       []columnData // nil unless the input is a table
	scidbFormat string       // the input's SciDB format string, if any
}

// arrayData is one array (or string) record in memory.
type arrayData struct {
	name     string
	named    bool // the name came from the file (not a position)
	elem     layout.Type
	bits     bool // an ABF BitArray (elements are bool bytes)
	shape    []int64
	data     []byte   // row-major, host order, aligned; bool as 0/1 bytes
	csr      *csrData // a DAPHNE CSR matrix, with data also filled in densely
	isString bool     // an ABF String record: text
	text     string
}

func newConvertCmd(e *env) *cobra.Command {
	var rf readFlags
	var from, names string
	var o convertOptions
	var aligned string
	cmd := &cobra.Command{
		Use:   "convert [flags] IN OUT",
		Short: "Convert between ABF, Futhark, DAPHNE, SciDB and CSV, preserving logical shape and values",
		Long: `convert reads every record of IN and writes them to OUT in the format of OUT's extension
(.abf .fut .in .out .data .dbdf .scidb .csv) or --to. Logical shapes and values are preserved:
ABF's column-major arrays are transposed so that Julia's x[i,j] is x[i-1][j-1] everywhere else.

Names: ABF keys come from the input's names, or --names a,b,c, or 0, 1, … for unnamed values.
Bool arrays become ABF Array{Bool} unless --abf-bits. A DAPHNE CSR matrix becomes a dense array
unless the target is DAPHNE. Tables (DAPHNE frames, SciDB files, CSV) become one 1-D array per
column (a nullable column adds "<name>.reason", i8, -1 where present); equal-length 1-D arrays
become a table for DAPHNE (a frame), SciDB and CSV. A value the target cannot represent (an i128
into Futhark, a null into a non-null column) is an error naming the record.

The output is written to a temporary file beside OUT and renamed into place: a failed
conversion leaves nothing behind.`,
		Example: `  mmapkit convert data.abf data.fut
  mmapkit convert --text --names x,y data.fut data.abf
  mmapkit convert --abf-version A matrix.dbdf matrix.abf
  mmapkit convert --scidb-format '(int64, double null)' cells.scidb cells.csv
  mmapkit convert --aligned=64 data.abf data.in`,
		Args: exactArgs(2, "IN OUT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, out := args[0], args[1]
			if from != "" {
				if rf.format != "" && rf.format != from {
					return usageErr("convert: --from %s and --format %s disagree", from, rf.format)
				}
				rf.format = from
			}
			if o.to == "" {
				if o.outScidbFmt != "" {
					o.to = "scidb"
				} else if f, ok := byExtension[strings.ToLower(filepath.Ext(out))]; ok {
					o.to = f
				} else {
					return usageErr("convert: cannot tell the output format from %q; use --to", out)
				}
			}
			if !validFormat(o.to) {
				return usageErr("convert: unknown output format %q (want one of %s)", o.to, strings.Join(formats, ", "))
			}
			switch strings.ToUpper(o.abfVersion) {
			case "", "C":
				o.abfVersion = "C"
			case "A":
				o.abfVersion = "A"
			default:
				return usageErr("convert: --abf-version must be A or C")
			}
			if cmd.Flags().Changed("aligned") {
				switch aligned {
				case "", "elem", "element":
					o.aligned = -1
				default:
					a, err := strconv.ParseInt(aligned, 10, 64)
					if err != nil || a < 1 || a > 4096 || a&(a-1) != 0 {
						return usageErr("convert: --aligned takes a power of two up to 4096 (or nothing for the element size)")
					}
					o.aligned = a
				}
			}
			for _, c := range []struct {
				set  bool
				flag string
				to   string
			}{
				{o.text, "--text", "futhark"},
				{cmd.Flags().Changed("aligned"), "--aligned", "futhark"},
				{o.abfBits, "--abf-bits", "abf"},
				{cmd.Flags().Changed("abf-version"), "--abf-version", "abf"},
				{o.outScidbFmt != "", "--out-scidb-format", "scidb"},
			} {
				if c.set && o.to != c.to {
					return usageErr("convert: %s applies to %s output, not %s", c.flag, c.to, o.to)
				}
			}
			if o.text && o.aligned != 0 {
				return usageErr("convert: --aligned applies to binary Futhark output, not --text")
			}
			o.names = splitNames(names)
			return convertFile(e, in, out, openOptionsFrom(&rf), &o)
		},
	}
	rf.add(cmd)
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "input format (same as --format)")
	f.StringVar(&o.to, "to", "", "output format: abf, futhark, daphne, scidb or csv (default: from OUT's extension)")
	f.StringVar(&names, "names", "", "comma-separated names of the output records (ABF keys, frame labels, SciDB attributes)")
	f.StringVar(&o.abfVersion, "abf-version", "C", "ABF output format: C (AlignedBinaryFormat.jl v0.5–v0.7) or A (v0.1–v0.3)")
	f.BoolVar(&o.abfBits, "abf-bits", false, "write bool arrays as ABF BitArrays")
	f.BoolVar(&o.text, "text", false, "write Futhark text (default: binary)")
	f.StringVar(&aligned, "aligned", "", "write aligned Futhark binary: payloads at multiples of the element size, or of N with --aligned=N")
	f.Lookup("aligned").NoOptDefVal = "elem"
	f.StringVar(&o.outScidbFmt, "out-scidb-format", "", "SciDB format string of the output (default: the input's, or one derived from the column types)")
	return cmd
}

// convertFile converts in to out; o.to must be set.
func convertFile(e *env, in, out string, oo *openOptions, o *convertOptions) error {
	w, ok := writers[o.to]
	if !ok {
		return fileErr(out, fmt.Errorf("writing %s is not supported by this build", o.to))
	}
	src, err := openSource(e, in, oo)
	if err != nil {
		return err
	}
	var total int64
	for _, r := range src.records {
		if r.nbytes > 0 {
			total += r.nbytes
		}
	}
	bar := newProgress(e, total, "read "+filepath.Base(in))
	ds, err := loadDataset(src, bar)
	bar.Done()
	cerr := src.Close()
	if err != nil {
		return fileErr(in, err)
	}
	if cerr != nil {
		return fileErr(in, cerr)
	}
	if err := applyNames(ds, o.names); err != nil {
		return usageErr("convert: %v", err)
	}
	return fileErr(out, writeAtomically(out, func(tmp string) error { return w(e, tmp, ds, o) }))
}

// writeAtomically runs write on a temporary path in a fresh directory beside
// out, then renames everything written there into out's directory. On error
// nothing is left behind.
func writeAtomically(out string, write func(tmp string) error) error {
	dir := filepath.Dir(out)
	tmpDir, err := os.MkdirTemp(dir, "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, filepath.Base(out))
	if err := write(tmp); err != nil {
		return &renamedError{err: err, from: tmp, to: out}
	}
	ents, err := os.ReadDir(tmpDir)
	if err != nil {
		return err
	}
	// The main file last, so that companions (DAPHNE's .meta) are in place
	// when it appears.
	var main string
	for _, de := range ents {
		if de.Name() == filepath.Base(out) {
			main = de.Name()
			continue
		}
		if err := os.Rename(filepath.Join(tmpDir, de.Name()), filepath.Join(dir, de.Name())); err != nil {
			return err
		}
	}
	if main == "" {
		return errors.New("nothing was written")
	}
	return os.Rename(filepath.Join(tmpDir, main), out)
}

// renamedError reports a writer's error about a temporary file as being
// about the output file.
type renamedError struct {
	err      error
	from, to string
}

func (e *renamedError) Error() string { return strings.ReplaceAll(e.err.Error(), e.from, e.to) }
func (e *renamedError) Unwrap() error { return e.err }

// loadDataset reads a whole source into memory.
func loadDataset(s *source, bar *progress) (*dataset, error) {
	ds := &dataset{format: s.format}
	for i, r := range s.records {
		switch r.kind {
		case kindTable:
			if len(s.records) != 1 {
				return nil, errors.New("a table must be the file's only record")
			}
			cols, err := r.table.load()
			if err != nil {
				return nil, err
			}
			ds.table = cols
			ds.scidbFormat = r.table.formatString
		case kindString:
			ds.arrays = append(ds.arrays, &arrayData{name: r.name, named: s.format == "abf", isString: true, text: r.text, elem: layout.U8, shape: []int64{int64(len(r.text))}, data: []byte(r.text)})
		case kindSerialized:
			return nil, fmt.Errorf("record %q: %s records hold serialized Julia values, which cannot be converted", r.name, r.typeName)
		case kindArray:
			a := &arrayData{name: r.name, named: s.format == "abf", elem: r.elem, bits: r.typeName == "bits", shape: r.shape}
			var err error
			if r.csrLoad != nil {
				// Sparse: densified only for targets that need it.
				a.csr, err = r.csrLoad()
			} else {
				a.data, err = r.readAll()
			}
			if err != nil {
				return nil, err
			}
			if a.bits {
				a.elem = layout.Bool
			}
			if a.name == "" && s.format != "abf" {
				a.name = strconv.Itoa(i)
			}
			ds.arrays = append(ds.arrays, a)
		}
		if r.nbytes > 0 {
			bar.Add(r.nbytes)
		}
	}
	return ds, nil
}

// applyNames renames the output records.
func applyNames(ds *dataset, names []string) error {
	if names == nil {
		return nil
	}
	n := len(ds.arrays)
	if ds.table != nil {
		n = len(ds.table)
	}
	if len(names) != n {
		return fmt.Errorf("--names gives %d names for %d records", len(names), n)
	}
	for i, name := range names {
		if ds.table != nil {
			ds.table[i].name = name
		} else {
			ds.arrays[i].name = name
			ds.arrays[i].named = true
		}
	}
	return nil
}

// asArrays returns the dataset as arrays: a table's columns become 1-D
// arrays, a nullable column adding "<name>.reason" (i8, -1 where present).
func (ds *dataset) asArrays() ([]*arrayData, error) {
	if ds.table == nil {
		for _, a := range ds.arrays {
			if a.data == nil && a.csr != nil {
				if err := a.densify(); err != nil {
					return nil, err
				}
			}
		}
		return ds.arrays, nil
	}
	var out []*arrayData
	for i := range ds.table {
		c := &ds.table[i]
		if c.elem == layout.Invalid || c.scidbType == "char" || c.scidbType == "datetime" {
			t := c.scidbType
			if t == "" {
				t = c.typeName
			}
			return nil, fmt.Errorf("column %q: type %s has no array equivalent", c.name, t)
		}
		data, err := columnBytes(c)
		if err != nil {
			return nil, err
		}
		n := int64(lenOf(c.values))
		out = append(out, &arrayData{name: c.name, named: true, elem: c.elem, shape: []int64{n}, data: data})
		if c.reason != nil {
			out = append(out, &arrayData{name: c.name + ".reason", named: true, elem: layout.I8, shape: []int64{n}, data: bytesOf(c.reason)})
		}
	}
	return out, nil
}

// densify fills a.data with the dense form of a CSR matrix.
func (a *arrayData) densify() error {
	c := a.csr
	size := int64(a.elem.Size())
	n, ok := layout.Mul(c.rows, c.cols)
	if ok {
		n, ok = layout.Mul(n, size)
	}
	if !ok || n > maxInMemory {
		return fmt.Errorf("record %q: a %d×%d dense matrix is too large to convert in memory", a.name, c.rows, c.cols)
	}
	a.data = alignedBytes(n)
	for r := int64(0); r < c.rows; r++ {
		for e := c.rowOffsets[r]; e < c.rowOffsets[r+1]; e++ {
			pos := r*c.cols + int64(c.colIdxs[e])
			copy(a.data[pos*size:(pos+1)*size], c.values[int64(e)*size:])
		}
	}
	return nil
}

// asTable returns the dataset as a table: arrays must all be 1-D of one
// length; an i8 array "<name>.reason" after "<name>" becomes its nulls.
func (ds *dataset) asTable() ([]columnData, error) {
	if ds.table != nil {
		return ds.table, nil
	}
	if len(ds.arrays) == 0 {
		return nil, errors.New("the input has no records to write as a table")
	}
	var cols []columnData
	rows := int64(-1)
	for _, a := range ds.arrays {
		if a.isString {
			return nil, fmt.Errorf("record %q: a string cannot be a table column", a.name)
		}
		if len(a.shape) != 1 {
			return nil, fmt.Errorf("record %q: shape %s: only 1-D arrays can be table columns", a.name, layout.ShapeString(a.shape))
		}
		if rows >= 0 && a.shape[0] != rows {
			return nil, fmt.Errorf("record %q has %d elements, the table's first column %d", a.name, a.shape[0], rows)
		}
		rows = a.shape[0]
		if len(cols) > 0 && a.elem == layout.I8 && a.name == cols[len(cols)-1].name+".reason" && cols[len(cols)-1].reason == nil {
			cols[len(cols)-1].reason = castBytes[int8](a.data)
			cols[len(cols)-1].nullable = true
			continue
		}
		if a.elem == layout.I128 || a.elem == layout.U128 || a.elem == layout.JuliaChar {
			return nil, fmt.Errorf("record %q: element type %s cannot be a table column", a.name, a.elem)
		}
		cols = append(cols, columnData{column: column{name: a.name, typeName: a.elem.String(), elem: a.elem, offset: -1, nbytes: -1},
			values: typedSlice(a.elem, a.data)})
	}
	return cols, nil
}

// typedSlice reinterprets host-order bytes as the Go slice of elem.
func typedSlice(elem layout.Type, b []byte) any {
	switch elem {
	case layout.I8:
		return castBytes[int8](b)
	case layout.I16:
		return castBytes[int16](b)
	case layout.I32:
		return castBytes[int32](b)
	case layout.I64:
		return castBytes[int64](b)
	case layout.U8:
		return castBytes[uint8](b)
	case layout.U16:
		return castBytes[uint16](b)
	case layout.U32:
		return castBytes[uint32](b)
	case layout.U64:
		return castBytes[uint64](b)
	case layout.F16:
		return castBytes[layout.Float16](b)
	case layout.F32:
		return castBytes[float32](b)
	case layout.F64:
		return castBytes[float64](b)
	case layout.Bool:
		return castBytes[bool](b)
	case layout.I128:
		return castBytes[layout.Int128](b)
	case layout.U128:
		return castBytes[layout.Uint128](b)
	case layout.JuliaChar:
		return castBytes[layout.Char](b)
	}
	return nil
}

// columnBytes returns a layout-typed column's values as host-order bytes.
func columnBytes(c *columnData) ([]byte, error) {
	switch v := c.values.(type) {
	case []int8:
		return bytesOf(v), nil
	case []int16:
		return bytesOf(v), nil
	case []int32:
		return bytesOf(v), nil
	case []int64:
		return bytesOf(v), nil
	case []uint8:
		return bytesOf(v), nil
	case []uint16:
		return bytesOf(v), nil
	case []uint32:
		return bytesOf(v), nil
	case []uint64:
		return bytesOf(v), nil
	case []float32:
		return bytesOf(v), nil
	case []float64:
		return bytesOf(v), nil
	case []bool:
		return bytesOf(v), nil
	case []layout.Float16:
		return bytesOf(v), nil
	}
	return nil, fmt.Errorf("column %q: type %s has no array equivalent", c.name, c.typeName)
}

// writeCSVOut is the CSV writer of convert.
func writeCSVOut(e *env, path string, ds *dataset, o *convertOptions) error {
	cols, err := ds.asTable()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeCSVTable(f, cols); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func init() { writers["csv"] = writeCSVOut }
