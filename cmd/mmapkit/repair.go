package main

import (
	"errors"
	"fmt"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/spf13/cobra"
)

func newRepairCmd(e *env) *cobra.Command {
	var rf readFlags
	cmd := &cobra.Command{
		Use:   "repair FILE",
		Short: "Repair a damaged file and print what was cut or rewritten",
		Long: `repair opens FILE for writing and repairs what no other command changes: a record that does
not parse and everything after it is cut (what a process killed while appending leaves, but also
what a corrupted length looks like: the bytes cut are lost), Format A ABF's bytes after its counted
records are cut and the count rewritten, and an .npz member whose in-place edit was interrupted
gets the CRC-32 of its data. It prints each thing it did, or that there was nothing to repair.
Every other command that writes (set) refuses a damaged file and leaves it as it was; ls and cat
report the damage. Bytes after a .npy's data are not damage (NumPy reads such a file) and are
kept. The format must be certain: the file's name must say the format its bytes have (or give
--format), and a file of which not one record parses is not cut. Copy the file first if what
would be cut may matter: mmapkit cannot tell a torn append from damage in the middle of a file.`,
		Example: `  mmapkit repair data.abf
  mmapkit repair values.in
  mmapkit repair arrays.npz`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return repairFile(e, &rf, args[0])
		},
	}
	rf.add(cmd)
	return cmd
}

// repairFile opens path read-write with the repair asked for, and prints
// what the open repaired.
func repairFile(e *env, rf *readFlags, path string) error {
	o, err := rf.options(path)
	if err != nil {
		return err
	}
	if o.Format == "" {
		// A repair cuts what does not parse: the format must be certain,
		// not a guess from the first bytes of a file of another kind.
		got, err := format.Detect(path, o)
		if err != nil {
			return fileErr(path, err)
		}
		if named, ok := format.ForName(path); !ok || named.Name != got.Name {
			return fileUsageErr(path, fmt.Errorf("repair cuts what does not parse, so the format must be certain: the file's bytes look like %s, which its name does not say; give --format %s if it is", got.Name, got.Name))
		}
	}
	o.Repair = true
	f, err := format.OpenFile(path, mmapfile.ReadWrite, o)
	if err != nil {
		return fileErr(path, err)
	}
	var damage error
	if d, ok := f.(format.Damaged); ok {
		damage = d.Damage()
	}
	if err := f.Close(); err != nil {
		return fileErr(path, err)
	}
	done := leaves(damage)
	if len(done) == 0 {
		fmt.Fprintf(e.stdout, "%s: nothing to repair\n", path)
		return nil
	}
	for _, d := range done {
		fmt.Fprintln(e.stdout, (&exitError{file: path, err: d}).message())
	}
	return nil
}

// leaves lists the errors that err joins, or err itself.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

// repairHint adds to an error that a writing open refused for damage how
// to repair the file.
func repairHint(path string, err error) error {
	if !errors.Is(err, mmapfile.ErrNeedsRepair) {
		return err
	}
	return fmt.Errorf("%w\n(the file is unchanged; 'mmapkit repair %s' repairs it, cutting what the message says)", err, path)
}
