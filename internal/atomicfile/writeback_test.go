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

// TestWritebackAt: writes at offsets, in order with small patches behind
// them, are the file's content after Commit, and every WritebackBytes
// written start the writeback of the range they covered.
func TestWritebackAt(t *testing.T) {
	type span struct{ off, n int64 }
	var started []span
	startWritebackCall = func(_ *os.File, off, n int64) { started = append(started, span{off, n}) }
	t.Cleanup(func() { startWritebackCall = StartWriteback })

	path := filepath.Join(t.TempDir(), "out")
	want := make([]byte, 2*WritebackBytes+100)
	for i := range want {
		want[i] = byte(i*7 + i>>16)
	}
	err := Write(path, 0o644, func(f *os.File) error {
		w := WritebackAt(f, f)
		for off := 0; off < len(want); {
			k := min(len(want)-off, 1<<20)
			if _, err := w.WriteAt(want[off:off+k], int64(off)); err != nil {
				return err
			}
			off += k
			if off == 3<<20 {
				// A patch behind (a count written after its records).
				if _, err := w.WriteAt(want[8:16], 8); err != nil {
					return err
				}
			}
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
	if len(started) != 2 || started[0] != (span{0, WritebackBytes}) || started[1] != (span{WritebackBytes, WritebackBytes}) {
		t.Errorf("writeback started for %v, want the first 8 MiB, then the next", started)
	}
}
