package layout

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestElemBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []byte
		want []byte
	}{
		{"f64 big", ElemBytes(1.0, binary.BigEndian), []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}},
		{"f64 little", ElemBytes(1.0, binary.LittleEndian), []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{"i16 big", ElemBytes(int16(-2), binary.BigEndian), []byte{0xff, 0xfe}},
		{"u32 little", ElemBytes(uint32(0x01020304), binary.LittleEndian), []byte{4, 3, 2, 1}},
		{"c64 big", ElemBytes(complex64(complex(1, -1)), binary.BigEndian), []byte{0x3f, 0x80, 0, 0, 0xbf, 0x80, 0, 0}},
		{"bool", ElemBytes(true, binary.BigEndian), []byte{1}},
	} {
		if !bytes.Equal(tc.got, tc.want) {
			t.Errorf("%s: % x, want % x", tc.name, tc.got, tc.want)
		}
	}
}

func TestSwapOrderAndCheckBools(t *testing.T) {
	b := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	SwapOrder(b, I32, binary.BigEndian, binary.LittleEndian)
	if want := []byte{4, 3, 2, 1, 8, 7, 6, 5}; !bytes.Equal(b, want) {
		t.Errorf("i32 swap: % x, want % x", b, want)
	}
	SwapOrder(b, I32, binary.LittleEndian, binary.NativeEndian) // same order on a little-endian host
	if IsHostOrder(binary.LittleEndian) && b[0] != 4 {
		t.Errorf("a swap between the host's order and NativeEndian changed the bytes: % x", b)
	}
	if IsHostOrder(binary.LittleEndian) == IsHostOrder(binary.BigEndian) || !IsHostOrder(binary.NativeEndian) || !IsHostOrder(HostOrder()) {
		t.Error("IsHostOrder disagrees with HostOrder")
	}
	bools := []byte{0, 1, 2, 0, 7}
	if i := CheckBools(bools, Bool, false); i != 2 {
		t.Errorf("CheckBools found %d, want 2", i)
	}
	if i := CheckBools(bools, Bool, true); i != -1 || !bytes.Equal(bools, []byte{0, 1, 1, 0, 1}) {
		t.Errorf("CheckBools fixing: %d, % x", i, bools)
	}
	if i := CheckBools([]byte{9}, U8, false); i != -1 {
		t.Errorf("CheckBools of u8 found %d", i)
	}
}

func TestMakeSlice(t *testing.T) {
	for _, typ := range []Type{I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, Bool, I128, U128, JuliaChar, C64, C128} {
		s, b := MakeSlice(typ, 5)
		got, mem, ok := BytesOf(s)
		if !ok || got != typ || len(b) != 5*typ.Size() || len(mem) != len(b) || (len(b) > 0 && &mem[0] != &b[0]) {
			t.Errorf("MakeSlice(%v, 5) = %T of %d bytes; BytesOf gives %v, %d bytes, %v", typ, s, len(b), got, len(mem), ok)
		}
	}
	if s, b := MakeSlice(Invalid, 3); s != nil || b != nil {
		t.Errorf("MakeSlice(Invalid) = %v, %v", s, b)
	}
}
