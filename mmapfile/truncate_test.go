package mmapfile

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A file cut by another process inside a page that is still mapped: the
// part of that page past the new end reads as zeros (no SIGBUS there), and
// writes there are lost, so a guarded copy of it must report the
// truncation itself, and InFile says so to readers of the mapping.
func TestReadPastTruncationInsideLastPage(t *testing.T) {
	ps := int64(os.Getpagesize())
	p, want := writeFile(t, int(3*ps))
	f, err := OpenFile(p, ReadWrite, nil)
	require.NoError(t, err)
	defer f.Close()
	r, err := f.Map(10, 3*ps-10)
	require.NoError(t, err)
	end := ps + 50 // the new size: page 1 is partly kept, page 2 lost
	require.NoError(t, os.Truncate(p, end))

	cases := []struct {
		name   string
		off, n int64 // file offset and length
		errOff int64 // -1: no error
	}{
		{"before the cut", 100, 200, -1},
		{"ending exactly at the cut", ps, 50, -1},
		{"straddling the cut", ps + 10, 100, end},
		{"wholly past the cut, same page", ps + 60, 40, ps + 60},
		{"one byte past the cut", end, 1, end},
		{"ending in the lost page", ps + 10, ps, -2}, // SIGBUS: offset in the lost page
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.errOff == -1 {
				// A write inside the file is a write.
				_, err := r.WriteAt(want[c.off:c.off+c.n], c.off-10)
				require.NoError(t, err)
			}
			buf := make([]byte, c.n)
			_, err := r.ReadAt(buf, c.off-10)
			u64 := make([]uint8, c.n)
			cerr := Copy(u64, r, c.off-10, binary.LittleEndian)
			ierr := r.InFile(c.off-10, c.n)
			if c.errOff == -1 {
				require.NoError(t, err)
				require.NoError(t, cerr)
				require.NoError(t, ierr)
				assert.Equal(t, want[c.off:c.off+c.n], buf)
				return
			}
			_, werr := r.WriteAt(bytes.Repeat([]byte{0xCC}, int(c.n)), c.off-10)
			for _, err := range []error{err, cerr, werr, ierr} {
				require.ErrorIs(t, err, ErrFault)
				var e *Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, p, e.File)
				if c.errOff == -2 {
					// (The write is refused at the cut, before any byte
					// is written; the reads fault in the lost page.)
					if e.Offset == end {
						continue
					}
					assert.GreaterOrEqual(t, e.Offset, 2*ps)
				} else {
					assert.Equal(t, c.errOff, e.Offset)
				}
			}
		})
	}
}
