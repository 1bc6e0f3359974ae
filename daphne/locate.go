package daphne

import "github.com/mmapkit/mmapkit/format"

var _ format.Locator = (*File)(nil)

// Locate describes where record i's bytes are (format.Locator): a dense
// matrix stored as one block, row-major and little-endian. Frames, CSR
// matrices and matrices of several blocks cannot be described.
func (f *File) Locate(i int) (*format.Location, error) {
	if _, err := f.record(i); err != nil {
		return nil, err
	}
	switch {
	case f.hdr.Kind == KindFrame:
		return nil, format.Unlocatable("a frame column, whose values are interleaved row by row")
	case f.hdr.Kind == KindCSR:
		return nil, format.Unlocatable("a CSR matrix")
	case !f.contiguous():
		return nil, format.Unlocatable("a matrix stored as several blocks")
	}
	p, err := f.densePayload()
	if err != nil {
		return nil, err
	}
	return format.PayloadLocation(p, "")
}
