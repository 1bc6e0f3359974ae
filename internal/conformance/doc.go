// Package conformance holds the tests that hold every format package to
// the promises they share, and nothing else: it has no API. One table test
// per shared condition runs over every registered format: a truncated file
// is mmapfile.ErrTruncated (and io.ErrUnexpectedEOF) in the package's own
// *FormatError naming the file and the exact offset; a wrong Go type on the
// typed View and Read is mmapfile.ErrTypeMismatch naming the file; a view
// that cannot alias names the copying call to use; a copy out of range is
// mmapfile.ErrOutOfRange; a change to a read-only file is
// mmapfile.ErrNotWritable; Close twice is mmapfile.ErrClosed and reads
// the same in every format but for the package; a name the file does not
// have is format.ErrNoRecord, through the package's typed API and through
// the registry, and the error names the file; a FIFO is
// mmapfile.ErrNotRegular, through format.Open and the package's Open; every
// FormatError is a format.Located; a second
// writer is mmapfile.ErrLocked; Lenient, Salvage and Damage mean the
// same in every format that has them, and formats without Salvage refuse
// it; the typed View, Read, ReadAt and Set take the same parameters in
// every package; and a new array filled through a writable view (numpy's
// open_memmap "w+") is in the file, in every format whose payloads can be
// aligned.
//
// The tests live here, not in package format, because they import every
// format package.
package conformance
