package daphne

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// The functions here serve tools that handle every value type without
// naming it (mmapkit's ls, cat and convert): they dispatch on the file's
// value type and return []T, *CSR[T] or *Frame inside an any.

// ReadAny reads the whole file: a dense matrix as a row-major []T (from
// DenseValues, so it may alias the mapping until Close), a CSR matrix as a
// *CSR[T], a frame as a *Frame.
func ReadAny(f *File) (any, error) {
	switch f.hdr.Kind {
	case KindFrame:
		return ReadFrame(f)
	case KindCSR:
		return byType(f.hdr.ValueType, anyReader{f: f, csr: true})
	}
	return byType(f.hdr.ValueType, anyReader{f: f})
}

// ReadRowsDenseAny is ReadRowsDense for the file's own value type.
func ReadRowsDenseAny(f *File, r0, r1 uint64) (any, error) {
	return byType(f.hdr.ValueType, anyReader{f: f, rows: true, r0: r0, r1: r1})
}

// WriteDenseAny is WriteDense for v of any of the eight value types' Go
// slice types ([]int8 … []float64). Types
// DAPHNE cannot store (int16, layout.Float16, bool, …) give an error
// wrapping errors.ErrUnsupported.
func WriteDenseAny(path string, rows, cols uint64, v any, o *WriteOptions) error {
	switch s := v.(type) {
	case []int8:
		return WriteDense(path, rows, cols, s, o)
	case []int32:
		return WriteDense(path, rows, cols, s, o)
	case []int64:
		return WriteDense(path, rows, cols, s, o)
	case []uint8:
		return WriteDense(path, rows, cols, s, o)
	case []uint32:
		return WriteDense(path, rows, cols, s, o)
	case []uint64:
		return WriteDense(path, rows, cols, s, o)
	case []float32:
		return WriteDense(path, rows, cols, s, o)
	case []float64:
		return WriteDense(path, rows, cols, s, o)
	}
	return &FormatError{File: path, Offset: -1, Msg: fmt.Sprintf("DAPHNE has no value type for %T (si8 si32 si64 ui8 ui32 ui64 f32 f64 only)", v), Err: errors.ErrUnsupported}
}

// WriteCSRAny is WriteCSR for m of type *CSR[T], T one of the eight value
// types' Go types.
func WriteCSRAny(path string, m any, o *WriteOptions) error {
	switch s := m.(type) {
	case *CSR[int8]:
		return WriteCSR(path, s, o)
	case *CSR[int32]:
		return WriteCSR(path, s, o)
	case *CSR[int64]:
		return WriteCSR(path, s, o)
	case *CSR[uint8]:
		return WriteCSR(path, s, o)
	case *CSR[uint32]:
		return WriteCSR(path, s, o)
	case *CSR[uint64]:
		return WriteCSR(path, s, o)
	case *CSR[float32]:
		return WriteCSR(path, s, o)
	case *CSR[float64]:
		return WriteCSR(path, s, o)
	}
	return &FormatError{File: path, Offset: -1, Msg: fmt.Sprintf("%T is not a *CSR of a DAPHNE value type", m), Err: errors.ErrUnsupported}
}

type anyReader struct {
	f      *File
	csr    bool
	rows   bool
	r0, r1 uint64
}

func byType(vt ValueType, r anyReader) (any, error) {
	switch vt {
	case SI8:
		return readTyped[int8](r)
	case SI32:
		return readTyped[int32](r)
	case SI64:
		return readTyped[int64](r)
	case UI8:
		return readTyped[uint8](r)
	case UI32:
		return readTyped[uint32](r)
	case UI64:
		return readTyped[uint64](r)
	case F32:
		return readTyped[float32](r)
	case F64:
		return readTyped[float64](r)
	}
	return nil, r.f.errf(headerSize, mmapfile.ErrTypeMismatch, "no numeric value type")
}

func readTyped[T layout.Elem](r anyReader) (any, error) {
	switch {
	case r.rows:
		return ReadRowsDense[T](r.f, r.r0, r.r1)
	case r.csr:
		return ReadCSR[T](r.f)
	}
	v, _, err := DenseValues[T](r.f)
	return v, err
}
