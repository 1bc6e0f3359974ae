package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/atomicfile"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/mmapkit/mmapkit/refs"
	"github.com/spf13/cobra"
)

func init() { extraCommands = append(extraCommands, newRefsCmd) }

func newRefsCmd(e *env) *cobra.Command {
	var rf readFlags
	var names []string
	var rows int64
	var url, out string
	cmd := &cobra.Command{
		Use:   "refs FILE [-o OUT.json]",
		Short: "Describe a file's arrays as a reference set that fsspec, zarr, xarray and dask read in place",
		Long: `refs prints a reference set (kerchunk's version-1 JSON): a Zarr v2 group whose arrays are
FILE's records and whose chunks are [file, offset, length] ranges of FILE itself, so that
fsspec's ReferenceFileSystem, zarr, xarray and dask (on other machines too) read FILE in place,
unconverted. Only metadata is read. A contiguous array is cut along its slowest axis into chunks
of ROWS slices (--chunks; by default as many as fit in 64 MiB), ROWS the largest divisor of the
axis length within the bound. Records that cannot be described are named on stderr and left
out; one named with --name is an error. Targets are FILE's absolute path, or --url (a URL ending
in / gets FILE's base name appended).`,
		Example: `  mmapkit refs data.npy -o data.json
  mmapkit refs --name x,y --url https://example.org/data/ data.abf`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var list []string
			for _, n := range names {
				list = append(list, strings.Split(n, ",")...)
			}
			if rows < 0 {
				return usageErr("refs: --chunks %d is negative", rows)
			}
			return writeRefs(e, &rf, args[0], &refs.Options{Names: list, Rows: rows, URL: url}, out)
		},
	}
	rf.add(cmd)
	cmd.Flags().StringArrayVar(&names, "name", nil, "only this record (repeatable, or a comma list)")
	cmd.Flags().Int64Var(&rows, "chunks", 0, "slices of the slowest axis per chunk, at most (0: 64 MiB worth)")
	cmd.Flags().StringVar(&url, "url", "", "where readers will find FILE (a URL or a path)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file (atomically) instead of stdout")
	return cmd
}

// writeRefs builds the reference set of path and writes it to out, or
// stdout.
func writeRefs(e *env, rf *readFlags, path string, o *refs.Options, out string) error {
	f, err := openInput(rf, path, mmapfile.ReadOnly, mmapfile.AdviceRandom)
	if err != nil {
		return err
	}
	defer f.Close()
	o.Skipped = func(rec *format.Record, why error) {
		fmt.Fprintf(e.stderr, "mmapkit: %s: skipped record %q (%s%s): %v\n", path, rec.Name, rec.TypeString(), layout.ShapeString(rec.Shape), why)
	}
	set, err := refs.Build(f, path, o)
	if err != nil {
		return fileErr(path, err)
	}
	var buf bytes.Buffer
	if err := set.WriteJSON(&buf); err != nil {
		return fileErr(path, err)
	}
	if out == "" {
		_, err := e.stdout.Write(buf.Bytes())
		return err
	}
	return fileErr(out, atomicfile.Write(out, 0o666, func(w *os.File) error {
		_, err := w.Write(buf.Bytes())
		return err
	}))
}
