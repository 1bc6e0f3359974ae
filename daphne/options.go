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
