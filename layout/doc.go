// Package layout describes array data independently of any file format:
// element types and their sizes, array descriptors (name, type, shape,
// order, payload offset and size), overflow-checked size arithmetic, a
// planner that places a sequence of records at aligned file offsets, and
// the primitives every format's reads share: the host's byte order, byte
// swapping and bool checks ([SwapOrder], [CheckBools]), the Go slice of an
// element type ([SliceOf], [BytesOf], [MakeSlice]), and the strided N-d
// copy ([StridedCopy]) and cache-blocked transpose that move chunks and
// reorder arrays.
//
// The element types that Go lacks live here so that every format package
// shares one definition: [Float16] (IEEE binary16 bits), [Int128] and
// [Uint128] (two 64-bit words, low word first, as they lie in little-endian
// memory) and [Char] (Julia's 32-bit Char, UTF-8 bytes left-justified).
//
// Nothing in this package touches files or uses package unsafe. Every
// function that computes a size from untrusted numbers ([Count],
// [ByteSize], [AlignUp], [Plan], [Mul], [Add]) reports overflow instead of
// wrapping, so callers can check a header against a file size before they
// allocate or slice anything.
package layout
