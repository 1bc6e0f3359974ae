package npy

import (
	"compress/flate"
	"errors"
	"hash/crc32"
	"io"
	"sync"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// inflater reads a deflated .npz member as an io.ReaderAt over its
// inflated bytes. It decompresses as a stream: reads at increasing
// offsets continue where the last one stopped, a read behind it starts
// again from the member's first byte. The stream is checked as it goes:
// it must inflate to exactly the member's declared size, with the
// declared CRC-32.
type inflater struct {
	file string
	src  io.ReaderAt
	m    *member

	mu      sync.Mutex
	zr      io.ReadCloser
	pos     int64 // inflated bytes read so far
	crc     uint32
	scratch []byte
}

func (z *inflater) fail(err error, format string, args ...any) error {
	return errAt(z.file, z.m.data, err, "member %q (deflated): "+format, append([]any{z.m.name}, args...)...)
}

// ReadAt reads inflated bytes [off, off+len(p)).
func (z *inflater) ReadAt(p []byte, off int64) (int, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	usize := z.m.usize
	if off < 0 || off > usize {
		return 0, z.fail(mmapfile.ErrOutOfRange, "read at inflated byte %d of %d", off, usize)
	}
	if z.zr == nil || off < z.pos {
		z.zr = flate.NewReader(io.NewSectionReader(z.src, z.m.data, z.m.csize))
		z.pos, z.crc = 0, 0
	}
	for z.pos < off {
		if z.scratch == nil {
			z.scratch = make([]byte, 64<<10)
		}
		k := min(off-z.pos, int64(len(z.scratch)))
		if err := z.read(z.scratch[:k]); err != nil {
			return 0, err
		}
	}
	want := p
	if int64(len(want)) > usize-off {
		want = want[:usize-off]
	}
	if err := z.read(want); err != nil {
		return 0, err
	}
	if len(want) < len(p) {
		return len(want), io.EOF
	}
	return len(p), nil
}

// read inflates exactly len(p) bytes (all within the declared size) and,
// at the declared end, checks that the stream ends there with the
// declared CRC-32.
func (z *inflater) read(p []byte) error {
	n, err := io.ReadFull(z.zr, p)
	z.crc = crc32.Update(z.crc, crc32.IEEETable, p[:n])
	z.pos += int64(n)
	if err != nil {
		z.zr = nil
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return z.fail(mmapfile.ErrTruncated, "inflates to %d bytes, %d declared", z.pos, z.m.usize)
		}
		return z.fail(ErrZip, "inflating: %v", err)
	}
	if z.pos == z.m.usize {
		var one [1]byte
		if k, _ := z.zr.Read(one[:]); k > 0 {
			z.zr = nil
			return z.fail(ErrZip, "inflates past its declared %d bytes", z.m.usize)
		}
		if z.crc != z.m.crc {
			z.zr = nil
			return z.fail(ErrCRC, "inflated CRC-32 %08x, declared %08x", z.crc, z.m.crc)
		}
	}
	return nil
}
