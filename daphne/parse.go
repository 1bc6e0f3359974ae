package daphne

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

func (f *File) relax(format string, args ...any) {
	f.hdr.Relaxed = append(f.hdr.Relaxed, fmt.Sprintf(format, args...))
}

// strictf returns an error in strict mode and records the waived check in
// lenient mode.
func (f *File) strictf(off int64, format string, args ...any) error {
	if f.opts.Lenient {
		f.relax("offset %d: "+format, append([]any{off}, args...)...)
		return nil
	}
	return f.errf(off, nil, format, args...)
}

// readField reads len(p) bytes at off, naming what at the error offset.
func (f *File) readField(p []byte, off int64, what string) error {
	end, ok := layout.Add(off, int64(len(p)))
	if !ok || end > f.size {
		return f.errf(off, mmapfile.ErrTruncated, "%s: needs %d bytes at offset %d, file has %d", what, len(p), off, f.size)
	}
	if _, err := f.ra.ReadAt(p, off); err != nil && !(errors.Is(err, io.EOF) && end == f.size) {
		return f.errf(off, err, "%s: %v", what, err)
	}
	return nil
}

func (f *File) u8(off int64, what string) (uint8, error) {
	var b [1]byte
	err := f.readField(b[:], off, what)
	return b[0], err
}

func (f *File) u32(off int64, what string) (uint32, error) {
	var b [4]byte
	err := f.readField(b[:], off, what)
	return binary.LittleEndian.Uint32(b[:]), err
}

func (f *File) u64(off int64, what string) (uint64, error) {
	var b [8]byte
	err := f.readField(b[:], off, what)
	return binary.LittleEndian.Uint64(b[:]), err
}

// sizeAt returns off + n·unit, or false on overflow.
func sizeAt(off int64, n uint64, unit int64) (int64, bool) {
	if n > 1<<63-1 {
		return 0, false
	}
	m, ok := layout.Mul(int64(n), unit)
	if !ok {
		return 0, false
	}
	return layout.Add(off, m)
}

func (f *File) parse() error {
	var hdr [headerSize]byte
	if f.size < headerSize {
		// Name the first field that the end of the file cuts.
		for _, fl := range []struct {
			off, end int64
			name     string
		}{{0, 1, "version"}, {1, 2, "data type"}, {2, 10, "rows"}, {10, 18, "cols"}} {
			if f.size < fl.end {
				return f.errf(fl.off, mmapfile.ErrTruncated, "%s: file ends after %d bytes", fl.name, f.size)
			}
		}
	}
	if err := f.readField(hdr[:], 0, "header"); err != nil {
		return err
	}
	h := &f.hdr
	h.Version = hdr[0]
	h.FileRows = binary.LittleEndian.Uint64(hdr[2:])
	h.FileCols = binary.LittleEndian.Uint64(hdr[10:])
	h.Rows, h.Cols = h.FileRows, h.FileCols
	h.DataOffset = -1
	if h.Version != 1 {
		if err := f.strictf(0, "version %d, want 1", h.Version); err != nil {
			return err
		}
	}
	switch dt := hdr[1]; dt {
	case 1, 2:
		h.Kind = Kind(dt)
		return f.parseMatrix()
	case 3:
		h.Kind = KindFrame
		h.ValueType = INVALID
		if err := f.int64Dims(); err != nil {
			return err
		}
		return f.parseFrame()
	case 4:
		return f.errf(1, errors.ErrUnsupported, "data type 4 (Value_t, a scalar) is not supported")
	default:
		return f.errf(1, nil, "unknown data type %d (want 1 dense, 2 CSR or 3 frame)", dt)
	}
}

// int64Dims checks the header dims of files that use them (frames,
// multi-block matrices) as int64s, for shapes and offsets; no valid file
// gets near the limit.
func (f *File) int64Dims() error {
	if f.hdr.FileRows > 1<<63-1 {
		return f.errf(2, mmapfile.ErrTooLarge, "%d rows exceed int64", f.hdr.FileRows)
	}
	if f.hdr.FileCols > 1<<63-1 {
		return f.errf(10, mmapfile.ErrTooLarge, "%d cols exceed int64", f.hdr.FileCols)
	}
	return nil
}

func (f *File) valueType(off int64) (ValueType, error) {
	b, err := f.u8(off, "value type")
	if err != nil {
		return 0, err
	}
	if f.doc {
		if vt, ok := documentValueType(b); ok {
			return vt, nil
		}
		return 0, f.errf(off, nil, "value type code %d is none of the format document's 1–10 (DAPHNE's code reads it as %s)", b, codeReading(b))
	}
	vt := ValueType(b)
	switch {
	case vt.Numeric():
		return vt, nil
	case vt == STR || vt == FIXEDSTR16:
		return 0, f.errf(off, ErrStringType, "value type %v (the format document reads code %d as %s)", vt, b, documentReading(b))
	}
	return 0, f.errf(off, nil, "unknown value type code %d (the format document reads it as %s)", b, documentReading(b))
}

// blockType returns the value type of a block's values: its own in the
// document's layout, the header's in DAPHNE's (whose readers ignore the
// block's byte).
func (f *File) blockType(b *Block) ValueType {
	if f.doc && b.Type != BodyEmpty {
		return b.ValueType
	}
	return f.hdr.ValueType
}

func (f *File) parseMatrix() error {
	h := &f.hdr
	vt, err := f.valueType(headerSize)
	if err != nil {
		return err
	}
	h.ValueType = vt
	first, err := f.parseBlock(headerSize+1, true)
	if err != nil {
		return err
	}
	h.Blocks = []Block{first}
	f.misfit = first.End < f.size && !f.doc
	if first.End == f.size || f.opts.Lenient && !f.doc {
		return f.singleBlock(first)
	}
	return f.multiBlock(first)
}

// singleBlock applies the checks DAPHNE skips to a one-block file.
func (f *File) singleBlock(b Block) error {
	h := &f.hdr
	if b.End < f.size {
		f.relax("offset %d: %d bytes after the first block ignored", b.End, f.size-b.End)
	}
	if b.RX != 0 {
		if err := f.strictf(b.Offset, "rx %d in a single-block file, want 0", b.RX); err != nil {
			return err
		}
	}
	if b.CX != 0 {
		if err := f.strictf(b.Offset+8, "cx %d in a single-block file, want 0", b.CX); err != nil {
			return err
		}
	}
	if uint64(b.Rows) != h.FileRows {
		if err := f.strictf(b.Offset+16, "block rows %d, header says %d (DAPHNE stores block dims as u32)", b.Rows, h.FileRows); err != nil {
			return err
		}
	}
	if uint64(b.Cols) != h.FileCols {
		if err := f.strictf(b.Offset+20, "block cols %d, header says %d (DAPHNE stores block dims as u32)", b.Cols, h.FileCols); err != nil {
			return err
		}
	}
	if b.Type != BodyEmpty && b.ValueType != h.ValueType && !f.doc {
		if err := f.strictf(b.Offset+25, "block value type %v, header says %v", b.ValueType, h.ValueType); err != nil {
			return err
		}
	}
	h.Rows, h.Cols = uint64(b.Rows), uint64(b.Cols)
	eff := b
	eff.RX, eff.CX = 0, 0
	f.blocks = []Block{eff}
	if b.Type == BodyDense && f.blockType(&b) == h.ValueType {
		h.DataOffset = b.DataOffset
	}
	if b.Type == BodySparse {
		h.Layout = b.Layout
	}
	return nil
}

// multiBlock reads the doc's (rx, cx, block) sequence to the end of the
// file and checks that the blocks partition the matrix.
func (f *File) multiBlock(first Block) error {
	h := &f.hdr
	if err := f.int64Dims(); err != nil {
		return err
	}
	blocks := []Block{first}
	for p := first.End; p < f.size; {
		if len(blocks) >= f.opts.maxBlocks() {
			return f.errf(p, mmapfile.ErrTooLarge, "more than %d blocks (Options.MaxBlocks)", f.opts.maxBlocks())
		}
		b, err := f.parseBlock(p, false)
		if err != nil {
			return err
		}
		blocks = append(blocks, b)
		p = b.End
	}
	if err := f.partition(blocks); err != nil {
		return err
	}
	h.Blocks = blocks
	f.blocks = blocks
	return nil
}

// partition checks that blocks lie inside the header's dims, are pairwise
// disjoint and cover the whole matrix (or frame).
func (f *File) partition(blocks []Block) error {
	h := &f.hdr
	var area [2]uint64 // 128-bit sum of block areas: hi, lo
	for i, b := range blocks {
		if b.Type != BodyEmpty && b.ValueType != h.ValueType && !f.doc {
			return f.errf(b.Offset+25, nil, "block %d value type %v, header says %v", i, b.ValueType, h.ValueType)
		}
		if b.RX > h.FileRows || uint64(b.Rows) > h.FileRows-b.RX {
			return f.errf(b.Offset, nil, "block %d rows [%d, %d+%d) outside the matrix's %d rows", i, b.RX, b.RX, b.Rows, h.FileRows)
		}
		if b.CX > h.FileCols || uint64(b.Cols) > h.FileCols-b.CX {
			return f.errf(b.Offset+8, nil, "block %d cols [%d, %d+%d) outside the matrix's %d cols", i, b.CX, b.CX, b.Cols, h.FileCols)
		}
		for j := 0; j < i; j++ {
			c := blocks[j]
			if b.Rows > 0 && b.Cols > 0 && c.Rows > 0 && c.Cols > 0 &&
				b.RX < c.RX+uint64(c.Rows) && c.RX < b.RX+uint64(b.Rows) &&
				b.CX < c.CX+uint64(c.Cols) && c.CX < b.CX+uint64(b.Cols) {
				return f.errf(b.Offset, nil, "block %d overlaps block %d", i, j)
			}
		}
		hi, lo := mul64(uint64(b.Rows), uint64(b.Cols))
		var carry uint64
		area[1], carry = bits.Add64(area[1], lo, 0)
		area[0] += hi + carry
	}
	hi, lo := mul64(h.FileRows, h.FileCols)
	if area[0] != hi || area[1] != lo {
		return f.errf(headerSize-16, nil, "blocks cover %d cells of %d×%d (they must partition the matrix)", area[1], h.FileRows, h.FileCols)
	}
	return nil
}

// parseBlock reads the (rx, cx, block) at p. first says whether it is the
// first block, the only one whose sparse layout is told apart by size.
func (f *File) parseBlock(p int64, first bool) (Block, error) {
	b := Block{Offset: p}
	var err error
	if b.RX, err = f.u64(p, "block rx"); err != nil {
		return b, err
	}
	if b.CX, err = f.u64(p+8, "block cx"); err != nil {
		return b, err
	}
	if b.Rows, err = f.u32(p+16, "block rows"); err != nil {
		return b, err
	}
	if b.Cols, err = f.u32(p+20, "block cols"); err != nil {
		return b, err
	}
	bt, err := f.u8(p+24, "block type")
	if err != nil {
		return b, err
	}
	b.Type = BodyType(bt)
	if b.Type > BodyCOO {
		return b, f.errf(p+24, nil, "unknown body type %d", bt)
	}
	if b.Type == BodyEmpty {
		b.ValueType = f.hdr.ValueType
		b.DataOffset, b.End = p+25, p+25
		return b, nil
	}
	// DAPHNE ignores the block's vt byte; lenient mode does too. In the
	// document's layout each block has its own.
	raw, err := f.u8(p+25, "block value type")
	if err != nil {
		return b, err
	}
	b.ValueType = ValueType(raw)
	if !f.opts.Lenient || f.doc {
		if b.ValueType, err = f.valueType(p + 25); err != nil {
			return b, err
		}
	}
	s := int64(f.blockType(&b).Size())
	switch b.Type {
	case BodyDense:
		b.DataOffset = p + 26
		n := uint64(b.Rows) * uint64(b.Cols) // u32·u32 fits u64
		end, ok := sizeAt(b.DataOffset, n, s)
		if !ok || end > f.size {
			return b, f.errf(b.DataOffset, mmapfile.ErrTruncated, "dense block of %d×%d %v needs %d·%d bytes from offset %d, file has %d", b.Rows, b.Cols, f.hdr.ValueType, n, s, b.DataOffset, f.size)
		}
		b.End = end
	case BodyCOO:
		nnz, err := f.u32(p+26, "COO nnz")
		if err != nil {
			return b, err
		}
		b.NNZ = uint64(nnz)
		b.DataOffset = p + 30
		entry := 8 + s
		if b.Cols == 1 {
			entry = 4 + s
		}
		end, ok := sizeAt(b.DataOffset, b.NNZ, entry)
		if !ok || end > f.size {
			return b, f.errf(p+26, mmapfile.ErrTruncated, "COO block of %d entries needs %d bytes each from offset %d, file has %d", nnz, entry, b.DataOffset, f.size)
		}
		if uint64(nnz) > uint64(b.Rows)*uint64(b.Cols) {
			return b, f.errf(p+26, nil, "COO nnz %d exceeds the block's %d×%d cells", nnz, b.Rows, b.Cols)
		}
		b.End = end
	case BodySparse:
		if b.NNZ, err = f.u64(p+26, "nnz"); err != nil {
			return b, err
		}
		b.DataOffset = p + 34
		if b.NNZ > uint64(b.Rows)*uint64(b.Cols) && !f.opts.Lenient {
			return b, f.errf(p+26, nil, "nnz %d exceeds the block's %d×%d cells", b.NNZ, b.Rows, b.Cols)
		}
		if err := f.sparseLayout(&b, first, s); err != nil {
			return b, err
		}
	}
	return b, nil
}

// sparseEnd returns where a sparse block of layout l ends, or false if the
// arithmetic overflows.
func sparseEnd(b *Block, l Layout, s int64) (int64, bool) {
	var rowBytes, idx int64
	var rows = uint64(b.Rows)
	switch l {
	case LayoutCurrent:
		rowBytes, idx, rows = 8, 8, rows+1
	case LayoutRelease01:
		rowBytes, idx = 8, 8
	default:
		rowBytes, idx = 4, 4
	}
	e, ok := sizeAt(b.DataOffset, rows, rowBytes)
	if !ok {
		return 0, false
	}
	return sizeAt(e, b.NNZ, idx+s)
}

func (f *File) sparseLayout(b *Block, first bool, s int64) error {
	l := f.opts.CSRLayout
	if f.doc {
		l = LayoutDoc
	}
	if l == LayoutDetect && first {
		for _, c := range []Layout{LayoutCurrent, LayoutRelease01, LayoutDoc} {
			if e, ok := sparseEnd(b, c, s); ok && e == f.size {
				l = c
				break
			}
		}
		f.misfit = l == LayoutDetect && !f.doc
		if l == LayoutDetect && f.opts.Lenient {
			if e, ok := sparseEnd(b, LayoutCurrent, s); ok && e < f.size {
				l = LayoutCurrent
			}
		}
	}
	if l == LayoutDetect {
		l = LayoutDoc
	}
	b.Layout = l
	if l != LayoutDoc {
		e, ok := sparseEnd(b, l, s)
		if !ok || e > f.size {
			return f.errf(b.DataOffset-8, mmapfile.ErrTruncated, "sparse block (%v layout) of %d rows and nnz %d needs more bytes than the file's %d", l, b.Rows, b.NNZ, f.size)
		}
		b.End = e
		if l == LayoutRelease01 {
			// Size alone cannot tell a 0.1 file from a damaged current
			// one; its row counts must add up.
			_, err := f.walkRows(b, 8, s)
			return err
		}
		return nil
	}
	// The doc layout's length is known only by walking its rows.
	end, ok := sparseEnd(b, LayoutDoc, s)
	if !ok || end > f.size {
		return f.errf(b.DataOffset-8, mmapfile.ErrTruncated, "sparse block of %d rows and nnz %d fits no CSR layout in the file's %d bytes", b.Rows, b.NNZ, f.size)
	}
	end, err := f.walkRows(b, 4, s)
	b.End = end
	return err
}

// walkRows steps over the per-row counts and entries of a release-0.1
// (width 8) or doc (width 4) sparse block, checking that the counts add up
// to nnz within the file, and returns where the block ends.
func (f *File) walkRows(b *Block, width, s int64) (int64, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(f.ra, b.DataOffset, f.size-b.DataOffset), 64<<10)
	p := b.DataOffset
	var total uint64
	var buf [8]byte
	for i := uint32(0); i < b.Rows; i++ {
		if _, err := io.ReadFull(r, buf[:width]); err != nil {
			return 0, f.errf(p, mmapfile.ErrTruncated, "row %d count: file ends", i)
		}
		n := binary.LittleEndian.Uint64(buf[:])
		if width == 4 {
			n = uint64(binary.LittleEndian.Uint32(buf[:]))
		}
		if n > b.NNZ-total {
			return 0, f.errf(p, nil, "row %d: %d entries, more than nnz %d leaves", i, n, b.NNZ-total)
		}
		total += n
		skip := int64(n) * (width + s)
		if p+width+skip > f.size {
			return 0, f.errf(p, mmapfile.ErrTruncated, "row %d: %d entries need %d bytes, file ends", i, n, skip)
		}
		if _, err := r.Discard(int(skip)); err != nil {
			return 0, f.errf(p, mmapfile.ErrTruncated, "row %d: %v", i, err)
		}
		p += width + skip
	}
	if total != b.NNZ {
		return 0, f.errf(b.DataOffset-8, nil, "nnz %d, rows hold %d", b.NNZ, total)
	}
	return p, nil
}

func (f *File) parseFrame() error {
	h := &f.hdr
	cols := h.FileCols
	typesEnd, ok := sizeAt(headerSize, cols, 1)
	if !ok || typesEnd > f.size {
		return f.errf(headerSize, mmapfile.ErrTruncated, "%d column types need %d bytes, file has %d", cols, cols, f.size)
	}
	types := make([]byte, cols)
	if err := f.readField(types, headerSize, "column types"); err != nil {
		return err
	}
	h.ColumnTypes = make([]ValueType, cols)
	f.colOff = make([]int64, cols)
	for i, t := range types {
		vt := ValueType(t)
		if !vt.Numeric() || f.doc {
			var err error
			if vt, err = f.valueType(headerSize + int64(i)); err != nil {
				return err
			}
		}
		h.ColumnTypes[i] = vt
		f.colOff[i] = f.rowSize
		f.rowSize += int64(vt.Size())
	}
	p := typesEnd
	r := bufio.NewReaderSize(io.NewSectionReader(f.ra, p, f.size-p), 64<<10)
	var buf [2]byte
	// The label bytes, kept to be used as labels when there is no .meta
	// and they are real labels (as mmapkit writes them), not DAPHNE's
	// pointer bytes.
	var text []byte
	var ends []uint32
	real := f.keepLabels
	if real {
		ends = make([]uint32, cols)
	}
	for i := uint64(0); i < cols; i++ {
		if _, err := io.ReadFull(r, buf[:]); err != nil {
			return f.errf(p, mmapfile.ErrTruncated, "label %d length: file ends", i)
		}
		n := int64(binary.LittleEndian.Uint16(buf[:]))
		if p+2+n > f.size {
			return f.errf(p, mmapfile.ErrTruncated, "label %d: %d bytes, file ends", i, n)
		}
		if real && int64(len(text))+n <= maxLabelText {
			at := len(text)
			if cap(text)-at < int(n) {
				text = slices.Grow(text, max(int(n), at)) // doubling
			}
			text = text[:at+int(n)]
			if _, err := io.ReadFull(r, text[at:]); err != nil {
				return f.errf(p, mmapfile.ErrTruncated, "label %d: %v", i, err)
			}
			real = labelText(text[at:])
			ends[i] = uint32(len(text))
		} else {
			real, text, ends = false, nil, nil
			if _, err := r.Discard(int(n)); err != nil {
				return f.errf(p, mmapfile.ErrTruncated, "label %d: %v", i, err)
			}
		}
		p += 2 + n
	}
	if real {
		f.fileLabels, f.labelEnds = string(text), ends
		if _, _, dup := firstDuplicate(len(ends), f.fileLabel); dup {
			f.fileLabels, f.labelEnds = "", nil
		}
	}
	if f.doc {
		return f.frameBlocks(p)
	}
	rx, err := f.u64(p, "frame rx")
	if err != nil {
		return err
	}
	cx, err := f.u64(p+8, "frame cx")
	if err != nil {
		return err
	}
	if rx != 0 {
		if err := f.strictf(p, "frame rx %d, want 0", rx); err != nil {
			return err
		}
	}
	if cx != 0 {
		if err := f.strictf(p+8, "frame cx %d, want 0", cx); err != nil {
			return err
		}
	}
	h.DataOffset = p + 16
	end, ok := sizeAt(h.DataOffset, h.FileRows, f.rowSize)
	if !ok || end > f.size {
		return f.errf(h.DataOffset, mmapfile.ErrTruncated, "%d rows of %d bytes need more than the file's %d bytes", h.FileRows, f.rowSize, f.size)
	}
	if end < f.size {
		f.misfit = true
		if err := f.strictf(end, "%d bytes after the frame's values", f.size-end); err != nil {
			return err
		}
	}
	return nil
}

// frameBlocks reads the body of a frame in the document's layout from p:
// (rx, cx, block) to the end of the file, dense or empty blocks that
// partition the frame, each with its own value type.
func (f *File) frameBlocks(p int64) error {
	h := &f.hdr
	var blocks []Block
	for p < f.size {
		if len(blocks) >= f.opts.maxBlocks() {
			return f.errf(p, mmapfile.ErrTooLarge, "more than %d blocks (Options.MaxBlocks)", f.opts.maxBlocks())
		}
		b, err := f.parseBlock(p, false)
		if err != nil {
			return err
		}
		if b.Type != BodyDense && b.Type != BodyEmpty {
			return f.errf(p+24, errors.ErrUnsupported, "a frame's block is %v; frames hold dense and empty blocks", b.Type)
		}
		blocks = append(blocks, b)
		p = b.End
	}
	if err := f.partition(blocks); err != nil {
		return err
	}
	h.Blocks, f.blocks = blocks, blocks
	return nil
}

const maxInt = int64(^uint(0) >> 1)

// maxLabelText bounds the label bytes kept from a frame file.
const maxLabelText = 1 << 30

// labelText reports whether b can be a real label: valid UTF-8 without
// control characters. DAPHNE writes the bytes of a pointer in place of a
// label, which almost never pass.
func labelText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// firstDuplicate finds the first label that repeats an earlier one, as a
// scan with a set would: i is the smallest index whose label occurs at a
// lower index, j the first index of that label. It sorts indexes instead of
// building a set, so a frame of a million columns costs 8 bytes a column.
func firstDuplicate(n int, label func(int) string) (i, j int, ok bool) {
	idx := make([]int, n)
	for k := range idx {
		idx[k] = k
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := strings.Compare(label(a), label(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	i = n
	for k := 0; k < n; {
		e := k + 1
		for e < n && label(idx[e]) == label(idx[k]) {
			e++
		}
		// idx[k] is the label's first index, idx[k+1] its first repeat.
		if e-k > 1 && idx[k+1] < i {
			i, j = idx[k+1], idx[k]
		}
		k = e
	}
	return i, j, i < n
}

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }
