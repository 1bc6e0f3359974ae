package hdf5

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/mmapkit/mmapkit/format"
)

// This file is the writer's text: fixed-size strings, as h5py stores
// NumPy's |S<n> arrays, and variable-length UTF-8 strings in global heap
// collections, as h5py stores Python's str (h5py.string_dtype()), which
// netCDF-4 readers take as their string type.

// vlenSize is the size of a variable-length element in the file: its
// length, the address of its global heap collection and its index there.
const vlenSize = 16

// gcolMinSize is the smallest global heap collection libhdf5 reads.
const gcolMinSize = 4096

// gcolTarget is the size past which a collection of strings is closed
// and a new one begun: libhdf5 reads a collection whole.
const gcolTarget = 1 << 20

// maxHeapObjects is how many objects one global heap collection indexes
// (16-bit object indexes; 0 is its free space).
const maxHeapObjects = 65535

// fixedText is the datatype of a fixed string of size bytes, null-padded
// as h5py writes NumPy's bytes, in ASCII or UTF-8.
func fixedText(size int, utf8 bool) []byte {
	bits := byte(1) // null-padded
	if utf8 {
		bits |= 1 << 4
	}
	return binary.LittleEndian.AppendUint32([]byte{0x13, bits, 0, 0}, uint32(size))
}

// vlenText is the datatype of a variable-length UTF-8 string, as h5py's
// string_dtype(): a sequence of u8.
var vlenText = []byte{0x19, 1, 1, 0, vlenSize, 0, 0, 0, 0x10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 8, 0}

// heapCollection builds one global heap collection ("GCOL"): the
// objects, each after a 16-byte header and padded to 8 bytes, then the
// free space as object 0, at least gcolMinSize bytes in all.
type heapCollection struct {
	b []byte
	n int // objects added
}

func (c *heapCollection) reset() {
	c.b = append(c.b[:0], make([]byte, 16)...)
	c.n = 0
}

// size is what the collection would take with an object of n bytes more.
func (c *heapCollection) sizeWith(n int) int {
	return len(c.b) + 16 + (n+7)&^7
}

// add appends an object and returns its index.
func (c *heapCollection) add(data string) int {
	c.n++
	le := binary.LittleEndian
	c.b = le.AppendUint16(c.b, uint16(c.n))
	c.b = append(c.b, 0, 0, 0, 0, 0, 0) // reference count, reserved
	c.b = le.AppendUint64(c.b, uint64(len(data)))
	c.b = append(c.b, data...)
	c.b = append(c.b, make([]byte, (8-len(data)%8)%8)...)
	return c.n
}

// finish fills in the header and the free space and returns the
// collection's bytes, valid until the next reset.
func (c *heapCollection) finish() []byte {
	le := binary.LittleEndian
	size := max(gcolMinSize, len(c.b)+16)
	copy(c.b, "GCOL\x01\x00\x00\x00")
	le.PutUint64(c.b[8:], uint64(size))
	free := size - len(c.b)
	c.b = le.AppendUint16(c.b, 0)
	c.b = append(c.b, 0, 0, 0, 0, 0, 0)
	c.b = le.AppendUint64(c.b, uint64(free))
	return append(c.b, make([]byte, free-16)...)
}

// writeText writes the text elements of a dataset: fixed strings in its
// contiguous data at n.data; variable-length ones as heap IDs there,
// their bytes in global heap collections from address at on. It returns
// the address after the last collection.
func (n *wnode) writeText(w io.WriterAt, src format.Source, at int64) (int64, error) {
	off := n.data
	k := int64(0) // elements written
	if !n.vlen {
		size := int64(n.elemSize)
		var buf []byte
		err := format.ReadText(src, n.rec, func(batch []string) error {
			need := len(batch) * int(size)
			buf = append(buf[:0], make([]byte, need)...)
			for j, v := range batch {
				if len(v) > int(size) {
					return fmt.Errorf("dataset %s, element %d: %d bytes do not fit its %d", n.fullPath, k+int64(j), len(v), size)
				}
				copy(buf[j*int(size):], v)
			}
			if _, err := w.WriteAt(buf, off); err != nil {
				return err
			}
			off += int64(need)
			k += int64(len(batch))
			return nil
		})
		return at, n.checkCount(k, err)
	}
	// Each collection is written once it is full, and with it the IDs of
	// the elements it holds, whose address it is.
	var c heapCollection
	c.reset()
	var ids []byte
	flush := func() error {
		if c.n == 0 {
			return nil
		}
		coll := c.finish()
		le := binary.LittleEndian
		for p := 0; p < len(ids); p += vlenSize {
			le.PutUint64(ids[p+4:], uint64(at))
		}
		if _, err := w.WriteAt(coll, at); err != nil {
			return err
		}
		if _, err := w.WriteAt(ids, off); err != nil {
			return err
		}
		at += int64(len(coll))
		off += int64(len(ids))
		ids = ids[:0]
		c.reset()
		return nil
	}
	err := format.ReadText(src, n.rec, func(batch []string) error {
		for _, v := range batch {
			if len(v) > math.MaxUint32 {
				return fmt.Errorf("dataset %s, element %d: %d bytes, more than the 4 GiB an HDF5 string holds", n.fullPath, k, len(v))
			}
			if c.n == maxHeapObjects || (c.n > 0 && c.sizeWith(len(v)) > gcolTarget) {
				if err := flush(); err != nil {
					return err
				}
			}
			index := c.add(v)
			ids = binary.LittleEndian.AppendUint32(ids, uint32(len(v)))
			ids = binary.LittleEndian.AppendUint64(ids, 0) // the collection's address, once known
			ids = binary.LittleEndian.AppendUint32(ids, uint32(index))
			k++
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return at, n.checkCount(k, err)
}

// checkCount is err, or an error where a text source gave other than the
// dataset's number of elements.
func (n *wnode) checkCount(k int64, err error) error {
	if err != nil {
		return err
	}
	if want := n.nbytes / int64(n.elemSize); k != want {
		return fmt.Errorf("dataset %s: %d text elements read, %d expected", n.fullPath, k, want)
	}
	return nil
}
