package layout

import (
	"encoding/binary"
	"testing"
)

// ArrayText prints the same text whatever pieces the elements come in.
func TestArrayText(t *testing.T) {
	i32s := func(vs ...int32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.NativeEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	for _, c := range []struct {
		shape []int64
		wrap  int64
		elems []byte
		want  string
	}{
		{shape: nil, elems: i32s(7), want: "7i32"},
		// Rows longer than the wrap break their line after every run of
		// that many elements; rows no longer do not.
		{shape: []int64{5}, wrap: 2, elems: i32s(1, 2, 3, 4, 5), want: "[1i32, 2i32,\n3i32, 4i32,\n5i32]"},
		{shape: []int64{2, 3}, wrap: 2, elems: i32s(1, 2, 3, 4, 5, 6), want: "[[1i32, 2i32,\n3i32],\n[4i32, 5i32,\n6i32]]"},
		{shape: []int64{2, 2}, wrap: 2, elems: i32s(1, 2, 3, 4), want: "[[1i32, 2i32],\n[3i32, 4i32]]"},
		{shape: []int64{4}, wrap: 2, elems: i32s(1, 2, 3, 4), want: "[1i32, 2i32,\n3i32, 4i32]"},
		{shape: []int64{3}, elems: i32s(1, 2, 3), want: "[1i32, 2i32, 3i32]"},
		{shape: []int64{2, 2}, elems: i32s(1, 2, 3, 4), want: "[[1i32, 2i32],\n[3i32, 4i32]]"},
		{shape: []int64{2, 1, 2}, elems: i32s(1, 2, 3, 4), want: "[[[1i32, 2i32]],\n[[3i32, 4i32]]]"},
		{shape: []int64{1, 2, 1}, elems: i32s(1, 2), want: "[[[1i32],\n[2i32]]]"},
		{shape: []int64{0}, elems: nil, want: "empty([0]i32)"},
		{shape: []int64{2, 0, 3}, elems: nil, want: "empty([2][0][3]i32)"},
	} {
		for _, piece := range []int{1, 2, 3, 64} {
			a, err := NewArrayText(I32, c.shape)
			if err != nil {
				t.Fatal(err)
			}
			a.Wrap(c.wrap)
			var out []byte
			for rest := c.elems; len(rest) > 0; {
				k := min(len(rest), piece*4)
				out = a.Append(out, rest[:k])
				rest = rest[k:]
			}
			if a.Left() != 0 {
				t.Errorf("%v: %d elements left", c.shape, a.Left())
			}
			if got := string(a.End(out)); got != c.want {
				t.Errorf("%v in pieces of %d: %q, want %q", c.shape, piece, got, c.want)
			}
		}
	}
	a, _ := NewArrayText(I32, []int64{2})
	if got := string(a.End(a.Append(nil, i32s(1, 2, 3)))); got != "[1i32, 2i32]" {
		t.Errorf("elements past the last are ignored: %q", got)
	}
	if _, err := NewArrayText(I32, []int64{1 << 62, 1 << 62}); err == nil {
		t.Error("an overflowing shape is accepted")
	}
}
