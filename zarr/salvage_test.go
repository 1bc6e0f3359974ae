package zarr

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// rampStore writes a v3 store whose root is f64 [4, 4] (values 0…15, fill
// value 0) in chunks [2, 2], compressed as compress says.
func rampStore(t *testing.T, compress string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "r.zarr")
	err := Write(p, (&memSource{}).add("/", layout.F64, []int64{4, 4}, layout.RowMajor, false, ramp(layout.F64, 16, 0)),
		&Options{Chunks: []int64{2, 2}, Compress: compress})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// withZeros is 0…15 with the elements of the [2, 2] chunks listed zeroed.
func withZeros(chunks ...[2]int) []float64 {
	v := make([]float64, 16)
	for i := range v {
		v[i] = float64(i)
	}
	for _, c := range chunks {
		for _, i := range []int{0, 1} {
			for _, j := range []int{0, 1} {
				v[(2*c[0]+i)*4+2*c[1]+j] = 0
			}
		}
	}
	return v
}

// TestSalvage: with Options.Salvage a store whose chunks do not decode
// opens, those chunks read as the fill value, and Damage reports each
// with the error a plain read gives (its key and byte offset); views and
// Set stay strict.
func TestSalvage(t *testing.T) {
	for _, c := range []struct {
		name   string
		store  func(t *testing.T) string
		err    error // the damage's sentinel
		key    string
		offset int64
		want   []float64
		raw    [][]int64 // damaged raw chunks, whose views and Sets fail
	}{
		{"a raw chunk cut short", func(t *testing.T) string {
			p := rampStore(t, "")
			if err := os.Truncate(filepath.Join(p, "c", "0", "1"), 10); err != nil {
				t.Fatal(err)
			}
			return p
		}, mmapfile.ErrTruncated, "c/0/1", 10, withZeros([2]int{0, 1}), [][]int64{{0, 1}}},
		{"a raw chunk too long", func(t *testing.T) string {
			p := rampStore(t, "")
			writeFile(t, p, "c/1/1", make([]byte, 40))
			return p
		}, ErrCorrupt, "c/1/1", 32, withZeros([2]int{1, 1}), [][]int64{{1, 1}}},
		{"a zlib chunk that does not inflate", func(t *testing.T) string {
			p := rampStore(t, "zlib")
			writeFile(t, p, "c/1/0", []byte("not zlib at all"))
			return p
		}, ErrCorrupt, "c/1/0", 0, withZeros([2]int{1, 0}), nil},
		{"a shard index whose checksum fails", func(t *testing.T) string {
			p := shardStore(t, "")
			f := filepath.Join(p, "c", "0", "0")
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-1] ^= 0xff
			writeFile(t, p, "c/0/0", b)
			return p
		}, ErrChecksum, "c/0/0", 192, make([]float64, 16), nil}, // the index's crc32c, after 128 data bytes and 64 of entries
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.store(t)
			strict := openAndRead(p)
			if strict == nil {
				t.Fatal("a plain read succeeds")
			}
			s, err := Open(p, &Options{Salvage: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			damage := s.Damage()
			if damage == nil || damage.Error() != strict.Error() {
				t.Fatalf("Damage() = %v, want the plain read's %v", damage, strict)
			}
			var fe *FormatError
			if !errors.As(damage, &fe) || fe.File != p || fe.Key != c.key || fe.Offset != c.offset {
				t.Fatalf("Damage() = %#v, want file %s, key %s, offset %d", fe, p, c.key, c.offset)
			}
			if !errors.Is(damage, c.err) {
				t.Fatalf("Damage() = %v, want %v", damage, c.err)
			}
			got, err := Read[float64](s.Arrays()[0])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("Read = %v, want %v", got, c.want)
			}
			for _, u := range c.raw {
				if _, err := ViewChunk[float64](s.Arrays()[0], u...); err == nil {
					t.Errorf("a view of damaged chunk %v", u)
				}
			}
			if len(c.raw) == 0 {
				return
			}
			s.Close()
			w, err := OpenFile(p, mmapfile.ReadWrite, &Options{Salvage: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			u := c.raw[0]
			if err := Set(w.Arrays()[0], []int64{2 * u[0], 2 * u[1]}, 1.0); err == nil {
				t.Error("Set in a damaged chunk")
			}
		})
	}

	sound, err := Open(rampStore(t, "zstd"), &Options{Salvage: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := sound.Damage(); err != nil {
		t.Errorf("Damage of a sound store: %v", err)
	}
	sound.Close()
}
