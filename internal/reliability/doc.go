// Package reliability holds mmapkit's cross-cutting reliability tests and
// nothing else: it has no API. The tests prove, with real processes and real
// file systems, what the README's "Guarantees" section promises:
//
//   - faults become errors: a file truncated by another process under a live
//     mapping makes the copying APIs of mmapfile, abf, futhark and daphne
//     return an error wrapping mmapfile.ErrFault (or a bounds error), and a
//     write through a read-only handle is an error, not a SIGSEGV;
//   - a full disk (a 1 MiB tmpfs mounted by the test when it runs as root, and
//     /dev/full) makes every writer (mmapfile, abf appends, futhark.WriteFile,
//     daphne.WriteDense, scidb.EncodeFile) fail with an error and leaves the
//     target file byte-identical to before, or absent if it did not exist;
//   - a writer killed with SIGKILL at a random moment loses nothing it had
//     reported as written, and no partial record is ever read back;
//   - readers of read-only mappings scan safely from many goroutines while the
//     same process appends, and a second process cannot take a write lock;
//   - a view used after its file was closed faults (the child dies of
//     SIGSEGV) instead of writing the file mapped next at the same address;
//   - a whole-file replacement (atomicfile) refuses a file another process
//     holds read-write, whose later edit would otherwise be lost.
//
// Child processes are this test binary re-executed with
// MMAPKIT_RELIABILITY_CHILD naming what to do. The crash tests run a few
// rounds per format by default; MMAPKIT_LONG=1 runs 100.
//
// The tests are Linux-only (build tag linux): they mount tmpfs, write to
// /dev/full and rely on Linux's SIGBUS and flock behaviour. On other systems
// the package is empty.
//
// Per-format hostile inputs, truncation at every byte, bit flips and fuzz
// targets live beside each format's own tests, not here.
package reliability
