package main

import (
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/scidb"
)

// hostOrder is the byte order of this machine.
var hostOrder = binary.NativeEndian

// leOrder is the byte order every format here writes.
var leOrder binary.ByteOrder = binary.LittleEndian

// lenOf returns the length of a column's typed slice.
func lenOf(v any) int {
	switch v := v.(type) {
	case []int8:
		return len(v)
	case []int16:
		return len(v)
	case []int32:
		return len(v)
	case []int64:
		return len(v)
	case []uint8:
		return len(v)
	case []uint16:
		return len(v)
	case []uint32:
		return len(v)
	case []uint64:
		return len(v)
	case []float32:
		return len(v)
	case []float64:
		return len(v)
	case []bool:
		return len(v)
	case []layout.Float16:
		return len(v)
	case []string:
		return len(v)
	case [][]byte:
		return len(v)
	case [][2]int64:
		return len(v)
	}
	return 0
}

// cellOf formats row k of a column in memory as a CSV cell.
func cellOf(c *columnData, k int) cell {
	if c.reason != nil && c.reason[k] >= 0 {
		return cell{null: true}
	}
	return cell{text: formatValue(c.scidbType, c.values, k)}
}

// formatValue formats element k of a typed column slice as design.md's CSV
// rules say; SciDB types print as SciDB prints them.
func formatValue(scidbType string, v any, k int) string {
	switch v := v.(type) {
	case []int8:
		return strconv.FormatInt(int64(v[k]), 10)
	case []int16:
		return strconv.FormatInt(int64(v[k]), 10)
	case []int32:
		return strconv.FormatInt(int64(v[k]), 10)
	case []int64:
		if scidbType == "datetime" {
			return formatDatetime(v[k])
		}
		return strconv.FormatInt(v[k], 10)
	case []uint8:
		if scidbType == "char" {
			return string(v[k : k+1])
		}
		return strconv.FormatUint(uint64(v[k]), 10)
	case []uint16:
		return strconv.FormatUint(uint64(v[k]), 10)
	case []uint32:
		return strconv.FormatUint(uint64(v[k]), 10)
	case []uint64:
		return strconv.FormatUint(v[k], 10)
	case []float32:
		return strconv.FormatFloat(float64(v[k]), 'g', -1, 32)
	case []float64:
		return strconv.FormatFloat(v[k], 'g', -1, 64)
	case []bool:
		return strconv.FormatBool(v[k])
	case []layout.Float16:
		return strconv.FormatFloat(float64(v[k].Float32()), 'g', -1, 32)
	case []string:
		return v[k]
	case [][]byte:
		return "0x" + hex.EncodeToString(v[k])
	case [][2]int64:
		return formatDatetimeTZ(v[k][0], v[k][1])
	}
	return ""
}

// formatDatetime prints a SciDB datetime (seconds since the epoch, UTC) as
// SciDB does (package scidb holds the one definition).
func formatDatetime(s int64) string { return scidb.Datetime(s).String() }

// formatDatetimeTZ prints a SciDB datetimetz (local wall clock encoded as
// UTC seconds, UTC offset in seconds) as SciDB does.
func formatDatetimeTZ(local, off int64) string {
	return scidb.DatetimeTZ{Local: local, Offset: off}.String()
}
