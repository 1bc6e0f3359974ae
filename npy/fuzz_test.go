package npy

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
)

// seedFuzz adds every golden file to the corpus.
func seedFuzz(f *testing.F) {
	names, _ := filepath.Glob("testdata/*.np[yz]")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err == nil && len(b) < 1<<16 {
			f.Add(b)
		}
	}
}

// FuzzHeader parses .npy headers; whatever parses must re-encode (as
// np.save would write it) to a header that parses to the same dtype,
// shape and order, with its data at a multiple of 64.
func FuzzHeader(f *testing.F) {
	seedFuzz(f)
	f.Add([]byte(magic + "\x01\x00\x20\x00{'descr':'<f8','shape':(2L,3),'fortran_order':True}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := readHeader("fuzz", bytes.NewReader(b), 0, int64(len(b)))
		if err != nil {
			return
		}
		full := h.full()
		enc, err := full.Encode()
		if err != nil {
			t.Fatalf("a parsed header does not encode: %v (%s)", err, full.DType)
		}
		if len(enc)%64 != 0 {
			t.Fatalf("encoded header of %d bytes", len(enc))
		}
		g, err := readHeader("again", bytes.NewReader(enc), 0, int64(len(enc)))
		if err != nil {
			t.Fatalf("re-encoded header does not parse: %v\n%q", err, enc)
		}
		if g.full().DType.String() != full.DType.String() || shapeRepr(g.Shape) != shapeRepr(h.Shape) || g.FortranOrder != h.FortranOrder || g.dataOff() != int64(len(enc)) {
			t.Fatalf("round trip changed the header: %s %v %v → %s %v %v", full.DType, h.Shape, h.FortranOrder, g.full().DType, g.Shape, g.FortranOrder)
		}
	})
}

// FuzzNPZ reads .npy files and .npz archives through NewReader; whatever
// opens and reads is written again as an archive by this package, which
// must open again with the same arrays, headers and data.
func FuzzNPZ(f *testing.F) {
	seedFuzz(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), int64(len(b)), &Options{MaxInflate: 1 << 20})
		if err != nil {
			return
		}
		for _, m := range r.others {
			if m.usize > 1<<20 {
				return // copying it would inflate up to its declared size
			}
		}
		arrays := r.Arrays()
		want := map[string][]byte{}
		for _, a := range arrays {
			if a.Size > 1<<20 {
				return
			}
			data, err := readAll(r, a.Name, a)
			if err != nil {
				return // bad data (bools, a stream that lies) are errors, not crashes
			}
			want[a.Name] = data
		}
		// Every array and field reads in both orders, or fails.
		for i, rec := range r.Records() {
			n, err := layout.Count(rec.Shape)
			if err != nil || rec.Kind == format.KindOpaque || !rec.Type.Valid() || n*int64(rec.Type.Size()) > 1<<16 {
				continue
			}
			dst := make([]byte, n*int64(rec.Type.Size()))
			for _, o := range []layout.Order{layout.RowMajor, layout.ColMajor} {
				_ = r.ReadArray(i, dst, 0, o, binary.LittleEndian)
			}
		}
		path := filepath.Join(t.TempDir(), "out.npz")
		z, err := CreateZip(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.addTo(z); err != nil {
			z.Abort()
			return // a member that inflates wrongly
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		g, err := Open(path, nil)
		if err != nil {
			t.Fatalf("rewritten archive does not open: %v", err)
		}
		defer g.Close()
		got := g.Arrays()
		if len(got) != len(arrays) {
			t.Fatalf("%d arrays, then %d", len(arrays), len(got))
		}
		for i, a := range arrays {
			b := got[i]
			if b.Name != a.Name || b.DType.String() != a.DType.String() || shapeRepr(b.Shape) != shapeRepr(a.Shape) || b.Offset%64 != 0 {
				t.Fatalf("array %d: %+v became %+v", i, a, b)
			}
			data, err := readAll(g, b.Name, b)
			if err != nil || !bytes.Equal(data, want[a.Name]) {
				t.Fatalf("array %q: data differ (%v)", a.Name, err)
			}
		}
	})
}
