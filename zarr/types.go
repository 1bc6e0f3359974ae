package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// dtype is an element type as a store describes it.
type dtype struct {
	typ  layout.Type // Invalid for types this package cannot read
	name string      // the type's name where layout's says too little: "datetime64[s]", or the store's own for unreadable types
	big  bool        // elements are big-endian
	// itemsize is the size of an element of a type this package cannot
	// read, where the store says it (NumPy's "|S4", "<U4", "|V8"); 0
	// where it does not.
	itemsize int64
}

// typeName is what listings show.
func (d dtype) typeName() string {
	if d.name != "" {
		return d.name
	}
	return d.typ.String()
}

// parseDtypeV2 parses a NumPy type description as .zarray's "dtype" has
// it: "<f8", ">i2", "|b1", "<c16", "<M8[s]".
func parseDtypeV2(raw json.RawMessage) (dtype, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
			return dtype{name: "structured"}, nil
		}
		return dtype{}, fmt.Errorf("dtype %s is not a string", clip(raw))
	}
	if len(s) < 2 {
		return dtype{}, fmt.Errorf("dtype %q does not parse", s)
	}
	var d dtype
	rest := s
	switch s[0] {
	case '<', '|':
		rest = s[1:]
	case '>':
		d.big = true
		rest = s[1:]
	case '=':
		d.big = layout.IsHostOrder(binary.BigEndian)
		rest = s[1:]
	}
	if rest == "" {
		return dtype{}, fmt.Errorf("dtype %q does not parse", s)
	}
	kind, num := rest[0], rest[1:]
	unit := ""
	if i := strings.IndexByte(num, '['); i >= 0 && strings.HasSuffix(num, "]") {
		num, unit = num[:i], num[i+1:len(num)-1]
	}
	size, err := strconv.Atoi(num)
	if err != nil || size <= 0 {
		return dtype{}, fmt.Errorf("dtype %q does not parse", s)
	}
	switch {
	case kind == 'b' && size == 1:
		d.typ = layout.Bool
	case kind == 'i' || kind == 'u' || kind == 'f' || kind == 'c':
		d.typ = numericType(kind, size)
	case (kind == 'M' || kind == 'm') && size == 8 && unit != "":
		d.typ = layout.I64
		d.name = "datetime64[" + unit + "]"
		if kind == 'm' {
			d.name = "timedelta64[" + unit + "]"
		}
	case kind == 'S':
		d.name, d.itemsize = "bytes"+num, int64(size)
	case kind == 'U':
		d.name, d.itemsize = "str"+num, 4*int64(size) // UCS-4
	case kind == 'V':
		d.name, d.itemsize = "void"+num, int64(size)
	}
	if d.typ == layout.Invalid && d.name == "" {
		return dtype{}, fmt.Errorf("dtype %q does not parse", s)
	}
	if d.typ.Size() == 1 {
		d.big = false
	}
	return d, nil
}

func numericType(kind byte, size int) layout.Type {
	for _, t := range layout.Types() {
		if t.Size() != size || t == layout.Bool || t == layout.JuliaChar {
			continue
		}
		switch {
		case kind == 'i' && t.IsSigned(), kind == 'u' && t.IsUnsigned(),
			kind == 'f' && t.IsFloat(), kind == 'c' && t.IsComplex():
			if t != layout.I128 && t != layout.U128 {
				return t
			}
		}
	}
	return layout.Invalid
}

// dtypeV2 is the "dtype" of .zarray for d.
func dtypeV2(d dtype) string { return format.NumPyDType(d.typ, d.name, d.big) }

// v3Types are the core data types of version 3.
var v3Types = map[string]layout.Type{
	"bool": layout.Bool, "int8": layout.I8, "int16": layout.I16, "int32": layout.I32, "int64": layout.I64,
	"uint8": layout.U8, "uint16": layout.U16, "uint32": layout.U32, "uint64": layout.U64,
	"float16": layout.F16, "float32": layout.F32, "float64": layout.F64,
	"complex64": layout.C64, "complex128": layout.C128,
}

// parseDtypeV3 parses zarr.json's "data_type": a core type name, or the
// datetime extension zarr-python writes ({"name": "numpy.datetime64",
// "configuration": {"unit": "s", "scale_factor": 1}}).
func parseDtypeV3(raw json.RawMessage) (dtype, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, ok := v3Types[s]; ok {
			return dtype{typ: t}, nil
		}
		if s == "" {
			return dtype{}, fmt.Errorf("data_type is empty")
		}
		return dtype{name: s}, nil
	}
	var ext struct {
		Name   string `json:"name"`
		Config struct {
			Unit  string `json:"unit"`
			Scale *int64 `json:"scale_factor"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal(raw, &ext); err != nil || ext.Name == "" {
		return dtype{}, fmt.Errorf("data_type %s is neither a name nor an object with one", clip(raw))
	}
	if (ext.Name == "numpy.datetime64" || ext.Name == "numpy.timedelta64") && ext.Config.Unit != "" &&
		(ext.Config.Scale == nil || *ext.Config.Scale == 1) {
		base := strings.TrimPrefix(ext.Name, "numpy.")
		return dtype{typ: layout.I64, name: base + "[" + ext.Config.Unit + "]"}, nil
	}
	return dtype{name: ext.Name}, nil
}

// dtypeV3 is the "data_type" of zarr.json for d.
func dtypeV3(d dtype) any {
	if strings.HasPrefix(d.name, "datetime64[") || strings.HasPrefix(d.name, "timedelta64[") {
		i := strings.IndexByte(d.name, '[')
		return map[string]any{"name": "numpy." + d.name[:i], "configuration": map[string]any{"unit": d.name[i+1 : len(d.name)-1], "scale_factor": 1}}
	}
	for name, t := range v3Types {
		if t == d.typ {
			return name
		}
	}
	return d.typ.String()
}

// rawBits is a fill value given as its bit pattern ("0x7fc00000").
type rawBits uint64

// parseFill decodes a fill value into one element of type t in byte order
// bo: numbers, "NaN", "Infinity", "-Infinity", hex bit patterns, [re, im]
// for complex numbers, true/false, "NaT" for datetimes; null (no fill
// value) reads as zero.
func parseFill(raw json.RawMessage, t layout.Type, bo binary.ByteOrder) ([]byte, error) {
	b := make([]byte, t.Size())
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return b, nil
	}
	var v any
	if r := bytes.TrimSpace(raw); (r[0] == '-' || r[0] >= '0' && r[0] <= '9') && json.Valid(r) {
		v = json.Number(r) // the common case, without a decoder's buffer
	} else {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("fill_value %s: %v", clip(raw), err)
		}
	}
	if t.IsComplex() {
		parts, ok := v.([]any)
		if !ok || len(parts) != 2 {
			return nil, fmt.Errorf("fill_value %s: a complex fill value is [real, imaginary]", clip(raw))
		}
		half := t.Size() / 2
		for k, p := range parts {
			x, err := fillScalar(p, t.Part())
			if err != nil {
				return nil, fmt.Errorf("fill_value %s: %v", clip(raw), err)
			}
			if err := putValue(b[k*half:(k+1)*half], t.Part(), bo, x); err != nil {
				return nil, fmt.Errorf("fill_value %s: %v", clip(raw), err)
			}
		}
		return b, nil
	}
	x, err := fillScalar(v, t)
	if err != nil {
		return nil, fmt.Errorf("fill_value %s: %v", clip(raw), err)
	}
	if err := putValue(b, t, bo, x); err != nil {
		return nil, fmt.Errorf("fill_value %s: %v", clip(raw), err)
	}
	return b, nil
}

// fillScalar turns one decoded JSON value into a Go value for putValue.
func fillScalar(v any, t layout.Type) (any, error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case json.Number:
		return number(string(v))
	case string:
		switch v {
		case "NaN":
			return quietNaN(t), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		case "NaT":
			if t == layout.I64 {
				return int64(math.MinInt64), nil
			}
		}
		if h, ok := strings.CutPrefix(v, "0x"); ok && t.IsFloat() && len(h) == 2*t.Size() {
			u, err := strconv.ParseUint(h, 16, 64)
			if err == nil {
				return rawBits(u), nil
			}
		}
		return nil, fmt.Errorf("%q is not a value of %s", v, t)
	}
	return nil, fmt.Errorf("%v is not a value of %s", v, t)
}

// quietNaN is the NaN that "NaN" denotes: sign 0, the mantissa's top bit
// alone set (NumPy's np.nan).
func quietNaN(t layout.Type) any {
	switch t {
	case layout.F16:
		return rawBits(0x7e00)
	case layout.F32:
		return rawBits(0x7fc00000)
	case layout.F64:
		return rawBits(0x7ff8000000000000)
	}
	return math.NaN()
}

// number parses a decimal number as int64, uint64 or float64.
func number(s string) (any, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, nil
		}
		return nil, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

// putValue writes v (bool, int64, uint64, float64, complex128 or rawBits)
// as one element of type t in byte order bo, refusing values the type
// cannot hold.
func putValue(b []byte, t layout.Type, bo binary.ByteOrder, v any) error {
	if t.IsComplex() {
		c, ok := v.(complex128)
		if !ok {
			f, err := toFloat(v)
			if err != nil {
				return err
			}
			c = complex(f, 0)
		}
		half := t.Size() / 2
		if err := putValue(b[:half], t.Part(), bo, real(c)); err != nil {
			return err
		}
		return putValue(b[half:], t.Part(), bo, imag(c))
	}
	switch {
	case t == layout.Bool:
		switch x := v.(type) {
		case bool:
			b[0] = 0
			if x {
				b[0] = 1
			}
			return nil
		case int64:
			if x == 0 || x == 1 {
				b[0] = byte(x)
				return nil
			}
		}
		return fmt.Errorf("%v is not a bool", v)
	case t.IsInteger():
		bits := uint(t.Size() * 8)
		var u uint64
		switch x := v.(type) {
		case int64:
			if t.IsSigned() && bits < 64 && (x < -1<<(bits-1) || x >= 1<<(bits-1)) ||
				t.IsUnsigned() && (x < 0 || bits < 64 && x >= 1<<bits) {
				return fmt.Errorf("%d does not fit in %s", x, t)
			}
			u = uint64(x)
		case uint64:
			if t.IsSigned() && x > 1<<(bits-1)-1 || t.IsUnsigned() && bits < 64 && x >= 1<<bits {
				return fmt.Errorf("%d does not fit in %s", x, t)
			}
			u = x
		case float64:
			if x != math.Trunc(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%v is not an integer", x)
			}
			lo, hi := -math.Ldexp(1, int(bits)-1), math.Ldexp(1, int(bits)-1)
			if t.IsUnsigned() {
				lo, hi = 0, math.Ldexp(1, int(bits))
			}
			if x < lo || x >= hi {
				return fmt.Errorf("%v does not fit in %s", x, t)
			}
			if x < 0 {
				u = uint64(int64(x))
			} else {
				u = uint64(x)
			}
		default:
			return fmt.Errorf("%v is not an integer", v)
		}
		layout.PutUint(b, bo, u)
		return nil
	case t.IsFloat():
		if r, ok := v.(rawBits); ok {
			layout.PutUint(b, bo, uint64(r))
			return nil
		}
		f, err := toFloat(v)
		if err != nil {
			return err
		}
		layout.PutFloat(b, bo, t, f)
		return nil
	}
	return fmt.Errorf("type %s has no values", t)
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// parseText parses a value typed by a person for one element of type t,
// in byte order bo: Futhark's literals (format.ParseLiteral: 010 is ten, a
// value the type cannot hold is an error), and for complex numbers also
// Go's and Python's spellings ("1+2i", "1+2j").
func parseText(t layout.Type, s string, bo binary.ByteOrder) ([]byte, error) {
	b, err := format.ParseLiteral(t, s, bo)
	if err == nil || !t.IsComplex() {
		return b, err
	}
	v := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "("), ")")
	c, cerr := strconv.ParseComplex(strings.Replace(v, "j", "i", 1), 128)
	if cerr != nil {
		return nil, err
	}
	b = make([]byte, t.Size())
	if err := putValue(b, t, bo, c); err != nil {
		return nil, fmt.Errorf("value %q: %v", s, err)
	}
	return b, nil
}

// clip shortens a JSON value for an error message.
func clip(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
