// Package hdf5 reads HDF5 files — h5py's and PyTables' files, MATLAB
// v7.3 files, netCDF-4 files — and serves their contiguous datasets as
// typed Go slices that alias the file's mapped pages: the bytes h5py's
// ds.id.get_offset() points at, with the checks a hand-made
// numpy.memmap lacks (type, byte order, alignment, allocation).
//
//	f, err := hdf5.Open("data.h5", nil)
//	x, err := hdf5.View[float64](f, "/grid/temperature") // aliases the mapping
//	err = f.Close()                                      // x is dead from here on
//
// It reads superblocks 0 to 3 (a user block before the superblock
// included), object headers of versions 1 and 2 with their continuation
// blocks, old-style groups (symbol tables: a v1 B-tree and a local heap)
// and new-style ones (link messages, compact or in a fractal heap indexed
// by a v2 B-tree), hard, soft and external links, compact and dense
// attributes, and datasets of fixed-point, floating-point (f16 included),
// enumeration (h5py's bool), compound (h5py's complex numbers, or tables of
// columns), array, fixed and variable-length string and opaque types, in
// either byte order; their data compact, contiguous or chunked under every
// chunk index, through the filters deflate, shuffle, fletcher32 and lzf.
// Jenkins lookup3 checksums are verified. Files are recognised by the
// signature at 0, 512, 1024, … (a user block before it), whatever their
// name.
//
// # Names
//
// Datasets are found by a depth-first walk from the root group, each
// group's links in byte order of their names (h5py's visititems order);
// a dataset is named by the first path the walk meets ("/g/x"). Names are
// accepted with or without the leading "/", through soft links (at most
// 16 of them) and through second hard links. External links are listed
// (Links) and never followed. A compound dataset's members are the
// columns of a table, "<dataset>/<member>", for package format.
//
// A *File is the format.File that format.Open returns for an HDF5 file,
// and the typed calls (View, Read, ReadAt, Set) are a name's lookup
// followed by package format's. Its records are the datasets and table
// columns; a netCDF dimension that is not a variable is none, as
// netCDF4-python and xarray have no variable of it, but it is still a
// dataset that the typed calls and Lookup reach by name, as h5py does.
//
// # Zero copy, and when a copy is made
//
// View returns a []T over the mapping when the dataset is contiguous,
// allocated, in the host's byte order and at an offset aligned for T
// (HDF5 aligns nothing unless asked, so small datasets often are not).
// Everything else — big-endian data, misaligned data, compact, chunked
// and never-written storage — is read by copy: Read and ReadAt convert to
// the host's byte order, decode chunks in parallel (one worker per core)
// straight into the destination and read unallocated chunks as the fill
// value.
//
// Set changes one element in place, in the file's byte order, in
// contiguous allocated data or in an allocated chunk of a dataset without
// filters: no metadata changes, so no checksum changes. Everything else is
// refused with the file unchanged.
//
// # Writing
//
// Write writes any format.Source as a small subset of HDF5 that h5py,
// h5dump and netCDF read: a version 2 superblock, version 2 object
// headers, compact groups made from "/" in the records' names (creation
// order tracked), and one dataset per record, its data after all the
// metadata at a 64-byte aligned offset, so that every dataset it writes
// maps as a typed slice. Integers and floats keep the record's byte
// order; bool is h5py's enum, complex h5py's compound of r and i. Text
// of fixed size (NumPy's bytes) is a null-padded fixed string, which h5py
// reads as the same |S<n> array; other text (CSV's, NumPy's str, HDF5's
// own variable-length strings) is a variable-length UTF-8 string, h5py's
// string_dtype(), its bytes in global heap collections; text is always
// contiguous. The columns of a table whose names make no group (a CSV
// file's) go to a group named after the source file. The
// parameters chunks and compress (gzip[:LEVEL]) give chunked storage over
// a version 1 B-tree, shuffled and deflated, the chunks compressed in
// parallel. A path ending in .nc gets netCDF-4's dimension scales, named
// dim_<i> (or <dataset>_dim_<i> where the group's dim_<i> has another
// length), so that netCDF readers and xarray see named dimensions; bool is
// written as u8 there and complex numbers are refused. Create makes contiguous datasets to fill through writable
// views, as numpy's open_memmap(mode="w+") does. Both build the file
// beside its target and rename it into place when it is complete.
//
// # What is not read
//
// Filters other than deflate, shuffle, fletcher32 and lzf (szip, n-bit,
// scale-offset, plugin filters), virtual datasets, external raw storage,
// time, bitfield and reference types and variable-length sequences are
// listed and refused when read, naming what they are; shared object
// header message tables are refused when the file is opened. NetCDF-3
// files (CDF\x01, \x02, \x05) are not HDF5 and are refused.
//
// # Untrusted input
//
// Every address and length read from the file is checked, with overflow
// checks, against the file's size (and the superblock's end-of-file
// address) before anything is read or allocated; continuation chains,
// B-trees, heaps, shared messages, group walks and soft links are guarded
// against cycles; dataspaces are at most 32 dimensions and datatypes 16
// levels deep. Bad input gives a *FormatError naming the file and the
// absolute byte offset, never a panic.
//
// # What is safe
//
// A File is safe for concurrent use. Copying reads (Read, ReadAt and the
// format.File methods) guard against the file being truncated under the
// mapping and return errors.
//
// # What is not safe
//
// These caveats are the same as bbolt's, stated plainly:
//
//   - Slices returned by View point into the mapping. After Close they
//     point at memory that is no longer the file: any use is a bug that
//     may crash the process. Copy (Read) what must outlive the File.
//   - Writing through a view of a file opened read-only crashes the
//     process (SIGSEGV): its pages are mapped read-only. Writing through a
//     view of a file opened read-write bypasses HDF5's library: do it only
//     to datasets no other program is writing.
//   - Views are not guarded against another process truncating the file:
//     touching lost pages raises SIGBUS and kills the process.
//   - The race detector cannot see accesses to mapped memory.
package hdf5
