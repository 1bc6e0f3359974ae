package refs

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

func TestRows(t *testing.T) {
	for _, c := range []struct {
		name              string
		n, slice, rows, w int64
	}{
		{"8192 rows of 32 KiB: 4 chunks of 2048", 8192, 32 << 10, 0, 2048},
		{"small array: one chunk", 100, 8, 0, 100},
		{"a prime length: one row a chunk", 1_000_003, 64 << 10, 0, 1},
		{"a prime length within the bound: one chunk", 7919, 8, 0, 7919},
		{"--chunks, a divisor", 1000, 8, 250, 250},
		{"--chunks, not a divisor: the largest divisor below", 1000, 8, 300, 250},
		{"--chunks, above the length", 10, 8, 64, 10},
		{"slices larger than the bound: one a chunk", 12, 100 << 20, 0, 1},
		{"empty slices", 12, 0, 0, 1},
		{"a divisor above the square root", 2 * 3 * 1009, 8, 2000, 1009},
	} {
		if got := Rows(c.n, c.slice, c.rows); got != c.w {
			t.Errorf("%s: Rows(%d, %d, %d) = %d, want %d", c.name, c.n, c.slice, c.rows, got, c.w)
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		name   string
		loc    format.Location
		rows   int64
		chunks []int64
		pieces []piece
	}{
		{"C order, first axis", format.Location{Shape: []int64{6, 2}, Offset: 10, Length: 96}, 2,
			[]int64{2, 2}, []piece{{"0.0", 10, 32}, {"1.0", 42, 32}, {"2.0", 74, 32}}},
		{"F order, last axis", format.Location{Shape: []int64{2, 3}, Order: layout.ColMajor, Offset: 0, Length: 24}, 1,
			[]int64{2, 1}, []piece{{"0.0", 0, 8}, {"0.1", 8, 8}, {"0.2", 16, 8}}},
		{"0-d", format.Location{Shape: []int64{}, Offset: 5, Length: 8}, 0, []int64{}, []piece{{"0", 5, 8}}},
		{"empty", format.Location{Shape: []int64{0, 3}, Offset: 5}, 0, []int64{1, 3}, nil},
	} {
		chunks, pieces, err := cut(&c.loc, c.rows)
		if err != nil || !slices.Equal(chunks, c.chunks) || !slices.Equal(pieces, c.pieces) {
			t.Errorf("%s: cut = %v, %v, %v; want %v, %v", c.name, chunks, pieces, err, c.chunks, c.pieces)
		}
	}
	// A huge prime length needs more than MaxChunks chunks.
	_, _, err := cut(&format.Location{Shape: []int64{1_000_003}, Length: 1_000_003}, 10)
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("cut of a prime length of 1,000,003 rows at most 10 a chunk: %v, want ErrUnsupported", err)
	}
}

func TestWriteJSONSorted(t *testing.T) {
	s := &Set{Meta: map[string]string{".zgroup": `{"zarr_format":2}`, "a/.zarray": `{"x":"<f8"}`},
		Data: map[string]Ref{"a/1": {"/d/x y.npy", 200, 100}, "a/0": {"/d/x y.npy", 100, 100}}}
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	want := `{"version": 1, "refs": {
 ".zgroup": "{\"zarr_format\":2}",
 "a/.zarray": "{\"x\":\"<f8\"}",
 "a/0": ["/d/x y.npy", 100, 100],
 "a/1": ["/d/x y.npy", 200, 100]}}
`
	if b.String() != want {
		t.Errorf("WriteJSON:\n%s\nwant\n%s", b.String(), want)
	}
}
