package zarr

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/memsource"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
)

// memSource is an in-memory format.Source: arrays given as their stored
// bytes, in any storage order and byte order.
type memSource struct{ memsource.Source }

// add appends an array whose payload is data, stored in order and byte
// order bo.
func (s *memSource) add(name string, t layout.Type, shape []int64, order layout.Order, big bool, data []byte) *memSource {
	a := layout.Array{Name: name, Type: t, Shape: shape, Order: order, BigEndian: big, Offset: 0, Size: int64(len(data))}
	s.Add(format.Record{Array: a, Kind: format.KindArray}, data)
	return s
}

// ramp is n elements of type t (little-endian) with distinct values
// i·step+off, wrapping in the type.
func ramp(t layout.Type, n int64, off float64) []byte {
	b := make([]byte, n*int64(t.Size()))
	for i := int64(0); i < n; i++ {
		v := float64(i) + off
		e := b[i*int64(t.Size()):]
		switch t {
		case layout.Bool:
			e[0] = byte(i % 2)
		case layout.I8, layout.U8:
			e[0] = byte(int64(v))
		case layout.I16, layout.U16:
			binary.LittleEndian.PutUint16(e, uint16(int64(v)))
		case layout.I32, layout.U32:
			binary.LittleEndian.PutUint32(e, uint32(int64(v)))
		case layout.I64, layout.U64:
			binary.LittleEndian.PutUint64(e, uint64(int64(v)))
		case layout.F16:
			binary.LittleEndian.PutUint16(e, uint16(layout.Float16FromFloat64(math.Mod(v, 2048))))
		case layout.F32:
			binary.LittleEndian.PutUint32(e, math.Float32bits(float32(v)))
		case layout.F64:
			binary.LittleEndian.PutUint64(e, math.Float64bits(v))
		case layout.C64:
			binary.LittleEndian.PutUint32(e, math.Float32bits(float32(v)))
			binary.LittleEndian.PutUint32(e[4:], math.Float32bits(float32(-v)))
		case layout.C128:
			binary.LittleEndian.PutUint64(e, math.Float64bits(v))
			binary.LittleEndian.PutUint64(e[8:], math.Float64bits(-v))
		}
	}
	return b
}

// toOrder reorders row-major little-endian data into order and byte order.
func toOrder(t *testing.T, typ layout.Type, shape []int64, data []byte, order layout.Order, big bool) []byte {
	t.Helper()
	out := append([]byte(nil), data...)
	if order == layout.ColMajor {
		if err := layout.ReorderBytes(out, data, typ.Size(), shape, layout.RowMajor); err != nil {
			t.Fatal(err)
		}
	}
	if big {
		layout.SwapOrder(out, typ, binary.LittleEndian, binary.BigEndian)
	}
	return out
}

// readAll reads record i of src whole, row-major little-endian.
func readAll(t *testing.T, src format.Source, i int) []byte {
	t.Helper()
	b, err := format.ReadAll(src, i, layout.RowMajor, binary.LittleEndian)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFile writes a file of a store built by hand.
func writeFile(t *testing.T, dir, key string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var leOrder = binary.LittleEndian

func f64bytes(v ...float64) []byte { return append([]byte(nil), unsafeslice.Bytes(v)...) }
