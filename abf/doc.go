// Package abf reads and writes AlignedBinaryFormat.jl files (.abf) byte for
// byte as the Julia package does, serves every array as a typed Go slice
// that aliases the file's mapped pages, and lets programs change arrays on
// disk in place.
//
// An ABF file is a sequence of named records: arrays of fixed-size
// elements (column-major, each payload aligned to its element size counted
// from the file start), BitArrays, Strings and opaque serialized Julia
// values. There is no index or footer, so opening reads every header in
// order; every field read from the file is checked against the file size,
// with overflow checks, before anything is allocated or sliced, and bad
// input gives a [*FormatError] naming the byte offset.
//
// Three on-disk formats exist and are detected automatically: A (v0.1–v0.3,
// a "LITTLE" header with a record count), B (v0.4, read only) and C
// (v0.5–v0.7, what AlignedBinaryFormat.jl reads today, and what this
// package writes unless [Options.Format] asks for A).
//
//	f, err := abf.OpenFile("data.abf", mmapfile.ReadWrite, nil) // Julia's "r+"
//	x, err := abf.View[float64](f, "x")                          // aliases the file
//	x[0] = -10                                                   // changes the file
//	err = abf.Set(f, "x", []int64{1}, 2.5)                       // Julia's x[2] = 2.5
//	err = f.Close()                                              // flushes; x is dead from here on
//
// To create an array on disk and fill it in place, as NumPy's
// open_memmap(mode="w+") does, open with Mode "w+" (or "r+") and call
// [Create]; to write an array larger than memory, [File.WriteStream].
//
// # Memory and mappings
//
// Opening reads every header, with pread a window at a time, and keeps
// each record in 20 to 30 bytes plus its key (its key index included), so
// that a file of millions of small records opens in less memory than its
// size; Entries and Records (package format's view of the records) build
// their descriptions when asked. The
// file is mapped once, whole, however many records it has. Records
// appended later are mapped when first viewed, together with everything
// appended before them, so that appending many records and then viewing
// them adds one mapping; copies (Read, ReadAt, …) of records not yet
// mapped use pread. Each Create maps the array it appends (with what was
// appended before it), so a program that creates tens of thousands of
// arrays in one open can run into the system's limit on mappings
// (vm.max_map_count on Linux): write them with Write or WriteStream, or
// reopen the file.
//
// # Modes
//
// [Options.Mode] takes Julia's modes: "r" (read), "r+" (read, edit in
// place, append), "w" (create or truncate, append only), "w+" (create or
// truncate, read and append) and "a" (create if missing, append only).
// Unlike upstream, "a" scans the file, so a duplicate key is refused
// before a byte is written; every failed write truncates the file back to
// what it was; Sync and Close flush (msync, fsync); read-write opens take
// an exclusive advisory lock.
//
// # Errors
//
// Every error about a file is a [*FormatError] that names the file and,
// where there is one, the byte offset. Conditions shared with mmapkit's
// other format packages wrap mmapfile's sentinels (mmapfile.ErrTruncated,
// ErrTypeMismatch, ErrNotWritable, ErrClosed, ErrByteOrder, …), so one
// errors.Is test works for every format.
//
// # Other formats
//
// Importing the package registers the format "abf" with package format,
// so that format.Open, format.Write and format.Convert read and write ABF
// files beside every other registered format. Arrays keep their
// column-major storage (a row-major source is transposed on the way in),
// BitArrays stay BitArrays (and bool arrays become BitArrays with the
// writer's "abf-bits" parameter), Strings stay Strings, and the writer's
// "abf-version" parameter chooses Format C (the default) or A. Serialized
// Julia values (DataType, AbfSerializer) cannot be re-created, so
// converting a file that holds one is an error that names it. The writer streams: an array
// is read and written a chunk at a time into a temporary file that
// replaces the target only once complete and synced.
//
// # Torn tails and damage
//
// A process killed while appending can leave a last record that runs past
// the end of the file (a String whose last character is cut counts, though
// Julia would read it; [Options.Lenient] does too), or in Format A a record
// written but not yet counted. A corrupted length in the middle of a file
// looks the same to a parser: everything before it parses. So no open
// cuts anything unless asked. "r" reports a record that does not parse as
// an error (or, with [Options.Salvage], keeps the records before it) and
// ignores Format A's uncounted bytes, as upstream does. "r+" and "a"
// refuse a file with a record that does not parse, with an error wrapping
// mmapfile.ErrNeedsRepair that says what a repair would cut (offset,
// bytes, the records kept); with [Options.Repair] they cut it, and
// Format A's uncounted bytes, and [File.Damage] says what was cut. A
// Format C file of which not one record parses may be no ABF file: it is
// cut only where it ends as an interrupted first append leaves it (inside
// the first record's value, after a whole header, with no whole record
// where that value could end).
// Format A's uncounted bytes are never overwritten: appends fail while
// they are there.
//
// # What is unsafe
//
// These caveats are the same as bbolt's, stated plainly:
//
//   - Slices returned by [View], [Create], [File.ViewBits] and
//     [File.ViewBytes] point into the mapping. After [File.Close] they point at unmapped memory and
//     any use crashes the process. Copy ([Read]) what must outlive the File.
//   - Writing through a view of a file opened "r" crashes the process
//     (SIGSEGV): its pages are mapped read-only.
//   - Views are not guarded against another process truncating the file:
//     touching lost pages raises SIGBUS and kills the process. Only the
//     copying functions ([Read], [ReadAt], [File.ReadBits], ...) turn such
//     faults into errors wrapping mmapfile.ErrFault.
//   - The race detector cannot see accesses to mapped memory; goroutines
//     sharing a writable view need their own synchronisation.
//
// Upstream cannot read empty BitArrays (it indexes the last chunk of an
// empty vector); this package reads and writes them, but Julia will fail
// on such a file.
package abf
