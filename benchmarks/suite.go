package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/mmapkit/mmapkit/mmapfile"
)

// spec describes one figure of the suite.
type spec struct {
	name    string
	title   string
	unit    Unit
	ceiling string  // ceiling or figure the ratio is taken against
	goal    float64 // 0: none
	goalOf  string  // "ratio" (default) or "value"
	peer    bool
	pkg     string // the format package the figure needs, if any
	// measure returns the figure's value in unit and the bytes one
	// repetition processed. Nil: not available in this build.
	measure func(s *suite) (float64, int64, error)
}

// formatMeasures holds the measurements of the figures that need a format
// package, by figure name; formats_*.go files fill it in.
var formatMeasures = map[string]func(s *suite) (float64, int64, error){}

// catalogue lists every figure of the suite, in report order.
func catalogue() []spec {
	c := []spec{
		{name: "view_scan_f64", title: "scan through an mmapfile.View[float64] (open, map, sum, close)", unit: GBps, ceiling: "mmap_scan", goal: 0.95, measure: (*suite).viewScan},
		{name: "abf_view_scan_f64", title: "scan through an ABF f64 array view", unit: GBps, ceiling: "mmap_scan", goal: 0.95, pkg: "abf"},
		{name: "futhark_view_scan_f32", title: "scan through an aligned Futhark f32 array view", unit: GBps, ceiling: "mmap_scan_f32", goal: 0.95, pkg: "futhark"},
		{name: "readfile_decode_scan", title: "os.ReadFile + decode to []float64 + scan", unit: GBps, ceiling: "view_scan_f64", goal: 2.5, peer: true, measure: (*suite).readFileScan},
		{name: "read_typed_scan", title: "read(2) into a []float64 + scan", unit: GBps, ceiling: "view_scan_f64", peer: true, measure: (*suite).readTypedScan},
		{name: "binary_read_scan", title: "encoding/binary.Read into a []float64 + scan", unit: GBps, ceiling: "view_scan_f64", peer: true, measure: (*suite).binaryReadScan},
		{name: "xexp_mmap_scan", title: "golang.org/x/exp/mmap ReaderAt copy into a []float64 + scan", unit: GBps, ceiling: "view_scan_f64", peer: true, measure: (*suite).xexpScan},
		{name: "numpy_memmap_sum", title: "python3: numpy.memmap(...).sum()", unit: GBps, ceiling: "view_scan_f64", goal: 1.0, peer: true, measure: (*suite).numpyMemmap},
		{name: "numpy_fromfile_sum", title: "python3: numpy.fromfile(...).sum()", unit: GBps, ceiling: "view_scan_f64", goal: 1.0, peer: true, measure: (*suite).numpyFromfile},
		{name: "cold_view_scan", title: "cold scan through a view with sequential advice (pages dropped first)", unit: GBps, ceiling: "cold_read", goal: 0.9, measure: (*suite).coldViewScan},
		{name: "random_view", title: "random element through a view (per element)", unit: Micros, ceiling: "random_pread", goal: 20, measure: (*suite).randomView},
		{name: "random_pread", title: "random element with one pread(2) each (per element)", unit: Micros, ceiling: "random_view", goal: 20, peer: true, measure: (*suite).randomPread},
		{name: "mmapfile_copy_unaligned", title: "mmapfile.Copy[float64] from an unaligned offset (copying decode)", unit: GBps, ceiling: "memmove", goal: 0.8, measure: (*suite).copyUnaligned},
		{name: "futhark_unaligned_decode", title: "Futhark f64 array at an unaligned offset, copying decode", unit: GBps, ceiling: "memmove", goal: 0.8, pkg: "futhark"},
		{name: "daphne_dense_decode", title: "DAPHNE dense f64 matrix, copying decode into a reused slice (CopyDenseRange)", unit: GBps, ceiling: "memmove", goal: 0.8, pkg: "daphne"},
		{name: "daphne_dense_read", title: "DAPHNE dense f64 matrix, Read (allocates its result)", unit: GBps, ceiling: "memmove", pkg: "daphne"},
		{name: "scidb_fixed_decode", title: "SciDB (int64, double) cells, decode into reused columns (Mapped.DecodeInto)", unit: GBps, ceiling: "memmove", goal: 0.8, pkg: "scidb"},
		{name: "scidb_decode_file", title: "SciDB (int64, double) cells, DecodeFile (maps the file, allocates the columns)", unit: GBps, ceiling: "memmove", pkg: "scidb"},
		{name: "futhark_text_parse", title: "Futhark text parse of an f64 array", unit: MBps, ceiling: "strconv_parse", goal: 250, goalOf: "value", pkg: "futhark"},
		{name: "strconv_parse", title: "strconv.ParseFloat of the same text's numbers (baseline)", unit: MBps, ceiling: "futhark_text_parse", peer: true, measure: (*suite).strconvParse},
		{name: "futhark_text_print", title: "Futhark text print of an f64 array", unit: MBps, ceiling: "strconv_format", goal: 250, goalOf: "value", pkg: "futhark"},
		{name: "strconv_format", title: "strconv.AppendFloat of the same numbers (baseline)", unit: MBps, ceiling: "futhark_text_print", peer: true, measure: (*suite).strconvFormat},
		{name: "abf_stream_write", title: "create an ABF file of one f64 array with the streaming writer (incl. fsync)", unit: GBps, ceiling: "file_write", goal: 0.8, pkg: "abf"},
		{name: "mmap_fill", title: "fill a fresh read-write mapping (create, grow, copy in, close with msync+fsync)", unit: GBps, ceiling: "file_write", goal: 0.8, measure: (*suite).mmapFill},
		{name: "file_write", title: "os.File.Write of the same bytes (incl. fsync)", unit: GBps, ceiling: "mmap_fill", peer: true, measure: (*suite).fileWrite},
		{name: "edit_sync", title: "one in-place element edit through a view + File.Sync (median latency)", unit: Micros, ceiling: "pwrite_fsync", measure: (*suite).editSync},
		{name: "pwrite_fsync", title: "one 8-byte pwrite(2) + fsync (median latency)", unit: Micros, ceiling: "edit_sync", peer: true, measure: (*suite).pwriteSync},
		{name: "abf_open_1", title: "open an ABF file of 1 record and list it", unit: Micros, pkg: "abf"},
		{name: "abf_open_1000", title: "open an ABF file of 1000 records and list it", unit: Micros, pkg: "abf"},
		{name: "abf_open_100000", title: "open an ABF file of 100000 records and list it", unit: Micros, pkg: "abf"},
		{name: "abf_open_per_record", title: "ABF open cost per record: (t(100000) − t(1)) / 99999", unit: Micros, pkg: "abf"},
		{name: "parallel_scan", title: "scan through one view on all cores (ratio: speed-up over one core)", unit: GBps, ceiling: "view_scan_f64", measure: (*suite).parallelScan},
	}
	for i := range c {
		if c[i].goalOf == "" {
			c[i].goalOf = "ratio"
		}
		if c[i].measure == nil && c[i].pkg != "" {
			c[i].measure = formatMeasures[c[i].name]
		}
	}
	return c
}

// suite is one run: its options, its files and its results.
type suite struct {
	ctx context.Context
	o   *resolved
	dir string
	f64 string    // Size bytes of float64
	f32 string    // Size bytes of float32
	rnd string    // RandomSize bytes of float64
	src []float64 // the f64 file's values in memory
	res *Results
	// numpy's measurements, filled by the first numpy figure.
	numpy *numpyResult
	// abfOpen holds the open latencies by record count, for the slope.
	abfOpen map[int]float64
}

func (s *suite) path(name string) string { return filepath.Join(s.dir, name) }

func (s *suite) elems() int { return int(s.o.Size / 8) }

// measure runs the whole suite.
func measure(ctx context.Context, o *resolved) (_ *Results, err error) {
	dir, err := os.MkdirTemp(o.Dir, "mmapkit-bench-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = rerr
		}
	}()
	s := &suite{ctx: ctx, o: o, dir: dir, res: &Results{Machine: machine(o)}}
	s.f64 = s.path("data.f64")
	o.progress("writing %s of float64 to %s", human(o.Size), dir)
	if err := writeF64File(s.f64, o.Size); err != nil {
		return nil, err
	}
	s.rnd = s.f64
	if o.RandomSize != o.Size {
		s.rnd = s.path("random.f64")
		o.progress("writing %s of float64 for random access", human(o.RandomSize))
		if err := writeF64File(s.rnd, o.RandomSize); err != nil {
			return nil, err
		}
	}
	s.src = make([]float64, s.elems())
	fillF64(s.src, 0)

	if err := s.ceilings(); err != nil {
		return nil, err
	}
	for _, sp := range catalogue() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.res.Figures = append(s.res.Figures, s.figure(sp))
	}
	s.res.computeRatios()
	if o.Report != "" {
		if err := s.sweep(); err != nil {
			return nil, err
		}
	}
	return s.res, nil
}

// figure measures one figure; a failure becomes a note, not a number.
func (s *suite) figure(sp spec) Figure {
	f := Figure{Name: sp.name, Title: sp.title, Unit: sp.unit, Ceiling: sp.ceiling, GoalOf: sp.goalOf, Peer: sp.peer}
	if sp.goal != 0 {
		f.Goal = ptr(sp.goal)
	}
	if sp.measure == nil {
		f.Note = "not measured: package " + sp.pkg + " is not usable in this build"
		if sp.pkg == "" {
			f.Note = "not measured"
		}
		s.o.progress("%-26s not measured", sp.name)
		return f
	}
	s.o.progress("%-26s measuring…", sp.name)
	runtime.GC()
	v, n, err := sp.measure(s)
	f.Bytes = n
	var nm *notMeasured
	switch {
	case errors.As(err, &nm):
		f.Note = "not measured: " + nm.why
		s.o.progress("%-26s not measured: %s", sp.name, nm.why)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		f.Note = "not measured: " + err.Error()
	case err != nil:
		f.Note = "not measured: error: " + err.Error()
		s.o.progress("%-26s error: %v", sp.name, err)
	default:
		f.Value = ptr(v)
		s.o.progress("%-26s %s %s", sp.name, fmtNum(f.Value), unitLabel(sp.unit))
	}
	return f
}

// best runs fn at least repeat times, and more (up to 50) until minTime
// has passed, and returns its shortest duration: on a shared, noisy
// machine the best repetition is the one least disturbed. fn returns the
// time it spent on the measured work, so that it can exclude set-up.
func (s *suite) best(fn func() (time.Duration, error)) (time.Duration, error) {
	best := time.Duration(math.MaxInt64)
	start := time.Now()
	for i := 0; i < max(s.o.repeat, 1) || (time.Since(start) < s.o.minTime && i < 50); i++ {
		if err := s.ctx.Err(); err != nil {
			return 0, err
		}
		d, err := fn()
		if err != nil {
			return 0, err
		}
		best = min(best, max(d, time.Nanosecond))
	}
	return best, nil
}

// notMeasured is the error of a figure that cannot be measured here.
type notMeasured struct{ why string }

func (e *notMeasured) Error() string { return "not measured: " + e.why }

// scanFunc scans a file and returns its sum and element count.
type scanFunc func(path string) (float64, int, error)

// scanOnce times one scan and checks its sum.
func scanOnce(what string, scan scanFunc, path string, elem int64) (time.Duration, int64, error) {
	var sum float64
	var n int
	d, err := timed(func() (err error) {
		sum, n, err = scan(path)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return d, int64(n) * elem, checkSum(what, sum, n)
}

// scanGBps times scan on path (best of the repetitions, checking each
// sum) and returns GB/s. before, if not nil, runs untimed before each
// repetition.
func (s *suite) scanGBps(what string, scan scanFunc, path string, elem int64, before func() error) (float64, int64, error) {
	var bytes int64
	d, err := s.best(func() (d time.Duration, err error) {
		if before != nil {
			if err := before(); err != nil {
				return 0, err
			}
		}
		d, bytes, err = scanOnce(what, scan, path, elem)
		return d, err
	})
	if err != nil {
		return 0, 0, err
	}
	return gbps(bytes, d), bytes, nil
}

// scanPaired is scanGBps for a figure whose ceiling is a scan too: the
// ceiling's scan (cscan on cpath) runs before each repetition of the
// figure's, so that both see the same moments of a noisy machine, and
// the ceiling *c keeps the best rate seen in the run.
func (s *suite) scanPaired(what string, scan scanFunc, path string, elem int64, c **float64, cname string, cscan scanFunc, cpath string) (float64, int64, error) {
	var bytes, cbytes int64
	cbest := time.Duration(math.MaxInt64)
	d, err := s.best(func() (d time.Duration, err error) {
		cd, n, err := scanOnce(cname, cscan, cpath, elem)
		if err != nil {
			return 0, err
		}
		cbest, cbytes = min(cbest, max(cd, time.Nanosecond)), n
		d, bytes, err = scanOnce(what, scan, path, elem)
		return d, err
	})
	if err != nil {
		return 0, 0, err
	}
	if v := gbps(cbytes, cbest); *c == nil || v > **c {
		*c = ptr(v)
	}
	return gbps(bytes, d), bytes, nil
}

func (s *suite) ceilings() error {
	o, c := s.o, &s.res.Ceilings
	size := int64(len(s.src)) * 8
	o.progress("measuring the ceilings")

	d, err := s.best(func() (time.Duration, error) {
		var sum float64
		d, _ := timed(func() error { sum = sumF64(s.src); return nil })
		return d, checkSum("ram_scan", sum, len(s.src))
	})
	if err != nil {
		return err
	}
	c.RAMScan = ptr(gbps(size, d))
	o.progress("ceiling ram_scan           %s GB/s", fmtNum(c.RAMScan))

	dst := make([]float64, len(s.src))
	copy(dst, s.src) // fault the pages in
	d, err = s.best(func() (time.Duration, error) {
		return timed(func() error { copy(dst, s.src); return nil })
	})
	if err != nil {
		return err
	}
	c.Memmove = ptr(gbps(size, d))
	o.progress("ceiling memmove            %s GB/s", fmtNum(c.Memmove))
	dst = nil

	v, _, err := s.scanGBps("mmap_scan", scanRawMapping, s.f64, 8, nil)
	if err != nil {
		return err
	}
	c.MmapScan = ptr(v)
	o.progress("ceiling mmap_scan          %s GB/s", fmtNum(c.MmapScan))

	s.f32 = s.path("data.f32")
	if err := writeF32File(s.f32, o.Size); err != nil {
		return err
	}
	v, _, err = s.scanGBps("mmap_scan_f32", scanRawMappingF32, s.f32, 4, nil)
	if err != nil {
		return err
	}
	c.MmapScanF32 = ptr(v)
	o.progress("ceiling mmap_scan_f32      %s GB/s", fmtNum(c.MmapScanF32))

	d, err = s.best(func() (time.Duration, error) {
		return timed(func() error { _, err := readFileChunks(s.f64); return err })
	})
	if err != nil {
		return err
	}
	c.Read = ptr(gbps(size, d))
	o.progress("ceiling read               %s GB/s", fmtNum(c.Read))

	if err := dropCache(s.f64); err != nil {
		o.progress("ceiling cold_read not measured: %v", err)
		return nil
	}
	d, err = s.best(func() (time.Duration, error) {
		if err := dropCache(s.f64); err != nil {
			return 0, err
		}
		return timed(func() error { _, err := readFileChunks(s.f64); return err })
	})
	if err != nil {
		return err
	}
	c.ColdRead = ptr(gbps(size, d))
	o.progress("ceiling cold_read          %s GB/s", fmtNum(c.ColdRead))
	// Warm the file again for the figures that follow.
	_, err = readFileChunks(s.f64)
	return err
}

func (s *suite) viewScan() (float64, int64, error) {
	return s.scanPaired("view_scan_f64", func(p string) (float64, int, error) { return scanView(p, nil) }, s.f64, 8,
		&s.res.Ceilings.MmapScan, "mmap_scan", scanRawMapping, s.f64)
}

func (s *suite) readFileScan() (float64, int64, error) {
	return s.scanGBps("readfile_decode_scan", scanReadFile, s.f64, 8, nil)
}

func (s *suite) readTypedScan() (float64, int64, error) {
	return s.scanGBps("read_typed_scan", scanReadTyped, s.f64, 8, nil)
}

func (s *suite) binaryReadScan() (float64, int64, error) {
	return s.scanGBps("binary_read_scan", scanBinaryRead, s.f64, 8, nil)
}

func (s *suite) xexpScan() (float64, int64, error) {
	return s.scanGBps("xexp_mmap_scan", scanXExpMmap, s.f64, 8, nil)
}

func (s *suite) parallelScan() (float64, int64, error) {
	w := s.o.workers
	return s.scanGBps("parallel_scan", func(p string) (float64, int, error) { return scanViewParallel(p, w) }, s.f64, 8, nil)
}

// coldViewScan drops the file's pages and scans it through a view with
// sequential advice; each repetition first measures the cold read(2)
// ceiling the same way, so that both see the same disk and the same
// moments of a noisy machine.
func (s *suite) coldViewScan() (float64, int64, error) {
	if err := dropCache(s.f64); err != nil {
		return 0, 0, &notMeasured{"cannot drop the page cache here: " + err.Error()}
	}
	scan := func(p string) (float64, int, error) {
		return scanView(p, &mmapfile.Options{Advice: mmapfile.AdviceSequential})
	}
	var bytes, rbytes int64
	rbest := time.Duration(math.MaxInt64)
	d, err := s.best(func() (d time.Duration, err error) {
		if err := dropCache(s.f64); err != nil {
			return 0, err
		}
		rd, err := timed(func() (err error) { rbytes, err = readFileChunks(s.f64); return err })
		if err != nil {
			return 0, err
		}
		rbest = min(rbest, max(rd, time.Nanosecond))
		if err := dropCache(s.f64); err != nil {
			return 0, err
		}
		d, bytes, err = scanOnce("cold_view_scan", scan, s.f64, 8)
		return d, err
	})
	if err != nil {
		return 0, 0, err
	}
	if v := gbps(rbytes, rbest); s.res.Ceilings.ColdRead == nil || v > *s.res.Ceilings.ColdRead {
		s.res.Ceilings.ColdRead = ptr(v)
	}
	_, err = readFileChunks(s.f64) // warm again
	return gbps(bytes, d), bytes, err
}

// randomAccess times RandomCount element fetches with fetch, on an open
// file, after one untimed warm-up pass, and returns µs per element.
func (s *suite) randomAccess(fetch func(idx []int) (float64, error)) (float64, int64, error) {
	n := int(s.o.RandomSize / 8)
	idx := randomIndexes(s.o.randomN, n)
	want := 0.0
	for _, i := range idx {
		want += value(i)
	}
	pass := func() (time.Duration, error) {
		var sum float64
		d, err := timed(func() (err error) { sum, err = fetch(idx); return err })
		if err == nil && sum != want {
			err = fmt.Errorf("random access: sum %v, want %v", sum, want)
		}
		return d, err
	}
	if _, err := pass(); err != nil {
		return 0, 0, err
	}
	d, err := s.best(pass)
	if err != nil {
		return 0, 0, err
	}
	return d.Seconds() * 1e6 / float64(len(idx)), 0, nil
}

func (s *suite) randomView() (float64, int64, error) {
	f, xs, err := viewF64(s.rnd, &mmapfile.Options{Advice: mmapfile.AdviceRandom})
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return s.randomAccess(func(idx []int) (float64, error) { return sumAt(xs, idx), nil })
}

func (s *suite) randomPread() (float64, int64, error) {
	f, err := os.Open(s.rnd)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return s.randomAccess(func(idx []int) (float64, error) { return preadAt(f, idx) })
}

// copyUnaligned copies all but the last element of the f64 file from
// byte offset 4, where no float64 view can alias, into a reused slice.
func (s *suite) copyUnaligned() (float64, int64, error) {
	f, err := mmapfile.Open(s.f64)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r, err := f.MapAll()
	if err != nil {
		return 0, 0, err
	}
	dst := make([]float64, r.Len()/8-1)
	if err := mmapfile.Copy(dst, r, 4, mmapfile.HostOrder()); err != nil { // warm both sides
		return 0, 0, err
	}
	d, err := s.best(func() (time.Duration, error) {
		return timed(func() error { return mmapfile.Copy(dst, r, 4, mmapfile.HostOrder()) })
	})
	if err != nil {
		return 0, 0, err
	}
	n := int64(len(dst)) * 8
	return gbps(n, d), n, nil
}

// fileWrite writes the data with os.File.Write to a new file and fsyncs
// it, the way a program without mmapkit saves an array.
func (s *suite) fileWrite() (float64, int64, error) {
	b := asBytes(s.src)
	return s.writeGBps(int64(len(b)), func(p string) error {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

// mmapFill creates a file, grows it, maps it read-write and copies the
// data into a float64 view; Close syncs.
func (s *suite) mmapFill() (float64, int64, error) {
	n := int64(len(s.src)) * 8
	return s.writeGBps(n, func(p string) error {
		f, err := mmapfile.Create(p)
		if err != nil {
			return err
		}
		if err := fill(f, s.src); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}

func fill(f *mmapfile.File, src []float64) error {
	if err := f.Grow(int64(len(src)) * 8); err != nil {
		return err
	}
	r, err := f.MapAll()
	if err != nil {
		return err
	}
	xs, err := mmapfile.View[float64](r, 0, len(src), mmapfile.HostOrder())
	if err != nil {
		return err
	}
	copy(xs, src)
	return nil
}

// writeGBps times write (best of the repetitions), each into a fresh
// file, checks the file's size, and removes it.
func (s *suite) writeGBps(n int64, write func(path string) error) (float64, int64, error) {
	p := s.path("write.out")
	d, err := s.best(func() (time.Duration, error) {
		_ = os.Remove(p)
		d, err := timed(func() error { return write(p) })
		if err != nil {
			return 0, err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return 0, err
		}
		if fi.Size() < n {
			return 0, fmt.Errorf("wrote %d bytes, want %d", fi.Size(), n)
		}
		return d, os.Remove(p)
	})
	if err != nil {
		return 0, 0, err
	}
	return gbps(n, d), n, nil
}

// median returns the median latency in µs of reps runs of fn.
func (s *suite) median(fn func(i int) (time.Duration, error)) (float64, error) {
	ds := make([]time.Duration, 0, s.o.latReps)
	for i := range s.o.latReps {
		if err := s.ctx.Err(); err != nil {
			return 0, err
		}
		d, err := fn(i)
		if err != nil {
			return 0, err
		}
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2].Seconds() * 1e6, nil
}

// editSync changes one element of the f64 file through a read-write view
// and syncs, each repetition at another random element; the file ends as
// it began.
func (s *suite) editSync() (float64, int64, error) {
	f, err := mmapfile.OpenFile(s.f64, mmapfile.ReadWrite, nil)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r, err := f.MapAll()
	if err != nil {
		return 0, 0, err
	}
	xs, err := mmapfile.View[float64](r, 0, r.Len()/8, mmapfile.HostOrder())
	if err != nil {
		return 0, 0, err
	}
	idx := randomIndexes(s.o.latReps, len(xs))
	us, err := s.median(func(k int) (time.Duration, error) {
		i := idx[k]
		old := xs[i]
		d, err := timed(func() error {
			xs[i] = old + 1
			return f.Sync()
		})
		xs[i] = old
		if err != nil {
			return 0, err
		}
		return d, f.Sync()
	})
	return us, 8, err
}

// pwriteSync writes one element's 8 bytes with pwrite(2) and fsyncs.
func (s *suite) pwriteSync() (float64, int64, error) {
	f, err := os.OpenFile(s.f64, os.O_RDWR, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	idx := randomIndexes(s.o.latReps, s.elems())
	var old, b [8]byte
	us, err := s.median(func(k int) (time.Duration, error) {
		off := int64(idx[k]) * 8
		if _, err := f.ReadAt(old[:], off); err != nil {
			return 0, err
		}
		b = old
		b[0] ^= 1
		d, err := timed(func() error {
			if _, err := f.WriteAt(b[:], off); err != nil {
				return err
			}
			return f.Sync()
		})
		if err != nil {
			return 0, err
		}
		if _, err := f.WriteAt(old[:], off); err != nil {
			return 0, err
		}
		return d, f.Sync()
	})
	return us, 8, err
}

func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
