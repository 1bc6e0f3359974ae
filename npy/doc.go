// Package npy reads and writes NumPy's .npy files and .npz archives, and
// serves their arrays as typed Go slices that alias the file's mapped
// pages, also the members of an .npz archive, which NumPy itself copies.
//
// A .npy file is a header (a Python dict literal giving the dtype, the
// shape and the storage order) and the array's data. This package reads
// every header NumPy 1.24 reads (versions 1.0, 2.0 and 3.0; any key order,
// spacing and quotes; Python 2's 5L; dtypes spelt by name; the older
// 16-byte alignment; misaligned 2.0 files) and writes the bytes np.save
// writes for the same array. Its types are bool, signed and unsigned
// integers, float16/32/64, complex64/128 (Go's complex64 and complex128),
// datetime64 and timedelta64 (int64 values, their unit kept), fixed
// bytes, text and void (|S5, <U5, |V8: read by copy) and structured
// dtypes (each named field read by a strided copy, edited in place);
// either byte order; C or Fortran order.
//
//	f, err := npy.Open("x.npy", nil)
//	x, err := npy.View[float64](f, "0") // aliases the mapping
//	err = f.Close()                     // x is dead from here on
//
// Names: a .npy file's array is "0" (or ""), its fields go by their
// names; an .npz member by its key (its name without ".npy"), a field of a
// structured member as "key/field".
//
// # Zero copy, and when a copy is made
//
// View returns a []T over the mapping when the data are in the host's
// byte order and at an offset aligned for T: always for files this
// package writes (data at a multiple of 64), usually for np.save's files,
// rarely for members of np.savez's archives, whose data start wherever
// the ZIP headers end. Where View cannot alias it fails and names the
// copying call to use: Read, ReadAt and ReadStrings always copy, swap
// bytes, gather fields and inflate deflated members.
//
// # Writing
//
// Save and WriteFile write whole files; Create makes one and maps it
// read-write to be filled through views, as np.lib.format.open_memmap(
// mode="w+") does; Append grows a file along its first axis (C order) or
// its last (Fortran order) in place, within the room np.save (since 1.23)
// leaves in the header for that axis's length; ZipWriter writes archives
// whose members are stored with their data at multiples of 64, so that
// every member can be viewed. Writers build new files beside their target
// and rename them into place: a failure leaves what was there. They write
// only what np.load reads back by default: at most MaxRank dimensions, a
// header of at most NumPyMaxHeader characters (Options.LargeHeaders
// allows longer ones), and in copies of bool arrays only the bytes 0 and
// 1 (Options.Lenient writes other bytes as 1).
//
// # Archives
//
// An .npz's members are located through the central directory (read
// with archive/zip) and each member's local header. Stored members are
// read in place; deflated ones are inflated as a stream, checked against
// the sizes and CRC-32 the archive declares, and into memory only up to
// Options.MaxInflate bytes. A stored member's CRC-32 is checked by the
// first copying read of it (Read, ReadAt, format reads and conversions;
// hash/crc32 uses the CPU's CRC instructions, so this costs a fraction
// of the copy): damaged data are an error wrapping ErrCRC, as NumPy's
// "Bad CRC-32", never values. Views do not check (that would read the
// whole member, which a view exists to avoid); File.Verify checks every
// member on demand.
//
// Stored members can be edited in place (Set, writable views). Before the
// first change the member's local header gets the edit mark, durably: its
// modification time and date become 0xffff, 0xffff (31:63:62 on day 31 of
// month 15, which no ZIP writer writes and no reader uses) and its local
// CRC-32 the bitwise complement of the central directory's. Sync and
// Close record the new CRC-32s, and Close puts the local header back.
// Until then the archive's CRC-32 is stale: Python's zipfile reports such
// a member as bad. A writer killed before that leaves the mark: a
// read-only open then checks the member's CRC and reports a stale one
// (ErrCRC; Options.Salvage opens anyway and says so in Damage), and a
// read-write open refuses the file (mmapfile.ErrNeedsRepair) unless
// Options.Repair asks it to record the CRC-32 of the data and clear the
// mark, which Damage then reports. Only the whole mark is taken for an
// interrupted edit: a local CRC-32 that differs from the central one in
// any other way is not this package's to judge, and is never written
// over. Deflated members cannot be edited (errors.ErrUnsupported; nothing
// is written).
//
// # Untrusted input
//
// Headers are parsed by a small literal parser that evaluates nothing,
// nests at most 200 brackets deep (as Python's tokenizer), and checks
// every length and shape against the file's size with overflow checks
// before anything is allocated. Pickled object arrays (descr 'O') are
// refused (ErrObject): unpickling runs code the file chooses. Bad input
// gives a *FormatError naming the file and the byte offset.
//
// # What is unsafe
//
// These caveats are the same as bbolt's, stated plainly:
//
//   - Slices returned by View point into the mapping. After Close they
//     point at memory that is no longer the file: any use is a bug that may
//     crash the process. Copy (Read) what must outlive the File.
//   - Writing through a view of a file opened read-only crashes the
//     process (SIGSEGV): its pages are mapped read-only.
//   - Views are not guarded against another process truncating the file:
//     touching lost pages raises SIGBUS and kills the process. The copying
//     calls turn such faults into errors.
//   - The race detector cannot see accesses to mapped memory; goroutines
//     sharing a writable view need their own synchronisation.
//   - Writes through a view of an .npz member leave its CRC-32 stale until
//     Sync or Close; other readers of the archive see the stale CRC.
package npy
