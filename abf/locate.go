package abf

import "github.com/mmapkit/mmapkit/format"

var _ format.Locator = (*File)(nil)

// Locate describes where record i's bytes are (format.Locator): an Array
// record's values, column-major, in the record's byte order. BitArrays
// (packed bits), Strings, serialized values, and arrays of Char, Int128
// and UInt128 (which NumPy lacks) cannot be described.
func (f *File) Locate(i int) (*format.Location, error) {
	p, err := f.Payload(i)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	e := f.tab.at(i)
	f.mu.RUnlock()
	if e.kind != KindArray {
		return nil, format.Unlocatable("a %s record", e.kind)
	}
	return format.PayloadLocation(p, "")
}
