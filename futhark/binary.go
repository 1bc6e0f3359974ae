package futhark

import (
	"encoding/binary"
	"fmt"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// binHeader is a decoded binary value header.
type binHeader struct {
	typ   layout.Type
	shape []int64
	hlen  int   // 7 + 8·rank
	size  int64 // payload bytes
}

// parseBinHeader decodes the header at d[0:] (d starts with 'b'). base is
// the file offset of d[0], for errors. It needs the whole header in d;
// when d is too short it reports mmapfile.ErrTruncated with need set to the header
// length known so far.
func parseBinHeader(d []byte, base int64) (h binHeader, need int, err error) {
	bad := func(off int, sen error, format string, args ...any) error {
		return errAt("", base+int64(off), sen, fmt.Sprintf(format, args...))
	}
	if len(d) < 3 {
		return h, 3, bad(len(d), mmapfile.ErrTruncated, "binary header cut short")
	}
	if d[1] != 2 {
		return h, 0, bad(1, ErrVersion, "binary format version %d, only version 2 is supported", d[1])
	}
	if d[2] > MaxRank {
		return h, 0, bad(2, ErrRank, "rank byte 0x%02x is negative", d[2])
	}
	rank := int(d[2])
	h.hlen = 7 + 8*rank
	if len(d) < 7 {
		return h, h.hlen, bad(len(d), mmapfile.ErrTruncated, "binary header cut short")
	}
	h.typ = typeFromBinary(d[3:7])
	if h.typ == layout.Invalid {
		return h, 0, bad(3, ErrUnknownType, "unknown binary type %q", d[3:7])
	}
	if len(d) < h.hlen {
		return h, h.hlen, bad(len(d), mmapfile.ErrTruncated, "binary dimensions cut short")
	}
	h.shape = make([]int64, rank)
	n := int64(1)
	for k := range h.shape {
		v := int64(binary.LittleEndian.Uint64(d[7+8*k:]))
		if v < 0 {
			return h, 0, bad(7+8*k, ErrDims, "negative dimension %d", v)
		}
		h.shape[k] = v
	}
	n, err = layout.Count(h.shape)
	if err == nil {
		var ok bool
		h.size, ok = layout.Mul(n, int64(h.typ.Size()))
		if !ok {
			err = layout.ErrOverflow
		}
	}
	if err != nil {
		return h, 0, bad(7, ErrDims, "dimensions %v overflow", h.shape)
	}
	return h, h.hlen, nil
}

// appendBinHeader appends the header of a binary value.
func appendBinHeader(dst []byte, t layout.Type, shape []int64) []byte {
	dst = append(dst, 'b', 2, byte(len(shape)))
	dst = append(dst, binaryTypes[t]...)
	for _, d := range shape {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(d))
	}
	return dst
}
