package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func newConvertCmd(e *env) *cobra.Command {
	var rf readFlags
	var from, to, name, names string
	var force, verbose bool
	var wf paramFlags
	cmd := &cobra.Command{
		Use:   "convert [flags] IN OUT",
		Short: "Convert between formats, preserving logical shape and values",
		Long: `convert reads every record of IN and writes them to OUT in the format of OUT's extension or
--to. Logical shapes and values are preserved, and so is the storage order where the target can
hold it (an ABF column-major array becomes a Fortran-order .npy); where it cannot, arrays are
transposed, so that Julia's x[i,j] is x[i-1][j-1] everywhere else.

Names: records keep their names (--names a,b,c renames them in order; --name NAME converts that
record only). Bool arrays become ABF Array{Bool} unless --abf-bits; BitArrays stay BitArrays. A
sparse matrix stays sparse where the target has sparse matrices, else it becomes dense. Tables
(frames, SciDB files, structured arrays, CSV) become one 1-D array per column in array formats (a
nullable column adds "<name>.reason", i8, -1 where present and SciDB's missing reason where null;
in .npy and .npz it is "<name>.mask" instead, bool, true where null, as numpy.ma's masks are), and
equal-length 1-D arrays become a table in table formats. A value the target cannot represent (an i128 into Futhark, a null into a
non-null column, a complex array into DAPHNE) is an error naming the record.

The output is written beside OUT under a temporary name and renamed into place once complete and
synced: a failed conversion leaves OUT as it was, and a replaced file keeps its permission bits.
OUT may be a symbolic link: the file it points to is replaced and the link keeps working.
Devices, FIFOs and directories are refused as OUT; "-" writes formats that can be streamed
(Futhark values, CSV; --to is needed) to standard output. Inputs must be regular files (or
stores): pipes and /proc files are refused, copy them to a file first.

The formats and their options:
` + formatList(),
		Example: `  mmapkit convert data.abf data.fut
  mmapkit convert --text --names x,y data.fut data.abf
  mmapkit convert --abf-version A matrix.dbdf matrix.abf
  mmapkit convert --scidb-format '(int64, double null)' cells.scidb cells.csv
  mmapkit convert --aligned=64 data.abf data.in`,
		Args: exactArgs(2, "IN OUT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, out := args[0], args[1]
			if from != "" {
				if rf.format != "" && rf.format != from {
					return usageErr("convert: --from %s and --format %s disagree", from, rf.format)
				}
				rf.format = from
			}
			var target format.Format
			if to != "" {
				var ok bool
				if target, ok = format.Lookup(to); !ok {
					return usageErr("convert: unknown output format %q (want one of %s)", to, strings.Join(format.Names(), ", "))
				}
			} else if out == "-" {
				return usageErr("convert: writing to standard output (-) needs --to")
			} else {
				var ok bool
				if target, ok = format.ForName(out); !ok {
					return usageErr("convert: cannot tell the output format from %q; use --to", out)
				}
			}
			if out == "-" && target.Encode == nil {
				return usageErr("convert: %s files cannot be streamed to standard output", target.Name)
			}
			if target.Write == nil {
				return usageErr("convert: %s files cannot be written", target.Name)
			}
			params := wf.given()
			for p := range params {
				by := wf.flags[p].by
				if !contains(by, target.Name) {
					if _, reading := rf.params.flags[p]; reading {
						delete(params, p) // an option of the input only
						continue
					}
					return usageErr("convert: --%s applies to %s output, not %s", p, strings.Join(by, " or "), target.Name)
				}
			}
			outOpts := &format.Options{Format: target.Name, Params: params}
			if err := target.CheckParams(outOpts, true); err != nil {
				return usageErr("convert: %v", err)
			}
			inOpts, err := rf.options(in)
			if err != nil {
				return err
			}
			var sel, rename []string
			if cmd.Flags().Changed("name") {
				sel = []string{name}
			}
			if names != "" {
				rename = splitNames(names)
			}
			w := e.stdout
			if out == "-" && !force && isTerminal(e.stdout) {
				w = &binaryGuard{w: e.stdout, format: target.Name}
			}
			var chose map[string]string
			if out != "-" && !e.quiet && (verbose || isTerminal(e.stderr)) {
				chose = map[string]string{}
				outOpts.Chose = func(what, value string) { chose[what] = value }
			}
			if err := convertFile(e, w, in, out, inOpts, outOpts, sel, rename); err != nil {
				return err
			}
			if chose != nil {
				fmt.Fprintln(e.stderr, wroteLine(out, target.Name, chose)+droppedFacts(in, inOpts, sel, out, &format.Options{Format: target.Name, Params: readBackParams(chose)}))
			}
			return nil
		},
	}
	rf.add(cmd)
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "input format (same as --format)")
	f.StringVar(&to, "to", "", "output format: "+strings.Join(format.Names(), ", ")+" (default: from OUT's extension)")
	f.StringVar(&name, "name", "", "convert only the record with this name")
	f.StringVar(&names, "names", "", "comma-separated names of the output records, in order")
	f.BoolVar(&force, "force", false, "write binary output to standard output even when it is a terminal")
	f.BoolVarP(&verbose, "verbose", "v", false, "say what was written (the default on a terminal; --quiet silences it)")
	wf = addParams(cmd, true)
	return cmd
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// convertFile converts in to out: the records sel (all when nil), renamed
// to rename (when not nil).
// Output to "-" goes to stdout.
func convertFile(e *env, stdout io.Writer, in, out string, inOpts, outOpts *format.Options, sel, rename []string) error {
	f, err := format.Open(in, inOpts)
	if err != nil {
		return fileErr(in, err)
	}
	defer f.Close()
	var src format.Source = f
	if sk, ok := f.(format.Skipper); ok && sel == nil {
		for _, what := range sk.Skipped() {
			fmt.Fprintf(e.stderr, "mmapkit: %s: %s\n", in, what)
		}
	}
	if sel != nil {
		if src, err = format.Select(f, sel...); err != nil {
			return fileErr(in, err)
		}
	}
	if rename != nil {
		if src, err = format.Rename(src, rename); err != nil {
			return usageErr("convert: --names: %v", err)
		}
	}
	if out == "-" {
		fm, _ := format.Lookup(outOpts.Format)
		if err := fm.Encode(stdout, src, outOpts); err != nil {
			return convertErr(in, out, err)
		}
		return fileErr(in, f.Close())
	}
	stop := watchOutput(e, src, out, outOpts)
	err = format.Write(out, src, outOpts)
	stop()
	if err != nil {
		return convertErr(in, out, err)
	}
	return fileErr(in, f.Close())
}

// watchOutput shows the progress of a conversion to out on a terminal, by
// the bytes of the temporary files (or store) being written beside it, as
// atomicfile names them, against the records' bytes when the target keeps
// them as they are (its size is unknown when it compresses). It returns
// the function that ends the watch.
func watchOutput(e *env, src format.Source, out string, o *format.Options) func() {
	total := int64(0)
	format.EachRecord(src, func(_ int, r *format.Record) error {
		switch {
		case r.Size >= 0:
			total += r.Size
		case r.Type.Valid():
			if n, err := layout.Count(r.Shape); err == nil {
				total += n * int64(r.Type.Size())
			}
		}
		return nil
	})
	if c := o.Param("compress"); c != "" && c != "none" {
		total = -1
	}
	bar := newProgress(e, max(total, -1), "convert "+out)
	if bar == nil {
		return func() {}
	}
	if target, err := filepath.EvalSymlinks(out); err == nil {
		out = target // the temporary files are beside the file a link points to
	}
	dir, prefix := filepath.Dir(out), "."+filepath.Base(out)+"."
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		bar.Set(tempBytes(dir, prefix))
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				bar.Set(tempBytes(dir, prefix))
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		bar.Done()
	}
}

// tempBytes adds up the bytes of the temporary files and directories in
// dir whose names start with prefix.
func tempBytes(dir, prefix string) int64 {
	des, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), prefix) || !atomicfile.IsTemp(de.Name()) {
			continue
		}
		filepath.WalkDir(filepath.Join(dir, de.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}

// convertErr names the file an error of a conversion is about: the input
// when the error says it is about the input (a read failed), else the
// output.
func convertErr(in, out string, err error) error {
	if aboutFile(err, in) {
		return fileErr(in, err)
	}
	return fileErr(out, err)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// errBinaryToTerminal: binary output was about to be written to a
// terminal, where it garbles the screen and helps no one.
var errBinaryToTerminal = errors.New("binary output to a terminal")

// binaryGuard passes text on to a terminal but refuses output whose first
// bytes are binary (a NUL, or bytes that are not UTF-8), before anything
// is written.
type binaryGuard struct {
	w      io.Writer
	format string
	seen   bool
}

func (g *binaryGuard) Write(p []byte) (int, error) {
	if !g.seen && len(p) > 0 {
		g.seen = true
		head := p[:min(len(p), 4096)]
		for i := 0; i < utf8.UTFMax-1 && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1] // a character cut at the end of the sample
		}
		if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head) {
			hint := "redirect it to a file or a pipe"
			if g.format == "futhark" {
				hint += ", or write text with --text"
			}
			return 0, fmt.Errorf("%w: refusing to write binary %s data to a terminal; %s (--force writes it anyway)", errBinaryToTerminal, g.format, hint)
		}
	}
	return g.w.Write(p)
}

// wroteLine says in one line what a conversion wrote, from the file read
// back: its format and version, its records (the first three, with their
// storage), and what the writer chose that reading it back needs.
func wroteLine(out, name string, chose map[string]string) string {
	params := readBackParams(chose)
	var hints []string
	for what, value := range params {
		hints = append(hints, fmt.Sprintf("--%s '%s'", what, value))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mmapkit: wrote %s: %s", out, name)
	f, err := format.Open(out, &format.Options{Format: name, Params: params})
	if err != nil {
		fmt.Fprintf(&b, " (reading it back: %v)", err)
		return b.String()
	}
	defer f.Close()
	if v := f.Version(); v != "" {
		fmt.Fprintf(&b, " version %s", v)
	}
	n := format.NumRecords(f)
	fmt.Fprintf(&b, ", %d record", n)
	if n != 1 {
		b.WriteString("s")
	}
	var recs []string
	for i := range min(n, 3) {
		r := format.RecordAt(f, i)
		desc := r.Name + " " + r.TypeString() + layout.ShapeString(r.Shape)
		if st, ok := r.Extra["storage"].(string); ok && st != "" {
			desc += " " + st
		}
		recs = append(recs, desc)
	}
	if n > 3 {
		recs = append(recs, "…")
	}
	if len(recs) > 0 {
		b.WriteString(" (" + strings.Join(recs, "; ") + ")")
	}
	sort.Strings(hints)
	if len(hints) > 0 {
		fmt.Fprintf(&b, "; read it back with %s", strings.Join(hints, " "))
	}
	return b.String()
}

// readBackParams are the options of reading that read back what a writer
// chose: each choice's name without "out-" (out-scidb-format is read by
// scidb-format).
func readBackParams(chose map[string]string) map[string]string {
	params := map[string]string{}
	for what, value := range chose {
		params[strings.TrimPrefix(what, "out-")] = value
	}
	return params
}

// droppedFacts says what of the records' attributes and dimension names
// the conversion of in to out could not keep, by reading both back:
// "; dropped attributes: units; dropped dimension names", or "" when
// everything was kept (or either file cannot be read again).
func droppedFacts(in string, inOpts *format.Options, sel []string, out string, outOpts *format.Options) string {
	src, err := format.Open(in, inOpts)
	if err != nil {
		return ""
	}
	defer src.Close()
	var from format.Source = src
	if sel != nil {
		if from, err = format.Select(src, sel...); err != nil {
			return ""
		}
	}
	had, hadDims := factsOf(from)
	if len(had) == 0 && !hadDims {
		return ""
	}
	dst, err := format.Open(out, outOpts)
	if err != nil {
		return ""
	}
	defer dst.Close()
	kept, keptDims := factsOf(dst)
	var dropped []string
	for k := range had {
		if !kept[k] {
			dropped = append(dropped, k)
		}
	}
	sort.Strings(dropped)
	var b strings.Builder
	if len(dropped) > 0 {
		b.WriteString("; dropped attributes: " + strings.Join(dropped, ", "))
	}
	if hadDims && !keptDims {
		b.WriteString("; dropped dimension names")
	}
	return b.String()
}

// factsOf is the union of the attribute names of src's records (Zarr v2's
// _ARRAY_DIMENSIONS counted as dimension names), and whether any record
// names a dimension.
func factsOf(src format.Source) (attrs map[string]bool, dims bool) {
	attrs = map[string]bool{}
	_ = format.EachRecord(src, func(_ int, r *format.Record) error {
		if r.Facts == nil {
			return nil
		}
		for k := range r.Facts.Attributes {
			if k != "_ARRAY_DIMENSIONS" {
				attrs[k] = true
			}
		}
		for _, d := range r.Facts.DimensionNames {
			dims = dims || d != ""
		}
		return nil
	})
	return attrs, dims
}
