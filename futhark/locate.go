package futhark

import "github.com/mmapkit/mmapkit/format"

var _ format.Locator = (*File)(nil)

// Locate describes where value i's bytes are (format.Locator): a binary
// value's elements, little-endian and row-major. Text values cannot be
// described.
func (f *File) Locate(i int) (*format.Location, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	e, err := f.entry(i)
	if err != nil {
		return nil, err
	}
	if !e.bin {
		return nil, format.Unlocatable("a text value")
	}
	p, err := f.payload(i)
	if err != nil {
		return nil, err
	}
	return format.PayloadLocation(p, "")
}
