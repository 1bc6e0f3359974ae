// Package format is mmapkit's format-neutral face: the interface that every
// format package implements for its files, and the registry in which each
// format package records itself, as image formats do with
// image.RegisterFormat and database drivers with sql.Register.
//
// A program that wants every format imports the format packages for their
// side effect and then speaks only to this package:
//
//	import (
//		"github.com/mmapkit/mmapkit/format"
//		_ "github.com/mmapkit/mmapkit/abf"
//		_ "github.com/mmapkit/mmapkit/npy"
//	)
//
//	f, err := format.Open("data.abf", nil)           // detected from the name or bytes
//	err = format.Convert("data.abf", "data.npy", nil, nil) // any registered pair
//
// A file is a list of records ([Record]): arrays, described by
// layout.Array (element type, logical shape, storage order, byte order,
// payload offset), and the columns of a table (DAPHNE frames, SciDB files,
// structured NumPy arrays, CSV). Values are copied out in any order the
// caller asks for ([File.ReadArray], [Read], [ReadAt]), and a record stored
// as one run of bytes is viewed in place with [View], the Go type fixed at
// compile time as in the format packages' typed calls (npy.View, …), which
// are a name's lookup plus these. The File that Open returns is the format
// package's own (*npy.File, *abf.File, *zarr.Store, …), so a type
// assertion reaches the rest of its API.
//
// Errors read alike in every format: each format package's FormatError
// embeds [FileError], whose message names the package, the file, the
// record or key and the offset before what is wrong and its cause, and
// [Located] tells the file and offset of any of them. A condition every
// format shares has one sentinel (ErrNoRecord here; mmapfile's and
// layout's for the others), so one errors.Is test works whatever the
// format.
//
// What is safe: every read copies, and every writer replaces its target
// only when the new file is complete. What is not: a view aliases the
// file's mapping, and is valid only until the file is closed (see View).
package format

import (
	"encoding/binary"
	"encoding/json"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// Kind is what a record holds.
type Kind uint8

const (
	// KindArray is an n-dimensional array of Type; ReadArray copies its
	// elements (bool as bytes 0 and 1, whatever the file packs them as).
	KindArray Kind = iota
	// KindString is a text value (ABF's String). Type is U8 and Shape
	// [nbytes]: ReadArray copies its UTF-8 bytes.
	KindString
	// KindOpaque is a value only its own format can hold (ABF's serialized
	// Julia values): Size bytes that no other format can take.
	KindOpaque
	// KindColumn is one column of the file's table: Shape is [rows].
	// Columns of a layout element type can be read with ReadArray; every
	// column, nulls included, through ScanTable.
	KindColumn
)

func (k Kind) String() string {
	switch k {
	case KindArray:
		return "array"
	case KindString:
		return "string"
	case KindOpaque:
		return "opaque"
	case KindColumn:
		return "column"
	}
	return "kind?"
}

// Record is one record of a file, in file order. The embedded layout.Array
// gives its name, element type (layout.Invalid for columns of types that
// layout lacks, such as text), logical shape, storage order, byte order
// and, where the payload is one contiguous run of the file, its offset and
// size (Offset -1 otherwise).
type Record struct {
	layout.Array
	Kind Kind
	// TypeName is the type as the format names it where that says more
	// than Type: "bits" for ABF BitArrays, "datetime64[s]" for NumPy,
	// "string" or "datetime" for SciDB attributes, "bytes5" for NumPy's
	// |S5. Writers of the same format use it to keep the type as it was.
	TypeName string
	// Nullable: a column whose cells may be null (SciDB).
	Nullable bool
	// Facts are what a writer keeps of an array beyond its type, shape
	// and values; nil where the file has none (most records).
	Facts *Facts
	// Extra holds further facts for listings only, such as "layout":
	// "csr", "encoding": "text", "chunks": [...]; keys are JSON field
	// names. "storage", a string, says in a few words how the values are
	// stored where that is more than one run of bytes ("chunks
	// [512][512], zstd(3)", "deflated"), for a listing's table. Writers
	// never read it: what they carry over is in Facts.
	Extra map[string]any
}

// Facts are what a reader hands a writer about an array beyond its type,
// shape and values, so that a conversion keeps them. They sit behind a
// pointer so that a listing of millions of records that have none pays
// eight bytes a record for them.
type Facts struct {
	// NativeType is the element type as the format spells it, where a
	// writer of the same format keeps it: NumPy's descr ("<f8", ">i4",
	// "<M8[s]").
	NativeType string
	// FillValue is the value of elements that were never written, as
	// Zarr's fill_value JSON (a number, "NaN", a base64 string, …); nil
	// for none.
	FillValue json.RawMessage
	// DimensionNames name the array's axes (Zarr v3's dimension_names,
	// as xarray writes them); nil for none, "" for an unnamed axis.
	DimensionNames []string
	// Attributes are the array's user attributes (Zarr's .zattrs or
	// attributes); nil for none.
	Attributes map[string]any
}

// Type returns the name a listing shows for the record's type.
func (r *Record) TypeString() string {
	if r.TypeName != "" {
		return r.TypeName
	}
	return r.Type.String()
}

// Source is what a writer consumes: records and their values. Every File
// is a Source; so is anything that wraps one (Select, Rename).
type Source interface {
	// Records lists the records in file order. The slice and its
	// records must not be changed.
	Records() []Record
	// ReadArray copies elements [first, first+n) of record i into dst,
	// n = len(dst)/Type.Size(), listed in order (layout.RowMajor is the
	// logical order: the last index varies fastest) and in byte order bo.
	// It fills dst completely or returns an error. Bool elements are the
	// bytes 0 and 1. Records of Kind Opaque, and columns whose Type is
	// Invalid, are not readable this way.
	ReadArray(i int, dst []byte, first int64, order layout.Order, bo binary.ByteOrder) error
}

// RecordLister is implemented by sources that describe a record on
// demand from a compact index of their own, so that a listing of a file of
// millions of records need not hold a Record for each (a Record is over a
// hundred bytes; such an index, a few dozen). NumRecords is
// len(Records()), and Record(i) equals Records()[i] but may be built
// afresh on each call; like indexing Records(), Record panics for i
// outside [0, NumRecords()). Use EachRecord, NumRecords and RecordAt,
// which fall back to Records for other sources.
type RecordLister interface {
	NumRecords() int
	Record(i int) Record
}

// File is an open file of some format: the format package's own file
// type (*npy.File, *abf.File, …), which format.Open returns.
//
// A File may be used from several goroutines at once: its reads, views
// and listings run concurrently. Set of an element that lies in a mapped
// run of bytes is one store into the mapping, as a write through a
// writable view is: changes of different elements run concurrently, and
// goroutines that change the same element order their calls themselves.
// Changes that move, re-encode or read back bytes (appends, re-encoded
// chunks, packed bits, an archive member's checksum) are serialised by
// the File. A reader, and a view, may see a change at any moment, as any
// reader of shared memory does, and a program that needs more orders its
// calls itself. Close ends every view: slices from View must not be used
// after it, nor during it. Records' slice is shared and must not be
// changed; a format whose files grow (appends) describes them afresh.
type File interface {
	Source
	// Format is the registered name of the file's format ("abf").
	Format() string
	// Version is the format version of this file ("C", "1.0", "3"), or ""
	// where the format has none.
	Version() string
	// Close releases the file; a read-write file is synced first. Closing
	// twice returns an error wrapping mmapfile.ErrClosed.
	Close() error
}

// Column is a batch of consecutive cells of one table column.
type Column struct {
	// Values holds the cells: a []T of the column's layout type (Go's
	// int8 … float64, bool, layout.Float16, complex64, complex128), or
	// []string of each cell's text for columns whose Type is Invalid (as
	// the format writes values in text: SciDB's datetime as "2024-01-02
	// 03:04:05", binary values as "0x…"; NumPy's fixed bytes as their raw
	// bytes).
	Values any
	// Reason is nil for a column that cannot hold nulls; else one entry
	// per cell, -1 where a value is present and the missing reason (0 to
	// 127, as SciDB has them) where the cell is null.
	Reason []int8
}

// TableScanner is implemented by files that hold a table. Formats whose
// columns are all of layout types and never null need not implement it:
// ScanTable reads such columns with ReadArray.
type TableScanner interface {
	// ScanTable calls fn with successive batches of at most batch rows of
	// every column (the KindColumn records, in record order), from the
	// first row to the last. first is the batch's first row. The batches
	// and their slices may be reused after fn returns.
	ScanTable(batch int, fn func(first int64, cols []Column) error) error
}

// ColumnScanner is implemented by files that hold several tables, each
// of its own length (HDF5's compound datasets): ScanColumns is ScanTable
// over the given records, which must be columns of one table. Select uses
// it, so that a selection of one table's columns scans that table alone.
type ColumnScanner interface {
	ScanColumns(recs []int, batch int, fn func(first int64, cols []Column) error) error
}

// Resolver is implemented by files whose records have other names than
// their own (HDF5's soft and second hard links): Find asks it for a name
// no record has, and returns its answer, the record's index or an error
// that says why the name leads nowhere (a dangling or external link).
type Resolver interface {
	Resolve(name string) (int, error)
}

// Skipper is implemented by files that hold what a whole-file conversion
// leaves out (HDF5's external links, which are never followed): Skipped
// says what, a line each, for a notice.
type Skipper interface {
	Skipped() []string
}

// FileInfo is implemented by files that know facts about the whole file
// beyond its records (HDF5's links and groups): fields that a listing adds
// to the file's description, by JSON field name.
type FileInfo interface {
	FileInfo() map[string]any
}

// TextTable is implemented by tables whose cells are stored as text and
// whose column types are inferred from it (CSV): a writer with types of
// its own (a SciDB format string's "string" entry for a column of digits,
// "uint64" for numbers beyond int64) parses such a column's cells as they
// are written rather than the inferred values. Use the function
// ScanTableText, which also sees through Select and Rename.
type TextTable interface {
	// ScanTableText is ScanTable, except that each column j with text[j]
	// gives its cells as written, as a []string (null cells "", Reason as
	// ScanTable gives it), whatever its inferred type.
	ScanTableText(batch int, text []bool, fn func(first int64, cols []Column) error) error
}

// TextReader is implemented by files that may hold arrays of fixed-size
// text elements, which have no layout type (NumPy's bytes, str and void
// arrays and fields): a listing shows them with a Type that is not Valid
// and a TypeName such as "bytes5".
type TextReader interface {
	// ReadText calls fn with the elements of record i in logical
	// row-major order, a batch at a time: bytes and str elements as their
	// text without trailing NULs (str as UTF-8), void elements as 0x…
	// hex. The batch may be reused after fn returns. A record that is not
	// such an array gives an error wrapping errors.ErrUnsupported.
	ReadText(i int, fn func(batch []string) error) error
}

// NullReader is implemented by tables whose columns of any type may hold
// null cells that their text alone cannot tell from empty ones (CSV: an
// unquoted empty field is null, a quoted "" is the empty string), so that
// a writer of one array per column reads a column's nulls on their own.
type NullReader interface {
	// ReadNulls calls fn with whether each cell of record i is null, in
	// row order, a batch at a time. The batch may be reused after fn
	// returns.
	ReadNulls(i int, fn func(batch []bool) error) error
}

// Sparse is implemented by files whose arrays may be stored sparsely
// (DAPHNE's CSR matrices), so that a conversion between two sparse formats
// does not densify them.
type Sparse interface {
	// IsSparse reports whether record i is a sparse 2-D matrix.
	IsSparse(i int) bool
	// Nonzeros calls fn for each stored element of the sparse matrix i,
	// row by row and, within a row, in stored order; value holds the
	// element in byte order bo.
	Nonzeros(i int, bo binary.ByteOrder, fn func(row, col int64, value []byte) error) error
}

// Setter is implemented by files opened read-write that can change one
// element in place.
type Setter interface {
	// SetText changes the element of record i at the 0-based logical
	// (row-major) index idx to value, written as a literal of the record's
	// type: Futhark's syntax for numbers and bools ("42", "-1.5e3",
	// "0x1f", "inf", "nan", "true"), the format's own text for its other
	// types. The change is visible to other readers of the file at once
	// and durable after Sync or Close.
	SetText(i int, idx []int64, value string) error
	// Sync makes changes durable.
	Sync() error
}

// Damaged is implemented by files opened with Options.Salvage or repaired
// by a read-write open with Options.Repair: Damage reports what was
// skipped, or what the repair cut or rewrote, or nil.
type Damaged interface {
	Damage() error
}

// Options configure Open, OpenFile and the writers. A nil *Options means
// the defaults.
type Options struct {
	// Options are the mapping's options (advice, populate, lock, wait,
	// the permission bits of a created file).
	mmapfile.Options
	// Lenient accepts what the upstream tools accept beyond their
	// specification; Salvage keeps the records before damage (Damage
	// reports it). Both mean the same in every format package.
	Lenient, Salvage bool
	// Repair lets a read-write open repair a damaged file: cut a record
	// that does not parse and everything after it, or finish an edit
	// that was interrupted. Without it such an open fails with an error
	// wrapping mmapfile.ErrNeedsRepair that says what a repair would do,
	// and the file is left as it was. Damage reports what was repaired.
	Repair bool
	// Params are the format's own options by name, as its Format.Params
	// declares them (for example "scidb-format" for reading SciDB files,
	// "abf-version" for writing ABF).
	Params map[string]string
	// Format names the format, skipping detection.
	Format string
	// Chose, when set, is told what a writer chose where no option said
	// (a SciDB format string derived from the columns, which reading the
	// file back needs): what by the name of the option that would have
	// said it. Writers call it through Options.Choose.
	Chose func(what, value string)

	// parsed is what CheckParams made of Params, by format and direction.
	parsed map[parsedKey]any
}

// Choose tells o.Chose, if any, that the writer chose value for what.
func (o *Options) Choose(what, value string) {
	if o != nil && o.Chose != nil {
		o.Chose(what, value)
	}
}

// Param returns the parameter name, or "".
func (o *Options) Param(name string) string {
	if o == nil {
		return ""
	}
	return o.Params[name]
}
