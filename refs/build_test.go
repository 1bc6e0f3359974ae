package refs_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
