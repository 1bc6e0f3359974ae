// Package zarr reads and writes Zarr stores, version 2 and version 3: the
// chunked arrays in directories that dask, xarray and Ray process in
// parallel across a cluster.
//
// An uncompressed Zarr chunk is a raw block of its array — on disk exactly
// what a typed slice holds — so this package hands every such chunk out as
// a []T that aliases the chunk file's mapping (ViewChunk), read-only or
// read-write, with no copy. Copying reads of the whole array, of any run
// of its elements or of any region gather across chunks (Read, ReadAt,
// ReadRegion), decompressing zlib, gzip, zstd, lz4 and Blosc chunks
// straight into the destination where it holds them whole, on every core,
// and fill chunks that are missing with the array's fill value. Blosc —
// the default compressor of zarr-python 2 and of xarray's to_zarr — is
// read and written with package blosc (v2's "blosc" compressor, v3's
// "blosc" codec).
//
//	s, err := zarr.Open("data.zarr", nil)
//	a, err := s.Array("/temp")
//	for i := range a.Grid()[0] {
//		chunk, err := zarr.ViewChunk[float64](a, i, 0) // the chunk file's pages
//		...
//	}
//	region, err := zarr.ReadRegion[float64](a, []int64{0, 0}, []int64{10, 20})
//	s.Close() // chunk must not be used after this line
//
// The typed calls read as in mmapkit's other format packages — View, Read,
// ReadAt and Set[T](a, idx, v) on an *Array — except that the zero-copy
// unit is a chunk, not the array, so views are taken chunk by chunk
// (ViewChunk) and View aliases only an array stored as one chunk. Views
// and copies alike list elements in the array's Order (C or F); Set's
// index is the logical one, [i, j, …].
//
// Arrays are named as zarr-python names them: "/" for a store whose root is
// an array, "/group/name" inside groups, visited depth first in name order.
// Version 3 stores may shard their chunks (sharding_indexed): an inner
// chunk stored raw is a view of its shard's mapping, and its shard's index
// is checked (crc32c, every range inside the file, none overlapping) before
// any of it is used.
//
// Write turns any format.Source into a store: by default version 3, chunks
// of about 8 MiB chosen from each array's shape, raw little-endian bytes
// (or the source's byte order), the source's storage order kept (a
// column-major array becomes order "F" or a transpose codec, with no
// transposing), dimension names for xarray and consolidated metadata.
// Create makes a store of empty arrays to fill through writable views. Set
// edits one element in place: through a read-write mapping of its chunk
// file, or by re-encoding a compressed chunk to a file that replaces it.
// Options.Salvage opens a store some of whose chunks do not decode: they
// read as the fill value, and Store.Damage lists them.
//
// # What is safe
//
//   - A Store may be used from any number of goroutines. A store opened
//     read-write is locked against other writers (an advisory lock on its
//     root metadata document); Set and chunk creation are serialised.
//   - Every field of the metadata, every chunk's size and every shard index
//     is checked before it is used: bad input is a *FormatError naming the
//     store, the key of the file inside it and the byte offset, never a
//     panic or a huge allocation. Keys that leave the store ("..", absolute
//     paths, symlinks out of it) are refused.
//   - Write and Create build the store in a temporary directory beside the
//     target, chunk files first and metadata last, and replace the target
//     only when the store is complete (in one atomic exchange on Linux). A
//     re-encoded chunk goes to a temporary file renamed over the old one.
//   - A store replaced under an open Store (a conversion written over its
//     path) or removed reads as it was, from the files still open, or
//     fails with ErrReplaced: its chunks read as the fill value only while
//     its path still leads to the directory opened.
//   - Changes through writable views and Set are seen by other readers at
//     once and are durable after Sync or Close. Sync syncs the chunk files
//     that Set changed since the last Sync and every chunk file handed out
//     as a writable view, not the others. A chunk created for a writable
//     view is in place at once, holding the fill value, and durable at the
//     next Sync or Close: a crash before leaves it missing, or holding the
//     fill value or part of what was written, as for any write through a
//     view.
//   - A copying read while Set re-encodes a chunk (or rewrites its
//     shard) to a new file gets each element's old value or its new one:
//     the rename of the new file waits for the reads inside the old one,
//     and those reads copy from the file they found the chunk in. Readers
//     of other chunks do not wait.
//   - A missing shard of raw inner chunks is created, for a view or Set,
//     laid out whole: every inner chunk at a fixed offset holding the fill
//     value, and its index, synced before the shard takes its name.
//     Creating an inner chunk never moves another, so every view of a
//     shard stays valid until Close. A shard written elsewhere without some
//     of its inner chunks is rewritten to create one (with all of them),
//     which fails, naming the view, while a writable view of that shard is
//     live: the view's writes would go to the file replaced.
//
// # What is not safe
//
//   - Slices returned by View and ViewChunk point into mappings: after
//     Close, any use crashes the process; if another process truncates a
//     chunk file, reading its slice raises SIGBUS. Copying reads are
//     guarded; slices cannot be.
//   - Writing through a view of a read-only store crashes the process (the
//     pages are read-only). A view does not see a chunk that another writer
//     replaced with a new file (zarr-python always does, for example): it
//     keeps showing the old file until the store is closed and reopened.
//   - Each viewed chunk keeps one file open until Close.
//   - Views and Set change raw chunks in place: a reader of the same chunk in
//     another process sees the change at once, element by element, not as a
//     whole.
package zarr
