package npy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// SetText changes element idx of record i in place; see format.Setter.
// Numbers take Futhark's literals (and Python's complex literals for
// complex numbers), bools true or false, datetimes their integer (or
// NaT), text and bytes fields their text (void: 0x… hex). For a nullable
// column, "null" sets its mask and any value clears it.
func (f *File) SetText(i int, idx []int64, value string) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.mu.RLock()
	defer f.mu.RUnlock()
	if i < 0 || i >= len(f.slots) {
		return f.errf(-1, mmapfile.ErrOutOfRange, "record %d of %d", i, len(f.slots))
	}
	ref := f.ref(i)
	rec := f.record(i)
	if rec.Kind == format.KindOpaque && !ref.isText() {
		return f.bad(i, errors.ErrUnsupported, "%s values cannot be set", rec.TypeString())
	}
	if f.closed {
		return f.bad(i, mmapfile.ErrClosed, "set")
	}
	if ref.mask != nil {
		m := target{name: ref.t.name + MaskSuffix, a: ref.t.a, field: ref.mask, fi: int(f.slots[i].mask)}
		if value == "null" {
			return f.setRaw(&m, idx, []byte{1})
		}
		b, err := parseValue(ref.t.dtype(), value)
		if err != nil {
			return f.recordErr(rec.Name, -1, err, "")
		}
		if err := f.setRaw(&ref.t, idx, b); err != nil {
			return err
		}
		return f.setRaw(&m, idx, []byte{0})
	}
	b, err := parseValue(ref.t.dtype(), value)
	if err != nil {
		return f.recordErr(rec.Name, -1, err, "")
	}
	return f.setRaw(&ref.t, idx, b)
}

// parseValue parses a literal for one element of dt and returns its
// bytes in dt's byte order.
func parseValue(dt DType, v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	literal := v
	out := make([]byte, dt.ItemSize)
	order := dt.byteOrder()
	lt := dt.Type()
	if lt.Valid() && lt != layout.Bool {
		v = strings.TrimSuffix(v, lt.String())
	}
	switch dt.Kind {
	case 'b':
		switch v {
		case "true", "True":
			out[0] = 1
		case "false", "False":
		default:
			return nil, fmt.Errorf("%q is not true or false", v)
		}
	case 'M', 'm':
		if v == "NaT" {
			order.PutUint64(out, 1<<63)
			break
		}
		fallthrough
	case 'i', 'u', 'f':
		// Futhark's literals, as every format's elements are set: 010 is
		// ten, and a value the type cannot hold is an error.
		b, err := format.ParseLiteral(lt, literal, order)
		if err != nil {
			return nil, err
		}
		copy(out, b)
	case 'c':
		if b, err := format.ParseLiteral(lt, literal, order); err == nil {
			copy(out, b)
			break
		}
		c, err := parseComplex(v, lt.Part())
		if err != nil {
			return nil, err
		}
		half := dt.ItemSize / 2
		layout.PutFloat(out[:half], order, lt.Part(), real(c))
		layout.PutFloat(out[half:], order, lt.Part(), imag(c))
	case 'S', 'U', 'V':
		if err := encodeText(dt, v, out); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("cannot set %s elements", dt.simpleDescrOr())
	}
	return out, nil
}
