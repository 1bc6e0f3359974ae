package daphne

import "github.com/mmapkit/mmapkit/mmapfile"

// Defaults of Options.
const (
	DefaultMaxAlloc  = 1 << 30
	DefaultMaxBlocks = 4096
)

// Options configures Open, OpenFile and NewReader. A nil *Options means the
// defaults: strict, MaxAlloc 1 GiB, MaxBlocks 4096, CSR layout detected.
type Options struct {
	// Options are the mapping's options: advice, populate, lock, wait.
	// Create and Truncate are refused (a DAPHNE file is made by the
	// writers, never by mapping an empty file).
	mmapfile.Options
	// Lenient accepts what DAPHNE's reader accepts: any version byte, rx/cx
	// ignored, the block's u32 dims used over the header's u64 dims, the
	// header vt used over the block vt, bytes after the first block (or
	// after a frame's values) ignored, CSR arrays not validated on read, a
	// malformed or disagreeing .meta ignored. It never relaxes size,
	// bounds, overflow or allocation checks.
	Lenient bool
	// MaxAlloc bounds the bytes allocated for cells that are not stored in
	// the file (empty and COO blocks, sparse blocks read densely, CSR
	// assembled from several blocks). 0 means DefaultMaxAlloc.
	MaxAlloc int64
	// MaxBlocks bounds the number of blocks of a multi-block file. 0 means
	// DefaultMaxBlocks.
	MaxBlocks int
	// CSRLayout forces the layout of sparse blocks; LayoutDetect tells
	// them apart by size.
	CSRLayout Layout
	// Meta is the content of the .meta sidecar for NewReader (nil: there
	// is none). Open and OpenFile read "<path>.meta" instead.
	Meta []byte
	// DocumentLayout reads the layout of DAPHNE's format document
	// (doc/BinaryFormat.md) instead of its code's: value type codes 1–10
	// (u8 u16 u32 u64 i8 i16 i32 i64 f32 f64), each block with its own
	// value type (converted to the header's), CSR blocks with u32 counts
	// and indexes, frames of blocks with their own headers. DAPHNE itself
	// writes and reads only its code's layout. Without it, a file whose
	// value type codes mean different types in the two numberings and
	// that fits the document's layout but not the code's is an error that
	// names both readings, in lenient mode too, never a silent misread.
	DocumentLayout bool
}

func (o *Options) maxAlloc() int64 {
	if o.MaxAlloc > 0 {
		return o.MaxAlloc
	}
	return DefaultMaxAlloc
}

func (o *Options) maxBlocks() int {
	if o.MaxBlocks > 0 {
		return o.MaxBlocks
	}
	return DefaultMaxBlocks
}
