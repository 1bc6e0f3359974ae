package daphne

// Block describes one (rx, cx, block) of a matrix file.
type Block struct {
	Offset     int64 // offset of rx
	RX, CX     uint64
	Rows, Cols uint32
	Type       BodyType
	ValueType  ValueType // the block's vt byte (the header's for empty blocks)
	DataOffset int64     // first byte after the block's fixed fields
	End        int64     // first byte after the block
	NNZ        uint64    // sparse and COO blocks
	Layout     Layout    // sparse blocks
}

// Header is what Open found in a file's fixed fields.
type Header struct {
	Version uint8
	Kind    Kind
	// Rows and Cols are the logical dims: the header's u64 dims, or in
	// lenient mode the first block's u32 dims for a matrix.
	Rows, Cols uint64
	// FileRows and FileCols are the u64 dims stored in the header.
	FileRows, FileCols uint64
	ValueType          ValueType   // matrices
	Layout             Layout      // a single sparse block's layout
	Blocks             []Block     // matrices, as stored
	ColumnTypes        []ValueType // frames
	DataOffset         int64       // frames: offset of the first value; matrices: of the single dense block's values, or -1
	// Relaxed lists the strict checks that failed and were waived in
	// lenient mode.
	Relaxed []string
	// Meta is the parsed .meta sidecar, nil when there is none (or, in
	// lenient mode, when it did not parse).
	Meta *Meta
}
