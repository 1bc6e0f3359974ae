// Package scidb reads and writes SciDB's binary load/save files: the cells
// that save(A, path, instance, '(…)') writes and load()/input() read, laid
// out by a format string such as "(int8, int16 null, string null, string)".
//
// The files carry no header, magic, cell count or alignment: a file is a
// sequence of cells, each the entries of the format string in order,
// little-endian. A "null" entry has a prefix byte (0xFF present, 0..127 a
// missing reason) and its value slot follows even for a null. Strings carry
// their terminating NUL, counted in the length word.
//
// ParseFormat follows SciDB's template parser exactly, including its error
// positions. Open maps a file of any format, checks every cell once and
// then reaches any cell without decoding the file: in O(1) for fixed-size
// cells, whose attributes can also be read in place as strided columns
// (ColumnOf), and through a mark every few hundred cells otherwise. Decode
// and DecodeFile read a whole file into typed columns; NewDecoder and
// NewEncoder stream cells; writing produces exactly what save() writes.
// Files in SciDB's opaque backup format are recognised and refused with
// ErrOpaque.
//
//	f, err := scidb.ParseFormat("(int64, double null)")
//	file, err := scidb.Open("cells.scidb", &scidb.Options{Format: f})
//	xs, err := scidb.Read[float64](file, 1) // attribute 1; nulls are zeros
//	col, err := scidb.ColumnOf[float64](file, 1)
//	_, null, reason := col.At(7) // in place, with its null
//
// The typed calls name an attribute by its index, as the other format
// packages name an array: View, Read and ReadAt give its values (View only
// where they are one contiguous run: a file of that one attribute), Set
// changes one in place at the index [cell] of a file opened read-write.
// Create makes a file of n zero cells, opened read-write, to fill so
// (numpy's open_memmap with mode "w+").
//
// The package registers the format "scidb" (extension .scidb; files are
// never recognised from their bytes: the parameter "scidb-format" gives
// the format string and says the file is SciDB's) with package format: a
// *File is a format.File and a format.TableScanner whose records are the
// attributes, and Write writes any table as SciDB cells.
//
// # What is unsafe
//
// A File's Cell, Bytes and View slices alias the mapping: they must not be
// used after Close, where any access crashes the process. Writing through
// them when the file was opened read-only crashes too (the pages are
// read-only); use Set or SetValue, which write through a checked path on a
// read-write mapping. If another process truncates the file while it is
// mapped, reading the lost pages through these slices, or with Strided.At
// (which reads the mapping as a view does), raises SIGBUS and kills the
// process; every call that copies (Read, ReadAt, File.Read, Copy,
// CopyFrom, Nulls, DecodeInto, Validate, ReadArray, ScanTable, DecodeFile)
// guards its reads and returns an error wrapping mmapfile.ErrFault
// instead. Values that File.Read returns are copies.
//
// Values read by a Decoder alias its buffer and are valid until the next
// Read.
//
// # Strict and lenient reading
//
// Reading accepts by default only what save() writes. Options.Lenient
// reads as SciDB's load() does: prefix bytes 0x80–0xFE as present, bool
// bytes other than 00/01 as true, strings without their NUL as the bytes
// there are. The payloads of null values are never read. Options.Salvage
// keeps the cells before the first damaged one (a last cell cut short by
// a crash, or a cell a strict read refuses) and File.Damage reports the
// error. Errors name the file (a Decoder's, when its reader has a Name
// method, as *os.File does), the byte offset, the cell and the attribute.
package scidb
