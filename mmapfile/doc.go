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
// The package knows nothing of file formats; packages abf, futhark, daphne
// and scidb build on it.
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
//   - Changes made through a read-write mapping reach the page cache at once
//     (other mappings of the file see them) but are durable only after
//     [Region.Sync], [File.Sync] or [File.Close].
//
// # Platforms
//
// Mapping uses github.com/edsrzf/mmap-go; golang.org/x/sys supplies what it
// lacks (madvise, ranged msync, fallocate, flock). Offsets are rounded down
// to the OS mapping granularity internally (the page size on Unix, 64 KiB
// on Windows) and the result re-sliced, so any byte offset may be mapped.
// Features an OS lacks (access advice on Windows, preallocation on macOS)
// return an error wrapping [errors.ErrUnsupported].
package mmapfile
