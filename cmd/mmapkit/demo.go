package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mmapkit/mmapkit/benchmarks"
	"github.com/mmapkit/mmapkit/mmapfile"
	"github.com/spf13/cobra"
)

// demoSteps are the steps after the plain-mapping part; format adapters
// append theirs (ABF write/read, conversions).
var demoSteps []func(d *demo) error

// demo holds the state the demo's steps share.
type demo struct {
	e     *env
	w     io.Writer
	dir   string
	bytes int64
	step  int
}

func (d *demo) say(format string, a ...any) {
	d.step++
	fmt.Fprintf(d.w, "%2d. %s\n", d.step, fmt.Sprintf(format, a...))
}

func (d *demo) detail(format string, a ...any) {
	fmt.Fprintf(d.w, "    %s\n", fmt.Sprintf(format, a...))
}

func newDemoCmd(e *env) *cobra.Command {
	var size int64
	var dir string
	var keep bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the main job on embedded defaults: create, map, scan, edit in place",
		Long: `demo creates a file in a temporary directory, maps it read-write and fills 256 MiB of f64
through a typed view, syncs it, reopens it read-only and scans it (printing GB/s), changes one
element in place, reopens it and shows the change. It then does the same through the formats:
it writes an ABF file, maps and scans its array, edits it in place, converts it to Futhark
(aligned binary), DAPHNE, NumPy (.npy) and Zarr (v3) and back, timing each against cp + sync,
and checks that every round trip is byte-identical. Everything is removed at the end unless
--keep is given.`,
		Example: `  mmapkit demo
  mmapkit demo --size 64MiB --keep`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if size < 8*1024 || size%8 != 0 {
				return usageErr("demo: --size must be a multiple of 8 bytes, at least 8 KiB")
			}
			if dir == "" {
				dir = os.TempDir()
			}
			tmp, err := os.MkdirTemp(dir, "mmapkit-demo-")
			if err != nil {
				return fileErr(dir, err)
			}
			if !keep {
				defer os.RemoveAll(tmp)
			}
			d := &demo{e: e, w: e.stdout, dir: tmp, bytes: size}
			start := time.Now()
			if err := runDemo(d); err != nil {
				return &exitError{code: 1, err: fmt.Errorf("demo: %w", err)}
			}
			for _, s := range demoSteps {
				if err := s(d); err != nil {
					return &exitError{code: 1, err: fmt.Errorf("demo: %w", err)}
				}
			}
			fmt.Fprintf(d.w, "done in %.2f s", time.Since(start).Seconds())
			if keep {
				fmt.Fprintf(d.w, "; files kept in %s", tmp)
			}
			fmt.Fprintln(d.w)
			return nil
		},
	}
	size = 256 << 20 // before the flag takes it as its default
	cmd.Flags().Var((*byteSize)(&size), "size", "bytes of f64 data (e.g. 256MiB, 1GiB)")
	cmd.Flags().StringVar(&dir, "dir", "", "directory for the temporary files (default: the system's)")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the files")
	return cmd
}

// runDemo is issue 2's story on a plain file: map, fill, sync, reopen,
// scan, edit in place, reopen and show.
func runDemo(d *demo) error {
	path := filepath.Join(d.dir, "demo.f64")
	n := int(d.bytes / 8)

	// 1. Create, grow, map read-write, fill through a typed view.
	t0 := time.Now()
	f, err := mmapfile.Create(path)
	if err != nil {
		return err
	}
	if err := f.Grow(d.bytes); err != nil {
		f.Close()
		return err
	}
	r, err := f.MapAll()
	if err != nil {
		f.Close()
		return err
	}
	// Pages made ready for writing in one call, not one fault at a time.
	if err := r.PopulateWrite(); err != nil {
		f.Close()
		return err
	}
	xs, err := mmapfile.View[float64](r, 0, n, binary.LittleEndian)
	if err != nil {
		f.Close()
		return err
	}
	bar := newProgress(d.e, d.bytes, "fill")
	const step = 1 << 20
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		for i := lo; i < hi; i++ {
			xs[i] = float64(i) * 0.5
		}
		bar.Add(int64(hi-lo) * 8)
	}
	bar.Done()
	fill := time.Since(t0)
	t1 := time.Now()
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	d.say("created %s, mapped it read-write and filled %d f64 (%s) through a []float64 view: %.2f s, %.2f GB/s",
		path, n, benchmarks.HumanSize(d.bytes), fill.Seconds(), gbps(d.bytes, fill))
	d.detail("msync + close: %.2f s", time.Since(t1).Seconds())

	// 2. Reopen read-only and scan.
	sum, dur, err := scanF64(path, n)
	if err != nil {
		return err
	}
	want := 0.5 * float64(n) * float64(n-1) / 2
	d.say("reopened read-only and summed the view: sum = %.6g (expected %.6g), %.3f s, %.2f GB/s",
		sum, want, dur.Seconds(), gbps(d.bytes, dur))
	if sum != want {
		return fmt.Errorf("scan: sum %v, want %v", sum, want)
	}

	// 3. Edit one element in place through a read-write mapping.
	k := n / 3
	old, err := editF64(path, int64(k)*8, -1)
	if err != nil {
		return err
	}
	d.say("reopened read-write and set element %d (file offset %d) from %g to %g in place, then synced", k, int64(k)*8, old, -1.0)

	// 4. Reopen and show.
	ro, err := mmapfile.Open(path)
	if err != nil {
		return err
	}
	defer ro.Close()
	lo := int64(k-1) * 8
	reg, err := ro.Map(lo, 24)
	if err != nil {
		return err
	}
	got := make([]float64, 3)
	if err := mmapfile.Copy(got, reg, 0, binary.LittleEndian); err != nil {
		return err
	}
	d.say("reopened read-only: elements %d..%d = %v", k-1, k+1, got)
	if got[1] != -1 || got[0] != float64(k-1)*0.5 || got[2] != float64(k+1)*0.5 {
		return fmt.Errorf("edit not visible after reopen: %v", got)
	}
	return ro.Close()
}

// scanF64 maps the plain file path read-only and sums its n f64 through a
// view, returning the sum and the time of the scan (mapping included).
func scanF64(path string, n int) (float64, time.Duration, error) {
	t := time.Now()
	f, err := mmapfile.OpenFile(path, mmapfile.ReadOnly, &mmapfile.Options{Advice: mmapfile.AdviceSequential})
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r, err := f.Map(0, int64(n)*8)
	if err != nil {
		return 0, 0, err
	}
	xs, err := mmapfile.View[float64](r, 0, n, binary.LittleEndian)
	if err != nil {
		return 0, 0, err
	}
	sum := sumF64(xs)
	return sum, time.Since(t), f.Close()
}

// sumF64 sums xs in four running sums, as a vectorising compiler would.
func sumF64(xs []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		s0 += xs[i]
		s1 += xs[i+1]
		s2 += xs[i+2]
		s3 += xs[i+3]
	}
	for ; i < len(xs); i++ {
		s0 += xs[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// editF64 sets the f64 at file offset off through a read-write mapping and
// returns the old value.
func editF64(path string, off int64, v float64) (float64, error) {
	f, err := mmapfile.OpenFile(path, mmapfile.ReadWrite, nil)
	if err != nil {
		return 0, err
	}
	r, err := f.Map(off, 8)
	if err != nil {
		f.Close()
		return 0, err
	}
	x, err := mmapfile.View[float64](r, 0, 1, binary.LittleEndian)
	if err != nil {
		f.Close()
		return 0, err
	}
	old := x[0]
	x[0] = v
	if err := r.Sync(); err != nil {
		f.Close()
		return 0, err
	}
	return old, f.Close()
}

func gbps(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds() / 1e9
}
