package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/mmapkit/mmapkit/benchmarks"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newBenchCmd) }

// newBenchCmd wires in the throughput suite of package benchmarks.
func newBenchCmd(e *env) *cobra.Command {
	var o benchmarks.Options
	cmd := &cobra.Command{
		Use:   "bench [--quick] [--size BYTES] [--json] [--report DIR]",
		Short: "Run the throughput suite: mmapkit against the alternatives and the machine's ceilings",
		Long: `bench measures how fast mmapkit reads and writes array data, next to what a Go program would use
instead (NumPy, zarr-python where a Python with them is installed) and next to what the machine
can do at best (RAM scan, raw mapping scan on one core and on all, read(2), cold read, memmove,
gather, write(2) + fsync, cp + sync, pwrite + fdatasync), all in one run, and prints a table of
GB/s (or µs), ceilings, ratios, goals and whether each goal is met. --json prints one JSON document
instead; --report DIR also writes a Markdown report with a chart. --only runs the figures whose
names start with the given prefixes. Progress goes to stderr (silenced by --quiet).`,
		Example: `  mmapkit bench --quick
  mmapkit bench --only convert_,edit_
  mmapkit bench --size 256MiB --json > bench.json
  mmapkit bench --report ./bench-report`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !e.quiet {
				o.Progress = e.stderr
			} else {
				o.Progress = io.Discard
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			if err := benchmarks.Run(ctx, o, e.stdout); err != nil {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Var((*byteSize)(&o.Size), "size", "size of the files scanned and written (default 1 GiB; with --quick 64 MiB or four times the last-level cache, whichever is larger)")
	f.Var((*byteSize)(&o.RandomSize), "random-size", "size of the file of the random-access figures (default: 4GiB, or --size when given)")
	f.Var((*byteSize)(&o.OutOfCore), "out-of-core", "size of the out-of-core figures' file (default: 1.5 times the memory, measured only with --dir; never with --quick)")
	f.BoolVar(&o.Quick, "quick", false, "run every figure at small sizes, with fewer repetitions")
	f.BoolVar(&o.JSON, "json", false, "print one JSON document instead of the table")
	f.StringVar(&o.Report, "report", "", "also write report.md and a chart into this directory")
	f.StringVar(&o.Dir, "dir", "", "directory for the temporary files (default: the system's)")
	f.StringSliceVar(&o.Only, "only", nil, "run only the figures whose names start with these comma-separated prefixes")
	return cmd
}
