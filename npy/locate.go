package npy

import (
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
)

var _ format.Locator = (*File)(nil)

// Locate describes where record i's bytes are (format.Locator): a whole
// array's data, in a .npy or in a stored .npz member (at its offset in
// the archive), with the header's descr as the type. Fields of
// structured arrays, void and structured arrays, deflated members and
// members that are not arrays cannot be described.
func (f *File) Locate(i int) (*format.Location, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if i < 0 || i >= len(f.slots) {
		return nil, f.errf(-1, mmapfile.ErrOutOfRange, "record %d of %d", i, len(f.slots))
	}
	if f.closed {
		return nil, f.bad(i, mmapfile.ErrClosed, "locate")
	}
	ref := f.ref(i)
	a := ref.t.a
	switch {
	case a == nil:
		return nil, format.Unlocatable("a member that is not an array")
	case ref.t.field != nil:
		return nil, format.Unlocatable("a field of a structured array, whose values are strided")
	case a.h.DType.Structured():
		return nil, format.Unlocatable("a structured array")
	case a.h.DType.Kind == 'V':
		return nil, format.Unlocatable("void elements")
	case a.deflated():
		return nil, format.Unlocatable("a deflated member")
	}
	return &format.Location{Shape: a.h.Shape, Order: a.h.Order(), DType: a.h.DType.simpleDescr(),
		Offset: a.data, Length: a.h.dataSize}, nil
}
