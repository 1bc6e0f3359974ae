package layout

import (
	"encoding/binary"
	"math"
	"strconv"
)

// AppendText is a placeholder until the canonical printer moves here.
func AppendText(dst []byte, t Type, b []byte) []byte {
	le := binary.LittleEndian
	switch t {
	case Bool:
		return strconv.AppendBool(dst, b[0] != 0)
	case I8:
		return append(strconv.AppendInt(dst, int64(int8(b[0])), 10), "i8"...)
	case I16:
		return append(strconv.AppendInt(dst, int64(int16(le.Uint16(b))), 10), "i16"...)
	case I32:
		return append(strconv.AppendInt(dst, int64(int32(le.Uint32(b))), 10), "i32"...)
	case I64:
		return append(strconv.AppendInt(dst, int64(le.Uint64(b)), 10), "i64"...)
	case U8:
		return append(strconv.AppendUint(dst, uint64(b[0]), 10), "u8"...)
	case U16:
		return append(strconv.AppendUint(dst, uint64(le.Uint16(b)), 10), "u16"...)
	case U32:
		return append(strconv.AppendUint(dst, uint64(le.Uint32(b)), 10), "u32"...)
	case U64:
		return append(strconv.AppendUint(dst, le.Uint64(b), 10), "u64"...)
	case F32:
		return append(strconv.AppendFloat(dst, float64(math.Float32frombits(le.Uint32(b))), 'g', -1, 32), "f32"...)
	case F64:
		return append(strconv.AppendFloat(dst, math.Float64frombits(le.Uint64(b)), 'g', -1, 64), "f64"...)
	}
	return append(dst, '?')
}
