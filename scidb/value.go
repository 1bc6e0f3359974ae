package scidb

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Datetime is SciDB's datetime: seconds since 1970-01-01T00:00:00Z.
type Datetime int64

// Time returns the instant in UTC.
func (d Datetime) Time() time.Time { return time.Unix(int64(d), 0).UTC() }

// String formats d as SciDB prints it: "2019-01-31 13:45:00" (UTC).
func (d Datetime) String() string { return d.Time().Format(dtLayout) }

// DatetimeOf returns t's instant in whole seconds.
func DatetimeOf(t time.Time) Datetime { return Datetime(t.Unix()) }

// DatetimeTZ is SciDB's datetimetz: the local wall clock encoded as if it
// were UTC, and the zone's offset from UTC in seconds. The instant is
// Local − Offset.
type DatetimeTZ struct {
	Local  int64
	Offset int64
}

// Time returns the instant in a fixed zone of the stored offset.
func (d DatetimeTZ) Time() time.Time {
	return time.Unix(d.Local-d.Offset, 0).In(time.FixedZone("", int(d.Offset)))
}

// String formats d as SciDB prints it: "2019-01-01 12:00:00 +02:00"; an
// offset ≤ 0 prints with "-" ("-00:00").
func (d DatetimeTZ) String() string {
	sign := byte('+')
	off := d.Offset
	if off <= 0 {
		sign = '-'
		off = -off
	}
	return fmt.Sprintf("%s %c%02d:%02d", time.Unix(d.Local, 0).UTC().Format(dtLayout), sign, off/3600, off%3600/60)
}

// DatetimeTZOf returns t as a DatetimeTZ in t's zone.
func DatetimeTZOf(t time.Time) DatetimeTZ {
	_, off := t.Zone()
	return DatetimeTZ{Local: t.Unix() + int64(off), Offset: int64(off)}
}

const dtLayout = "2006-01-02 15:04:05"

// Value is one attribute of one cell. Raw holds the stored bytes of a
// present value: little-endian for fixed-size types, the characters of a
// string (without terminator or padding), the bytes of a binary. Values
// read by a Reader alias its buffer and are valid until the next Read.
//
// Fixed-size values made by the constructors keep their bytes inline
// (Raw is nil), so making and writing them does not allocate.
type Value struct {
	Null   bool
	Reason int8 // missing reason 0..127 of a null; -1 for a present value
	Raw    []byte

	inline [16]byte
	n      uint8 // bytes of inline in use, when Raw is nil
}

// Row is one cell: one Value per attribute, skips excluded.
type Row []Value

// NullValue returns a null with the given missing reason (0..127).
func NullValue(reason int8) Value { return Value{Null: true, Reason: reason} }

// RawValue returns a present value holding b (not copied).
func RawValue(b []byte) Value { return Value{Reason: -1, Raw: b} }

func fixedValue(n int, x uint64) Value {
	v := Value{Reason: -1, n: uint8(n)}
	binary.LittleEndian.PutUint64(v.inline[:8], x)
	return v
}

// BoolValue returns a present bool value.
func BoolValue(x bool) Value {
	if x {
		return fixedValue(1, 1)
	}
	return fixedValue(1, 0)
}

// CharValue returns a present byte value; it does not allocate.
func CharValue(x byte) Value { return fixedValue(1, uint64(x)) }

// Int8Value returns a present int8 value; it does not allocate.
func Int8Value(x int8) Value { return fixedValue(1, uint64(uint8(x))) }

// Int16Value returns a present int16 value; it does not allocate.
func Int16Value(x int16) Value { return fixedValue(2, uint64(uint16(x))) }

// Int32Value returns a present int32 value; it does not allocate.
func Int32Value(x int32) Value { return fixedValue(4, uint64(uint32(x))) }

// Int64Value returns a present int64 value; it does not allocate.
func Int64Value(x int64) Value { return fixedValue(8, uint64(x)) }

// Uint8Value returns a present uint8 value; it does not allocate.
func Uint8Value(x uint8) Value { return fixedValue(1, uint64(x)) }

// Uint16Value returns a present uint16 value; it does not allocate.
func Uint16Value(x uint16) Value { return fixedValue(2, uint64(x)) }

// Uint32Value returns a present uint32 value; it does not allocate.
func Uint32Value(x uint32) Value { return fixedValue(4, uint64(x)) }

// Uint64Value returns a present uint64 value; it does not allocate.
func Uint64Value(x uint64) Value { return fixedValue(8, x) }

// Float32Value returns a present float32 value; it does not allocate.
func Float32Value(x float32) Value { return fixedValue(4, uint64(math.Float32bits(x))) }

// Float64Value returns a present float64 value; it does not allocate.
func Float64Value(x float64) Value { return fixedValue(8, math.Float64bits(x)) }

// DatetimeValue returns a present Datetime value; it does not allocate.
func DatetimeValue(x Datetime) Value { return fixedValue(8, uint64(x)) }

// DatetimeTZValue makes a present datetimetz value.
func DatetimeTZValue(x DatetimeTZ) Value {
	v := Value{Reason: -1, n: 16}
	binary.LittleEndian.PutUint64(v.inline[:8], uint64(x.Local))
	binary.LittleEndian.PutUint64(v.inline[8:], uint64(x.Offset))
	return v
}

// StringValue makes a present string value (for string and string(N)).
func StringValue(s string) Value { return Value{Reason: -1, Raw: []byte(s)} }

// BinaryValue makes a present binary value holding b (not copied).
func BinaryValue(b []byte) Value { return Value{Reason: -1, Raw: b} }

// bytes returns the value's payload.
func (v *Value) bytes() []byte {
	if v.Raw != nil || v.n == 0 {
		return v.Raw
	}
	return v.inline[:v.n]
}

// u8 returns the value as uint8: zero for a null or a payload of the wrong width.
func (v Value) u8() uint8 {
	b := v.bytes()
	if len(b) != 1 {
		return 0
	}
	return b[0]
}

// u16 returns the value as uint16: zero for a null or a payload of the wrong width.
func (v Value) u16() uint16 {
	b := v.bytes()
	if len(b) != 2 {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

// u32 returns the value as uint32: zero for a null or a payload of the wrong width.
func (v Value) u32() uint32 {
	b := v.bytes()
	if len(b) != 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// u64 returns the value as uint64: zero for a null or a payload of the wrong width.
func (v Value) u64() uint64 {
	b := v.bytes()
	if len(b) != 8 {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// The typed accessors below never panic: a null, or a payload of the
// wrong width, gives the zero value.

// Bool returns true for any nonzero 1-byte value.
func (v Value) Bool() bool { return v.u8() != 0 }

// Char returns the value as byte: zero for a null or a payload of the wrong width.
func (v Value) Char() byte { return v.u8() }

// Int8 returns the value as int8: zero for a null or a payload of the wrong width.
func (v Value) Int8() int8 { return int8(v.u8()) }

// Int16 returns the value as int16: zero for a null or a payload of the wrong width.
func (v Value) Int16() int16 { return int16(v.u16()) }

// Int32 returns the value as int32: zero for a null or a payload of the wrong width.
func (v Value) Int32() int32 { return int32(v.u32()) }

// Int64 returns the value as int64: zero for a null or a payload of the wrong width.
func (v Value) Int64() int64 { return int64(v.u64()) }

// Uint8 returns the value as uint8: zero for a null or a payload of the wrong width.
func (v Value) Uint8() uint8 { return v.u8() }

// Uint16 returns the value as uint16: zero for a null or a payload of the wrong width.
func (v Value) Uint16() uint16 { return v.u16() }

// Uint32 returns the value as uint32: zero for a null or a payload of the wrong width.
func (v Value) Uint32() uint32 { return v.u32() }

// Uint64 returns the value as uint64: zero for a null or a payload of the wrong width.
func (v Value) Uint64() uint64 { return v.u64() }

// Float32 returns the value as float32: zero for a null or a payload of the wrong width.
func (v Value) Float32() float32 { return math.Float32frombits(v.u32()) }

// Float64 returns the value as float64: zero for a null or a payload of the wrong width.
func (v Value) Float64() float64 { return math.Float64frombits(v.u64()) }

// Datetime returns the value as Datetime: zero for a null or a payload of the wrong width.
func (v Value) Datetime() Datetime { return Datetime(v.u64()) }

// String returns the bytes of a string or binary value as a string.
func (v Value) String() string { return string(v.bytes()) }

// Bytes returns the stored bytes of the value (nil for a null).
func (v Value) Bytes() []byte { return v.bytes() }

// IsNull reports whether the value is null.
func (v Value) IsNull() bool { return v.Null }

// DatetimeTZ returns the value as DatetimeTZ: zero for a null or a payload of the wrong width.
func (v Value) DatetimeTZ() DatetimeTZ {
	b := v.bytes()
	if len(b) != 16 {
		return DatetimeTZ{}
	}
	return DatetimeTZ{Local: int64(binary.LittleEndian.Uint64(b)), Offset: int64(binary.LittleEndian.Uint64(b[8:]))}
}

// Text formats the value of entry c as SciDB prints it, in the form a CSV
// table holds: "" for a null, true/false, integers in decimal, floats
// in Go's shortest round-trip form, datetime as "2019-01-31 13:45:00",
// datetimetz as "2019-01-01 12:00:00 +02:00", char and string as their
// bytes, binary as 0x followed by lower-case hex.
func (v Value) Text(c Column) string {
	if v.Null {
		return ""
	}
	switch c.Type {
	case TypeBool:
		return strconv.FormatBool(v.Bool())
	case TypeChar:
		return string(v.bytes())
	case TypeInt8:
		return strconv.FormatInt(int64(v.Int8()), 10)
	case TypeInt16:
		return strconv.FormatInt(int64(v.Int16()), 10)
	case TypeInt32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case TypeInt64:
		return strconv.FormatInt(v.Int64(), 10)
	case TypeUint8:
		return strconv.FormatUint(uint64(v.Uint8()), 10)
	case TypeUint16:
		return strconv.FormatUint(uint64(v.Uint16()), 10)
	case TypeUint32:
		return strconv.FormatUint(uint64(v.Uint32()), 10)
	case TypeUint64:
		return strconv.FormatUint(v.Uint64(), 10)
	case TypeFloat:
		return strconv.FormatFloat(float64(v.Float32()), 'g', -1, 32)
	case TypeDouble:
		return strconv.FormatFloat(v.Float64(), 'g', -1, 64)
	case TypeDatetime:
		return v.Datetime().String()
	case TypeDatetimeTZ:
		return v.DatetimeTZ().String()
	case TypeString:
		return string(v.bytes())
	case TypeBinary:
		return "0x" + hex.EncodeToString(v.bytes())
	}
	return ""
}

// ParseText is the inverse of Text for entry c: it parses one CSV field
// into a Value. An empty field, "null" or `\N` is a null with reason 0 and
// "?N" a null with reason N, for a nullable entry (for a string entry only
// "?N" and `\N` are nulls; an empty field is the empty string). Datetimes
// take "2006-01-02 15:04:05" (UTC) and datetimetzs "2006-01-02 15:04:05
// +07:00"; binaries take 0x-prefixed hex.
func ParseText(c Column, s string) (Value, error) {
	if c.Nullable {
		if r, ok, err := parseNull(s, c.Type == TypeString); err != nil {
			return Value{}, err
		} else if ok {
			return NullValue(r), nil
		}
	}
	bad := func(err error) (Value, error) {
		return Value{}, fmt.Errorf("scidb: %q is not a %s: %w", s, c.Type, err)
	}
	switch c.Type {
	case TypeBool:
		x, err := strconv.ParseBool(s)
		if err != nil {
			return bad(err)
		}
		return BoolValue(x), nil
	case TypeChar:
		if len(s) != 1 {
			return bad(fmt.Errorf("want one byte"))
		}
		return CharValue(s[0]), nil
	case TypeInt8, TypeInt16, TypeInt32, TypeInt64:
		x, err := strconv.ParseInt(strings.TrimSpace(s), 10, c.Type.Size()*8)
		if err != nil {
			return bad(err)
		}
		return fixedValue(c.Type.Size(), uint64(x)), nil
	case TypeUint8, TypeUint16, TypeUint32, TypeUint64:
		x, err := strconv.ParseUint(strings.TrimSpace(s), 10, c.Type.Size()*8)
		if err != nil {
			return bad(err)
		}
		return fixedValue(c.Type.Size(), x), nil
	case TypeFloat:
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 32)
		if err != nil {
			return bad(err)
		}
		return Float32Value(float32(x)), nil
	case TypeDouble:
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return bad(err)
		}
		return Float64Value(x), nil
	case TypeDatetime:
		t, err := time.ParseInLocation(dtLayout, strings.TrimSpace(s), time.UTC)
		if err != nil {
			return bad(err)
		}
		return DatetimeValue(DatetimeOf(t)), nil
	case TypeDatetimeTZ:
		t, err := time.Parse(dtLayout+" -07:00", strings.TrimSpace(s))
		if err != nil {
			return bad(err)
		}
		return DatetimeTZValue(DatetimeTZOf(t)), nil
	case TypeString:
		return StringValue(s), nil
	case TypeBinary:
		h, ok := strings.CutPrefix(s, "0x")
		if !ok {
			h, ok = strings.CutPrefix(s, "0X")
		}
		if !ok {
			return bad(fmt.Errorf("want 0x-prefixed hex"))
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return bad(err)
		}
		return BinaryValue(b), nil
	}
	return Value{}, fmt.Errorf("scidb: no text form for %s", c.Type)
}

// parseNull recognises SciDB's text nulls: "" (not for strings), "null",
// `\N` (reason 0) and "?N" (reason N ≤ 127).
func parseNull(s string, isString bool) (int8, bool, error) {
	switch {
	case s == "" && !isString, s == `\N`, s == "null" && !isString:
		return 0, true, nil
	case len(s) > 1 && s[0] == '?':
		n, err := strconv.ParseUint(s[1:], 10, 8)
		if err != nil || n > 127 {
			return 0, false, fmt.Errorf("scidb: missing reason %q: %w", s, ErrReason)
		}
		return int8(n), true, nil
	}
	return 0, false, nil
}
