// Package futhark reads and writes the value format of the Futhark
// language: the binary format of `futhark dataset -b` and compiled
// programs, and the text format with Futhark literal syntax, mixed freely
// in one stream, exactly as futhark-data 1.1.3.0 accepts and prints them.
//
// Ways in:
//
//   - [Open] maps a file once (through package mmapfile) and indexes every
//     value without decoding binary payloads, in 32 bytes per value; [View]
//     hands out binary payloads as typed slices aliasing the mapping,
//     [Read] and [ReadAt] copy.
//   - [OpenFile] with mmapfile.ReadWrite also changes elements in place
//     ([Set], [File.SetText]) and appends values ([File.Append],
//     [File.AppendFunc], [File.AppendArray]); [Create] makes a file of one
//     zero-filled value to fill through a view (numpy's open_memmap "w+").
//   - [NewReader] does the same reading for any io.ReaderAt, copying.
//   - [NewDecoder] reads a stream value by value, binary payloads in chunks,
//     so values larger than memory pass through.
//
// The package registers the format "futhark" with package format (files
// .fut, .in, .out, .data, or detected from their bytes): a [File] is a
// format.File whose records are the values, named "0", "1", …, and the
// format's writer converts any format.Source into Futhark values.
//
// [NewEncoder] and [NewWriter] write binary values byte-identical to
// futhark-data's Data.Binary encoding and text byte-identical to its
// valueText (each element as layout.AppendText prints it, Haskell show
// digits for floats), streaming large arrays chunk by chunk. An aligned
// writer ([Options].Align) pads with spaces before a binary value's 'b' so
// its payload starts at a multiple of the element size or of 64 bytes: such
// files stay valid Futhark input and every payload in them can be viewed
// without copying. Files are written through a temporary file renamed over
// the target ([WriteFile]): a failed write leaves the old file.
//
// What is unsafe, stated plainly: a slice returned by [View] or
// [File.Payload] aliases the mapping and dies when the File is closed or an
// append maps the file anew (using it afterwards crashes or reads another
// mapping); writing through a view of a read-only mapping crashes the
// process; a file truncated by another process while a view is live makes
// accesses through the view fault, and that cannot be guarded. The copying
// calls ([Read], [ReadAt], [File.Value], [File.Encode],
// [File.ReadArray]) turn such faults into errors wrapping
// mmapfile.ErrFault.
package futhark
