package npy

import (
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// writeNPZ writes every record of src as a member of an .npz archive.
func writeNPZ(path string, src format.Source, o *Options) error {
	z, err := CreateZip(path, o)
	if err != nil {
		return err
	}
	if err := addAll(z, src); err != nil {
		z.Abort()
		return err
	}
	return z.Close()
}

// addAll adds src's records to z: an npy file's own arrays and members as
// they are, anything else record by record.
func addAll(z *ZipWriter, src format.Source) error {
	if f := ownFile(src); f != nil {
		return f.addTo(z)
	}
	// Record by record: a source that describes its records on demand
	// (a CSV of a million columns) never holds a list of them.
	return format.EachRecord(src, func(i int, r *format.Record) error {
		// Text arrays of other formats (HDF5's strings); NumPy's own,
		// which may be fields of a structured member, convert with their
		// file whole.
		_, text := format.TextTypeOf(r)
		switch {
		case text && r.Kind != format.KindColumn && (r.Facts == nil || r.Facts.NativeType == ""):
			h, data, err := textArray(src, i)
			if err != nil {
				return err
			}
			if err := z.addNPY(r.Name, h, data); err != nil {
				return err
			}
		case r.Kind == format.KindOpaque:
			return format.Unrepresentable(r, "an .npz member cannot hold "+r.TypeString()+" values")
		case r.Type.Valid():
			h, err := arrayHeader(r)
			if err != nil {
				return err
			}
			if err := z.addNPY(r.Name, h, func(w io.Writer) error { return streamRecord(src, i, h, w) }); err != nil {
				return err
			}
		default:
			if err := addTextColumn(z, src, i); err != nil {
				return err
			}
		}
		if r.Kind == format.KindColumn && r.Nullable {
			return addMaskColumn(z, src, i)
		}
		return nil
	})
}

// columnIndex is the position of record i among src's table columns.
func columnIndex(src format.Source, i int) int {
	k := 0
	for _, r := range src.Records()[:i] {
		if r.Kind == format.KindColumn {
			k++
		}
	}
	return k
}

// addTextColumn adds a text column of a table as a 1-D text member.
func addTextColumn(z *ZipWriter, src format.Source, i int) error {
	r := format.RecordAt(src, i)
	if r.Kind != format.KindColumn || len(r.Shape) != 1 {
		return format.Unrepresentable(&r, "an .npz member cannot hold "+r.TypeString()+" values")
	}
	// The column read on its own (one scan of the table where the file
	// cannot), not a scan of every table of the file.
	dt, err := recordDType(&r)
	if err != nil {
		dt = DType{Kind: 'U'} // as long as its longest cell
	}
	h, data, err := textOf(src, i, []int64{r.Shape[0]}, dt)
	if err != nil {
		return err
	}
	return z.addNPY(r.Name, h, data)
}

// textArray is the header and the data of record i of src, an array of
// text: bytes<n> as |S<n>, str<n> as <U<n>, and text of any length as
// str as long as its longest element.
func textArray(src format.Source, i int) (Header, func(io.Writer) error, error) {
	r := format.RecordAt(src, i)
	if len(r.Shape) > MaxRank {
		return Header{}, nil, format.Unrepresentable(&r, fmt.Sprintf("%d dimensions; NumPy arrays have at most %d", len(r.Shape), MaxRank))
	}
	if r.Order == layout.ColMajor && !layout.Trivial(r.Shape) {
		// Text is read in row-major order only.
		return Header{}, nil, format.Unrepresentable(&r, "column-major text converts with its file whole")
	}
	dt := DType{Kind: 'U'}
	if tt, _ := format.TextTypeOf(&r); tt.Kind != 0 {
		var err error
		if dt, err = recordDType(&r); err != nil {
			return Header{}, nil, err
		}
	}
	return textOf(src, i, r.Shape, dt)
}

// textOf is the header and the data of record i of src, text elements of
// shape, as an array of dt; a str dt of ItemSize 0 is sized to the
// longest element, found by a first pass.
func textOf(src format.Source, i int, shape []int64, dt DType) (Header, func(io.Writer) error, error) {
	if dt.ItemSize == 0 {
		longest := 0
		err := format.ReadText(src, i, func(batch []string) error {
			for _, v := range batch {
				longest = max(longest, utf8.RuneCountInString(v))
			}
			return nil
		})
		if err != nil {
			return Header{}, nil, err
		}
		if dt.ItemSize, err = strItemSize(longest); err != nil {
			return Header{}, nil, err
		}
	}
	h := Header{DType: dt, Shape: append([]int64{}, shape...)}
	return h, func(w io.Writer) error {
		var buf []byte
		return format.ReadText(src, i, func(batch []string) error {
			buf = slices.Grow(buf[:0], len(batch)*dt.ItemSize)[:len(batch)*dt.ItemSize]
			for r, v := range batch {
				if err := encodeText(dt, v, buf[r*dt.ItemSize:(r+1)*dt.ItemSize]); err != nil {
					return fmt.Errorf("%w: %w", err, format.ErrNotRepresentable)
				}
			}
			_, err := w.Write(buf)
			return err
		})
	}, nil
}

// addMaskColumn adds the nulls of a nullable column as the bool member
// "<name>.mask".
func addMaskColumn(z *ZipWriter, src format.Source, i int) error {
	r := format.RecordAt(src, i)
	if nr, ok := src.(format.NullReader); ok {
		// The column's nulls read on their own, rather than one scan of
		// the whole table for each nullable column.
		h := Header{DType: DType{Kind: 'b', ItemSize: 1}, Shape: []int64{r.Shape[0]}}
		return z.addNPY(r.Name+MaskSuffix, h, func(w io.Writer) error {
			var buf []byte
			return nr.ReadNulls(i, func(batch []bool) error {
				buf = slices.Grow(buf[:0], len(batch))[:len(batch)]
				for k, null := range batch {
					buf[k] = 0
					if null {
						buf[k] = 1
					}
				}
				_, err := w.Write(buf)
				return err
			})
		})
	}
	fields := []tableField{{col: columnIndex(src, i), mask: true, dt: DType{Kind: 'b', ItemSize: 1}}}
	h := Header{DType: fields[0].dt, Shape: []int64{r.Shape[0]}}
	return z.addNPY(r.Name+MaskSuffix, h, func(w io.Writer) error { return writeRows(src, fields, 1, w) })
}

// addTo adds the file's arrays (and an archive's other members) to z as
// they are: the same headers (as np.save writes them), the same data,
// deflated members inflated and stored.
func (f *File) addTo(z *ZipWriter) error {
	f.mu.RLock()
	closed := f.closed
	f.mu.RUnlock()
	if closed {
		return f.errf(-1, mmapfile.ErrClosed, "read")
	}
	if !f.isZip {
		a := f.arrays[0]
		return z.addEncoded(a.key, a.h.encoded(), a.h.dataSize, func(w io.Writer) error { return f.copyData(a, w) })
	}
	byMember := map[*member]*array{}
	for _, a := range f.arrays {
		byMember[a.m] = a
	}
	for _, m := range f.dir.members {
		if a := byMember[m]; a != nil {
			if err := z.addEncoded(a.key, a.h.encoded(), a.h.dataSize, func(w io.Writer) error { return f.copyData(a, w) }); err != nil {
				return err
			}
			continue
		}
		var r io.Reader
		switch {
		case m.flags&1 == 0 && m.stored():
			r = io.NewSectionReader(f.ra, m.data, m.csize)
		case m.flags&1 == 0 && m.method == 8:
			r = io.NewSectionReader(&inflater{file: f.name, src: f.ra, m: m}, 0, m.usize)
		default:
			return f.errf(m.local, format.ErrNotRepresentable, "member %q is encrypted or compressed with method %d, which this package does not read", m.name, m.method)
		}
		err := z.addMember(m.name, m.usize, func(w io.Writer) error {
			h := crc32.NewIEEE()
			if _, err := io.Copy(io.MultiWriter(w, h), r); err != nil {
				return err
			}
			if m.stored() && h.Sum32() != m.crc {
				return f.crcMismatch(m, h.Sum32()) // a deflated member's is checked as it inflates
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
