package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mmapkit/mmapkit/format"
	"github.com/spf13/cobra"
)

// env is what every command shares: the standard streams and global flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	quiet          bool

	ttyOnce sync.Once // stderr is asked once whether it is a terminal
	tty     bool
}

// readFlags are the flags of every command that reads a file: --format
// and the reading options that the registered formats declare
// (--scidb-format, --scidb-names, …).
type readFlags struct {
	format string
	params paramFlags
}

func (rf *readFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&rf.format, "format", "", "input format: "+strings.Join(format.Names(), ", ")+" (default: detected)")
	rf.params = addParams(cmd, false)
}

// paramFlag is the flag of one option a format declares.
type paramFlag struct {
	param format.Param
	by    []string // the formats that declare it
}

// paramFlags are a command's format-option flags, by name.
type paramFlags struct {
	cmd   *cobra.Command
	flags map[string]*paramFlag
}

// addParams adds a flag for each reading (write false) or writing option
// that a registered format declares. An option that is both (DAPHNE's
// layout) is one flag that reaches the reader and the writer.
func addParams(cmd *cobra.Command, write bool) paramFlags {
	pf := paramFlags{cmd: cmd, flags: map[string]*paramFlag{}}
	for _, fm := range format.Formats() {
		for _, p := range fm.Params {
			if p.Write != write {
				continue
			}
			if f, ok := pf.flags[p.Name]; ok {
				f.by = append(f.by, fm.Name)
				continue
			}
			pf.flags[p.Name] = &paramFlag{param: p, by: []string{fm.Name}}
			if cmd.Flags().Lookup(p.Name) != nil {
				continue
			}
			usage := p.Usage + " (" + fm.Name + ")"
			if p.Switch {
				cmd.Flags().Bool(p.Name, false, usage)
				continue
			}
			cmd.Flags().String(p.Name, "", usage)
			if p.NoValue != "" {
				cmd.Flags().Lookup(p.Name).NoOptDefVal = p.NoValue
			}
		}
	}
	return pf
}

// given returns the options whose flags were given, by name.
func (pf paramFlags) given() map[string]string {
	out := map[string]string{}
	if pf.cmd == nil {
		return out
	}
	for name := range pf.flags {
		if f := pf.cmd.Flags().Lookup(name); f != nil && f.Changed {
			out[name] = f.Value.String()
		}
	}
	return out
}

// options turns the reading flags into the registry's options: --format,
// or the format an implying option names (--scidb-format says SciDB).
// Disagreeing flags, an unknown format and a missing option that a
// format requires are usage errors.
func (rf *readFlags) options(path string) (*format.Options, error) {
	o := &format.Options{Format: rf.format, Params: rf.params.given()}
	if o.Format != "" {
		if _, ok := format.Lookup(o.Format); !ok {
			return nil, usageErr("unknown format %q (want one of %s)", o.Format, strings.Join(format.Names(), ", "))
		}
	}
	for name := range o.Params {
		f := rf.params.flags[name]
		if f.param.Implies && o.Format != "" && o.Format != f.by[0] {
			return nil, usageErr("--%s says the input is %s, but --format says %s", name, f.by[0], o.Format)
		}
	}
	for _, fm := range format.Formats() {
		if o.Format == "" || o.Format == fm.Name {
			if err := fm.CheckParams(o, false); err != nil {
				return nil, fileUsageErr(path, err)
			}
		}
	}
	want := o.Format
	if want == "" {
		// The name only: opening the file is for the command's open
		// (formats that need parameters have no magic bytes to sniff).
		if f, ok := format.ForName(path); ok {
			want = f.Name
		}
	}
	if fm, ok := format.Lookup(want); ok {
		for _, p := range fm.Params {
			if p.Required && !p.Write && o.Params[p.Name] == "" {
				return nil, fileUsageErr(path, fmt.Errorf("%s files need --%s (%s)", fm.Name, p.Name, p.Usage))
			}
		}
	}
	return o, nil
}

// formatList describes the registered formats for --help.
func formatList() string {
	var b strings.Builder
	for _, f := range format.Formats() {
		fmt.Fprintf(&b, "  %-8s %s (%s)\n", f.Name, f.Description, strings.Join(f.Extensions, " "))
	}
	return b.String()
}

// cobra is used because pflag parses GNU-style long flags anywhere on the
// line (`mmapkit cat FILE --name x`), gives every command its own --help with
// an example, and leaves exit codes to us; the standard flag package stops at
// the first positional argument.
func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "mmapkit",
		Short: "List, print, convert and edit memory-mapped array files",
		Long: `mmapkit opens array files by mapping them into memory instead of reading them, and lists,
prints, converts and edits them in place. The formats it knows:

` + formatList() + `

Errors are printed as "mmapkit: FILE: message" and exit with status 1; usage errors exit 2.`,
		Example: `  mmapkit demo
  mmapkit ls --json data.abf
  mmapkit cat --name x data.abf
  mmapkit convert data.abf data.fut
  mmapkit set data.abf x '[2,3]' 1.5`,
		Version:       version(),
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
	root.SetVersionTemplate("mmapkit {{.Version}}\n")
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
		newRepairCmd(e),
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

// minArgs is cobra.MinimumNArgs with a usage error naming the arguments.
func minArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
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
