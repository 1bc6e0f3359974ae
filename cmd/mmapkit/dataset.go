package main

import (
	"io"

	futharkdataset "github.com/mmapkit/mmapkit/futhark/dataset"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newDatasetCmd) }

// newDatasetCmd wires in package futhark/dataset, which parses its own
// options with futhark dataset's GetOpt rules (position-sensitive -b/--text,
// bundles, unambiguous prefixes), so cobra passes every argument through.
func newDatasetCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "dataset [options...]",
		Short: "futhark dataset: generate random Futhark values or convert between binary and text",
		Long: `dataset mirrors "futhark dataset": with -g it generates random values of Futhark types (or
literal values), else it converts the values on standard input to text (default), binary (-b) or
their types (-t), byte-identical to futhark-data. Run "mmapkit dataset --help" for its options.`,
		Example: `  mmapkit dataset -g '[4][2]i32'
  mmapkit dataset -b -g '[1000]f32' > data.in
  mmapkit dataset --text < data.in
  mmapkit dataset -b --aligned < data.txt > aligned.in`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// What it writes, counted: the total is not known ahead.
			var out io.Writer = e.stdout
			if bar := newCountProgress(e, -1, "dataset", ""); bar != nil {
				defer bar.Done()
				out = &countingWriter{w: e.stdout, bar: bar}
			}
			if code := futharkdataset.Main(args, e.stdin, out, e.stderr); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
}
