// Package mmapfile is mmapkit's memory-mapping layer. It opens a file
// read-only or read-write, maps the whole file or any byte range of it, and
// hands out typed slices ([]float64, []int32, …) that alias the mapped
// pages: reading them reads the file, and, in a read-write mapping, writing
// them writes the file.
//
//	f, err := mmapfile.Open("data.bin")
//	r, err := f.MapAll()
//	xs, err := mmapfile.View[float64](r, 64, 1<<20, binary.LittleEndian)
//	sum := 0.0
//	for _, x := range xs { sum += x }
//	f.Close() // xs must not be used after this line
//
// The package knows nothing of file formats; the format packages build on
// it.
//
// # Durability
//
// Every change — a store through a writable view, [Region.WriteAt],
// [File.WriteAt] — is visible to other readers at once; durable after
// Sync/Close: other mappings and reads of the file, in this process or
// another, see it immediately (one page cache), and it survives a crash of
// the machine or a power loss once [File.Sync], [File.SyncData],
// [Region.Sync] or [File.Close] has returned. A process killed without
// syncing loses nothing the kernel already has.
//
// # Writing
//
// Creating a file and filling it through a mapping costs about what
// write(2) of the same bytes costs, when the region is prepared for it:
//
//	f, err := mmapfile.Create(path)
//	err = f.Grow(size)         // reserves the blocks (fallocate): a full disk is an error here
//	r, err := f.MapAll()
//	err = r.PopulateWrite()    // large pages, every page writable now
//	xs, err := mmapfile.View[float64](r, 0, n, binary.LittleEndian)
//	copy(xs, values)           // … or compute into xs
//	err = f.Close()            // syncs
//
// Without PopulateWrite every 4 KiB page costs a fault when first written.
//
// A few elements changed in an existing file are best written with
// [Region.WriteAt] or [File.WriteAt] (pwrite through the descriptor; the
// mapping sees the bytes at once) rather than stored through a view: Sync
// then writes only the blocks touched, where a store into the mapping
// dirties its whole page — which the kernel may hold as one large folio of
// a megabyte or more — and Sync writes all of it. [File.Sync] commits the
// file's metadata only when its size changed since the last sync
// (fdatasync otherwise); [File.SyncData] never does.
//
// # Opening a file once
//
// A program that opens a path to look at it (fstat, its first bytes, to
// tell its format) and then maps it should map the descriptor it looked at,
// not the path again: between two opens the path may be replaced (mv, an
// atomic rewrite), and the program would map a file it never examined.
// [NewFile] (or [Options.File]) adopts an open *os.File:
//
//	osf, err := os.Open(path)
//	// … read the header from osf, decide what it is …
//	f, err := mmapfile.NewFile(osf, mmapfile.ReadOnly, nil) // f now owns osf
//
// Only regular files are opened or adopted: directories, FIFOs, devices,
// sockets and the files of /proc, /sys and similar pseudo file systems
// (whose sizes do not describe their contents) are refused with an error
// wrapping [ErrNotRegular].
//
// # What is safe
//
//   - A File and its Regions may be used from any number of goroutines.
//     Writers are serialised by the File.
//   - Reads of a read-only mapping from many goroutines are safe, also while
//     another handle of the same process appends to the file (growing a file
//     never moves or invalidates existing mappings).
//   - Copying APIs ([Region.ReadAt], [Copy], [Region.WriteAt], [Region.Guard])
//     turn a fault inside the mapping (SIGBUS after another process truncated
//     the file, SIGSEGV on a write to a read-only page) into an error wrapping
//     [ErrFault], instead of crashing the process. ReadAt, Copy and WriteAt
//     also refuse a range past the file's current end inside the page the
//     end falls in, which does not fault (it reads as zeros; writes there
//     are lost): a copy that ends in a zero byte followed by zeros to the
//     end of its page asks the file's size (fstat), others cost nothing
//     extra.
//   - A read-write open takes an exclusive advisory lock (flock on Unix,
//     LockFileEx on Windows), so a second writer — in this or another process
//     — fails with [ErrLocked] or waits, as [Options.Wait] says. Read-only
//     opens take no lock unless [Options.Lock] asks for a shared one.
//
// # What is not safe
//
// These are the same caveats as bbolt's, stated plainly:
//
//   - Slices returned by [View] and [Region.Bytes] point into the mapping.
//     After [Region.Unmap] or [File.Close] any use of them crashes the
//     process (SIGSEGV; Go prints "unexpected fault address"). Copy what
//     must outlive the File. The crash is certain, not left to chance: a
//     closed mapping is not simply unmapped, which would let the next
//     mapping — of another file, perhaps read-write — land at the same
//     address and a stale slice silently read or change it. Its range is
//     replaced, in one mmap call, by an inaccessible reservation (PROT_NONE,
//     anonymous, no memory committed). At most [MaxReservations] (4096)
//     reservations totalling [MaxReservedBytes] (64 GiB of address space;
//     256 MiB in a 32-bit process) are kept per process, released oldest
//     first; a mapping larger than the byte bound is unmapped at once. A
//     stale slice into a released range is as dangerous as before. On
//     Windows the view is unmapped and its range then reserved
//     (VirtualAlloc MEM_RESERVE, PAGE_NOACCESS): two calls, so a mapping
//     made by another thread in between can take the range.
//   - Writing through a slice of a read-only mapping crashes the process
//     (SIGSEGV): the pages are mapped read-only. Use WriteAt for a checked
//     write.
//   - If another process truncates the file under a live mapping, reading
//     the lost pages through a slice raises SIGBUS and kills the process.
//     Only the copying APIs are guarded; slices cannot be. Advisory locks do
//     not stop a process that ignores them.
//   - The race detector does not see accesses to mapped memory. Sharing a
//     writable slice between goroutines needs the caller's own
//     synchronisation, exactly as for any Go slice.
//   - Changes are visible to other readers at once; durable after
//     Sync/Close (see Durability): until then a power loss can lose them.
//
// # Platforms
//
// Mapping uses github.com/edsrzf/mmap-go; golang.org/x/sys supplies what it
// lacks (madvise, ranged msync, fallocate, flock, fdatasync). Offsets are rounded down
// to the OS mapping granularity internally (the page size on Unix, 64 KiB
// on Windows) and the result re-sliced, so any byte offset may be mapped.
// Features an OS lacks (access advice on Windows, preallocation on macOS)
// return an error wrapping [errors.ErrUnsupported].
package mmapfile
