package benchmarks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mmapkit/mmapkit/format"
	"github.com/mmapkit/mmapkit/internal/unsafeslice"
	"github.com/mmapkit/mmapkit/layout"
	"github.com/mmapkit/mmapkit/mmapfile"
)

// The file bench answers a user's question about a file of theirs: how
// fast can each way of reading each of its records go on this machine,
// against what the machine does with the same bytes, and against the
// tool the user would use instead. The file is opened read-only and
// never written; a file that changes while it is measured is an error,
// since its figures would describe no file.

// FileOptions configure RunFiles.
type FileOptions struct {
	// Names picks records by name; empty means the Largest largest
	// readable records of each file.
	Names []string
	// Largest is how many records are measured per file without Names
	// (zero: 3).
	Largest int
	// Time bounds the whole run (zero: 30 s): every record gets an equal
	// share of the time left when it starts; a quarter of it is kept for
	// the peer, where there is one, and each of the other measurements
	// (warm, cold, ceilings) gets an equal part of what is left of the
	// rest. No measurement starts once its part is spent: those left are
	// noted as not measured. One that has started runs to its end (at
	// least one read, warm ones after a read that settles the cache),
	// except the peer, which is stopped when the record's share is spent.
	Time time.Duration
	// JSON prints the results as one JSON document instead of tables.
	JSON bool
	// Report, when not empty, is a directory in which RunFiles writes
	// files.md and one chart per record.
	Report string
	// Progress receives one line per step; nil means none.
	Progress io.Writer
	// OnProgress, when not nil, is called at each step and once at the
	// end, for a display of its own (a terminal's updating line).
	OnProgress func(FileProgress)
	// Open are the options files are opened with (format parameters such
	// as scidb-format); files are always opened read-only.
	Open format.Options

	python  string        // test knob: the interpreter of the peers
	tick    time.Duration // test knob: a clock that each read advances by tick
	maxRuns int           // test knob: most warm runs of a measurement (zero: 1000)
}

// FileProgress is where a run of RunFiles is.
type FileProgress struct {
	// Record is the record measured, from 1, of Records.
	Record, Records int
	// Step says what is measured ("x.npy: x: view scan, warm").
	Step string
	// Elapsed is the time since the run began, Time its bound.
	Elapsed, Time time.Duration
	// Done is set on the last call, when the run is over.
	Done bool
}

// The ways a record is read, in the order they are measured and shown.
const (
	WayView     = "view scan"
	WayCopy     = "copying read"
	WayDecode   = "parallel decode"
	WayParallel = "parallel view scan"
	WayRandom   = "random element"
	WayPeer     = "peer"
	// WayAdvised is a cold scan of a mapping of the record's bytes
	// advised sequential: what the advice does for a view read from disk.
	WayAdvised = "mapping scan, sequential advice"
)

// FileResults is what RunFiles measured.
type FileResults struct {
	CPUs    int            `json:"cpus"`
	Records []RecordResult `json:"records"`
}

// RecordResult holds one record's figures.
type RecordResult struct {
	File    string       `json:"file"`
	Format  string       `json:"format"`
	Name    string       `json:"name"`
	Type    string       `json:"type"`
	Shape   []int64      `json:"shape"`
	Bytes   int64        `json:"bytes"`
	Figures []FileFigure `json:"figures"`
	// NoView says why the record has no view (and so no view scans and
	// random elements): compressed, misaligned, not one run of bytes.
	NoView string `json:"no_view,omitempty"`
	Advice string `json:"advice"`
}

// FileFigure is one way of reading a record, warm or cold, beside its
// ceiling measured on the same bytes in the same run.
type FileFigure struct {
	Way   string  `json:"way"`
	Cold  bool    `json:"cold"`
	Unit  Unit    `json:"unit"`
	Value float64 `json:"value"`
	// Ceiling names what the machine does with the same bytes
	// ("raw mapping scan", "pread"), or the peer's tool; "" where there is
	// none.
	Ceiling      string  `json:"ceiling,omitempty"`
	CeilingValue float64 `json:"ceiling_value,omitempty"`
	// Ratio is Value against CeilingValue, oriented so that higher is
	// better for the way (for latencies, the ceiling over the value).
	Ratio float64 `json:"ratio,omitempty"`
	// Memmove is, for a warm copying read of values in memory, a memmove
	// of the same bytes in GB/s: the least a copy costs.
	Memmove float64 `json:"memmove,omitempty"`
	Note    string  `json:"note,omitempty"`
}

// RunFiles measures the records of the files at paths and prints the
// results to w: tables and one line of advice per record, or JSON.
func RunFiles(ctx context.Context, paths []string, o FileOptions, w io.Writer) error {
	res, err := MeasureFiles(ctx, paths, o)
	if err != nil {
		return err
	}
	if o.Report != "" {
		if err := writeFileReport(o.Report, res); err != nil {
			return err
		}
	}
	if o.JSON {
		return writeJSON(w, res)
	}
	return res.WriteTable(w)
}

// MeasureFiles is RunFiles without the printing.
func MeasureFiles(ctx context.Context, paths []string, o FileOptions) (*FileResults, error) {
	return newFileBench(ctx, o).measureFiles(paths)
}

func newFileBench(ctx context.Context, o FileOptions) *fileBench {
	if o.Time <= 0 {
		o.Time = 30 * time.Second
	}
	if o.Largest <= 0 {
		o.Largest = 3
	}
	if o.maxRuns <= 0 {
		o.maxRuns = 1000
	}
	b := &fileBench{ctx: ctx, o: o, cpus: runtime.GOMAXPROCS(0), now: time.Now}
	if o.tick > 0 {
		base := time.Now()
		b.now = func() time.Time { return base.Add(time.Duration(b.runs) * o.tick) }
	}
	return b
}

func (b *fileBench) measureFiles(paths []string) (*FileResults, error) {
	if len(paths) == 0 {
		return nil, errors.New("bench: no file named")
	}
	o := b.o
	res := &FileResults{CPUs: b.cpus}
	type picked struct {
		path string
		recs []int
	}
	var all []picked
	total := 0
	for _, p := range paths {
		f, err := format.Open(p, &o.Open)
		if err != nil {
			return nil, err
		}
		recs, err := pickRecords(f, o)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		all = append(all, picked{p, recs})
		total += len(recs)
	}
	if total == 0 {
		return nil, errors.New("bench: no record to read in these files")
	}
	// Each record gets an equal share of the time left when it starts,
	// so that one that takes less leaves more to the others.
	b.start = b.now()
	b.deadline = b.start.Add(o.Time)
	b.records = total
	defer b.done()
	left := total
	for _, pk := range all {
		before, err := stamp(pk.path)
		if err != nil {
			return nil, err
		}
		f, err := format.Open(pk.path, &o.Open)
		if err != nil {
			return nil, err
		}
		for _, i := range pk.recs {
			b.recEnd = b.now().Add(max(b.deadline.Sub(b.now()), 0) / time.Duration(left))
			left--
			b.record++
			r, err := b.measureRecord(pk.path, f, i)
			if err != nil {
				f.Close()
				return nil, err
			}
			r.Advice = advice(r)
			res.Records = append(res.Records, *r)
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		after, err := stamp(pk.path)
		if err != nil {
			return nil, err
		}
		if after != before {
			return nil, fmt.Errorf("bench: %s changed while it was measured (%s, then %s): its figures describe no one file", pk.path, before, after)
		}
	}
	return res, nil
}

// pickRecords returns the records of f to measure: those named, or the
// largest readable ones.
func pickRecords(f format.File, o FileOptions) ([]int, error) {
	if len(o.Names) > 0 {
		var recs []int
		for _, name := range o.Names {
			i, err := format.Find(f, name)
			if err != nil {
				return nil, err
			}
			if _, err := readable(format.RecordAt(f, i)); err != nil {
				return nil, err
			}
			recs = append(recs, i)
		}
		return recs, nil
	}
	type sized struct {
		i     int
		bytes int64
	}
	var cands []sized
	err := format.EachRecord(f, func(i int, r *format.Record) error {
		if n, err := readable(*r); err == nil {
			cands = append(cands, sized{i, n})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(cands, func(a, b sized) int { return int(min(max(b.bytes-a.bytes, -1), 1)) })
	var recs []int
	for _, c := range cands[:min(len(cands), o.Largest)] {
		recs = append(recs, c.i)
	}
	slices.Sort(recs)
	return recs, nil
}

// readable returns the record's size in bytes as values, or why it
// cannot be read as values.
func readable(r format.Record) (int64, error) {
	if r.Kind == format.KindOpaque || r.Type == layout.Invalid || r.Type.Size() == 0 {
		return 0, fmt.Errorf("record %q (%s): %w: not readable as values", r.Name, r.TypeString(), errors.ErrUnsupported)
	}
	n, err := layout.ByteSize(r.Type, r.Shape)
	if err != nil {
		return 0, fmt.Errorf("record %q: %w", r.Name, err)
	}
	return n, nil
}

// fileStamp is what must not change while a file (or every file of a
// directory store) is measured.
type fileStamp struct {
	files int
	size  int64
	mtime time.Time
}

func (s fileStamp) String() string {
	return fmt.Sprintf("%d files, %d bytes, modified %s", s.files, s.size, s.mtime.Format(time.RFC3339Nano))
}

func stamp(path string) (fileStamp, error) {
	var s fileStamp
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.ModTime().After(s.mtime) {
			s.mtime = fi.ModTime()
		}
		if !d.IsDir() {
			s.files++
			s.size += fi.Size()
		}
		return nil
	})
	return s, err
}

// fileBench is one run of RunFiles.
type fileBench struct {
	ctx  context.Context
	o    FileOptions
	cpus int
	now  func() time.Time
	// start and deadline bound the run; recEnd is when the record's
	// share of it is spent, waysEnd when the part of it for mmapkit's ways
	// and their ceilings is (the rest is the peer's), slots how many of
	// those measurements have not started.
	start, deadline, recEnd, waysEnd time.Time
	slots                            int
	// record is the record measured, from 1, of records.
	record, records int
	// runs counts the reads measured (ways, ceilings, settling reads).
	runs int
	// held are the mappings of the record measured: a cold run drops
	// their pages from the process first, since the page cache keeps
	// what a process maps.
	held []*mmapfile.Region
}

func (b *fileBench) progress(format string, args ...any) {
	step := fmt.Sprintf(format, args...)
	if b.o.Progress != nil {
		fmt.Fprintf(b.o.Progress, "bench: %s\n", step)
	}
	if b.o.OnProgress != nil {
		b.o.OnProgress(FileProgress{Record: b.record, Records: b.records, Step: step, Elapsed: b.now().Sub(b.start), Time: b.o.Time})
	}
}

// done tells OnProgress that the run is over.
func (b *fileBench) done() {
	if b.o.OnProgress != nil {
		b.o.OnProgress(FileProgress{Record: b.record, Records: b.records, Elapsed: b.now().Sub(b.start), Time: b.o.Time, Done: true})
	}
}

// outOfTime is the note of a measurement that its record's share of the
// time left no room for.
var outOfTime = &notMeasured{"the time (--time) ran out before it"}

// slot starts one of the record's measurements: it returns the
// measurement's share of the time, or outOfTime once the ways' part of
// the record's share is spent.
func (b *fileBench) slot() (time.Duration, error) {
	left := max(b.slots, 1)
	b.slots = left - 1
	now := b.now()
	if !now.Before(b.waysEnd) {
		return 0, outOfTime
	}
	return b.waysEnd.Sub(now) / time.Duration(left), nil
}

// peerShare is the part of a record's share of the time kept for its
// peer, whose interpreter's start-up alone can take a second.
const peerShare = 4

// span is a record's values as one run of bytes of one file, where they
// are: what the ceilings read, through a mapping of their own (raw) and
// with pread (file), each set up once, outside the timing, as the view's
// mapping is.
type span struct {
	path string
	off  int64
	size int64

	mf   *mmapfile.File
	reg  *mmapfile.Region
	raw  []byte
	file *os.File
}

// recordSpan returns the run of bytes of record i's values, or nil where
// they are not one run of the file (chunks, compression, text), and the
// format's mapping of them, if any.
func recordSpan(path string, f format.File, i int, rec format.Record, bytes int64) (*span, *mmapfile.Region) {
	if pf, ok := f.(format.Payloader); ok {
		if p, err := pf.Payload(i); err == nil && p.NoView == nil {
			if reg, ok := p.Data.(*mmapfile.Region); ok {
				return &span{path: reg.File().Name(), off: reg.Offset() + p.Off, size: bytes}, reg
			}
		}
	}
	if rec.Offset >= 0 && rec.Size == bytes {
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			return &span{path: path, off: rec.Offset, size: bytes}, nil
		}
	}
	return nil, nil
}

// open maps the span and opens its file for pread.
func (sp *span) open() (err error) {
	if sp.mf, err = mmapfile.Open(sp.path); err != nil {
		return err
	}
	if sp.reg, err = sp.mf.Map(sp.off, sp.size); err != nil {
		sp.close()
		return err
	}
	sp.raw = sp.reg.Bytes()
	if sp.file, err = os.Open(sp.path); err != nil {
		sp.close()
	}
	return err
}

func (sp *span) close() {
	if sp.file != nil {
		sp.file.Close()
	}
	if sp.mf != nil {
		sp.mf.Close()
	}
}

// measureRecord measures every way that applies to record i of f.
func (b *fileBench) measureRecord(path string, f format.File, i int) (*RecordResult, error) {
	rec := format.RecordAt(f, i)
	bytes, err := readable(rec)
	if err != nil {
		return nil, err
	}
	r := &RecordResult{File: path, Format: f.Format(), Name: rec.Name, Type: rec.TypeString(), Shape: rec.Shape, Bytes: bytes}
	t := rec.Type
	sp, preg := recordSpan(path, f, i, rec, bytes)
	b.held = b.held[:0]
	if preg != nil {
		b.held = append(b.held, preg)
	}
	if sp != nil {
		if err := sp.open(); err != nil {
			return nil, err
		}
		defer sp.close()
		b.held = append(b.held, sp.reg)
	}
	view, viewErr := viewBytes(f, i, t)
	if viewErr != nil {
		r.NoView = viewErr.Error()
	}
	_, chunked := rec.Extra["chunks"]
	peer := b.peerFor(path, f, rec)
	// The measurements, warm and cold, that share the ways' part of the
	// record's time: each way and its ceiling where it has one (one where
	// the values are one run of the file), and the warm copy's memmove.
	perTemp := 1 + b2i(sp != nil || len(recordFiles(path, rec)) > 0) // the copying read
	if viewErr == nil {
		perTemp += 3 * (1 + b2i(sp != nil)) // the view scans, random elements
	}
	if chunked {
		perTemp += 2
	}
	b.waysEnd = b.recEnd
	if peer != nil {
		b.waysEnd = b.recEnd.Add(-b.recEnd.Sub(b.now()) / peerShare)
	}
	advised := viewErr == nil && sp != nil
	b.slots = 2*perTemp + b2i(sp != nil) + 2*b2i(advised)
	label := fmt.Sprintf("%s: %s", filepath.Base(path), rec.Name)

	// Way by way, warm then cold, so that the time running out takes the
	// last ways whole, not every cold figure or every warm one.
	type way struct {
		name     string
		measure  func(cold bool) (FileFigure, error)
		diskOnly bool
	}
	var ways []way
	if viewErr == nil {
		ways = append(ways, way{WayView, func(cold bool) (FileFigure, error) { return b.viewScan(path, sp, t, view, cold) }, false})
	}
	ways = append(ways, way{WayCopy, func(cold bool) (FileFigure, error) { return b.copyRead(path, f, i, rec, sp, bytes, cold) }, false})
	if advised {
		ways = append(ways, way{WayAdvised, func(bool) (FileFigure, error) { return b.advisedScan(path, sp, t) }, true})
	}
	if chunked {
		ways = append(ways, way{WayDecode, func(cold bool) (FileFigure, error) { return b.decode(path, f, i, bytes, cold) }, false})
	}
	if viewErr == nil {
		ways = append(ways,
			way{WayParallel, func(cold bool) (FileFigure, error) { return b.parallelScan(path, sp, t, view, cold) }, false},
			way{WayRandom, func(cold bool) (FileFigure, error) { return b.random(path, sp, t, view, cold) }, false})
	}
	for _, w := range ways {
		for _, cold := range []bool{false, true} {
			if w.diskOnly && !cold {
				continue
			}
			temp := "warm"
			if cold {
				temp = "cold"
			}
			b.progress("%s: %s, %s", label, w.name, temp)
			fig, err := w.measure(cold)
			if err != nil {
				return nil, err
			}
			r.Figures = append(r.Figures, fig)
		}
	}
	if peer != nil {
		// Last, as the least of the record's figures to lose when the
		// time runs out: the user's tool, cold then warm.
		b.progress("%s: %s, cold and warm", label, peer.tool)
		figs, err := b.peer(path, peer, bytes)
		if err != nil {
			return nil, err
		}
		r.Figures = append(r.Figures, figs...)
	}
	// Shown warm first.
	slices.SortStableFunc(r.Figures, func(a, b FileFigure) int { return cmp.Compare(b2i(a.Cold), b2i(b.Cold)) })
	return r, nil
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// measure times fn: warm, the best of as many runs as the measurement's
// share of time allows after one that settles the cache (at least one);
// cold, one run after the file's pages are dropped. It returns the time
// and, for cold runs, a note where the kernel kept pages; outOfTime
// when the record's share of the time is spent.
func (b *fileBench) measure(path string, cold bool, fn func() error) (time.Duration, string, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, "", err
	}
	per, err := b.slot()
	if err != nil {
		return 0, "", err
	}
	run := func() (time.Duration, error) {
		b.runs++
		return timed(fn)
	}
	if cold {
		note, err := b.makeCold(path)
		if err != nil {
			return 0, "", err
		}
		d, err := run()
		return d, note, err
	}
	if _, err := run(); err != nil {
		return 0, "", err
	}
	start := b.now()
	best := time.Duration(-1)
	for runs := 0; runs < b.o.maxRuns && (runs < 1 || b.now().Sub(start) < per); runs++ {
		d, err := run()
		if err != nil {
			return 0, "", err
		}
		if best < 0 || d < best {
			best = d
		}
		if b.ctx.Err() != nil {
			break
		}
	}
	return best, "", nil
}

// makeCold drops the pages of path (every file of a directory store),
// first from the mappings the bench holds, and checks with mincore that
// none stayed; the note says what stayed.
func (b *fileBench) makeCold(path string) (string, error) {
	for _, reg := range b.held {
		if err := reg.AdviseRange(0, int64(reg.Len()), mmapfile.AdviceDontNeed); err != nil {
			return "", err
		}
	}
	var kept, total int64
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if err := dropCache(p); err != nil {
			return err
		}
		k, n, err := residentPages(p)
		kept, total = kept+k, total+n
		return err
	})
	if errors.Is(err, errors.ErrUnsupported) {
		return "", &notMeasured{"cannot drop the page cache here"}
	}
	if err != nil {
		return "", err
	}
	if kept > 0 {
		return fmt.Sprintf("the kernel kept %d of %d pages cached", kept, total), nil
	}
	return "", nil
}

// ResidentPages returns how many pages of the file at path are in the
// page cache, and how many it has (mincore on a fresh mapping).
func ResidentPages(path string) (resident, pages int64, err error) {
	return residentPages(path)
}

// pair measures a way and its ceiling, the ceiling first, the two the
// same way (warm or cold), and returns the figure.
func (b *fileBench) pair(path string, way, ceiling string, bytes int64, cold bool, fn, ref func() error) (FileFigure, error) {
	fig := FileFigure{Way: way, Cold: cold, Unit: GBps, Ceiling: ceiling}
	var refD time.Duration
	if ref != nil {
		d, note, err := b.measure(path, cold, ref)
		if err != nil {
			return fig, b.unmeasured(&fig, err)
		}
		refD = d
		fig.Note = note
	}
	d, note, err := b.measure(path, cold, fn)
	if err != nil {
		return fig, b.unmeasured(&fig, err)
	}
	fig.Value = gbps(bytes, d)
	if ref != nil {
		fig.CeilingValue = gbps(bytes, refD)
		fig.Ratio = fig.Value / fig.CeilingValue
	}
	if note != "" {
		fig.Note = note
	}
	return fig, nil
}

// unmeasured turns a figure that cannot be measured here into a note; any
// other error stays one.
func (b *fileBench) unmeasured(fig *FileFigure, err error) error {
	var nm *notMeasured
	switch {
	case errors.As(err, &nm):
		fig.Note = nm.Error()
	case errors.Is(err, errors.ErrUnsupported):
		fig.Note = "not measured: " + err.Error()
	default:
		return err
	}
	return nil
}

// viewScan sums the record through its view against a raw mapping of
// the same bytes summed the same way.
func (b *fileBench) viewScan(path string, sp *span, t layout.Type, view []byte, cold bool) (FileFigure, error) {
	var got, want float64
	var ref func() error
	if sp != nil {
		ref = func() error {
			want = typedSum(t, sp.raw)
			return nil
		}
	}
	fig, err := b.pair(path, WayView, "raw mapping scan", int64(len(view)), cold,
		func() error { got = typedSum(t, view); return nil }, ref)
	if err == nil && ref != nil && fig.Value > 0 && !sameSum(got, want) {
		return fig, fmt.Errorf("%s: the view sums to %v, a raw mapping of the same bytes to %v", path, got, want)
	}
	return fig, err
}

// sameSum compares two sums of the same values in the same order (both
// NaN counts as the same).
func sameSum(a, b float64) bool { return a == b || (a != a && b != b) }

// copyRead reads the record in logical order (row-major) into one
// reused buffer of format.StreamBytes, summing each, against pread(2) of
// the same bytes into a buffer of the same size.
func (b *fileBench) copyRead(path string, f format.File, i int, rec format.Record, sp *span, bytes int64, cold bool) (FileFigure, error) {
	t := rec.Type
	size := int64(t.Size())
	chunk := streamBuffer(t)
	per := int64(len(chunk)) / size
	n := bytes / size
	var ref func() error
	if sp != nil {
		ref = func() error { return sp.readAll(t, chunk) }
	}
	ceiling := "read(2)"
	files := recordFiles(path, rec)
	if sp == nil && len(files) > 0 {
		// Values that are not one run of bytes (chunks, compressed,
		// text, cells with nulls): read(2) of the files that hold them,
		// as stored, is what reading costs before any decoding.
		ceiling = "read(2) of its files"
		if len(files) == 1 && files[0] == path {
			ceiling = "read(2) of the file"
		}
		ref = func() error { return readFiles(files, chunk) }
	}
	// A ceiling that reads a whole file holding other records too (an
	// HDF5 file of several datasets, an npz) reads more than the record.
	wholeFile := len(files) == 1 && files[0] == path && format.NumRecords(f) > 1
	fig, err := b.pair(path, WayCopy, ceiling, bytes, cold, func() error {
		for first := int64(0); first < n; first += per {
			c := chunk[:min(per, n-first)*size]
			if err := f.ReadArray(i, c, first, layout.RowMajor, layout.HostOrder()); err != nil {
				return err
			}
			typedSum(t, c)
		}
		return nil
	}, ref)
	if err != nil || fig.Value <= 0 {
		return fig, err
	}
	if sp == nil && wholeFile && fig.CeilingValue > 0 {
		fig.Note = joinNotes(fig.Note, "its ceiling reads the whole file, which holds other records too")
	}
	if sp != nil && !cold {
		// In memory, a copy costs at least a memmove of the same bytes.
		d, _, err := b.measure(path, false, func() error {
			for off := 0; off < len(sp.raw); off += len(chunk) {
				copy(chunk, sp.raw[off:])
			}
			return nil
		})
		if err == outOfTime {
			return fig, nil
		}
		if err != nil {
			return fig, err
		}
		fig.Memmove = gbps(bytes, d)
		fig.Note = joinNotes(fig.Note, fmt.Sprintf("memmove of the same bytes: %.3g GB/s, %.2f of it", fig.Memmove, fig.Value/fig.Memmove))
	}
	return fig, nil
}

// streamBuffer returns a buffer of whole elements of t, about
// format.StreamBytes, aligned for any element.
func streamBuffer(t layout.Type) []byte {
	size := int64(t.Size())
	n := max(format.StreamBytes/size, 1) * size
	return unsafeslice.AlignedBytes(n)
}

// readAll reads the span with pread(2) through buf, summing each part.
func (sp *span) readAll(t layout.Type, buf []byte) error {
	for off := int64(0); off < sp.size; off += int64(len(buf)) {
		c := buf[:min(int64(len(buf)), sp.size-off)]
		if _, err := sp.file.ReadAt(c, sp.off+off); err != nil {
			return err
		}
		typedSum(t, c)
	}
	return nil
}

// advisedScan sums a mapping of the record's bytes advised sequential,
// from disk, against read(2) of the same bytes: the advice a view read
// cold can be given, measured.
func (b *fileBench) advisedScan(path string, sp *span, t layout.Type) (FileFigure, error) {
	chunk := streamBuffer(t)
	if err := sp.reg.Advise(mmapfile.AdviceSequential); err != nil {
		fig := FileFigure{Way: WayAdvised, Cold: true, Unit: GBps}
		fig.Note = "not measured: " + err.Error()
		return fig, nil
	}
	defer sp.reg.Advise(mmapfile.AdviceNormal)
	return b.pair(path, WayAdvised, "read(2)", sp.size, true,
		func() error { typedSum(t, sp.raw); return nil },
		func() error { return sp.readAll(t, chunk) })
}

// joinNotes joins a figure's notes with "; ".
func joinNotes(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// recordFiles lists the files that hold a record: the file at path, or
// the files of the record's own directory in a directory store (a Zarr
// array's chunks), or nil.
func recordFiles(path string, rec format.Record) []string {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return []string{path}
	}
	dir := filepath.Join(path, filepath.FromSlash(strings.Trim(rec.Name, "/")))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// readFiles reads every file through buf with read(2).
func readFiles(files []string, buf []byte) error {
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		for {
			_, err = f.Read(buf)
			if err != nil {
				break
			}
		}
		f.Close()
		if err != io.EOF {
			return err
		}
	}
	return nil
}

// decode reads a chunked record whole with every core, against the same
// read on one core times the cores.
func (b *fileBench) decode(path string, f format.File, i int, bytes int64, cold bool) (FileFigure, error) {
	if mem := memTotal(); mem > 0 && bytes > mem/4 {
		fig := FileFigure{Way: WayDecode, Cold: cold, Unit: GBps}
		fig.Note = fmt.Sprintf("not measured: it decodes the record whole, %s, more than a quarter of the memory (%s)", HumanSize(bytes), HumanSize(mem))
		return fig, nil
	}
	buf := make([]float64, (bytes+7)/8)
	dst := unsafeslice.Bytes(buf)[:bytes]
	read := func() error { return f.ReadArray(i, dst, 0, layout.RowMajor, layout.HostOrder()) }
	fig, err := b.pair(path, WayDecode, fmt.Sprintf("one core's decode × %d", b.cpus), bytes, cold, read, func() error {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		return read()
	})
	if err == nil && fig.CeilingValue > 0 {
		fig.CeilingValue *= float64(b.cpus)
		fig.Ratio = fig.Value / fig.CeilingValue
	}
	return fig, err
}

// parallelScan sums the view on every core, against a raw mapping of the
// same bytes summed the same way.
func (b *fileBench) parallelScan(path string, sp *span, t layout.Type, view []byte, cold bool) (FileFigure, error) {
	var ref func() error
	if sp != nil {
		ref = func() error {
			typedSumParallel(t, sp.raw, b.cpus)
			return nil
		}
	}
	return b.pair(path, WayParallel, fmt.Sprintf("raw mapping scan on %d cores", b.cpus), int64(len(view)), cold,
		func() error { typedSumParallel(t, view, b.cpus); return nil }, ref)
}

// randomElements is how many elements a random-access figure reads, at
// most.
const randomElements = 20000

// random reads elements at random indexes through the view, against one
// pread(2) per element; the figures are in nanoseconds per element.
func (b *fileBench) random(path string, sp *span, t layout.Type, view []byte, cold bool) (FileFigure, error) {
	size := t.Size()
	n := len(view) / size
	idx := randomIndexes(min(randomElements, n), n)
	fig := FileFigure{Way: WayRandom, Cold: cold, Unit: Micros, Ceiling: "pread"}
	var got, want float64
	var refD time.Duration
	if sp != nil {
		d, note, err := b.measure(path, cold, func() (err error) { want, err = preadElems(sp, t, idx); return err })
		if err != nil {
			return fig, b.unmeasured(&fig, err)
		}
		refD, fig.Note = d, note
	}
	d, note, err := b.measure(path, cold, func() error { got = elemsAt(t, view, idx); return nil })
	if err != nil {
		return fig, b.unmeasured(&fig, err)
	}
	if note != "" {
		fig.Note = note
	}
	per := func(d time.Duration) float64 { return d.Seconds() * 1e6 / float64(len(idx)) }
	fig.Value = per(d)
	if sp != nil {
		if !sameSum(got, want) {
			return fig, fmt.Errorf("%s: random elements sum to %v through the view, %v with pread", path, got, want)
		}
		fig.CeilingValue = per(refD)
		fig.Ratio = fig.CeilingValue / fig.Value
	}
	return fig, nil
}

// preadElems sums the span's elements at idx, one pread(2) each.
func preadElems(sp *span, t layout.Type, idx []int) (float64, error) {
	size := t.Size()
	var buf [2]complex128 // aligned room for any element
	b := unsafeslice.Bytes(buf[:])[:size]
	s := 0.0
	for _, i := range idx {
		if _, err := sp.file.ReadAt(b, sp.off+int64(i*size)); err != nil {
			return 0, fmt.Errorf("pread element %d: %w", i, err)
		}
		s += typedSum(t, b)
	}
	return s, nil
}
