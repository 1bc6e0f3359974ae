package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
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

// encodeValue parses a VALUE, a Futhark literal of element type t
// (layout.ParseText), and returns its bytes in byte order order (bool as
// 0/1).
func encodeValue(t layout.Type, s string, order binary.ByteOrder) ([]byte, error) {
	b, err := layout.ParseText(t, s)
	if err != nil {
		return nil, err
	}
	mmapfile.SwapOrder(b, t, hostOrder, order)
	return b, nil
}
