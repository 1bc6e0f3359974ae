package benchmarks

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// sweepFigures are the scans measured at every size of the chart.
var sweepFigures = []struct {
	name string
	scan func(string) (float64, int, error)
}{
	{"mmap_scan", scanRawMapping},
	{"view_scan_f64", func(p string) (float64, int, error) { return scanView(p, nil) }},
	{"read_typed_scan", scanReadTyped},
	{"readfile_decode_scan", scanReadFile},
	{"xexp_mmap_scan", scanXExpMmap},
}

// sweep measures sweepFigures at each size of the chart. At Size it
// reuses the suite's own figures.
func (s *suite) sweep() error {
	for _, size := range s.o.sweep {
		path := s.f64
		if size != s.o.Size {
			path = s.path(fmt.Sprintf("sweep-%d.f64", size))
			if err := writeF64File(path, size); err != nil {
				return err
			}
		}
		for _, sf := range sweepFigures {
			var v float64
			if size == s.o.Size {
				if f := s.res.figure(sf.name); f != nil && f.Value != nil {
					v = *f.Value
				} else if sf.name == "mmap_scan" && s.res.Ceilings.MmapScan != nil {
					v = *s.res.Ceilings.MmapScan
				}
			}
			if v == 0 {
				s.o.progress("sweep %-22s %s", sf.name, HumanSize(size))
				var err error
				v, _, err = s.scanGBps(sf.name, sf.scan, path, 8, nil)
				if err != nil {
					return err
				}
			}
			s.res.Sweep = append(s.res.Sweep, SweepPoint{Figure: sf.name, Size: size, GBps: v})
		}
		if path != s.f64 {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeReport writes report.md, and chart.svg and chart.png (the same
// chart, for viewers without SVG), into dir.
func writeReport(dir string, res *Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"chart.svg", "chart.png"} {
		if err := writeChart(filepath.Join(dir, name), res.Sweep); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "report.md"))
	if err != nil {
		return err
	}
	if err := writeMarkdown(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeMarkdown(w io.Writer, res *Results) error {
	m := res.Machine
	var b strings.Builder
	fmt.Fprintf(&b, "# mmapkit throughput report\n\n")
	fmt.Fprintf(&b, "- date: %s\n", m.Date)
	fmt.Fprintf(&b, "- machine: %s/%s, %d CPUs, %s, %s RAM\n", m.OS, m.Arch, m.CPUs, orUnknown(m.CPUModel), humanOrUnknown(m.MemTotal))
	fmt.Fprintf(&b, "- %s; file size %s, random-access file %s, quick=%v\n", m.GoVersion, HumanSize(m.Size), HumanSize(m.RandomSize), m.Quick)
	fmt.Fprintf(&b, "- load average at start: %.2f\n", m.LoadAverage)
	fmt.Fprintf(&b, "\n## Ceilings (GB/s)\n\n| ceiling | GB/s |\n|---|---:|\n")
	refs := res.Ceilings.byName()
	for _, name := range ceilingOrder {
		v := "not measured"
		if refs[name] != nil {
			v = fmtNum(refs[name])
		}
		fmt.Fprintf(&b, "| %s | %s |\n", name, v)
	}
	fmt.Fprintf(&b, "\n## Figures\n\n")
	fmt.Fprintf(&b, "A peer figure's ratio is mmapkit's lead over it; every other ratio is the figure against its ceiling (higher is better).\n\n")
	fmt.Fprintf(&b, "| figure | value | ceiling | ratio | goal | met | what |\n|---|---:|---|---:|---:|---|---|\n")
	for i := range res.Figures {
		f := &res.Figures[i]
		what := f.Title
		if n := f.noteText(); n != "" {
			what += " — " + n
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", f.Name, f.valueText(), f.vsText(), f.ratioText(), f.goalText(), f.metText(), strings.ReplaceAll(what, "|", "\\|"))
	}
	fmt.Fprintf(&b, "\n## How to read the figures\n\n")
	if err := res.writeLegend(&b, true); err != nil {
		return err
	}
	if len(res.Sweep) > 0 {
		fmt.Fprintf(&b, "\n## Throughput against file size\n\n![throughput against file size](chart.svg)\n\n")
		fmt.Fprintf(&b, "The same chart as a PNG, for viewers without SVG: [chart.png](chart.png).\n\n")
		fmt.Fprintf(&b, "| figure | size | GB/s |\n|---|---:|---:|\n")
		for _, p := range res.Sweep {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", p.Figure, HumanSize(p.Size), fmtNum(&p.GBps))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown CPU"
	}
	return s
}

func humanOrUnknown(n int64) string {
	if n <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// writeChart draws GB/s against file size (log scale), one line per
// figure of the sweep.
func writeChart(path string, pts []SweepPoint) error {
	p := plot.New()
	p.Y.Label.Text = "scan throughput, GB/s"
	p.X.Scale = plot.LogScale{}
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.YOffs = -vg.Points(6) // keep the first entry inside the image
	var names []string
	byName := map[string]plotter.XYs{}
	for _, pt := range pts {
		if _, ok := byName[pt.Figure]; !ok {
			names = append(names, pt.Figure)
		}
		byName[pt.Figure] = append(byName[pt.Figure], plotter.XY{X: float64(pt.Size) / (1 << 20), Y: pt.GBps})
	}
	lo, hi, top := 0.0, 0.0, 1.0
	var ticks []plot.Tick
	seen := map[int64]bool{}
	for _, pt := range pts {
		x := float64(pt.Size) / (1 << 20)
		if lo == 0 || x < lo {
			lo = x
		}
		hi, top = max(hi, x), max(top, pt.GBps)
		if !seen[pt.Size] {
			seen[pt.Size] = true
			ticks = append(ticks, plot.Tick{Value: x, Label: HumanSize(pt.Size)})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Label.Text = "file size"
	// Room above the lines for the legend.
	p.Y.Max = top * 1.45
	if lo == 0 {
		lo, hi = 1, 1 // an empty chart still says what it would show
	}
	// A log axis needs a positive, non-empty range.
	p.X.Min, p.X.Max = lo/1.5, hi*1.5
	for i, name := range names {
		l, s, err := plotter.NewLinePoints(byName[name])
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		l.Color, s.Color = c, c
		s.Shape = nil
		p.Add(l, s)
		p.Legend.Add(name, l)
	}
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}
