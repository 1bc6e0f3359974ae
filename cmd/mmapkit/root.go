package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// env is what every command shares: the standard streams and global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	quiet          bool
}

// readFlags are the flags of every command that reads a file.
type readFlags struct {
	format      string // --format: abf|futhark|daphne|scidb|csv
	scidbFormat string // --scidb-format '(...)'
	scidbNames  string // --scidb-names a,b,c
}

func (rf *readFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&rf.format, "format", "", "input format: abf, futhark, daphne, scidb or csv (default: detected)")
	f.StringVar(&rf.scidbFormat, "scidb-format", "", "SciDB format string, e.g. '(int64, double null)'; implies --format scidb")
	f.StringVar(&rf.scidbNames, "scidb-names", "", "comma-separated names of the SciDB attributes (default a0, a1, …)")
}

// cobra is used because pflag parses GNU-style long flags anywhere on the
// line (`mmapkit cat FILE --name x`), gives every command its own --help with
// an example, and leaves exit codes to us; the standard flag package stops at
// the first positional argument.
func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "mmapkit",
		Short: "List, print, convert and edit memory-mapped array files (ABF, Futhark, DAPHNE, SciDB)",
		Long: `mmapkit opens array files of AlignedBinaryFormat.jl (.abf), Futhark (.fut .in .out .data),
DAPHNE (.dbdf with its .meta) and SciDB binary files (.scidb, with --scidb-format) by mapping
them into memory instead of reading them, and lists, prints, converts and edits them in place.

Errors are printed as "mmapkit: FILE: message" and exit with status 1; usage errors exit 2.`,
		Example: `  mmapkit demo
  mmapkit ls --json data.abf
  mmapkit cat --name x data.abf
  mmapkit convert data.abf data.fut
  mmapkit set data.abf x '[2,3]' 1.5`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErr("unknown command %q; run 'mmapkit --help'", args[0])
			}
			return usageErr("missing command; run 'mmapkit --help'")
		},
	}
	root.PersistentFlags().BoolVarP(&e.quiet, "quiet", "q", false, "no progress bars on stderr")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &exitError{code: 2, err: fmt.Errorf("%s%w\nRun '%s --help' for usage.", subName(cmd), err, cmd.CommandPath())}
	})
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		newLsCmd(e),
		newCatCmd(e),
		newConvertCmd(e),
		newSetCmd(e),
		newDemoCmd(e),
	)
	for _, c := range extraCommands {
		root.AddCommand(c(e))
	}
	return root
}

// extraCommands are commands registered by files that wire in other
// packages (dataset, bench).
var extraCommands []func(*env) *cobra.Command

// exactArgs is cobra.ExactArgs with a usage error naming the arguments.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%swant %s, got %d argument(s)\nRun '%s --help' for usage.", subName(cmd), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}

// subName is "ls: " for a subcommand, "" for the root.
func subName(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return ""
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") + ": "
}

// splitNames splits a comma-separated list, keeping empty names.
func splitNames(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
