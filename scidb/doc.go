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
// positions. Decode and DecodeFile read a whole file into typed columns;
// NewReader and NewWriter stream cells; OpenMapped maps a file of
// fixed-size cells for O(1) access to any cell and strided access to any
// attribute (ColumnOf) without decoding the file. Reading is as lenient as
// load() by default (ReadOptions.Strict tightens it); writing produces
// exactly what save() writes. Files in SciDB's opaque backup format are
// recognised and refused with ErrOpaque.
//
// # What is unsafe
//
// A Mapped file's Cell, Bytes and View slices, and the Raw bytes of values
// it reads, alias the mapping: they must not be used after Close, where any
// access crashes the process. Writing through them when the file was opened
// read-only crashes too (the pages are read-only); use Set, which writes
// through a checked path on a read-write mapping. If another process
// truncates the file while it is mapped, reading the lost pages through
// these slices (or with Strided.At and Strided.Copy) raises SIGBUS and kills
// the process; DecodeFile, Validate and Strided.CopyFrom guard their reads
// and return an error instead.
//
// Values read by a Reader alias its buffer and are valid until the next
// Read.
//
// # Defaults
//
// Reading is lenient by default, as SciDB's load() is: prefix bytes
// 0x80–0xFE read as present, bool bytes other than 00/01 as true, strings
// without their NUL as the bytes there are, and the payloads of null
// values are skipped unread. Set ReadOptions.Strict to accept only what
// save() writes. Errors in files opened by path (DecodeFile, OpenMapped)
// name the file; the streaming Reader does not know one.
package scidb
