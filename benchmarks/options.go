package benchmarks

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// Default and quick sizes.
const (
	// DefaultSize is the size of the scanned and written files: 1 GiB.
	DefaultSize = 1 << 30
	// QuickSize is the smallest file size under Options.Quick: 64 MiB, or
	// four times the last-level cache where that is larger (so that
	// scans measure memory, not the cache), at most DefaultSize.
	QuickSize = 64 << 20
	// RandomCount is how many random elements the random-access figures
	// fetch.
	RandomCount = 1_000_000
	// DefaultRandomSize is the size of the random-access file when neither
	// Size nor RandomSize is given and the run is not Quick: 4 GiB.
	DefaultRandomSize = 4 << 30
)

// Options configures Run. The zero value runs the full suite at its
// defaults and prints a table.
type Options struct {
	// Size is the size in bytes of the files scanned and written. Zero
	// means DefaultSize, or QuickSize with Quick.
	Size int64
	// RandomSize is the size of the file the random-access figures read
	// RandomCount elements of. Zero means DefaultRandomSize for a default
	// run, else Size.
	RandomSize int64
	// Quick runs every figure at small sizes (QuickSize or four times the
	// last-level cache, unless Size says otherwise), with fewer
	// repetitions.
	Quick bool
	// JSON prints the Results document as JSON instead of a table.
	JSON bool
	// Report, when not empty, is a directory in which Run writes
	// report.md, chart.svg and chart.png (throughput against file size). It is
	// created if needed.
	Report string
	// Dir is where the suite's temporary files are created; empty means
	// os.TempDir(). The files are removed when Run returns.
	Dir string
	// Progress receives one line per step; nil means no progress.
	Progress io.Writer
	// Only, when not empty, limits the run to the figures whose names
	// start with one of these prefixes ("convert_", "zarr_"); the others
	// are listed as not measured. The ceilings are always measured.
	Only []string
	// OutOfCore is the size of the out-of-core figures' file; zero means
	// 1.5 times the machine's memory, measured only where Dir is given.
	// Not part of Quick runs.
	OutOfCore int64

	// Test knobs (unexported): fewer random elements, fewer records in
	// the open-latency figure, fewer repetitions.
	randomCount int
	openRecords []int
	repeat      int
	python      string
	llc         int64 // last-level cache size; 0: read it from the machine, -1: unknown
}

// resolved is Options with every default filled in.
type resolved struct {
	Options
	repeat     int           // repetitions per throughput figure (best is kept)
	latReps    int           // repetitions per latency figure (median is kept)
	minTime    time.Duration // keep repeating a throughput figure this long
	sweep      []int64
	textSize   int64 // bytes of Futhark text parsed and printed
	records    []int
	workers    int
	randomN    int
	pythonPath string
	llc        int64 // last-level cache in bytes, 0 if unknown
	convSize   int64 // bytes of the array the conversions convert
	dirGiven   bool  // Dir was given, not defaulted
}

func (o Options) resolve() (*resolved, error) {
	r := &resolved{Options: o}
	if o.Size < 0 || o.RandomSize < 0 {
		return nil, fmt.Errorf("benchmarks: negative size")
	}
	switch r.llc = o.llc; {
	case r.llc == 0:
		r.llc = lastLevelCache()
	case r.llc < 0:
		r.llc = 0
	}
	if r.Size == 0 {
		r.Size = DefaultSize
		if o.Quick {
			r.Size = min(max(QuickSize, (4*r.llc+(1<<20)-1)>>20<<20), DefaultSize)
		}
	}
	// Whole float64 elements, and at least one page's worth.
	r.Size = max(r.Size/64*64, 4096)
	if r.RandomSize == 0 {
		r.RandomSize = r.Size
		if o.Size == 0 && !o.Quick {
			r.RandomSize = DefaultRandomSize
		}
	}
	r.RandomSize = max(r.RandomSize/8*8, 8)
	r.repeat, r.latReps, r.minTime = 5, 21, 2*time.Second
	if o.Quick {
		r.repeat, r.latReps, r.minTime = 3, 7, 500*time.Millisecond
	}
	if o.repeat > 0 {
		r.repeat, r.latReps, r.minTime = o.repeat, o.repeat, 0
	}
	// The conversions' array: half the file (512 MiB by default).
	r.convSize = max(r.Size/2/64*64, 4096)
	r.textSize = min(r.Size/16, 32<<20)
	r.textSize = max(r.textSize, 4096)
	r.records = []int{1, 1000, 100000}
	if o.openRecords != nil {
		r.records = o.openRecords
	}
	r.randomN = RandomCount
	if o.randomCount > 0 {
		r.randomN = o.randomCount
	}
	r.workers = runtime.GOMAXPROCS(0)
	r.dirGiven = r.Dir != ""
	if r.Dir == "" {
		r.Dir = os.TempDir()
	}
	r.pythonPath = o.python
	// The chart's sizes: Size and three smaller ones, each a quarter of
	// the next, none below 64 KiB.
	for s := r.Size; len(r.sweep) < 4 && s >= 64<<10; s /= 4 {
		r.sweep = append([]int64{s / 64 * 64}, r.sweep...)
	}
	if len(r.sweep) == 0 {
		r.sweep = []int64{r.Size}
	}
	return r, nil
}

// selected reports whether the figure name is to be measured.
func (r *resolved) selected(name string) bool {
	if len(r.Only) == 0 {
		return true
	}
	for _, p := range r.Only {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func (r *resolved) progress(format string, args ...any) {
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, "bench: "+format+"\n", args...)
	}
}
