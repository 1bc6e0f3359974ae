package hdf5

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"sort"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// This file carries a dataset's user attributes and dimension names across
// conversions: read into format.Facts, and written from them as attribute
// messages of the dataset's header.

// internalAttributes are the attributes of HDF5's dimension scales and of
// netCDF-4's bookkeeping, which the writer makes itself from dimension
// names: not the user's.
var internalAttributes = map[string]bool{
	"CLASS": true, "NAME": true, "REFERENCE_LIST": true, "DIMENSION_LIST": true,
	"_Netcdf4Dimid": true, "_Netcdf4Coordinates": true, "_nc3_strict": true, "_NCProperties": true,
	"_ARRAY_DIMENSIONS": true, // Zarr v2's dimension names: they go as dimension scales
}

// factsOf is what a conversion keeps of dataset d: its user attributes
// that JSON can hold (what another format can store), and its dimension
// names. nil when there are none.
func factsOf(attrs map[string]any, dims []string) *format.Facts {
	var fa format.Facts
	for k, v := range attrs {
		if internalAttributes[k] || v == nil {
			continue
		}
		if _, err := json.Marshal(v); err != nil {
			continue // NaN, complex numbers: no JSON for them
		}
		if fa.Attributes == nil {
			fa.Attributes = map[string]any{}
		}
		fa.Attributes[k] = v
	}
	fa.DimensionNames = dims
	if fa.Attributes == nil && fa.DimensionNames == nil {
		return nil
	}
	return &fa
}

// maxAttributeMessage bounds an attribute message the writer makes: a
// header message's size is 16 bits. Bigger attributes are left out (and a
// conversion's summary says so).
const maxAttributeMessage = 16 << 10

// userAttributes are the attribute messages of the source's attributes
// that HDF5 holds as h5py and netCDF read them: text as a fixed-length
// string, numbers as i64 (whole) or f64, lists of numbers as 1-D arrays of
// them; the others (bools, nested lists, objects) are left out. Sorted by
// name, so that the file's bytes do not depend on a map's order.
func userAttributes(attrs map[string]any) [][]byte {
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		if !internalAttributes[k] && k != "_FillValue" && k != "" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var out [][]byte
	for _, k := range names {
		typ, shape, data, ok := attributeValue(attrs[k])
		if !ok {
			continue
		}
		m := appendAttribute(nil, k, typ, appendDataspace(nil, shape), data)
		if len(m) <= maxAttributeMessage {
			out = append(out, m)
		}
	}
	return out
}

// attributeValue encodes v as an attribute's datatype, shape (nil:
// scalar) and data.
func attributeValue(v any) (typ []byte, shape []int64, data []byte, ok bool) {
	le := binary.LittleEndian
	if s, isText := v.(string); isText {
		// Null-padded to its own length, as netCDF-C writes text; an
		// empty text is one padding byte.
		data = make([]byte, max(1, len(s)))
		copy(data, s)
		typ = fixedString(len(data))
		typ[1] = 1 // null-padded
		if !isASCII(s) && utf8.ValidString(s) {
			typ[1] |= 1 << 4 // UTF-8
		}
		return typ, nil, data, true
	}
	if list, isList := v.([]any); isList && len(list) > 0 {
		nums := make([]float64, len(list))
		for i, x := range list {
			f, isNum := number(x)
			if !isNum {
				return nil, nil, nil, false
			}
			nums[i] = f
		}
		shape = []int64{int64(len(nums))}
		if allWhole(nums) {
			for _, f := range nums {
				data = le.AppendUint64(data, uint64(int64(f)))
			}
			return appendFixed(nil, 8, 0, true), shape, data, true
		}
		for _, f := range nums {
			data = le.AppendUint64(data, math.Float64bits(f))
		}
		return appendFloat(nil, layout.F64, 0), shape, data, true
	}
	if f, isNum := number(v); isNum {
		if allWhole([]float64{f}) {
			return appendFixed(nil, 8, 0, true), nil, le.AppendUint64(nil, uint64(int64(f))), true
		}
		return appendFloat(nil, layout.F64, 0), nil, le.AppendUint64(nil, math.Float64bits(f)), true
	}
	return nil, nil, nil, false
}

// number is x as a float64, for the numbers JSON and HDF5 attributes
// decode to.
func number(x any) (float64, bool) {
	switch n := x.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int64:
		return float64(n), n > -1<<53 && n < 1<<53
	case int:
		return float64(n), true
	case uint64:
		return float64(n), n < 1<<53
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// allWhole reports whether every value is a whole number an i64 holds
// exactly.
func allWhole(nums []float64) bool {
	for _, f := range nums {
		if f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
