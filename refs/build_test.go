package refs_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mmapkit/mmapkit/csvtable"
	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/npy"
	"github.com/mmapkit/mmapkit/refs"
)

// TestBuild builds the set of a .npy of 8192 rows of 32 KiB through the
// library call: 4 ranges of 2048 rows by default, what Options.Rows and
// URL change, and the same bytes each time.
func TestBuild(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.npy")
	f, err := npy.Create(p, npy.Header{DType: npy.DType{Kind: 'f', ItemSize: 8}, Shape: []int64{8192, 4096}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		o     *refs.Options
		n     int
		first refs.Ref
	}{
		{nil, 4, refs.Ref{Target: p, Offset: 128, Length: 2048 * 32768}},
		{&refs.Options{Rows: 3000}, 4, refs.Ref{Target: p, Offset: 128, Length: 2048 * 32768}},
		{&refs.Options{Rows: 100}, 128, refs.Ref{Target: p, Offset: 128, Length: 64 * 32768}},
		{&refs.Options{URL: "https://h/d/", Names: []string{"0"}}, 4, refs.Ref{Target: "https://h/d/x.npy", Offset: 128, Length: 2048 * 32768}},
	} {
		set, err := refs.Build(f, p, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Data) != c.n || set.Data["0/0.0"] != c.first {
			t.Errorf("%+v: %d ranges, the first %+v; want %d, %+v", c.o, len(set.Data), set.Data["0/0.0"], c.n, c.first)
		}
		var a, b bytes.Buffer
		set.WriteJSON(&a)
		again, _ := refs.Build(f, p, c.o)
		again.WriteJSON(&b)
		if a.String() != b.String() {
			t.Errorf("%+v: two builds differ", c.o)
		}
	}
	if _, err := refs.Build(f, p, &refs.Options{Names: []string{"y"}}); !errors.Is(err, format.ErrNoRecord) {
		t.Errorf("an unknown name: %v, want ErrNoRecord", err)
	}
}

// TestBuildNothingDescribable: a file whose records cannot be located (a
// CSV table) gives an empty group, each record named as skipped.
func TestBuildNothingDescribable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(p, []byte("a,b\n1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := csvtable.Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var skipped []string
	set, err := refs.Build(f, p, &refs.Options{Skipped: func(rec *format.Record, why error) {
		if !errors.Is(why, errors.ErrUnsupported) {
			t.Errorf("record %q skipped for %v", rec.Name, why)
		}
		skipped = append(skipped, rec.Name)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(skipped, ",") != "a,b" || len(set.Data) != 0 || set.Meta[".zgroup"] != `{"zarr_format":2}` || len(set.Meta) != 3 {
		t.Errorf("skipped %v; set %+v", skipped, set)
	}
}

// TestBuildComputed: with Options.Computed, records that cannot be
// located are arrays whose chunks are elements to read, cut along the
// first axis within ComputedChunkBytes and Rows; such a set has no JSON.
func TestBuildComputed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.csv")
	var text strings.Builder
	text.WriteString("a,b\n")
	for i := range 10 {
		text.WriteString(strconv.Itoa(i) + ",0.5\n")
	}
	if err := os.WriteFile(p, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := csvtable.Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, err := refs.Build(f, p, &refs.Options{Computed: true, Rows: 6})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]refs.Computed{
		"a/0": {Record: 0, First: 0, Count: 5}, "a/1": {Record: 0, First: 5, Count: 5},
		"b/0": {Record: 1, First: 0, Count: 5}, "b/1": {Record: 1, First: 5, Count: 5},
	}
	if !reflect.DeepEqual(set.Computed, want) || len(set.Data) != 0 {
		t.Errorf("computed %v, ranges %v; want %v and none", set.Computed, set.Data, want)
	}
	if got := set.Meta["a/.zarray"]; got != `{"chunks":[5],"compressor":null,"dtype":"<i8","fill_value":null,"filters":null,"order":"C","shape":[10],"zarr_format":2}` {
		t.Errorf("a/.zarray %s", got)
	}
	if !strings.Contains(set.Meta[".zmetadata"], `"b/.zarray"`) {
		t.Errorf(".zmetadata %s lacks b", set.Meta[".zmetadata"])
	}
	if err := set.WriteJSON(io.Discard); !errors.Is(err, refs.ErrComputed) {
		t.Errorf("WriteJSON of computed chunks: %v, want ErrComputed", err)
	}
}
