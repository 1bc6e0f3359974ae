package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteback: what goes through a Writeback writer, in pieces that
// cross WritebackBytes, is the file's content after Commit.
func TestWriteback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	want := make([]byte, 2*WritebackBytes+12345)
	for i := range want {
		want[i] = byte(i*31 + i>>12)
	}
	err := Write(path, 0o644, func(f *os.File) error {
		if _, err := f.Write(want[:23]); err != nil { // a header, written before
			return err
		}
		w := Writeback(f)
		for p := want[23:]; len(p) > 0; {
			k := min(len(p), 3<<20+7)
			if _, err := w.Write(p[:k]); err != nil {
				return err
			}
			p = p[k:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("content differs (%d bytes, want %d)", len(got), len(want))
	}
}
