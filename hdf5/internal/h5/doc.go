// Package h5 reads the on-disk index structures of HDF5: the v1 and v2 B-trees,
// the fractal and global heaps, the chunk indexes of layout messages 1-4 (v1 B-tree,
// single chunk, implicit, fixed array, extensible array, v2 B-tree), the data layout
// and filter pipeline messages, the filters mmapkit decodes (deflate, shuffle,
// fletcher32, lzf) and the Jenkins lookup3 checksum that guards HDF5's metadata.
//
// Chunked data is read through Chunks (every stored chunk, whatever the index) and
// ReadChunked or ChunkTable + ReadChunkTable, which decode the chunks a range of
// elements touches in parallel, one worker per core, into the caller's buffer.
//
// Everything read from a file is untrusted: every address and size is checked against
// the Reader's End before anything is read or allocated, counts are bounded by what the
// file can hold, tree levels must decrease and visited blocks are remembered, so that a
// hostile file gives an *Error naming the absolute offset, never a panic or a huge
// allocation. Package hdf5 builds on it and adds the file name to these errors.
//
// Nothing here is unsafe: the package only copies bytes it read through io.ReaderAt.
package h5
