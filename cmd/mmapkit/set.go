package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/spf13/cobra"
)

func newSetCmd(e *env) *cobra.Command {
	var rf readFlags
	cmd := &cobra.Command{
		Use:   "set FILE NAME INDEX VALUE",
		Short: "Change one element of an array in place",
		Long: `set changes one element of the record NAME in place; every other byte of the file stays as
it was (but an .npz member's CRC-32s, which are rewritten). A damaged file is refused and left
byte for byte as it was, as is the file of any set that fails; 'mmapkit repair' repairs one. INDEX is 0-based in the record's logical row-major indexing, written like [2,3] (or 2,3;
[] for a scalar): for an ABF array [i,j] is Julia's x[i+1,j+1]. VALUE is a Futhark literal of the
element type: a decimal or 0x hexadecimal number (010 is ten), with an optional matching suffix
such as 1.5f32, inf, -inf or nan for floats, true/false for bools; a value the type cannot hold
(an integer out of range, a float that overflows or a nonzero one that rounds to zero) is an
error. Formats with types of their own (SciDB attributes) take their own text. The file is
locked against other writers while it is open, and synced before set returns.`,
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
			return setElement(&rf, path, name, idx, value)
		},
	}
	rf.add(cmd)
	// Flags come before FILE, so that a negative VALUE (-1) is not a flag.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// setElement changes one element of record name of path in place and
// syncs it.
func setElement(rf *readFlags, path, name string, idx []int64, value string) error {
	f, err := openInput(rf, path, mmapfile.ReadWrite, mmapfile.AdviceRandom)
	if err != nil {
		return err
	}
	err = setIn(f, name, idx, value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return fileErr(path, err)
}

func setIn(f format.File, name string, idx []int64, value string) error {
	i, err := format.Find(f, name)
	if err != nil {
		return err
	}
	rec := format.RecordAt(f, i)
	if err := layout.CheckIndex(rec.Name, rec.Shape, idx); err != nil {
		return err
	}
	s, ok := f.(format.Setter)
	if !ok {
		return fmt.Errorf("%w: %s files cannot be changed in place", errors.ErrUnsupported, f.Format())
	}
	if err := s.SetText(i, idx, value); err != nil {
		return err
	}
	return s.Sync()
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
