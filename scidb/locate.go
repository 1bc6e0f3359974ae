package scidb

import "github.com/mmapkit/mmapkit/format"

var _ format.Locator = (*File)(nil)

// Locate describes where attribute i's bytes are (format.Locator): a file
// of one fixed-size non-nullable attribute is its values, 1-D and
// little-endian from the first byte (datetime as NumPy's <M8[s]). Files
// of several or nullable attributes, and strings, cannot be described.
func (m *File) Locate(i int) (*format.Location, error) {
	p, err := m.Payload(i)
	if err != nil {
		return nil, err
	}
	dtype := ""
	if m.Records()[i].TypeName == "datetime" {
		dtype = "<M8[s]"
	}
	return format.PayloadLocation(p, dtype)
}
