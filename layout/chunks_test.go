package layout

import (
	"fmt"
	"testing"
)

func TestParseShape(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"", "[]", true}, {"512,1024", "[512 1024]", true}, {" 3 , 4 ", "[3 4]", true},
		{"0", "", false}, {"-1,2", "", false}, {"a", "", false}, {"1,,2", "", false},
	} {
		got, err := ParseShape("chunks", c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseShape(%q): error %v", c.in, err)
			continue
		}
		if c.ok && fmt.Sprint(got) != c.want {
			t.Errorf("ParseShape(%q) = %v, want %s", c.in, got, c.want)
		}
	}
}

func TestChooseChunks(t *testing.T) {
	for _, c := range []struct {
		shape  []int64
		order  Order
		size   int
		target int64
		want   string
	}{
		{[]int64{1000, 1000}, RowMajor, 8, 1 << 20, "[125 1000]"},
		{[]int64{1000, 1000}, ColMajor, 8, 1 << 20, "[1000 125]"},
		{[]int64{10, 3}, RowMajor, 4, 1 << 20, "[10 3]"},
		{[]int64{0, 5}, RowMajor, 4, 1 << 20, "[1 5]"},
		{[]int64{4, 1 << 20}, RowMajor, 8, 1 << 20, "[1 131072]"},
	} {
		if got := fmt.Sprint(ChooseChunks(c.shape, c.order, c.size, c.target)); got != c.want {
			t.Errorf("ChooseChunks(%v, %v, %d, %d) = %s, want %s", c.shape, c.order, c.size, c.target, got, c.want)
		}
	}
}
