package futhark

import (
	"encoding/binary"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// hostLittle reports whether this machine is little-endian, the byte order
// of every Futhark payload.
var hostLittle = mmapfile.IsHostOrder(binary.LittleEndian)
