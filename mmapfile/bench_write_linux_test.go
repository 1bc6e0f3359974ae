package mmapfile

import (
	"encoding/binary"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkPwriteFdatasync is the ceiling of BenchmarkEditSync: pwrite of
// one float64's 8 bytes and fdatasync, on a plain descriptor.
func BenchmarkPwriteFdatasync(b *testing.B) {
	f, err := os.OpenFile(editFile(b), os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var le [8]byte
	i := 0
	for b.Loop() {
		i++
		binary.LittleEndian.PutUint64(le[:], uint64(i))
		if _, err := f.WriteAt(le[:], int64(editIndex(i))*8); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
	}
}
