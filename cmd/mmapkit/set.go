package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/spf13/cobra"
)

func newSetCmd(e *env) *cobra.Command {
	var rf readFlags
	cmd := &cobra.Command{
		Use:   "set FILE NAME INDEX VALUE",
		Short: "Change one element of an array in place through a read-write mapping",
		Long: `set changes one element of the record NAME in place, through a read-write mapping of FILE;
every other byte of the file stays as it was. INDEX is 0-based in the record's logical row-major
indexing, written like [2,3] (or 2,3; [] for a scalar): for an ABF array [i,j] is Julia's
x[i+1,j+1]. VALUE is a number of the element type (an optional matching Futhark suffix such as
1.5f32 is accepted), true/false for bool and BitArray records, and for Julia Char arrays a code
point in decimal or a single character. Works for ABF arrays and BitArrays, binary values in
Futhark files (names 0, 1, …), DAPHNE dense matrices (name matrix, as ls shows) and
fixed-size SciDB attributes. The file is locked against other writers while it is open.`,
		Example: `  mmapkit set data.abf x '[2,3]' 1.5
  mmapkit set data.in 0 '[7]' 42i32
  mmapkit set matrix.dbdf matrix '[1,0]' -3.25`,
		Args: exactArgs(4, "FILE NAME INDEX VALUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, name, index, value := args[0], args[1], args[2], args[3]
			idx, err := parseIndex(index)
			if err != nil {
				return usageErr("set: %v", err)
			}
			return setElement(e, path, openOptionsFrom(&rf), name, idx, value)
		},
	}
	rf.add(cmd)
	// Flags come before FILE, so that a negative VALUE (-1) is not a flag.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// setElement changes one element of record name of path in place.
func setElement(e *env, path string, oo *openOptions, name string, idx []int64, value string) error {
	s, err := openSource(e, path, oo)
	if err != nil {
		return err
	}
	r, col, err := findSettable(s, name)
	if err != nil {
		s.Close()
		return fileErr(path, err)
	}
	if s.setter == nil {
		s.Close()
		return fileErr(path, fmt.Errorf("%w: set is not supported for %s files", errors.ErrUnsupported, s.format))
	}
	// The source's own mappings are read-only; release them before the
	// read-write open takes the file's lock.
	if err := s.Close(); err != nil {
		return fileErr(path, err)
	}
	return fileErr(path, s.setter(r, col, idx, value))
}

// findSettable finds the record (or table column, returned as its index)
// named name.
func findSettable(s *source, name string) (*record, int, error) {
	for _, r := range s.records {
		if r.kind == kindTable {
			for i, c := range r.table.columns {
				if c.name == name {
					return r, i, nil
				}
			}
			continue
		}
		if r.name == name {
			return r, -1, nil
		}
	}
	return nil, -1, fmt.Errorf("%w %q", errNoRecord, name)
}

// parseIndex parses "[2,3]", "2,3", "[]" or "7".
func parseIndex(s string) ([]int64, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "[") {
		if !strings.HasSuffix(t, "]") {
			return nil, fmt.Errorf("index %q: missing ]", s)
		}
		t = t[1 : len(t)-1]
	}
	if strings.TrimSpace(t) == "" {
		return []int64{}, nil
	}
	var idx []int64
	for _, p := range strings.Split(t, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("index %q: %q is not a non-negative integer", s, p)
		}
		idx = append(idx, v)
	}
	return idx, nil
}

// rowMajorIndex checks idx against shape and returns its row-major linear
// position.
func rowMajorIndex(shape, idx []int64) (int64, error) {
	if len(idx) != len(shape) {
		return 0, fmt.Errorf("index has %d components, the record has rank %d (shape %s)", len(idx), len(shape), layout.ShapeString(shape))
	}
	return layout.Index(shape, layout.RowMajor, idx...)
}

// encodeValue parses a VALUE for element type t and returns its bytes in
// byte order order (bool as 0/1).
func encodeValue(t layout.Type, s string, order binary.ByteOrder) ([]byte, error) {
	v := strings.TrimSpace(s)
	bad := func(err error) ([]byte, error) {
		return nil, fmt.Errorf("value %q is not a valid %s: %v", s, t, err)
	}
	if t != layout.JuliaChar && t != layout.Bool {
		v = strings.TrimSuffix(v, t.String())
	}
	b := make([]byte, t.Size())
	switch {
	case t == layout.Bool:
		x, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return bad(errors.New("want true or false"))
		}
		if x {
			b[0] = 1
		}
	case t == layout.I128 || t == layout.U128:
		x, ok := new(big.Int).SetString(v, 0)
		if !ok {
			return bad(errors.New("not an integer"))
		}
		var lo, hi uint64
		if t == layout.I128 {
			y, err := layout.Int128FromBig(x)
			if err != nil {
				return bad(err)
			}
			lo, hi = y.Lo, uint64(y.Hi)
		} else {
			y, err := layout.Uint128FromBig(x)
			if err != nil {
				return bad(err)
			}
			lo, hi = y.Lo, y.Hi
		}
		if order == binary.BigEndian {
			order.PutUint64(b, hi)
			order.PutUint64(b[8:], lo)
		} else {
			order.PutUint64(b, lo)
			order.PutUint64(b[8:], hi)
		}
	case t == layout.JuliaChar:
		var r rune
		if n, err := strconv.ParseUint(v, 10, 32); err == nil {
			r = rune(n)
		} else if utf8.RuneCountInString(v) == 1 {
			r, _ = utf8.DecodeRuneInString(v)
		} else {
			return bad(errors.New("want a code point in decimal or one character"))
		}
		c, err := layout.CharFrom(r)
		if err != nil {
			return bad(err)
		}
		order.PutUint32(b, uint32(c))
	case t.IsSigned():
		x, err := strconv.ParseInt(v, 0, t.Size()*8)
		if err != nil {
			return bad(err)
		}
		putUint(order, b, uint64(x))
	case t.IsUnsigned():
		x, err := strconv.ParseUint(v, 0, t.Size()*8)
		if err != nil {
			return bad(err)
		}
		putUint(order, b, x)
	case t == layout.F16:
		x, err := parseFloat(v, t, 64)
		if err != nil {
			return bad(err)
		}
		order.PutUint16(b, uint16(layout.Float16FromFloat64(x)))
	case t == layout.F32:
		x, err := parseFloat(v, t, 32)
		if err != nil {
			return bad(err)
		}
		order.PutUint32(b, math.Float32bits(float32(x)))
	case t == layout.F64:
		x, err := parseFloat(v, t, 64)
		if err != nil {
			return bad(err)
		}
		order.PutUint64(b, math.Float64bits(x))
	default:
		return nil, fmt.Errorf("cannot set elements of type %s", t)
	}
	return b, nil
}

// parseFloat parses a float, also in Futhark's spellings of the specials
// (f32.nan, -f64.inf).
func parseFloat(v string, t layout.Type, bits int) (float64, error) {
	switch v {
	case t.String() + ".nan":
		return math.NaN(), nil
	case t.String() + ".inf":
		return math.Inf(1), nil
	case "-" + t.String() + ".inf":
		return math.Inf(-1), nil
	}
	x, err := strconv.ParseFloat(v, bits)
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return x, nil // ±Inf or 0, as the type rounds it
	}
	return x, err
}

func putUint(order binary.ByteOrder, b []byte, x uint64) {
	switch len(b) {
	case 1:
		b[0] = byte(x)
	case 2:
		order.PutUint16(b, uint16(x))
	case 4:
		order.PutUint32(b, uint32(x))
	default:
		order.PutUint64(b, x)
	}
}
