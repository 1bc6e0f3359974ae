package format

import (
	"encoding/binary"

	"github.com/mmapkit/mmapkit/layout"
)

// ParseLiteral parses one element of type t written as a Futhark literal
// (layout.ParseText: decimal or 0x… integers, 010 is ten, floats with inf
// and nan, true and false, an optional matching suffix such as 1.5f32; a
// value the type cannot hold is an error) and returns its bytes in byte
// order bo. It is what Setter.SetText implementations use for layout
// element types.
func ParseLiteral(t layout.Type, s string, bo binary.ByteOrder) ([]byte, error) {
	b, err := layout.ParseText(t, s)
	if err != nil {
		return nil, err
	}
	layout.SwapOrder(b, t, layout.HostOrder(), bo)
	return b, nil
}
