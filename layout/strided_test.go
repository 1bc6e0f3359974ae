package layout

import (
	"bytes"
	"fmt"
	"testing"
)

// naiveCopy copies the box element by element, as a reference.
func naiveCopy(dst []byte, d0 int64, src []byte, s0 int64, count, sstr, dstr []int64, size int64) {
	idx := make([]int64, len(count))
	for _, c := range count {
		if c == 0 {
			return
		}
	}
	for {
		s, d := s0, d0
		for i := range idx {
			s += idx[i] * sstr[i]
			d += idx[i] * dstr[i]
		}
		copy(dst[d*size:(d+1)*size], src[s*size:(s+1)*size])
		k := len(idx) - 1
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < count[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

func TestStridedCopyMatchesElementByElement(t *testing.T) {
	for _, tc := range []struct {
		name          string
		src, dst, box []int64 // source and destination shapes, the box
		sOrd, dOrd    Order
		sFrom, dFrom  []int64 // the box's origin in each
		size          int
	}{
		{"scalar", nil, nil, nil, RowMajor, RowMajor, nil, nil, 8},
		{"runs", []int64{5, 7}, []int64{3, 4}, []int64{3, 4}, RowMajor, RowMajor, []int64{1, 2}, []int64{0, 0}, 4},
		{"whole", []int64{4, 6}, []int64{4, 6}, []int64{4, 6}, RowMajor, RowMajor, []int64{0, 0}, []int64{0, 0}, 2},
		{"transpose", []int64{40, 50}, []int64{40, 50}, []int64{33, 47}, ColMajor, RowMajor, []int64{2, 1}, []int64{5, 3}, 8},
		{"transpose 3-d", []int64{6, 7, 9}, []int64{6, 7, 9}, []int64{5, 6, 8}, ColMajor, RowMajor, []int64{1, 0, 1}, []int64{0, 1, 0}, 4},
		{"to column-major", []int64{9, 11}, []int64{9, 11}, []int64{9, 11}, RowMajor, ColMajor, []int64{0, 0}, []int64{0, 0}, 1},
		{"edge chunk", []int64{10, 10, 3}, []int64{4, 4, 3}, []int64{2, 4, 3}, RowMajor, RowMajor, []int64{8, 4, 0}, []int64{0, 0, 0}, 16},
		{"field gather", []int64{30, 10}, []int64{30, 1}, []int64{30, 1}, RowMajor, RowMajor, []int64{0, 3}, []int64{0, 0}, 8},
		{"field gather odd size", []int64{6, 7, 5}, []int64{6, 7, 1}, []int64{6, 7, 1}, RowMajor, RowMajor, []int64{0, 0, 4}, []int64{0, 0, 0}, 3},
		{"field gather to column-major", []int64{6, 7, 5}, []int64{6, 7, 1}, []int64{5, 6, 1}, ColMajor, ColMajor, []int64{1, 1, 2}, []int64{1, 0, 0}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := int64(tc.size)
			sn, _ := Count(tc.src)
			dn, _ := Count(tc.dst)
			src := make([]byte, sn*size)
			for i := range src {
				src[i] = byte(i*7 + i/251)
			}
			sstr, dstr := Strides(tc.src, tc.sOrd), Strides(tc.dst, tc.dOrd)
			var s0, d0 int64
			for i := range tc.box {
				s0 += tc.sFrom[i] * sstr[i]
				d0 += tc.dFrom[i] * dstr[i]
			}
			want := bytes.Repeat([]byte{0xee}, int(dn*size))
			naiveCopy(want, d0, src, s0, tc.box, sstr, dstr, size)
			got := bytes.Repeat([]byte{0xee}, int(dn*size))
			c := NewStridedCopy(tc.box, sstr, dstr, tc.size)
			c.Copy(got, d0, src, s0)
			if !bytes.Equal(got, want) {
				t.Fatalf("copy differs from the element-by-element one")
			}
			// CopyFrom reads the same box in blocks that fit its buffer,
			// in increasing offsets, and copies the same bytes.
			for _, bufLen := range []int64{size, 3 * size, 64, 1000, sn * size} {
				got := bytes.Repeat([]byte{0xee}, int(dn*size))
				next := int64(-1)
				err := c.CopyFrom(got, d0, s0, make([]byte, bufLen), func(b []byte, off int64) error {
					if int64(len(b)) > bufLen || off < next || off < 0 || off+int64(len(b)) > sn*size {
						return fmt.Errorf("read of %d bytes at %d (buffer %d, next %d)", len(b), off, bufLen, next)
					}
					next = off + int64(len(b))
					copy(b, src[off:])
					return nil
				})
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("CopyFrom with a buffer of %d bytes: %v, or its copy differs", bufLen, err)
				}
			}
			n, _ := Count(tc.box)
			if c.Elems() != n {
				t.Errorf("Elems() = %d, want %d", c.Elems(), n)
			}
			// Fill puts the pattern exactly where Copy put elements.
			elem := bytes.Repeat([]byte{0x5a}, tc.size)
			filled := bytes.Repeat([]byte{0xee}, int(dn*size))
			c.Fill(filled, d0, elem)
			pattern := bytes.Repeat([]byte{0xee}, int(dn*size))
			naiveCopy(pattern, d0, bytes.Repeat([]byte{0x5a}, int(sn*size)), s0, tc.box, sstr, dstr, size)
			if !bytes.Equal(filled, pattern) {
				t.Fatalf("fill differs from the element-by-element one")
			}
		})
	}
}

func TestStridedCopyContiguous(t *testing.T) {
	for _, tc := range []struct {
		box, sstr, dstr []int64
		want            bool
	}{
		{[]int64{3, 4}, []int64{4, 1}, []int64{4, 1}, true},
		{[]int64{3, 4}, []int64{5, 1}, []int64{4, 1}, false},
		{[]int64{1, 4}, []int64{9, 1}, []int64{4, 1}, true},
		{[]int64{3, 4}, []int64{1, 3}, []int64{4, 1}, false},
		{nil, nil, nil, true},
	} {
		c := NewStridedCopy(tc.box, tc.sstr, tc.dstr, 8)
		if got := c.Contiguous(); got != tc.want {
			t.Errorf("box %v strides %v → %v: Contiguous() = %v, want %v", tc.box, tc.sstr, tc.dstr, got, tc.want)
		}
	}
}

func TestStrides(t *testing.T) {
	for _, tc := range []struct {
		shape []int64
		order Order
		want  string
	}{
		{[]int64{2, 3, 4}, RowMajor, "[12 4 1]"},
		{[]int64{2, 3, 4}, ColMajor, "[1 2 6]"},
		{nil, RowMajor, "[]"},
	} {
		if got := fmt.Sprint(Strides(tc.shape, tc.order)); got != tc.want {
			t.Errorf("Strides(%v, %v) = %s, want %s", tc.shape, tc.order, got, tc.want)
		}
	}
}

func TestLinearBoxes(t *testing.T) {
	for _, tc := range []struct {
		shape  []int64
		lo, hi int64
		want   string
	}{
		{[]int64{4, 5}, 0, 20, "[[0 0] [4 5]]"},
		{[]int64{4, 5}, 3, 17, "[[0 3] [1 2]] [[1 0] [2 5]] [[3 0] [1 2]]"},
		{[]int64{4, 5}, 6, 8, "[[1 1] [1 2]]"},
		{[]int64{2, 3, 4}, 5, 19, "[[0 1 1] [1 1 3]] [[0 2 0] [1 1 4]] [[1 0 0] [1 1 4]] [[1 1 0] [1 1 3]]"},
		{[]int64{4, 5}, 7, 7, ""},
		{nil, 0, 1, "[[] []]"},
	} {
		var got []string
		var sum int64
		err := LinearBoxes(tc.shape, tc.lo, tc.hi, func(start, count []int64) error {
			got = append(got, fmt.Sprint([][]int64{start, count}))
			n, _ := Count(count)
			sum += n
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprint(got)
		s = s[1 : len(s)-1]
		if s != tc.want {
			t.Errorf("LinearBoxes(%v, %d, %d) = %s, want %s", tc.shape, tc.lo, tc.hi, s, tc.want)
		}
		if tc.hi > tc.lo && sum != tc.hi-tc.lo {
			t.Errorf("LinearBoxes(%v, %d, %d) covers %d elements", tc.shape, tc.lo, tc.hi, sum)
		}
	}
}

func TestStridedCopyReplanAllocatesNothing(t *testing.T) {
	src := make([]byte, 40*50*8)
	dst := make([]byte, 40*50*8)
	count := []int64{33, 47}
	row, col := Strides([]int64{40, 50}, RowMajor), Strides([]int64{40, 50}, ColMajor)
	c := NewStridedCopy(count, row, row, 8)
	for _, from := range [][]int64{row, col} {
		if n := testing.AllocsPerRun(20, func() {
			c.Plan(count, from, row, 8)
			c.Copy(dst, 3, src, 5)
		}); n != 0 {
			t.Errorf("Plan and Copy from strides %v: %.0f allocations, want 0", from, n)
		}
		buf := make([]byte, 1000)
		read := func(b []byte, off int64) error { copy(b, src[off:]); return nil }
		_ = c.CopyFrom(dst, 3, 5, buf, read)
		if n := testing.AllocsPerRun(20, func() {
			c.Plan(count, from, row, 8)
			_ = c.CopyFrom(dst, 3, 5, buf, read)
		}); n != 0 {
			t.Errorf("Plan and CopyFrom from strides %v: %.0f allocations, want 0", from, n)
		}
	}
}
