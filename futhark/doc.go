// Package futhark reads and writes the value format of the Futhark
// language: the binary format of `futhark dataset -b` and compiled
// programs, and the text format with Futhark literal syntax, mixed freely
// in one stream, exactly as futhark-data 1.1.3.0 accepts and prints them.
//
// Three ways in:
//
//   - [Open] maps a file (through package mmapfile) and indexes every value
//     without decoding payloads; [View] hands out binary payloads as typed
//     slices aliasing the mapping, [Read] and [ReadAt] copy.
//   - [NewReader] does the same for bytes already in memory.
//   - [NewDecoder] reads a stream value by value, binary payloads in chunks,
//     so values larger than memory pass through.
//
// [NewEncoder] and [NewWriter] write binary values byte-identical to
// futhark-data's Data.Binary encoding and text byte-identical to its
// valueText (Haskell show digits for floats, see [FormatF32]), streaming
// large arrays chunk by chunk. An aligned writer ([WriteOptions].Align) pads
// with spaces before a binary value's 'b' so its payload starts at a
// multiple of the element size or of 64 bytes: such files stay valid Futhark
// input and every payload in them can be viewed without copying.
//
// Unsafe parts, stated plainly: a slice returned by [View] aliases the
// mapping and dies when the File is closed (using it afterwards crashes);
// writing through a view of a read-only mapping crashes the process; a file
// truncated by another process while a view is live makes accesses through
// the view fault, and that cannot be guarded. Copying APIs ([Read],
// [ReadAt]) turn such faults into errors.
package futhark
