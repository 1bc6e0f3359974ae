package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/mmapkit/mmapkit/benchmarks"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newBenchCmd) }

// newBenchCmd wires in the throughput suite of package benchmarks.
func newBenchCmd(e *env) *cobra.Command {
	var o benchmarks.Options
	var fo benchmarks.FileOptions
	var rf readFlags
	cmd := &cobra.Command{
		Use:   "bench [--quick] [--size BYTES] [--json] [--report DIR] [FILE...]",
		Short: "Run the throughput suite: mmapkit against the alternatives and the machine's ceilings",
		Long: `bench measures how fast mmapkit reads and writes array data, next to what a Go program would use
instead (NumPy, zarr-python where a Python with them is installed) and next to what the machine
can do at best (RAM scan, raw mapping scan on one core and on all, read(2), cold read, memmove,
gather, write(2) + fsync, cp + sync, pwrite + fdatasync), all in one run, and prints a table of
GB/s (or µs), ceilings, ratios, goals and whether each goal is met. --json prints one JSON document
instead; --report DIR also writes a Markdown report with a chart. --only runs the figures whose
names start with the given prefixes. Progress goes to stderr (silenced by --quiet); with FILE
arguments, on a terminal, as one line redrawn in place.

With FILE arguments (any format mmapkit reads), bench measures those files instead, never
writing to them: for each record (--name, repeatable; else the 3 largest), each way to read it
that applies — the view scan, the copying read, the parallel decode of a chunked record, the
view scan on every core, random elements, and the tool a user of the format would use (NumPy,
h5py, zarr-python) where installed — warm and cold (pages dropped first, checked with mincore),
each beside its ceiling on the same bytes (a raw mapping, read(2), one core's decode, pread).
--time bounds the whole run: each record gets an equal share of the time left when it starts
(a quarter of it kept for the peer), and no measurement of it (warm, cold, ceiling or peer)
starts once its part of that share is spent; those left are noted "not measured". A read that has started finishes (a cold read of a large record
can outlast its share), except the peer's, which is stopped when its record's share is spent.
It ends with one line per record naming the fastest way, warm and cold, with advice for reading
it from disk (cold) where the figures call for it.`,
		Example: `  mmapkit bench --quick
  mmapkit bench --only convert_,edit_
  mmapkit bench --size 256MiB --json > bench.json
  mmapkit bench --report ./bench-report
  mmapkit bench x.npy store.zarr
  mmapkit bench --name temperature --time 10s --report ./x-report data.npz`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !e.quiet {
				o.Progress = e.stderr
			} else {
				o.Progress = io.Discard
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			if len(args) > 0 {
				return benchFiles(ctx, cmd, &rf, fo, o, args, e)
			}
			for _, name := range []string{"name", "time"} {
				if cmd.Flags().Changed(name) {
					return usageErr("--%s is for benchmarking files: name them", name)
				}
			}
			if err := benchmarks.Run(ctx, o, e.stdout); err != nil {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Var((*byteSize)(&o.Size), "size", "size of the files scanned and written (default 1 GiB; with --quick 64 MiB or four times the last-level cache, whichever is larger)")
	f.Var((*byteSize)(&o.RandomSize), "random-size", "size of the file of the random-access figures (default: 4GiB, or --size when given)")
	f.Var((*byteSize)(&o.OutOfCore), "out-of-core", "measure the out-of-core figures on a file of this size (given alone: 1.5 times the memory), written in --dir; never with --quick")
	f.Lookup("out-of-core").NoOptDefVal = "auto"
	f.BoolVar(&o.Quick, "quick", false, "run every figure at small sizes, with fewer repetitions")
	f.BoolVar(&o.JSON, "json", false, "print one JSON document instead of the table")
	f.StringVar(&o.Report, "report", "", "also write report.md and a chart into this directory")
	f.StringVar(&o.Dir, "dir", "", "directory for the temporary files (default: the system's)")
	f.StringSliceVar(&o.Only, "only", nil, "run only the figures whose names start with these comma-separated prefixes")
	f.StringArrayVar(&fo.Names, "name", nil, "with FILE: a record to measure (repeatable; default the 3 largest of each file)")
	f.DurationVar(&fo.Time, "time", 30*time.Second, "with FILE: the time the whole run may take (no measurement starts after it)")
	rf.add(cmd)
	return cmd
}

// benchFiles is bench with FILE arguments: the records of the user's files.
func benchFiles(ctx context.Context, cmd *cobra.Command, rf *readFlags, fo benchmarks.FileOptions, o benchmarks.Options, paths []string, e *env) error {
	for _, name := range []string{"quick", "size", "random-size", "out-of-core", "dir", "only"} {
		if cmd.Flags().Changed(name) {
			return usageErr("--%s is for the synthetic suite, not for FILE arguments", name)
		}
	}
	opts, err := rf.options(paths[0])
	if err != nil {
		return err
	}
	fo.Open = *opts
	fo.JSON, fo.Report, fo.Progress = o.JSON, o.Report, o.Progress
	if o.Progress == io.Discard {
		fo.Progress = nil
	}
	// On a terminal, one line that says what is measured and how much of
	// the time is spent; elsewhere a line per step.
	if bar := newProgress(e, int64(fo.Time), "bench"); bar != nil {
		bar.line = benchLine
		fo.Progress = nil
		fo.OnProgress = func(p benchmarks.FileProgress) {
			if p.Done {
				bar.Done()
				return
			}
			bar.Step(int64(p.Elapsed), fmt.Sprintf("bench %d/%d %s", p.Record, p.Records, p.Step))
		}
	}
	if err := benchmarks.RunFiles(ctx, paths, fo, e.stdout); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

// benchLineWidth is how much of a step's description bench's progress
// line shows, so that the line fits a terminal's width.
const benchLineWidth = 56

// benchLine is bench FILE's progress line: the step, and the time spent
// (done, in nanoseconds, on the run's own clock) of the --time budget.
func benchLine(desc string, done, total int64, _ time.Duration) string {
	if r := []rune(desc); len(r) > benchLineWidth {
		desc = string(r[:benchLineWidth-1]) + "…"
	}
	return fmt.Sprintf("%-*s %s %s of %s", benchLineWidth, desc, progressBar(float64(done)/float64(total)),
		time.Duration(done).Round(time.Second), time.Duration(total).Round(time.Second))
}
