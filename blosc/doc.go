// Package blosc reads and writes Blosc1 frames, the compressed buffers that
// c-blosc 1.x writes and that numcodecs' Blosc codec (the default
// compressor of zarr-python 2 and of xarray's to_zarr) stores as Zarr
// chunks.
//
// A frame is a 16-byte header (format version, codec version, flags,
// element size, decoded size, block size, frame size), then the start of
// each block, then the blocks: each block is shuffled (bytes or bits of
// its elements grouped by position), optionally split into one stream per
// byte of the element, and each stream compressed with one of blosclz,
// lz4, lz4hc, snappy, zlib or zstd — or stored as it is when that does not
// make it smaller. A frame whose data did not compress at all is stored
// whole after its header (the "memcpyed" flag).
//
// Decoding trusts nothing in the frame: every size and offset is checked
// against the frame's length before it is used, and the decoded size
// against a limit the caller gives (for Zarr, the chunk's size), so that a
// hostile frame can neither read outside its input nor make the decoder
// allocate more than the caller allowed. Blocks are decoded on every core.
//
// The codecs are pure Go: lz4 and lz4hc from github.com/pierrec/lz4,
// snappy and zstd from github.com/klauspost/compress, zlib from the
// standard library; blosclz and the shuffles are written here. Frames
// written here decode with c-blosc, though their compressed bytes differ
// from what c-blosc would write for the same data.
//
// The same frames are HDF5's Blosc filter (32001) chunks, for a reader of
// that filter to decode with Decode.
package blosc
