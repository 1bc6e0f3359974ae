// Package daphne reads and writes the DAPHNE binary data format (.dbdf)
// and its JSON .meta sidecar, byte for byte as DAPHNE's implementation
// (release 0.2 and later) writes them: dense matrices, CSR matrices and
// frames of the value types si8, si32, si64, ui8, ui32, ui64, f32 and f64.
//
// Where DAPHNE's code and its draft documentation (doc/BinaryFormat.md)
// differ, this package follows the code: value type codes start at 0
// (si8) and f64 is 7; a matrix is exactly one block at (0, 0) whose values
// start at byte 45 (dense) or whose arrays start at byte 53 (CSR: u64 row
// offsets and column indexes); a frame has no block header and its values
// are interleaved row by row. Release 0.1's CSR layout and the doc-only
// layouts (empty blocks, COO blocks, the doc's u32 CSR, several blocks with
// positions) are read but never written. String value types are refused:
// DAPHNE writes raw std::string objects, memory addresses rather than
// characters.
//
// # The format document's layout
//
// The document numbers value types differently (1–10: u8 u16 u32 u64 i8
// i16 i32 i64 f32 f64, 16-bit types included), lets every block carry its
// own value type and gives frames blocks with their own headers. DAPHNE
// neither writes nor reads that layout; Options.DocumentLayout (the format
// parameter daphne-layout=document) reads it and
// WriteOptions.DocumentLayout (out-daphne-layout=document) writes it. Read
// without them, a file whose codes mean other types in the document and
// that fits the document's layout where it does not fit the code's — or
// whose .meta names the document's types — is an error (ErrDocumentLayout)
// naming both readings, in lenient mode too: never a silent misread.
//
//	f, err := daphne.Open("X.dbdf", nil) // reads X.dbdf.meta if present
//	v, aliased, err := daphne.DenseValues[float64](f)
//	...
//	f.Close() // v must not be used after this if aliased
//
// The typed calls name a record as the other format packages do: a matrix
// is "matrix" (MatrixName), a frame's columns go by their labels. View
// aliases a dense matrix's values, Read and ReadAt copy any record (a CSR
// matrix's dense values, a frame column), Set changes an element of a
// dense matrix in place at [row, col]:
//
//	g, err := daphne.OpenFile("X.dbdf", mmapfile.ReadWrite, nil)
//	err = daphne.Set(g, "matrix", []int64{1, 2}, 2.5)
//	x, err := daphne.Read[float64](g, "matrix")
//
// The package registers the format "daphne" (extension .dbdf; files are
// never recognised from their bytes) with package format: a *File is a
// format.File whose records are "matrix" or a frame's columns, and Write
// writes any format.Source (a 2-D array, a sparse matrix, equal-length
// columns) as DAPHNE, streaming its values. Nonzeros iterates over a CSR
// matrix's entries straight from the file.
//
// # Strict and lenient reading
//
// By default reading is stricter than DAPHNE: the version byte must be 1,
// the header's u64 dims must equal the block's u32 dims, rx/cx must be 0,
// the block's value type must equal the header's, CSR row offsets must
// start at 0, never decrease and end at nnz, column indexes must be below
// the column count and increase within a row, nothing may follow the data,
// and a .meta beside the file must agree with it (its keys are named in the
// error). Options.Lenient accepts what DAPHNE's reader accepts (Header
// lists what was waived in Relaxed). No mode relaxes size, bounds,
// overflow or allocation checks: every size read from a file is checked
// against the file's size before anything is allocated or sliced, and bad
// input gives a *FormatError naming the byte offset, never a panic.
// A damaged file is refused, never read as a smaller matrix or frame: the
// format's Salvage option is an error wrapping errors.ErrUnsupported.
//
// # Copies and views
//
// DAPHNE never pads, so dense values at byte 45 and CSR arrays at 53+8k sit
// at offsets ≡ 5 (mod 8): only 1-byte types (si8, ui8) can alias the
// mapping (View fails for the others, naming Read). Reads of other types
// copy with one bulk memmove per contiguous range, at memory speed.
// ReadDenseRange and ReadFrameRange map only the bytes of the requested
// rows, so huge files can be streamed in bounded memory. Ranges under
// 64 KiB are read with pread rather than mapped, and so is a frame column
// whose rows are that wide (a frame of many thousand columns), value by
// value; the last range mapped, up to 4 MiB, stays mapped for the reads
// inside it (the next column over the same rows) until Close.
//
// # What is unsafe
//
//   - Slices from View, and from DenseValues when it reports aliased,
//     point into the mapping: after Close any use crashes the process.
//   - Writing through such a slice of a read-only mapping crashes the
//     process (SIGSEGV). Use OpenFile with mmapfile.ReadWrite and
//     Set to change values in place.
//   - If another process truncates the file while a view is live, touching
//     the lost pages raises SIGBUS. Copying reads are guarded (the fault
//     becomes an error); views cannot be.
//   - Writers put the data file and its .meta in place by two renames of
//     fully written, synced temporaries, data first; a replaced file keeps
//     its permission bits. A write that fails, the second rename included,
//     leaves both files as they were. A crash between the two renames can
//     leave the new data file beside the old .meta; a strict Open reports
//     them if they disagree.
//
// # Interchange with DAPHNE
//
// DaphneDSL's write() produces .dbdf only for DenseMatrix (f32, f64, si64,
// ui8 are instantiated), and its read() loads DenseMatrix f32/f64/si64/ui8
// and CSRMatrix f32/f64 (the latter only when the .meta's numNonZeros makes
// the matrix sparse enough and --select-matrix-repr is on). DaphneDSL
// needs the .meta at compile time; the writers here always write it (unless
// WriteOptions.NoMeta). Frames travel only through DAPHNE's C++
// readDaphne/writeDaphne; DAPHNE writes garbage bytes in place of frame
// labels, so labels come from the .meta schema, and this package writes
// the real label bytes (DAPHNE's reader skips them), which name the
// columns of a frame written here when its .meta is missing.
package daphne
