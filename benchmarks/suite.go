package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/mmapkit/mmapkit/layout"
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
	pkg     string   // the format package the figure needs, if any
	also    []string // further references whose ratios are shown
	// cache: the figure reads or copies memory, so that its ratio means
	// nothing when its data fit in the last-level cache.
	cache bool
	// measure returns the figure's value in unit and the bytes one
	// repetition processed. Nil: not available in this build.
	measure func(s *suite) (float64, int64, error)
}

// formatMeasures holds the measurements of the figures that need a format
// package, by figure name; formats_*.go files fill it in.
var formatMeasures = map[string]func(s *suite) (float64, int64, error){}

// editGoal is the goal of the edit figures: at most 1.5 times the latency
// of pwrite + fdatasync of the same bytes (ratios are oriented so that
// higher is better: pwrite's latency over the figure's).
const editGoal = 1 / 1.5

// catalogue lists every figure of the suite, in report order.
func catalogue() []spec {
	c := []spec{
		{name: "view_scan_f64", title: "scan through an mmapfile.View[float64] (open, map, sum, close)", unit: GBps, ceiling: "mmap_scan", goal: 0.95, cache: true, measure: (*suite).viewScan},
		{name: "abf_view_scan_f64", title: "scan through an ABF f64 array view", unit: GBps, ceiling: "mmap_scan", goal: 0.95, cache: true, pkg: "abf"},
		{name: "futhark_view_scan_f32", title: "scan through an aligned Futhark f32 array view", unit: GBps, ceiling: "mmap_scan_f32", goal: 0.95, cache: true, pkg: "futhark"},
		{name: "npy_view_scan", title: "scan through a .npy f64 array view (npy.Open, npy.View, sum, close)", unit: GBps, ceiling: "mmap_scan", goal: 0.95, cache: true, pkg: "npy"},
		{name: "numpy_npy_load_sum", title: `python3: np.load(path, mmap_mode="r").sum() of the same .npy file`, unit: GBps, ceiling: "npy_view_scan", goal: 1.0, peer: true, pkg: "npy"},
		{name: "npz_view_scan", title: "scan through a view of a stored (uncompressed) member of an .npz archive", unit: GBps, ceiling: "mmap_scan", goal: 0.95, cache: true, pkg: "npy"},
		{name: "numpy_npz_load_sum", title: "python3: np.load(npz)[key].sum() of the same archive", unit: GBps, ceiling: "npz_view_scan", goal: 2.0, peer: true, pkg: "npy"},
		{name: "zarr_view_scan", title: "scan of an uncompressed Zarr v2 store through its chunk views (open, view every chunk, sum, close)", unit: GBps, ceiling: "npy_view_scan", goal: 0.9, also: []string{"mmap_scan"}, cache: true, pkg: "zarr"},
		{name: "zarr_python_read", title: "python3: zarr.open(store)[:] of the same store (zarr-python)", unit: GBps, ceiling: "zarr_view_scan", goal: 2.0, peer: true, pkg: "zarr"},
		{name: "zarr_read_zstd", title: "Array.ReadRegion of a whole zstd-compressed Zarr v2 array into a reused buffer, chunks decoded on every core", unit: GBps, ceiling: "zarr_read_zstd_one_core", pkg: "zarr"},
		{name: "zarr_read_zstd_one_core", title: "the same read with GOMAXPROCS=1", unit: GBps, pkg: "zarr"},
		{name: "zarr_python_read_zstd", title: "python3: zarr.open(store)[:] of the same zstd store (zarr-python)", unit: GBps, ceiling: "zarr_read_zstd", peer: true, pkg: "zarr"},
		{name: "hdf5_view_scan", title: "scan through an HDF5 contiguous f64 dataset's view (hdf5.Open, hdf5.View, sum, close)", unit: GBps, ceiling: "mmap_scan", goal: 0.95, cache: true, pkg: "hdf5"},
		{name: "h5py_read_sum", title: `python3: h5py f["x"][:].sum() of the same HDF5 file`, unit: GBps, ceiling: "hdf5_view_scan", goal: 3.0, peer: true, pkg: "hdf5"},
		{name: "hdf5_chunked_gzip_read", title: "hdf5.Open + ReadAt of a whole chunked, shuffled and gzip-compressed HDF5 f64 dataset into a reused buffer, chunks decoded on every core", unit: GBps, ceiling: "hdf5_chunked_gzip_read_one_core", pkg: "hdf5"},
		{name: "hdf5_chunked_gzip_read_one_core", title: "the same read with GOMAXPROCS=1", unit: GBps, pkg: "hdf5"},
		{name: "h5py_read_gzip", title: `python3: h5py f["x"][:].sum() of the same gzip+shuffle file`, unit: GBps, ceiling: "hdf5_chunked_gzip_read", goal: 1.8, peer: true, pkg: "hdf5"},
		{name: "readfile_decode_scan", title: "os.ReadFile + decode to []float64 + scan", unit: GBps, ceiling: "view_scan_f64", goal: 2.5, peer: true, measure: (*suite).readFileScan},
		{name: "read_typed_scan", title: "read(2) into a []float64 + scan", unit: GBps, ceiling: "view_scan_f64", peer: true, measure: (*suite).readTypedScan},
		{name: "binary_read_scan", title: "encoding/binary.Read into a []float64 + scan", unit: GBps, ceiling: "view_scan_f64", peer: true, measure: (*suite).binaryReadScan},
		{name: "xexp_mmap_scan", title: "golang.org/x/exp/mmap ReaderAt copy into a []float64 + scan", unit: GBps, ceiling: "view_scan_f64", peer: true, measure: (*suite).xexpScan},
		{name: "numpy_memmap_sum", title: "python3: numpy.memmap(...).sum()", unit: GBps, ceiling: "view_scan_f64", goal: 1.0, peer: true, measure: (*suite).numpyMemmap},
		{name: "numpy_fromfile_sum", title: "python3: numpy.fromfile(...).sum()", unit: GBps, ceiling: "view_scan_f64", goal: 1.0, peer: true, measure: (*suite).numpyFromfile},
		{name: "cold_view_scan", title: "cold scan through a view with sequential advice (pages dropped first)", unit: GBps, ceiling: "cold_read", goal: 0.9, measure: (*suite).coldViewScan},
		{name: "random_view", title: "random element through a view (per element)", unit: Micros, ceiling: "random_pread", goal: 20, measure: (*suite).randomView},
		{name: "random_pread", title: "random element with one pread(2) each (per element)", unit: Micros, ceiling: "random_view", goal: 20, peer: true, measure: (*suite).randomPread},
		{name: "mmapfile_copy_unaligned", title: "mmapfile.Copy[float64] from an unaligned offset (copying decode)", unit: GBps, ceiling: "memmove", goal: 0.8, cache: true, measure: (*suite).copyUnaligned},
		{name: "futhark_unaligned_decode", title: "Futhark f64 array at an unaligned offset, copying decode", unit: GBps, ceiling: "memmove", goal: 0.8, cache: true, pkg: "futhark"},
		{name: "daphne_dense_decode", title: "DAPHNE dense f64 matrix, copying decode into a reused slice (CopyDenseRange)", unit: GBps, ceiling: "memmove", goal: 0.8, cache: true, pkg: "daphne"},
		{name: "daphne_dense_read", title: "DAPHNE dense f64 matrix, Read (allocates its result)", unit: GBps, ceiling: "memmove", cache: true, pkg: "daphne"},
		{name: "scidb_fixed_decode", title: "SciDB (int64, double) cells, decode into reused columns (File.DecodeInto)", unit: GBps, ceiling: "gather", goal: 0.9, also: []string{"memmove"}, cache: true, pkg: "scidb"},
		{name: "scidb_decode_file", title: "SciDB (int64, double) cells, DecodeFile (maps the file, allocates the columns)", unit: GBps, ceiling: "gather", also: []string{"memmove"}, cache: true, pkg: "scidb"},
		{name: "futhark_text_parse", title: "Futhark text parse of an f64 array", unit: MBps, ceiling: "strconv_parse", goal: 250, goalOf: "value", pkg: "futhark"},
		{name: "strconv_parse", title: "strconv.ParseFloat of the same text's numbers (baseline)", unit: MBps, ceiling: "futhark_text_parse", peer: true, measure: (*suite).strconvParse},
		{name: "futhark_text_print", title: "Futhark text print of an f64 array", unit: MBps, ceiling: "strconv_format", goal: 250, goalOf: "value", pkg: "futhark"},
		{name: "strconv_format", title: "strconv.AppendFloat of the same numbers (baseline)", unit: MBps, ceiling: "futhark_text_print", peer: true, measure: (*suite).strconvFormat},
		{name: "create_fill_view", title: "create a file, Grow, map, PopulateWrite, fill a View[float64], Close (incl. fsync)", unit: GBps, ceiling: "write_sync", goal: 0.8, measure: (*suite).createFillView},
		{name: "abf_stream_write", title: "create an ABF file of one f64 array with the streaming writer, File.WriteStream (incl. fsync)", unit: GBps, ceiling: "write_sync", goal: 0.8, pkg: "abf"},
		{name: "abf_create_fill_view", title: "create an ABF file of one f64 array with abf.Create, fill its view, Close (incl. fsync)", unit: GBps, ceiling: "write_sync", goal: 0.8, pkg: "abf"},
		{name: "npy_create_fill_view", title: "npy.Create of a .npy (NumPy's open_memmap w+), fill its view, Close (incl. fsync)", unit: GBps, ceiling: "write_sync", goal: 0.8, pkg: "npy"},
		{name: "zarr_create_fill_view", title: "zarr.Create of a v2 store, fill every chunk through its writable view, Close (incl. fsync)", unit: GBps, ceiling: "write_sync", goal: 0.8, pkg: "zarr"},
	}
	for _, to := range convertTargets {
		c = append(c, spec{name: "convert_abf_" + to, title: "format.Convert of a column-major f64 ABF array to " + to + " (incl. fsync)", unit: GBps, ceiling: "cp_sync", goal: 0.8, pkg: "abf",
			measure: func(s *suite) (float64, int64, error) { return s.convert("abf", to) }})
	}
	c = append(c, []spec{
		{name: "edit_sync", title: "one element changed with File.WriteAt + File.SyncData (median latency)", unit: Micros, ceiling: "pwrite_fdatasync", goal: editGoal, measure: (*suite).editSync},
		{name: "edit_view_sync", title: "one element changed through a read-write view + File.Sync (median latency)", unit: Micros, ceiling: "pwrite_fdatasync", measure: (*suite).editViewSync},
		{name: "abf_edit_sync", title: "one element of an ABF array changed with abf.Set + File.Sync (median latency)", unit: Micros, ceiling: "pwrite_fdatasync", goal: editGoal, pkg: "abf"},
		{name: "npy_edit_sync", title: "one element of a .npy changed with npy.Set + File.Sync (median latency)", unit: Micros, ceiling: "pwrite_fdatasync", goal: editGoal, pkg: "npy"},
		{name: "zarr_edit_sync", title: "one element of an uncompressed Zarr store changed with zarr.Set + Store.Sync (median latency)", unit: Micros, ceiling: "pwrite_fdatasync", goal: editGoal, pkg: "zarr"},
		{name: "pwrite_fdatasync", title: "one 8-byte pwrite(2) + fdatasync (median latency)", unit: Micros, ceiling: "edit_sync", peer: true, measure: (*suite).pwriteSync},
		{name: "abf_open_1", title: "open an ABF file of 1 record and list it", unit: Micros, pkg: "abf"},
		{name: "abf_open_1000", title: "open an ABF file of 1000 records and list it", unit: Micros, pkg: "abf"},
		{name: "abf_open_100000", title: "open an ABF file of 100000 records and list it", unit: Micros, pkg: "abf"},
		{name: "abf_open_per_record", title: "ABF open cost per record: (t(100000) − t(1)) / 99999", unit: Micros, pkg: "abf"},
		{name: "convert_npy_hdf5", title: "format.Convert of a Fortran-order f64 .npy to HDF5 (transposed; incl. fsync)", unit: GBps, ceiling: "cp_sync", goal: 0.8, pkg: "hdf5"},
		{name: "hdf5_open_10k", title: "open an HDF5 file of 10,000 datasets (100 groups of 100) and list them", unit: Micros, ceiling: "h5py_open_10k", goal: 2.0, pkg: "hdf5"},
		{name: "h5py_open_10k", title: "python3: h5py.File + visititems listing the same 10,000 datasets", unit: Micros, ceiling: "hdf5_open_10k", peer: true, pkg: "hdf5"},
		{name: "refs_time_npy", title: "reference set of a 1 GiB .npy (format.Open, refs.Build, WriteJSON; metadata only), median latency", unit: Micros, goal: 20000, goalOf: "value", pkg: "refs"},
		{name: "refs_time_zarr", title: "reference set of a Zarr v2 store of 10,000 chunk files (format.Open, refs.Build, WriteJSON), median latency", unit: Micros, goal: 200000, goalOf: "value", pkg: "refs"},
		{name: "parallel_scan", title: "scan through one view on all cores", unit: GBps, ceiling: "mmap_scan_parallel", goal: 0.9, also: []string{"view_scan_f64"}, cache: true, measure: (*suite).parallelScan},
		{name: "out_of_core_read", title: "read(2) streaming of a file 1.5 times the memory into an 8 MiB buffer + sum, cold", unit: GBps, measure: (*suite).outOfCoreRead},
		{name: "out_of_core_scan", title: "view scan of the same file with sequential advice, its pages let go behind the scan, cold", unit: GBps, ceiling: "out_of_core_read", goal: 0.9, measure: (*suite).outOfCoreScan},
		{name: "out_of_core_random", title: "random elements of the same file through a view, cold (per element)", unit: Micros, ceiling: "out_of_core_pread", goal: 1.0, measure: (*suite).outOfCoreRandom},
		{name: "out_of_core_pread", title: "random elements of the same file with one pread(2) each, cold (per element)", unit: Micros, ceiling: "out_of_core_random", peer: true, measure: (*suite).outOfCorePread},
	}...)
	c = append(c, serveSpecs...)
	c = append(c, daskSpecs...)
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

// convertTargets are the formats the conversion figures write, from ABF.
var convertTargets = []string{"futhark", "daphne", "npy", "zarr"}

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
	// pwriteUs is pwrite_fdatasync's median, the lowest measured beside
	// the edit figures (0 until one ran); pairedUs the one measured beside
	// the current figure.
	pwriteUs, pairedUs float64
	// convSrc holds the conversions' source file, by format.
	convSrc map[string]string
	// cpSrc is the file cp_sync copies: the conversion's source while a
	// conversion is measured.
	cpSrc string
	// hdf5Files holds the HDF5 figures' files, by compression (gzip:
	// true); hdf5ManyDone records the file of many datasets written.
	hdf5Files    map[bool]string
	hdf5ManyDone bool
	// npyDone records the npy figures' files written (.npz: true).
	npyDone map[bool]bool
	// zarrStores holds the Zarr figures' stores, by compression.
	zarrStores map[string]string
	// move is the ceilings' scratch slice (see scratch).
	move []float64
	// pair is the ceiling measured beside the current figure, or nil.
	pair *pairing
	// ooc holds the out-of-core measurements once made.
	ooc *outOfCore
	// noteOf holds what a figure's measurement wants said beside it.
	noteOf map[string]string
}

func (s *suite) path(name string) string { return filepath.Join(s.dir, name) }

func (s *suite) elems() int { return int(s.o.Size / 8) }

// measure runs the whole suite.
func measure(ctx context.Context, o *resolved) (_ *Results, err error) {
	dir, err := os.MkdirTemp(o.Dir, "mmapkit-bench-")
	if err != nil {
		return nil, err
	}
	// Absolute: the Python peers run elsewhere (see runPython).
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = rerr
		}
	}()
	s := &suite{ctx: ctx, o: o, dir: dir, res: &Results{Machine: machine(o)}, noteOf: map[string]string{}}
	s.f64 = s.path("data.f64")
	o.progress("writing %s of float64 to %s", HumanSize(o.Size), dir)
	if err := writeF64File(s.f64, o.Size); err != nil {
		return nil, err
	}
	s.rnd = s.f64
	if o.RandomSize != o.Size {
		s.rnd = s.path("random.f64")
		o.progress("writing %s of float64 for random access", HumanSize(o.RandomSize))
		// Not settled: it is read at random, not scanned.
		if err := writeGenerated(s.rnd, o.RandomSize, 8, genF64); err != nil {
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
	f := Figure{Name: sp.name, Title: sp.title, Unit: sp.unit, Ceiling: sp.ceiling, GoalOf: sp.goalOf, Peer: sp.peer, Meaningful: true}
	if sp.goal != 0 {
		f.Goal = ptr(sp.goal)
	}
	if len(sp.also) > 0 {
		f.Also = map[string]float64{}
		for _, name := range sp.also {
			f.Also[name] = 0 // computeRatios fills it in
		}
	}
	if !s.o.selected(sp.name) {
		f.Note = "not measured: not selected"
		return f
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
	// The garbage of the figures before, returned to the system: a run
	// allocates several times Size, and the page cache should not have to
	// give way to memory the process no longer uses.
	debug.FreeOSMemory()
	s.pair, s.pairedUs = s.pairWith(sp.ceiling), 0
	pair := s.pair
	v, n, err := sp.measure(s)
	s.pair = nil
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
		switch {
		case pair != nil && pair.best > 0 && v > 0 && sp.unit == GBps:
			// Its ratio is against the ceiling (or reference figure)
			// measured beside it.
			f.CeilingValue = ptr(pair.best)
			f.Ratio = ptr(v / pair.best)
			if sp.peer {
				f.Ratio = ptr(pair.best / v)
			}
		case s.pairedUs > 0 && !sp.peer && v > 0:
			// An edit: its ratio is against the pwrite + fdatasync
			// latency measured beside it.
			f.CeilingValue = ptr(s.pairedUs)
			f.Ratio = ptr(s.pairedUs / v)
		}
		if note := s.noteOf[sp.name]; note != "" {
			f.Note = note
		}
		if sp.cache && s.o.llc > 0 && n < 2*s.o.llc {
			f.Meaningful = false
			f.Note = fmt.Sprintf("ratio not meaningful: %s of data, less than twice the %s last-level cache (use a larger --size)", HumanSize(n), HumanSize(s.o.llc))
		}
	}
	return f
}

// best runs fn at least repeat times, and more (up to 50) until minTime
// has passed, and returns its shortest duration: on a shared, noisy
// machine the best repetition is the one least disturbed. fn returns the
// time it spent on the measured work, so that it can exclude set-up.
//
// While a figure is measured, one repetition of its ceiling runs before
// each of fn's (see pairWith), so that both see the same moments of the
// machine; the ceiling keeps the best rate seen in the run.
func (s *suite) best(fn func() (time.Duration, error)) (time.Duration, error) {
	best := time.Duration(math.MaxInt64)
	start := time.Now()
	for i := 0; i < max(s.o.repeat, 1) || (time.Since(start) < s.o.minTime && i < 50); i++ {
		if err := s.ctx.Err(); err != nil {
			return 0, err
		}
		if s.pair != nil {
			if err := s.pair.run(); err != nil {
				return 0, fmt.Errorf("ceiling %s: %w", s.pair.name, err)
			}
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

func (s *suite) viewScan() (float64, int64, error) {
	return s.scanGBps("view_scan_f64", func(p string) (float64, int, error) { return scanView(p, nil) }, s.f64, 8, nil)
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
// ceiling the same way (pairWith), so that both see the same disk.
func (s *suite) coldViewScan() (float64, int64, error) {
	if err := dropCache(s.f64); err != nil {
		return 0, 0, &notMeasured{"cannot drop the page cache here: " + err.Error()}
	}
	scan := func(p string) (float64, int, error) {
		return scanView(p, &mmapfile.Options{Advice: mmapfile.AdviceSequential})
	}
	v, n, err := s.scanGBps("cold_view_scan", scan, s.f64, 8, func() error { return dropCache(s.f64) })
	if err != nil {
		return 0, 0, err
	}
	_, err = readFileChunks(s.f64) // warm again
	return v, n, err
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
	if s.rnd != s.f64 {
		// The last figure that reads the random-access file: its 4 GiB
		// leave the page cache to the figures after it.
		defer os.Remove(s.rnd)
	}
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
	if err := mmapfile.Copy(dst, r, 4, layout.HostOrder()); err != nil { // warm both sides
		return 0, 0, err
	}
	d, err := s.best(func() (time.Duration, error) {
		return timed(func() error { return mmapfile.Copy(dst, r, 4, layout.HostOrder()) })
	})
	if err != nil {
		return 0, 0, err
	}
	n := int64(len(dst)) * 8
	return gbps(n, d), n, nil
}

// HumanSize prints a byte count as people read it: "1 GiB", "256 MiB",
// "1.5 MiB", "12.0 KiB", "100 B".
func HumanSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
