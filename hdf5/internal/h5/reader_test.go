package h5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// memReader is a Reader over b whose base address is base, with 8-byte offsets and lengths.
func memReader(b []byte, base int64) *Reader {
	return &Reader{R: bytes.NewReader(b), Base: base, End: int64(len(b)), OffsetSize: 8, LengthSize: 8}
}

func TestIsUndefined(t *testing.T) {
	for _, tc := range []struct {
		addr uint64
		size int
		want bool
	}{
		{math.MaxUint64, 8, true},
		{math.MaxUint64 - 1, 8, false},
		{0xffffffff, 4, true},
		{0xffffffff, 8, false},
		{math.MaxUint64, 4, true},
		{0xffff, 2, true},
		{0xfffe, 2, false},
		{0, 8, false},
	} {
		if got := IsUndefined(tc.addr, tc.size); got != tc.want {
			t.Errorf("IsUndefined(%#x, %d) = %v, want %v", tc.addr, tc.size, got, tc.want)
		}
	}
}

func TestReaderChecksRanges(t *testing.T) {
	data := []byte("0123456789abcdefghij")
	r := memReader(data, 4)
	r.End = 18 // the last two bytes are beyond the superblock's end-of-file address
	for _, tc := range []struct {
		addr, size uint64
		want       string // "" = success with these bytes
		sentinel   error
	}{
		{0, 4, "4567", nil},
		{10, 4, "efgh", nil},
		{10, 5, "", mmapfile.ErrTruncated},
		{14, 0, "", nil},
		{15, 0, "", mmapfile.ErrTruncated},
		{math.MaxInt64, 1, "", mmapfile.ErrOutOfRange},
		{1, math.MaxUint64 - 2, "", mmapfile.ErrOutOfRange},
		{1, math.MaxInt64, "", mmapfile.ErrTruncated},
		{math.MaxUint64, 1, "", nil},
	} {
		b, err := r.ReadAt(tc.addr, tc.size)
		switch {
		case tc.addr == math.MaxUint64:
			if err == nil || !strings.Contains(err.Error(), "undefined address") {
				t.Errorf("ReadAt(undefined) = %v, want an undefined-address error", err)
			}
		case tc.sentinel != nil:
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("ReadAt(%#x, %d) = %q, %v; want %v", tc.addr, tc.size, b, err, tc.sentinel)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("ReadAt(%#x, %d): %v is not an *Error", tc.addr, tc.size, err)
			}
		default:
			if err != nil || string(b) != tc.want {
				t.Errorf("ReadAt(%#x, %d) = %q, %v; want %q", tc.addr, tc.size, b, err, tc.want)
			}
		}
	}
}

func TestReaderBlockSignatureAndChecksum(t *testing.T) {
	blk := []byte("TESTpayload!")
	blk = binary.LittleEndian.AppendUint32(blk, Checksum(blk))
	file := append(make([]byte, 8), blk...)
	r := memReader(file, 0)
	b, abs, err := r.block(8, uint64(len(blk)), "TEST", true)
	if err != nil || abs != 8 || !bytes.Equal(b, blk) {
		t.Fatalf("block = %q, %d, %v", b, abs, err)
	}
	if _, _, err := r.block(8, uint64(len(blk)), "TSET", true); err == nil || !strings.Contains(err.Error(), `expected signature "TSET"`) {
		t.Errorf("wrong signature: %v", err)
	}
	file[12] ^= 0x20
	_, _, err = r.block(8, uint64(len(blk)), "TEST", true)
	var e *Error
	if !errors.As(err, &e) || e.Offset != 8 || !strings.Contains(e.Msg, "checksum mismatch") {
		t.Errorf("corrupted block: %v, want a checksum mismatch at offset 8", err)
	}
	if _, _, err := r.block(8, uint64(len(blk)), "TEST", false); err != nil {
		t.Errorf("unchecksummed block: %v", err)
	}
}

func TestDecoderStopsAtEnd(t *testing.T) {
	r := memReader(nil, 0)
	r.OffsetSize = 4
	d := r.decoder([]byte{1, 2, 3, 0xff, 0xff, 0xff, 0xff, 9}, 100)
	if v := d.u16("a"); v != 0x0201 {
		t.Errorf("u16 = %#x", v)
	}
	d.skip(1, "pad")
	if v := d.addr("address"); v != undefinedAddr {
		t.Errorf("addr = %#x, want undefined", v)
	}
	if v := d.u32("past"); v != 0 || d.err == nil {
		t.Fatalf("u32 past the end = %#x, %v", v, d.err)
	}
	if e := d.err.(*Error); e.Offset != 107 || !errors.Is(e, mmapfile.ErrTruncated) {
		t.Errorf("error %v at %d, want truncation at 107", e, e.Offset)
	}
}
