package unsafeslice

import "testing"

func TestAlignedBytes(t *testing.T) {
	for _, n := range []int64{0, 1, 7, 8, 9, 4095, 1 << 20} {
		b := AlignedBytes(n)
		if int64(len(b)) != n {
			t.Fatalf("AlignedBytes(%d) has %d bytes", n, len(b))
		}
		if !Aligned[complex128](b) || !Aligned[uint64](b) {
			t.Errorf("AlignedBytes(%d) at %#x is not aligned for 8-byte elements", n, Addr(b))
		}
		for i, c := range b {
			if c != 0 {
				t.Fatalf("AlignedBytes(%d)[%d] = %d, want 0", n, i, c)
			}
		}
		if n >= 16 {
			if got := Cast[complex128](b[:16]); len(got) != 1 {
				t.Errorf("Cast of 16 bytes gave %d complex128", len(got))
			}
		}
	}
}
