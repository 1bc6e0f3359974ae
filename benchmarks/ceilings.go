package benchmarks

import (
	"fmt"
	"math"
	"time"
)

// A ceiling is what the machine does at best for a figure's job, without
// mmapkit; it is measured before the figures and again beside every
// figure taken against it, one repetition of the ceiling before each of
// the figure's, and keeps the best rate seen in the run.

// ceilingRep measures one repetition of a ceiling: its time and bytes.
type ceilingRep func() (time.Duration, int64, error)

// pairing is the ceiling a figure is being measured beside.
type pairing struct {
	name string
	rep  ceilingRep
	c    **float64 // the ceiling it keeps the best of; nil for a figure
	// best is the best rate of the repetitions run beside this figure:
	// the figure's ratio is taken against it, while the ceiling keeps the
	// best of the whole run.
	best float64
}

// run measures one repetition and keeps the best rates.
func (p *pairing) run() error {
	d, n, err := p.rep()
	if err != nil {
		return err
	}
	v := gbps(n, max(d, time.Nanosecond))
	p.best = max(p.best, v)
	if p.c != nil && (*p.c == nil || v > **p.c) {
		*p.c = ptr(v)
	}
	return nil
}

// field returns the ceiling named name, or nil.
func (c *Ceilings) field(name string) **float64 {
	switch name {
	case "ram_scan":
		return &c.RAMScan
	case "mmap_scan":
		return &c.MmapScan
	case "mmap_scan_f32":
		return &c.MmapScanF32
	case "mmap_scan_parallel":
		return &c.MmapScanParallel
	case "read":
		return &c.Read
	case "cold_read":
		return &c.ColdRead
	case "memmove":
		return &c.Memmove
	case "gather":
		return &c.Gather
	case "write_sync":
		return &c.WriteSync
	case "cp_sync":
		return &c.CpSync
	}
	return nil
}

// pairWith returns the pairing for a figure taken against name, or nil
// when name is not a ceiling (a peer's reference is another figure).
//
// A peer's reference, or a figure's when it is another figure, is paired
// the same way where that figure has a repetition of its own (a scan:
// figureReps): the ratio is then taken between the two as measured side by
// side, and no ceiling is updated.
func (s *suite) pairWith(name string) *pairing {
	if rep, c := s.ceilingRep(name), s.res.Ceilings.field(name); rep != nil && c != nil {
		return &pairing{name: name, rep: rep, c: c}
	}
	if mk := figureReps[name]; mk != nil {
		if rep := mk(s); rep != nil {
			return &pairing{name: name, rep: rep}
		}
	}
	return nil
}

// figureReps make one repetition of the figures that others are taken
// against (view_scan_f64 for the read-based peers, npy_view_scan for
// Zarr's view scan); nil from one: it cannot run here.
var figureReps = map[string]func(s *suite) ceilingRep{
	"view_scan_f64": func(s *suite) ceilingRep {
		return func() (time.Duration, int64, error) {
			return scanOnce("view_scan_f64", func(p string) (float64, int, error) { return scanView(p, nil) }, s.f64, 8)
		}
	},
}

// ceilingRep returns one repetition of the ceiling name.
func (s *suite) ceilingRep(name string) ceilingRep {
	size := int64(len(s.src)) * 8
	scan := func(what string, scan scanFunc, path string, elem int64) ceilingRep {
		return func() (time.Duration, int64, error) { return scanOnce(what, scan, path, elem) }
	}
	switch name {
	case "ram_scan":
		return func() (time.Duration, int64, error) {
			var sum float64
			d, _ := timed(func() error { sum = sumF64(s.src); return nil })
			return d, size, checkSum("ram_scan", sum, len(s.src))
		}
	case "memmove":
		return func() (time.Duration, int64, error) {
			dst := s.scratch()
			d, _ := timed(func() error { copy(dst, s.src); return nil })
			return d, size, nil
		}
	case "gather":
		return func() (time.Duration, int64, error) {
			ints, floats, cells := s.gatherBuffers()
			d, _ := timed(func() error { splitCells(ints, floats, cells); return nil })
			return d, int64(len(cells)) * 8, nil
		}
	case "mmap_scan":
		return scan(name, scanRawMapping, s.f64, 8)
	case "mmap_scan_f32":
		return scan(name, scanRawMappingF32, s.f32, 4)
	case "mmap_scan_parallel":
		w := s.o.workers
		return scan(name, func(p string) (float64, int, error) { return scanRawMappingParallel(p, w) }, s.f64, 8)
	case "read":
		return func() (time.Duration, int64, error) {
			var n int64
			d, err := timed(func() (err error) { n, err = readFileChunks(s.f64); return err })
			return d, n, err
		}
	case "cold_read":
		return func() (time.Duration, int64, error) {
			if err := dropCache(s.f64); err != nil {
				return 0, 0, err
			}
			var n int64
			d, err := timed(func() (err error) { n, err = readFileChunks(s.f64); return err })
			return d, n, err
		}
	case "write_sync":
		b := asBytes(s.src)
		return func() (time.Duration, int64, error) {
			d, err := s.writeOnce(s.path("ceiling.out"), size, func(p string) error { return writeSync(p, b) })
			return d, size, err
		}
	case "cp_sync":
		return func() (time.Duration, int64, error) {
			n, src := s.o.convSize, s.cpSrc
			d, err := s.writeOnce(s.path("ceiling.out"), n, func(p string) error { return CopySync(src, p) })
			return d, n, err
		}
	}
	return nil
}

// scratch is a slice as long as the suite's data, for the ceilings that
// copy (memmove, gather), allocated and faulted in once.
func (s *suite) scratch() []float64 {
	if s.move == nil {
		s.move = make([]float64, len(s.src))
		copy(s.move, s.src)
	}
	return s.move
}

// gatherBuffers are the gather ceiling's records and columns: the suite's
// data read as interleaved 16-byte records (an integer and a float64),
// split into two columns in the scratch slice.
func (s *suite) gatherBuffers() (ints []int64, floats []float64, cells []uint64) {
	cells = asUint64(s.src[:len(s.src)/2*2])
	m := s.scratch()
	n := len(cells) / 2
	ints, floats = asInt64(m[:n]), m[n:2*n]
	return ints, floats, cells
}

// checkGather splits the records once and checks the columns.
func (s *suite) checkGather() error {
	ints, floats, cells := s.gatherBuffers()
	splitCells(ints, floats, cells)
	for _, i := range []int{0, 1, len(ints) / 2, len(ints) - 1} {
		if i < 0 || i >= len(ints) {
			continue
		}
		if uint64(ints[i]) != cells[2*i] || math.Float64bits(floats[i]) != cells[2*i+1] {
			return fmt.Errorf("gather: record %d split as (%d, %v), want (%d, %v)", i, ints[i], floats[i], cells[2*i], math.Float64frombits(cells[2*i+1]))
		}
	}
	return nil
}

// ceilings measures every ceiling before the figures.
func (s *suite) ceilings() error {
	o, c := s.o, &s.res.Ceilings
	o.progress("measuring the ceilings")
	s.f32 = s.path("data.f32")
	if err := writeF32File(s.f32, o.Size); err != nil {
		return err
	}
	s.cpSrc = s.path("copy.src")
	if err := writeSync(s.cpSrc, asBytes(s.src)[:o.convSize]); err != nil {
		return err
	}
	if err := s.checkGather(); err != nil {
		return err
	}
	for _, name := range ceilingOrder {
		if name == "cold_read" {
			if err := dropCache(s.f64); err != nil {
				o.progress("ceiling %-18s not measured: %v", name, err)
				continue
			}
		}
		rep := s.ceilingRep(name)
		var n int64
		d, err := s.best(func() (d time.Duration, err error) {
			d, n, err = rep()
			return d, err
		})
		if err != nil {
			return fmt.Errorf("ceiling %s: %w", name, err)
		}
		*c.field(name) = ptr(gbps(n, d))
		o.progress("ceiling %-18s %s GB/s", name, fmtNum(*c.field(name)))
	}
	// Warm the file again for the figures that follow.
	_, err := readFileChunks(s.f64)
	return err
}
